"""One builder for every table: a config and a profile become a wired table with one lifecycle (start, run, close).

A :class:`Profile` says what is behind the firmware's ports:

* ``REAL``: the Raspberry Pi's pins through gpiozero (the table model's
  ``[backend]``), the reader on its serial URL, the enrolled sets' files, the
  OS CSPRNG for the dice (``mjtable run``, ``mjtable diag --direct``);
* ``SELFTEST``: the production service's composition with the simulated
  table behind the pins and the port, and the people at it, at real time
  (``mjtable run --sim``, the release's self-test);
* ``SIM``: the simulated table on its virtual loop, seeded randomness
  (``mjtable sim``, ``diag --sim``, the fleet's simulated tables, the tests);
* ``BENCH``: the mechanisms and the reader alone on the simulated table, no
  controller (a bench tester's cycle: ``sim --one-cycle``, ``diag reader
  --sim``, the mechanism tests), built by :func:`build_bench`.

:func:`build_table` builds the mechanisms on the backend, opens the table
database, builds the game (the scoreboard and the hand in play), the
controller over them and the table's session, and the fleet link for a
table with a ``[fleet]`` section and a plug.  :class:`WiredTable` then has
one lifecycle, the same steps in the same order for every entry point:
:meth:`~WiredTable.start`, :meth:`~WiredTable.run`, :meth:`~WiredTable.close`
(or, in the simulator, :meth:`~WiredTable.power_off`: the power goes).
"""

from __future__ import annotations

import enum
import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from firmware.config import TableConfig
from firmware.controller.controller import Controller
from firmware.controller.record import TableRecord
from firmware.events import EventBus
from firmware.faults import TableError
from firmware.game.hand_in_play import HandInPlay
from firmware.game.scoreboard import Scoreboard
from firmware.game.session import TableSession
from firmware.loop import Loop
from firmware.ports.hardware import Hardware
from firmware.reader.registry import TileRegistry, load_table_registry
from firmware.rules.ruleset import RuleSet
from firmware.game.rounds import Rounds
from firmware.game.staff import Staff
from firmware.rules.registry import load_ruleset
from firmware.store.staff_rows import StaffRows
from firmware.store.table_store import StorageError, TableStore, open_table_store
from firmware.table import Table

if TYPE_CHECKING:
    from firmware.fleet.table_link import FleetPlug, TableLink

log = logging.getLogger(__name__)


class Profile(str, enum.Enum):
    REAL = "real"
    SELFTEST = "selftest"
    SIM = "sim"
    BENCH = "bench"


@dataclass
class WiredTable:
    """A table's controller, session and what they drive; ``start()`` powers it on, ``close()`` leaves every
    output safe.  ``live``: the simulated table and its people of a ``SELFTEST`` table."""

    cfg: TableConfig
    loop: Loop
    bus: EventBus
    backend: Hardware
    table: Table
    store: TableStore
    session: TableSession
    link: TableLink | None = None
    live: Any = None

    @property
    def controller(self) -> Controller:
        return self.session.controller

    def start(self, service: bool = False) -> None:
        """Power on (in service mode with ``service``), then the fleet link."""
        self.controller.start(service=service)
        if self.link is not None:
            self.link.start()

    def run(self, done: Callable[[], bool] | None = None, timeout_s: float | None = None) -> None:
        """Run the table's (real-time) loop until ``done()`` (TableError past ``timeout_s``), or until it is
        stopped (``loop.stop()``: SIGTERM, ``--seconds``)."""
        if done is None:
            self.loop.run_forever()
            return
        from hal.runtime import run_until

        run_until(self.loop, done, timeout_s if timeout_s is not None else float("inf"), "the table")

    def close(self) -> None:
        """The link ended, every output to its safe value, the reader stopped, the database closed, the pins
        released."""
        if self.link is not None:
            self.link.stop()
        self.table.safe_stop_all()
        self.table.reader.stop()
        self.store.close()
        self.backend.close()

    def power_off(self) -> None:
        """The power goes (the simulator's cut): every relay drops, the link drops without a word, the reader and
        the database are gone with the process, the table's pins stay."""
        self.table.safe_stop_all()
        if self.link is not None:
            self.link.detach()
        self.table.reader.stop()
        self.backend.power_off()
        self.store.close()


