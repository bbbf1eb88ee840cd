"""The table's service: the production controller on the real-time loop, under systemd, with its diagnostics socket.

``mjtable run`` (and ``run --sim``, the self-test, ``diag --direct``) builds
the service's table here from the table's own configuration folder: the
``REAL`` profile on a table, ``SELFTEST`` for a dry run against the
simulated table at real time.  :func:`serve` is the service's life: the
journal's log format, READY / STATUS / WATCHDOG for systemd, SIGTERM stops
every motor and exits, the technician's socket (the web service's user may
ask only what the page needs), the table started, run until stopped and
closed.
"""

from __future__ import annotations

import logging
import signal
from dataclasses import dataclass
from pathlib import Path

from firmware.config import load_table_config
from firmware.faults import TableError
from firmware.root.table import Profile, WiredTable, build_table
from firmware.rules.registry import load_ruleset

log = logging.getLogger("mjtable.run")


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


def build_service(options: ServiceOptions, loop) -> WiredTable:
    """The service's table on ``loop`` (not started)."""
    cfg = load_table_config(options.model)
    rules = load_ruleset(options.rules, options.folder)
    if options.pin_factory and not options.simulated:
        cfg = cfg.model_copy(update={"backend": cfg.backend.model_copy(update={"pin_factory": options.pin_factory})})

    def listen(bus) -> None:
        bus.subscribe("controller.acknowledged", lambda e: log.warning("latched fault acknowledged"))
        bus.subscribe("controller.state", lambda e: log.info("state %s", e.data["state"]))

    fleet = None
    if cfg.fleet is not None:
        from firmware.fleet.runtime import table_plug
        from hal.runtime import HOST_CLOCK

        fleet = table_plug(HOST_CLOCK)
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
    wired = build_service(options, loop)
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
    wired = build_service(options, loop)
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
