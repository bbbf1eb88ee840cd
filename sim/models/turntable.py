"""Turntable (大盘) and magnet ring (磁圈): shuffle the set and feed the heads.

While both motors run, the ring lifts tiles from the disk and drops them at
the heads at random instants (a Poisson stream of ``tile_rate_per_s`` for
all sides together, from the seeded generator).  A tile is lifted at a
random point of the ring and falls into the first head it passes whose gate
is open and whose track has room; if none has, it stays on the ring.  The disk's index sensor pulses once a
revolution: the disk keeps its angle when it stops, so short runs (back-pressure) add up to revolutions as
on a real table.  A stall stops the disk: no index pulses, no tiles.
"""

from __future__ import annotations

import random
from typing import Callable

from firmware.loop import Handle, Loop
from sim.models.head import HeadModel
from sim.models.io import SimSensor
from sim.tileset import SimTile

INDEX_PULSE_FRACTION = 0.05


class TurntableModel:
    def __init__(self, loop: Loop, rng: random.Random, revolution_s: float, tile_rate_per_s: float,
                 index: SimSensor, heads: list[HeadModel]) -> None:
        self._loop = loop
        self._rng = rng
        self.revolution_s = revolution_s
        self.tile_rate_per_s = tile_rate_per_s
        self._index = index
        self._heads = heads
        self.hopper: list[SimTile] = []
        self.disk_on = False
        self.ring_on = False
        self.stalled = False
        self._index_timer: Handle | None = None
        self._drop_timer: Handle | None = None
        self.drops = 0
        self.angle = 0.0                 # fraction of a revolution past the index mark
        self._turning_since_s: float | None = None
        self.ring_pick: Callable[[HeadModel, list[SimTile]], int] | None = None   # a worn ring (sim.shuffle_bias)

    @property
    def turning(self) -> bool:
        return self.disk_on and not self.stalled

    @property
    def feeding(self) -> bool:
        return self.turning and self.ring_on

    def load(self, tiles: list[SimTile]) -> None:
        """Tiles pushed through the drop hole land on the disk (already shuffled by the caller)."""
        self.hopper.extend(tiles)

    def set_disk(self, on: bool) -> None:
        self.disk_on = on
        self._update()

    def set_ring(self, on: bool) -> None:
        self.ring_on = on
        self._update()

    def stall(self) -> None:
        self.stalled = True
        self._update()

    def _update(self) -> None:
        if self.turning and self._index_timer is None:
            self._turning_since_s = self._loop.now()
            self._index_timer = self._loop.call_later(self.revolution_s * (1.0 - self.angle), self._index_pulse)
        elif not self.turning and self._index_timer is not None:
            self._index_timer.cancel()
            self._index_timer = None
            if self._turning_since_s is not None:
                turned = (self._loop.now() - self._turning_since_s) / self.revolution_s
                self.angle = (self.angle + turned) % 1.0
                self._turning_since_s = None
        if self.feeding and self._drop_timer is None:
            self._schedule_drop()
        elif not self.feeding and self._drop_timer is not None:
            self._drop_timer.cancel()
            self._drop_timer = None

    def _index_pulse(self) -> None:
        self.angle = 0.0
        self._turning_since_s = self._loop.now()
        self._index.set(True)
        self._loop.call_later(self.revolution_s * INDEX_PULSE_FRACTION, self._index.set, False)
        self._index_timer = self._loop.call_later(self.revolution_s, self._index_pulse)

    def _schedule_drop(self) -> None:
        self._drop_timer = self._loop.call_later(self._rng.expovariate(self.tile_rate_per_s), self._drop)

    def _drop(self) -> None:
        self._drop_timer = None
        if self.hopper:
            # The tile is lifted at a random point of the ring and falls into the
            # first chute it passes that has room.
            first = self._rng.randrange(len(self._heads))
            for i in range(len(self._heads)):
                head = self._heads[(first + i) % len(self._heads)]
                if head.accepts():
                    i = (self._rng.randrange(len(self.hopper)) if self.ring_pick is None
                         else self.ring_pick(head, self.hopper))
                    tile = self.hopper.pop(i)
                    self.drops += 1
                    head.receive(tile)
                    break
        if self.feeding:
            self._schedule_drop()
