"""A simulated table ready to drive: virtual loop, world, backend and firmware Table.

Tests, benchmarks and ``mjtable sim`` build one of these instead of wiring
the pieces by hand.  Everything random comes from the seed.
"""

from __future__ import annotations

import random
from pathlib import Path

from firmware.config import TableConfig, default_table_path, load_table_config
from firmware.events import Event
from firmware.reader.driver import LinkState
from firmware.reader.verify import Verification
from firmware.reader.wall_map import WallRead
from firmware.faults import Fault
from firmware.reader.wall_session import WallSession
from firmware.stacking import CycleResult, StackingCycle
from firmware.root.table import build_bench
from sim.faults import FaultSpec, apply_faults
from sim.virtual_loop import SimTimeout, VirtualLoop
from sim.world import TableWorld


class SimTable:
    def __init__(self, cfg: TableConfig | None = None, seed: int = 1, faults: list[FaultSpec] | None = None,
                 config_path: str | Path | None = None) -> None:
        self.cfg = cfg or load_table_config(config_path or default_table_path())
        self.seed = seed
        self.loop = VirtualLoop()
        self.world = TableWorld(self.cfg, self.loop, seed)
        self.events: list[Event] = []
        self.bench = build_bench(self.cfg, self.loop, self.world, random.Random(seed + 1),
                                 listen=lambda bus: bus.subscribe("", self.events.append))
        self.backend, self.bus, self.table = self.bench.backend, self.bench.bus, self.bench.table
        self.safety = self.table.safety
        self._cycle: StackingCycle | None = None
        self.table.faults.attach(self._bench_fault)
        apply_faults(self.world, faults or [])

    def faults(self) -> list:
        return [e.data["fault"] for e in self.events if e.topic == "fault"]

    def stack_set(self, set_id: str = "A", timeout_s: float = 300.0, on_tile=None) -> CycleResult:
        """Load a set onto the disk and run one stacking cycle to its end."""
        results: list[CycleResult] = []
        self.world.load_set(set_id)
        self.world.event("stacking")
        cycle = StackingCycle(self.table, self.cfg.tiles_per_side, results.append,
                              on_tile=None if on_tile is None else lambda side, count, at_s: on_tile(side, at_s))
        self._cycle = cycle
        try:
            cycle.start()
            self.loop.run_until(lambda: bool(results), timeout_s)
        finally:
            self._cycle = None
        return results[0]

    def _bench_fault(self, fault: Fault) -> None:
        """No controller on the bench: a fault that stops the table ends the cycle under test."""
        if fault.tier.stops_table and self._cycle is not None:
            self._cycle.fail(fault)

    def start_reader(self, timeout_s: float = 5.0) -> bool:
        """Start the reader driver and run until its link is up (False if it did not come up)."""
        reader = self.table.reader
        reader.start()
        try:
            self.loop.run_until(lambda: reader.state is LinkState.UP, timeout_s)
        except SimTimeout:
            return False
        return True

    def stack_and_read(self, set_id: str = "A", timeout_s: float = 300.0) -> tuple[CycleResult, Verification]:
        """Stack a set with the reader streaming, then build and verify its wall map."""
        if self.table.reader.state is LinkState.CLOSED:
            self.start_reader()
        cfg = self.cfg
        read = WallRead(cfg.tiles_per_side, cfg.wall, cfg.reader.match_tolerance_s)
        session = WallSession(self.loop, self.table.faults, self.table.reader, self.world.registry, set_id,
                              self.world.tile_set, read, cfg.reader.rejects_any_defect)
        session.start()
        result = self.stack_set(set_id, timeout_s, on_tile=session.tile_counted)
        verified: list[Verification] = []
        session.finish(verified.append)
        self.loop.run_until(lambda: bool(verified), 5.0)
        self.last_session = session
        return result, verified[0]

    def close(self) -> None:
        self.bench.close()
