"""A simulated table ready to drive: virtual loop, world, backend and firmware Table.

Tests, benchmarks and ``mjtable sim`` build one of these instead of wiring
the pieces by hand.  Everything random comes from the seed.
"""

from __future__ import annotations

import random
from pathlib import Path

from firmware.config import TableConfig, default_table_path, load_table_config
from firmware.events import Event, EventBus
from firmware.safety import SafetySupervisor
from firmware.stacking import CycleResult, StackingCycle
from firmware.table import Table
from sim.backend import SimBackend
from sim.faults import FaultSpec, apply_faults
from sim.virtual_loop import VirtualLoop
from sim.world import TableWorld


class SimTable:
    def __init__(self, cfg: TableConfig | None = None, seed: int = 1, faults: list[FaultSpec] | None = None,
                 config_path: str | Path | None = None) -> None:
        self.cfg = cfg or load_table_config(config_path or default_table_path())
        self.seed = seed
        self.loop = VirtualLoop()
        self.world = TableWorld(self.cfg, self.loop, seed)
        self.backend = SimBackend(self.cfg, self.loop, self.world)
        self.bus = EventBus(self.loop.now)
        self.events: list[Event] = []
        self.bus.subscribe("", self.events.append)
        self.table = Table(self.cfg, self.backend, self.loop, self.bus, random.Random(seed + 1))
        self.safety = SafetySupervisor(self.table)
        apply_faults(self.world, faults or [])

    def faults(self) -> list:
        return [e.data["fault"] for e in self.events if e.topic == "fault"]

    def stack_set(self, set_id: str = "A", timeout_s: float = 300.0) -> CycleResult:
        """Load a set onto the disk and run one stacking cycle to its end."""
        results: list[CycleResult] = []
        self.world.load_set(set_id)
        self.world.event("stacking")
        cycle = StackingCycle(self.table, self.cfg.tiles_per_side, results.append)
        self.safety.on_trip.append(cycle.fail)
        try:
            cycle.start()
            self.loop.run_until(lambda: bool(results), timeout_s)
        finally:
            self.safety.on_trip.remove(cycle.fail)
        return results[0]

    def close(self) -> None:
        self.backend.close()
