"""``mjtable run``: the controller on a table (the service's command), or against the simulated table.

The service's composition root: the table model of the table's own
configuration folder (``/etc/mjtable``, or ``--config-dir``), its pins through
gpiozero (``[backend]``), the reader on its serial URL, the table database,
the OS CSPRNG for electronic dice, and the real-time loop.  ``--sim`` keeps
all of that and puts the simulated table's models behind the pins and the
port (gpiozero mock pins, ``rfidsim://``): a dry run at real time that
stacks, reads, raises and deals as the table will.  Faults are logged with
their code and hint (to the journal under systemd, else stderr).  Under
systemd it reports READY, STATUS and WATCHDOG; SIGTERM stops every motor
and exits.  A table model with a ``[fleet]`` section also connects its
fleet link to the parlour's broker (``docs/fleet.md``).
"""

from __future__ import annotations

import argparse
import logging
import random
import signal
import tempfile
from pathlib import Path

from firmware.cli.arg_types import add_rules_option, seconds

log = logging.getLogger("mjtable.run")

DEFAULT_STATE = Path("/var/lib/mjtable/table.db")
DIAG_SOCKET = Path("/run/mjtable/diag.sock")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("run", help="run the controller: the service on a table, or --sim for a dry run",
                            description="Run the table controller (the service), on the table or with --sim "
                                        "against the simulated table at real time.",
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            epilog="examples:\n  mjtable run                       # the service: /etc/mjtable, "
                                   "/var/lib/mjtable/table.db\n  mjtable run --sim --seconds 60    "
                                   "# a dry run on a laptop: the simulated table at real time")
    add_table_options(parser)
    add_rules_option(parser, "the rule set the table plays")
    parser.add_argument("--sim", action="store_true",
                        help="the simulated table behind the pins and the reader port, at real time (a dry run)")
    parser.add_argument("--seed", type=int, default=1, help="with --sim: the simulated table's seed")
    parser.add_argument("--seconds", type=seconds, help="stop after this long (tests, dry runs)")
    parser.add_argument("--diag-socket", type=Path,
                        help="the technician's socket (default /run/mjtable/diag.sock, with --sim one in the run's "
                             "own folder; 'none' to disable)")
    parser.set_defaults(func=run)


def add_table_options(parser: argparse.ArgumentParser) -> None:
    """Where a table's controller finds its model and database (``run`` and ``diag --direct``)."""
    parser.add_argument("--config-dir", type=Path,
                        help="the table's configuration folder (default /etc/mjtable, written by mjtable install)")
    parser.add_argument("--table", type=Path, help="a table model (TOML) instead of the folder's tables/table.toml")
    parser.add_argument("--state", type=Path,
                        help=f"the table database (SQLite; default {DEFAULT_STATE}, with --sim a fresh one)")
    parser.add_argument("--pin-factory", choices=("lgpio", "rpigpio", "mock"),
                        help="override the table model's [backend] pin_factory")


def table_model(args: argparse.Namespace, simulated: bool) -> tuple[Path, Path | None]:
    """The model to run and the configuration folder its rule sets come from.

    A table reads only its own folder.  A dry run (``--sim``) on a machine
    with no installed table takes the shipped model, and says so."""
    from firmware.config import default_table_path
    from firmware.config_paths import TABLE_CONFIG_DIR, table_model_path

    folder = args.config_dir or TABLE_CONFIG_DIR
    if args.table:
        return args.table, args.config_dir
    if simulated and args.config_dir is None and not (folder / "tables" / "table.toml").is_file():
        log.info("no table installed at %s: the shipped four-port double-set model", folder)
        return default_table_path(), None
    return table_model_path(folder), folder