def build_table(cfg: TableConfig, rules: RuleSet, profile: Profile, loop: Loop, state_path: Path, *,
                world: Any = None, seed: int = 1, registry: TileRegistry | None = None,
                table_rng: random.Random | None = None, controller_rng: random.Random | None = None,
                listen: Callable[[EventBus], None] | None = None,
                on_store: Callable[[TableStore], None] | None = None,
                fleet: FleetPlug | None = None, wall_clock_s: Callable[[], float] | None = None) -> WiredTable:
    """The table of ``profile`` (see the module), built and not yet started.

    ``world``: the simulated table of a ``SIM`` profile (its pins, reader and card); ``seed``: the simulated
    table of ``SELFTEST``; ``registry``: the enrolled sets (by default the table model's files, or the simulated
    table's); ``table_rng`` / ``controller_rng``: the dice's randomness (the OS CSPRNG unless given: the
    simulator seeds them); ``listen(bus)`` subscribes before any mechanism exists (nothing the table says is
    missed); ``on_store(store)`` sees the opened database before the controller reads it; ``fleet`` plugs in
    the telemetry link of a table with a ``[fleet]`` section; ``wall_clock_s``: the table's wall clock (Unix
    seconds) for a tournament round's time limit (default: the host's; a ``SIM`` table's is
    :data:`SIM_EPOCH_S` plus its loop's time unless the simulator gives one)."""
    if wall_clock_s is None:
        wall_clock_s = _wall_clock(profile, loop)
    backend, registry, connect, live = _behind_the_ports(cfg, profile, loop, world, seed, registry)
    if live is not None:
        listen = _both(listen, live.listen)
    try:
        wired = _wire(cfg, rules, registry, backend, loop, state_path, table_rng or random.SystemRandom(),
                      controller_rng or random.SystemRandom(), listen, on_store, connect, fleet, wall_clock_s)
    except BaseException:
        backend.close()
        if fleet is not None and fleet.close is not None:
            fleet.close()
        raise
    if live is not None:
        live.seat(wired.controller, loop.post)
        wired.live = live
    return wired


SIM_EPOCH_S = 1_750_000_000.0      # a simulated table's wall clock at its loop's 0 (unless the simulator gives one)


def _wall_clock(profile: Profile, loop: Loop) -> Callable[[], float]:
    if profile is Profile.SIM:
        return lambda: SIM_EPOCH_S + loop.now()
    from hal.runtime import HOST_CLOCK

    return HOST_CLOCK.wall_s


def _behind_the_ports(cfg: TableConfig, profile: Profile, loop: Loop, world: Any, seed: int,
                      registry: TileRegistry | None) -> tuple[Hardware, TileRegistry, Callable | None, Any]:
    """(backend, registry, how the database is opened, the live simulated table) of a profile."""
    if profile is Profile.REAL:
        from hal.backend import HardwareBackend

        return HardwareBackend(cfg, loop), registry or load_table_registry(cfg), None, None
    if profile is Profile.SELFTEST:
        from sim.live_table import LiveSimTable

        live = LiveSimTable(cfg, loop, seed=seed)
        return live.backend, registry or live.registry, None, live
    if profile is Profile.SIM:
        from sim.backend import SimBackend

        if world is None:
            raise TableError("a simulated table (SIM) is built on its world")
        return SimBackend(cfg, loop, world), registry or world.registry, world.storage.connect, None
    raise TableError(f"build_table does not build a {profile.value} table (build_bench does)")


