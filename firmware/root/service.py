"""The table's service: the production controller on the real-time loop, under systemd, with its diagnostics socket.

``mjtable run`` (and ``run --sim``, the self-test, ``diag --direct``) builds
the service's table here from the table's own configuration folder: the
``REAL`` profile on a table, ``SELFTEST`` for a dry run against the
simulated table at real time.  :func:`serve` is the service's life: the
journal's log format, READY / STATUS / WATCHDOG for systemd, SIGTERM stops
every motor and exits, the technician's socket (the web service's user may
ask only what the page needs), the table started, run until stopped and
closed.

A table with a ``[fleet]`` section and a command key takes a staged update
over the fleet: its link is given the table's releases under the install
root (:class:`~firmware.release.fleet_install.TableInstaller`, the same
install, signature check and self-test as ``mjtable install``).  Once a new
release is current (or, after ``rollback``, the previous one), the service
waits until the table is at rest (:data:`REST_STATES`: between two hands,
a set stacked and nothing on the table, or stopped by a fault: never a hand
in play; a set stacking underneath resumes after the start as after a power
cut), stops as on SIGTERM and exits
with :data:`RESTART_EXIT`; the unit's ``RestartForceExitStatus=`` makes
systemd start it again, through the start guard, into the release now
current.
"""

from __future__ import annotations

import logging
import signal
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from firmware.config import load_table_config
from firmware.faults import TableError
from firmware.root.table import Profile, WiredTable, build_table
from firmware.rules.registry import load_ruleset

log = logging.getLogger("mjtable.run")

RESTART_EXIT = 75          # (EX_TEMPFAIL) "start me again": the unit's RestartForceExitStatus= and SuccessExitStatus=
REST_STATES = frozenset({"idle", "ready", "latched", "hold"})   # between hands, or stopped: no hand on the table


@dataclass(frozen=True)
class ServiceOptions:
    """What ``mjtable run`` was asked (the table model and folder chosen by the CLI)."""

    model: Path
    folder: Path | None
    rules: str
    state: Path
    simulated: bool = False            # the SELFTEST profile: the simulated table behind the pins, at real time
    seed: int = 1
    pin_factory: str | None = None
    seconds: float | None = None       # stop after this long
    diag_socket: Path | None = None    # None: no socket
    own_process: bool = False          # the command line's own process (its start-up objects live for ever)
    release_root: Path | None = None   # the install root of the table's releases (None: it takes no update)
    fleet: bool = True                 # connect the [fleet] link (the self-test does not: it is not the table)


class ServiceRestart:
    """The service's restart into the release a staged update made current (see the module): asked on the table's
    loop, carried out at the next state of :data:`REST_STATES` by ``stop()`` (the service's loop stopped)."""

    def __init__(self, stop: Callable[[], None]) -> None:
        self.stop = stop
        self.asked = False
        self.stopping = False
        self.wired: WiredTable | None = None

    def bind(self, wired: WiredTable) -> None:
        self.wired = wired
        wired.bus.subscribe("controller.state", lambda e: self._when_at_rest())

    def __call__(self) -> None:
        self.asked = True
        log.warning("the service restarts into the release now current once the table is at rest (%s)",
                    ", ".join(sorted(REST_STATES)))
        self._when_at_rest()

    def _when_at_rest(self) -> None:
        if not self.asked or self.stopping or self.wired is None:
            return
        state = self.wired.controller.table_state.value
        if state in REST_STATES:
            self.stopping = True
            log.warning("table at rest (%s): the service stops to restart into the release now current", state)
            self.stop()


def _installer(options: ServiceOptions, cfg) -> Any:
    """The table's releases for a staged update (None: no install root, or a table that takes no command)."""
    if options.release_root is None or cfg.fleet is None or cfg.fleet.command_key_file is None:
        return None
    from firmware import __version__
    from firmware.release.fleet_install import TableInstaller
    from firmware.release.releases import Releases
    from hal.runtime import HOST_CLOCK

    return TableInstaller(Releases(options.release_root, HOST_CLOCK), __version__, options.rules)


def build_service(options: ServiceOptions, loop, restart: ServiceRestart | None = None) -> WiredTable:
    """The service's table on ``loop`` (not started); ``restart``: how a staged update restarts it."""
    cfg = load_table_config(options.model)
    rules = load_ruleset(options.rules, options.folder)
    if options.pin_factory and not options.simulated:
        cfg = cfg.model_copy(update={"backend": cfg.backend.model_copy(update={"pin_factory": options.pin_factory})})

    def listen(bus) -> None:
        bus.subscribe("controller.acknowledged", lambda e: log.warning("latched fault acknowledged"))
        bus.subscribe("controller.state", lambda e: log.info("state %s", e.data["state"]))

    fleet = None
    if cfg.fleet is not None and options.fleet:
        from firmware.fleet.runtime import table_plug
        from hal.runtime import HOST_CLOCK

        installer = _installer(options, cfg) if restart is not None else None
        fleet = table_plug(HOST_CLOCK, installer, restart if installer is not None else None)
    profile = Profile.SELFTEST if options.simulated else Profile.REAL
    return build_table(cfg, rules, profile, loop, options.state, seed=options.seed, listen=listen, fleet=fleet)