def wire_service(args: argparse.Namespace, loop, state: Path, simulated: bool = False):
    """The service's table on ``loop``: (wired table, the simulated table or None)."""
    from firmware.config import load_table_config
    from firmware.reader.registry import load_table_registry
    from firmware.rules.registry import load_ruleset
    from firmware.wiring import wire_table

    model, folder = table_model(args, simulated)
    cfg = load_table_config(model)
    rules = load_ruleset(args.rules, folder)
    live = None
    if simulated:
        from sim.live_table import LiveSimTable
        live = LiveSimTable(cfg, loop, seed=getattr(args, "seed", 1))
        backend, registry = live.backend, live.registry
    else:
        from hal.backend import HardwareBackend
        if args.pin_factory:
            cfg = cfg.model_copy(update={"backend": cfg.backend.model_copy(update={"pin_factory": args.pin_factory})})
        registry = load_table_registry(cfg)
        backend = HardwareBackend(cfg, loop)

    def listen(bus) -> None:
        bus.subscribe("controller.acknowledged", lambda e: log.warning("latched fault acknowledged"))
        bus.subscribe("controller.state", lambda e: log.info("state %s", e.data["state"]))
        if live is not None:
            live.listen(bus)

    fleet = None
    if cfg.fleet is not None:
        from hal.fleet_runtime import table_plug
        fleet = table_plug()
    try:
        wired = wire_table(cfg, rules, registry, backend, loop, state, table_rng=random.SystemRandom(),
                           controller_rng=random.SystemRandom(), listen=listen, fleet=fleet)
    except BaseException:
        backend.close()
        if fleet is not None and fleet.close is not None:
            fleet.close()
        raise
    if live is not None:
        live.seat(wired.controller, loop.post)
    return wired, live


def run(args: argparse.Namespace) -> int:
    from hal.systemd import Notifier, log_to_journal_if_there

    log_to_journal_if_there()
    root = logging.getLogger()
    level_before = root.level
    root.setLevel(min(root.level, logging.INFO))        # the service logs its state changes and faults

    from hal.runtime import real_loop

    scratch = tempfile.TemporaryDirectory(prefix="mjtable-run-") if args.sim and not args.state else None
    state = args.state or (Path(scratch.name) / "table.db" if scratch else DEFAULT_STATE)
    loop = real_loop()
    try:
        hw, live = wire_service(args, loop, state, simulated=args.sim)
    except BaseException:
        if scratch is not None:
            scratch.cleanup()
        raise
    if getattr(args, "own_process", False):
        from hal.runtime import keep_startup_objects
        keep_startup_objects()
    cfg, bus, controller = hw.cfg, hw.bus, hw.controller
    notifier = Notifier()
    bus.subscribe("controller.state", lambda e: notifier.status(f"state {e.data['state']}"))

    def stop(*_: object) -> None:
        loop.stop()

    previous = signal.signal(signal.SIGTERM, lambda *_: loop.post(stop))
    if notifier.watchdog_s:
        def pet() -> None:
            notifier.watchdog()
            loop.call_later(notifier.watchdog_s / 2, pet)
        loop.call_later(0.0, pet)
    if args.seconds:
        loop.call_later(args.seconds, stop)
    server = None
    socket_path = args.diag_socket or (Path(scratch.name) / "diag.sock" if scratch else DIAG_SOCKET)
    if str(socket_path) != "none":
        from firmware.diagnostics.commands import DiagCommands
        from firmware.web.control import COMMANDS_USED, WEB_USER
        from hal.diag_peers import limits_for_users
        from hal.diag_socket import DiagSocketServer
        try:
            server = DiagSocketServer(socket_path, loop.post, DiagCommands(controller).handle,
                                      limited=limits_for_users({WEB_USER: COMMANDS_USED}))
            server.start()
            if live is not None:
                log.info("technician's socket: mjtable diag --socket %s state", socket_path)
        except OSError as exc:
            log.warning("no diag socket at %s: %s", socket_path, exc)
            server = None
    if live is None and cfg.backend.pin_factory == "mock":
        log.warning("gpiozero's mock pins do not move: homing cannot finish and the table latches a fault; "
                    "for a dry run that moves, use mjtable run --sim")
    controller.start()
    if hw.link is not None:
        hw.link.start()
    if controller.fault is not None and controller.table_state.value == "latched":
        fault = controller.fault
        log.error("the table starts latched, as its database left it: %s %s (%s); acknowledge with "
                  "'mjtable diag ack' or both lift keys once the cause is mended", fault.code.value,
                  fault.code.text, fault.source)
    notifier.ready(f"table {cfg.table.name}, rules {args.rules}")
    log.info("controller started: %s, %s-tile set, rules %s, database %s%s", cfg.table.name, cfg.table.tile_set,
             args.rules, state, " (the simulated table behind the pins and the reader port)" if live else "")
    try:
        loop.run_forever()
    except KeyboardInterrupt:
        pass
    finally:
        notifier.stopping()
        if server is not None:
            server.stop()
        hw.close()
        signal.signal(signal.SIGTERM, previous)
        log.info("controller stopped; every output safe%s", f" ({live.describe()})" if live else "")
        if scratch is not None:
            scratch.cleanup()
        root.setLevel(level_before)
    return 0