def _both(first: Callable[[EventBus], None] | None, second: Callable[[EventBus], None]) -> Callable[[EventBus], None]:
    def listen(bus: EventBus) -> None:
        if first is not None:
            first(bus)
        second(bus)
    return listen


def _wire(cfg: TableConfig, rules: RuleSet, registry: TileRegistry, backend: Hardware, loop: Loop,
          state_path: Path, table_rng: random.Random, controller_rng: random.Random,
          listen: Callable[[EventBus], None] | None, on_store: Callable[[TableStore], None] | None,
          connect: Callable | None, fleet: FleetPlug | None, wall_clock_s: Callable[[], float]) -> WiredTable:
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
    record = TableRecord(store, problem)
    rules = _staff_rules(store, rules)
    scoreboard = Scoreboard(store, rules, first_hand=record.book.hand + 1)
    hand = HandInPlay(record, rules, scoreboard, bus)
    hand.rounds = Rounds(record, scoreboard, rules, bus, loop, wall_clock_s, cfg.table.tile_set, hand.in_play)
    hand.staff = Staff(record, scoreboard, bus, loop, wall_clock_s, cfg.table.tile_set, hand.in_play, hand.rounds)
    session = TableSession(Controller(table, record, hand, registry, rules, controller_rng), hand, scoreboard)
    hand.rounds.switch_rules = hand.staff.switch_rules = session.switch_rules
    try:
        link = _link(session, cfg, fleet) if fleet is not None and cfg.fleet is not None else None
    except BaseException:
        store.close()
        raise
    return WiredTable(cfg, loop, bus, backend, table, store, session, link)


def _link(session: TableSession, cfg: TableConfig, fleet: FleetPlug) -> TableLink:
    """The fleet's link of a table with a ``[fleet]`` section (imported here: a table without one, and the
    simulator, never load the broker's client and the commands' signatures)."""
    from firmware.fleet.table_link import TableLink
    return TableLink(session, cfg, fleet)


def _staff_rules(store: TableStore, rules: RuleSet) -> RuleSet:
    """The rule set staff chose for this table (kept in its database) when it plays the same tile set as the one
    configured; else the configured one."""
    try:
        chosen = StaffRows(store).settings().get("rules")
    except (StorageError, TableError) as exc:
        log.error("the staff's settings could not be read: %s", exc)
        return rules
    if not isinstance(chosen, str) or chosen == rules.name:
        return rules
    try:
        staff_rules = load_ruleset(chosen)
    except Exception as exc:  # noqa: BLE001 - a rule set gone or broken since: the configured one plays
        log.error("the rule set staff chose (%s) cannot be loaded: %s; playing %s", chosen[:32], exc, rules.name)
        return rules
    if staff_rules.tile_set != rules.tile_set:
        log.warning("the rule set staff chose (%s) plays %d tiles, the configured %s %d: playing %s", chosen,
                    staff_rules.tile_set, rules.name, rules.tile_set, rules.name)
        return rules
    log.info("rule set %s, as staff chose (configured: %s)", chosen, rules.name)
    return staff_rules


@dataclass
class BenchTable:
    """The mechanisms and the reader of a simulated table, no controller: what a bench tester drives."""

    bus: EventBus
    backend: Hardware
    table: Table

    def close(self) -> None:
        self.table.reader.stop()
        self.backend.close()


def build_bench(cfg: TableConfig, loop: Loop, world: Any, rng: random.Random,
                listen: Callable[[EventBus], None] | None = None) -> BenchTable:
    """The ``BENCH`` profile: ``world``'s pins and reader behind the table's mechanisms (``listen(bus)`` before any
    of them exists)."""
    from sim.backend import SimBackend

    backend = SimBackend(cfg, loop, world)
    bus = EventBus(loop.now)
    if listen is not None:
        listen(bus)
    return BenchTable(bus, backend, Table(cfg, backend, loop, bus, rng))
