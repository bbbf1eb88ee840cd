"""``mjtable run``: the controller on a real table (the service's command).

The composition root for hardware: the table model's pins through gpiozero
(``[backend]``; ``--pin-factory mock`` for a dry run without a Pi), the
reader on its serial URL, the table database, the OS CSPRNG for electronic
dice, and the real-time loop.  Faults are logged with their code and hint
(to the journal under systemd, else stderr).  Under systemd it reports
READY, STATUS and WATCHDOG; SIGTERM stops every motor and exits.
"""

from __future__ import annotations

import argparse
import logging
import random
import signal
from pathlib import Path

from firmware.rules.names import RULE_NAMES

log = logging.getLogger("mjtable.run")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("run", help="run the controller on a real table (the service)",
                            description="Run the table controller on real hardware.",
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            epilog="examples:\n  mjtable run --table /etc/mjtable/tables/table.toml --state "
                                   "/var/lib/mjtable/table.db\n  mjtable run --pin-factory mock --seconds 5   "
                                   "# dry run on a laptop")
    parser.add_argument("--table", type=Path, help="table model (TOML); default: the four-port double-set model")
    parser.add_argument("--rules", choices=RULE_NAMES, default="mcr")
    parser.add_argument("--state", type=Path, default=Path("table.db"), help="the table database (SQLite)")
    parser.add_argument("--pin-factory", choices=("lgpio", "rpigpio", "mock"),
                        help="override the table model's [backend] pin_factory")
    parser.add_argument("--seconds", type=float, help="stop after this long (tests, dry runs)")
    parser.add_argument("--diag-socket", type=Path, default=Path("/run/mjtable/diag.sock"),
                        help="the technician's socket (default /run/mjtable/diag.sock; 'none' to disable)")
    parser.set_defaults(func=run)


class HardwareTable:
    """The controller wired to the real table: pins, reader, database, CSPRNG dice, real-time loop.

    Used by the service and by ``mjtable diag --direct`` (a technician's own
    process when no service runs).
    """

    def __init__(self, table_path: Path | None, rules_name: str, state: Path, pin_factory: str | None) -> None:
        from firmware.config import default_table_path, load_table_config
        from firmware.controller.controller import Controller
        from firmware.controller.store import open_table_store
        from firmware.events import EventBus
        from firmware.reader.registry import load_table_registry
        from firmware.rules.ruleset import load_ruleset
        from firmware.table import Table
        from hal.backend import HardwareBackend
        from hal.runtime import real_loop

        cfg = load_table_config(table_path or default_table_path())
        if pin_factory:
            cfg = cfg.model_copy(update={"backend": cfg.backend.model_copy(update={"pin_factory": pin_factory})})
        self.cfg = cfg
        rules = load_ruleset(rules_name)
        registry = load_table_registry(cfg)
        self.loop = real_loop()
        self.bus = EventBus(self.loop.now)
        self.bus.subscribe("controller.acknowledged", lambda e: log.warning("latched fault acknowledged"))
        self.bus.subscribe("controller.state", lambda e: log.info("state %s", e.data["state"]))
        self.backend = HardwareBackend(cfg, self.loop)
        self.table = Table(cfg, self.backend, self.loop, self.bus, random.SystemRandom())
        state.parent.mkdir(parents=True, exist_ok=True)
        self.store, problem = open_table_store(state)
        self.controller = Controller(self.table, self.store, registry, rules, random.SystemRandom(),
                                     store_problem=problem)

    def close(self) -> None:
        """Every output to its safe value, the reader stopped, the database closed, the pins released."""
        self.table.safe_stop_all()
        self.table.reader.stop()
        self.store.close()
        self.backend.close()


def run(args: argparse.Namespace) -> int:
    from hal.systemd import Notifier, log_to_journal_if_there

    log_to_journal_if_there()
    root = logging.getLogger()
    level_before = root.level
    root.setLevel(min(root.level, logging.INFO))        # the service logs its state changes and faults

    hw = HardwareTable(args.table, args.rules, args.state, args.pin_factory)
    if getattr(args, "own_process", False):
        from hal.runtime import keep_startup_objects
        keep_startup_objects()
    cfg, loop, bus, controller = hw.cfg, hw.loop, hw.bus, hw.controller
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
    if str(args.diag_socket) != "none":
        from firmware.diagnostics.commands import DiagCommands
        from hal.diag_socket import DiagSocketServer
        try:
            server = DiagSocketServer(args.diag_socket, loop.post, DiagCommands(controller).handle)
            server.start()
        except OSError as exc:
            log.warning("no diag socket at %s: %s", args.diag_socket, exc)
            server = None
    controller.start()
    notifier.ready(f"table {cfg.table.name}, rules {args.rules}")
    log.info("controller started: %s, %s-tile set, rules %s, database %s", cfg.table.name, cfg.table.tile_set,
             args.rules, args.state)
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
        log.info("controller stopped; every output safe")
        root.setLevel(level_before)
    return 0