def serve(options: ServiceOptions) -> int:
    """The service's life, from the journal's format to every output safe (see the module)."""
    from hal.runtime import keep_startup_objects, real_loop
    from hal.systemd import Notifier, log_to_journal_if_there

    log_to_journal_if_there()
    root = logging.getLogger()
    level_before = root.level
    root.setLevel(min(root.level, logging.INFO))        # the service logs its state changes and faults
    loop = real_loop()
    restart = ServiceRestart(lambda: loop.post(loop.stop))
    wired = build_service(options, loop, restart)
    restart.bind(wired)
    if options.own_process:
        keep_startup_objects()
    notifier = Notifier()
    wired.bus.subscribe("controller.state", lambda e: notifier.status(f"state {e.data['state']}"))
    previous = signal.signal(signal.SIGTERM, lambda *_: loop.post(loop.stop))
    if notifier.watchdog_s:
        def pet() -> None:
            notifier.watchdog()
            loop.call_later(notifier.watchdog_s / 2, pet)
        loop.call_later(0.0, pet)
    if options.seconds:
        loop.call_later(options.seconds, loop.stop)
    server = _diag_socket(wired, options)
    try:
        _start(wired)
        notifier.ready(f"table {wired.cfg.table.name}, rules {options.rules}")
        log.info("controller started: %s, %s-tile set, rules %s, database %s%s", wired.cfg.table.name,
                 wired.cfg.table.tile_set, options.rules, options.state,
                 " (the simulated table behind the pins and the reader port)" if wired.live else "")
        try:
            wired.run()
        except KeyboardInterrupt:
            pass
    finally:
        notifier.stopping()
        if server is not None:
            server.stop()
        wired.close()
        signal.signal(signal.SIGTERM, previous)
        live = wired.live
        log.info("controller stopped; every output safe%s", f" ({live.describe()})" if live else "")
        root.setLevel(level_before)
    if restart.stopping:
        log.warning("exit %d: systemd starts the service again into the release now current", RESTART_EXIT)
        return RESTART_EXIT
    return 0


def _diag_socket(wired: WiredTable, options: ServiceOptions):
    """The technician's socket of the service (None: none asked, or it could not be opened: the table runs)."""
    if options.diag_socket is None:
        return None
    from firmware.diagnostics import log_ring
    from firmware.diagnostics.commands import DiagCommands
    from firmware.diagnostics.socket.peers import limits_for_users
    from firmware.diagnostics.socket.server import DiagSocketServer
    from firmware.web.control import COMMANDS_USED, WEB_USER
    from hal.runtime import HOST_CLOCK

    log_ring.install()                  # (the page's and the support bundle's log: the service's own lines)
    try:
        commands = DiagCommands(wired.session, fleet=wired.link.status if wired.link else None)
        server = DiagSocketServer(options.diag_socket, wired.loop.post, commands.handle, clock=HOST_CLOCK,
                                  limited=limits_for_users({WEB_USER: COMMANDS_USED}))
        server.start()
    except OSError as exc:
        log.warning("no diag socket at %s: %s", options.diag_socket, exc)
        return None
    if wired.live is not None:
        log.info("technician's socket: mjtable diag --socket %s state", options.diag_socket)
    return server


def _start(wired: WiredTable) -> None:
    cfg, controller = wired.cfg, wired.controller
    if wired.live is None and cfg.backend.pin_factory == "mock":
        log.warning("gpiozero's mock pins do not move: homing cannot finish and the table latches a fault; "
                    "for a dry run that moves, use mjtable run --sim")
    wired.start()
    if controller.fault is not None and controller.table_state.value == "latched":
        fault = controller.fault
        log.error("the table starts latched, as its database left it: %s %s (%s); acknowledge with "
                  "'mjtable diag ack' or both lift keys once the cause is mended", fault.code.value,
                  fault.code.text, fault.source)


def selftest_run(options: ServiceOptions, seconds: float):
    """The release's self-test: the production service's composition against the simulated table, at real time,
    for ``seconds``: (state, the fault codes raised, the reader's link) at the end."""
    from hal.runtime import real_loop

    loop = real_loop()
    wired = build_service(replace(options, fleet=False), loop)    # (the table's own link is the service's)
    try:
        wired.start()
        try:
            wired.run(lambda: False, seconds)
        except TableError:
            pass                                        # (ran its time)
        controller = wired.controller
        return controller.table_state, sorted({f.code.name for f in controller.policy.recent}), \
            wired.table.reader.state
    finally:
        wired.close()
