"""The one place the controller is wired: table model, backend, loop, database, tile registry and rule set.

Every entry point builds its table here: the service on a real table
(``mjtable run``), the same service against the simulated table's models
(``mjtable run --sim``), the simulator (``mjtable sim`` and the tests) and a
technician's own process (``mjtable diag --direct``).  They differ only in
what they hand in: the backend (gpiozero pins on the Pi's chips, or on the
simulated table's mock pins), the loop (real time, or virtual), the random
sources (the OS CSPRNG on a table, seeded in the simulator), and what
listens to the table's events before anything happens.  A table model with
a ``[fleet]`` section keeps its events in the table database's outbox; with
a :class:`~firmware.fleet.table_link.FleetPlug` handed in (``mjtable run``,
``run --sim``, ``sim --fleet``) the fleet link is built too: an observer of
the bus, never on the fault path.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from firmware.config import TableConfig
from firmware.controller.controller import Controller
from firmware.controller.store import StorageError, TableStore, open_table_store
from firmware.events import EventBus
from firmware.fleet.table_link import FleetPlug, TableLink
from firmware.loop import Loop
from firmware.reader.registry import TileRegistry
from firmware.rules.ruleset import RuleSet
from firmware.table import Hardware, Table

log = logging.getLogger(__name__)


@dataclass
class WiredTable:
    """A controller and what it drives; ``start()`` powers it on, ``close()`` leaves every output safe."""

    cfg: TableConfig
    loop: Loop
    bus: EventBus
    backend: Hardware
    table: Table
    store: TableStore
    controller: Controller
    link: TableLink | None = None

    def start(self, service: bool = False) -> None:
        self.controller.start(service=service)
        if self.link is not None:
            self.link.start()

    def close(self) -> None:
        """The link ended, every output to its safe value, the reader stopped, the database closed, the pins
        released."""
        if self.link is not None:
            self.link.stop()
        self.table.safe_stop_all()
        self.table.reader.stop()
        self.store.close()
        self.backend.close()


def wire_table(cfg: TableConfig, rules: RuleSet, registry: TileRegistry, backend: Hardware, loop: Loop,
               state_path: Path, *, table_rng: random.Random, controller_rng: random.Random,
               listen: Callable[[EventBus], None] | None = None,
               on_store: Callable[[TableStore], None] | None = None,
               connect: Callable | None = None, fleet: FleetPlug | None = None) -> WiredTable:
    """Build the table's mechanisms on ``backend`` and the controller over them, not yet started.

    ``listen(bus)`` subscribes before any mechanism exists (so nothing the
    table says is missed); ``on_store(store)`` sees the opened database before
    the controller reads it; ``connect`` opens SQLite (the simulator's storage
    model fails writes and cuts power through it); ``fleet`` plugs in the
    telemetry link of a table with a ``[fleet]`` section (started by
    :meth:`WiredTable.start`)."""
    bus = EventBus(loop.now)
    if listen is not None:
        listen(bus)
    table = Table(cfg, backend, loop, bus, table_rng)
    state_path.parent.mkdir(parents=True, exist_ok=True)
    store, problem = open_table_store(state_path, connect=connect) if connect else open_table_store(state_path)
    store.keep_events = cfg.fleet is not None
    if store.keep_events:
        try:
            store.event_outbox().begin_boot()      # (this power-on, in the events' ids: with a link or without)
        except StorageError as exc:                # (the controller's first write latches E98)
            log.error("the fleet's boot counter could not be written: %s", exc)
    if on_store is not None:
        on_store(store)
    controller = Controller(table, store, registry, rules, controller_rng, store_problem=problem)
    try:
        link = TableLink(controller, cfg, fleet) if fleet is not None and cfg.fleet is not None else None
    except BaseException:
        store.close()
        raise
    return WiredTable(cfg, loop, bus, backend, table, store, controller, link)
