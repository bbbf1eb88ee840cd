"""A stacking head: feed track, entry gate, tile counter, cam and the side's groove.

Tiles dropped by the ring enter the feed track only while the entry gate is
open and the track has room.  Each entering tile blocks the counter optic
for ``pulse_s`` (one ``tile_in`` pulse).  A full track covers the
feed-full sensor.  Half way through each cam turn the head pushes the two
oldest tiles of its track (one, if only one is there) as a stack into the
groove; the groove is the wall being built under the table top.
"""

from __future__ import annotations

from collections import deque
from typing import Callable

from firmware.loop import Loop
from sim.models.cam import CamModel
from sim.models.io import SimSensor
from sim.tileset import SimTile

PULSE_S = 0.02


class HeadModel:
    def __init__(self, loop: Loop, side: int, cam_turn_s: float, home_window: float, capacity: int,
                 home: SimSensor, tile_in: SimSensor, feed_full: SimSensor) -> None:
        self.side = side
        self._loop = loop
        self.capacity = capacity
        self._tile_in = tile_in
        self._feed_full = feed_full
        self.track: deque[SimTile] = deque()
        self.groove: list[tuple[SimTile, ...]] = []   # stacks in the order they were pushed
        self.gate_open = False
        self.gate_stuck_open = False   # injected fault: the entry flap no longer closes
        self.optic_busy = False     # a tile is passing the counter optic: the next cannot enter yet
        self.tiles_entered = 0
        self.uncounted: list[SimTile] = []   # tiles that entered while the counter optic was dead
        self.cam = CamModel(loop, f"stacker{side}", cam_turn_s, home_window, home, self._push_stack)
        self.on_tile: list[Callable[[int, SimTile], None]] = []   # (side, tile) as it passes the antenna

    def accepts(self) -> bool:
        return (self.gate_open or self.gate_stuck_open) and not self.optic_busy and len(self.track) < self.capacity

    def set_gate(self, open_: bool) -> None:
        self.gate_open = open_

    def receive(self, tile: SimTile) -> None:
        self.track.append(tile)
        self.tiles_entered += 1
        if self._tile_in.stuck is not None:
            self.uncounted.append(tile)      # no pulse reached the controller for this one
        self.optic_busy = True
        self._tile_in.set(True)
        self._loop.call_later(PULSE_S, self._tile_passed)
        self._feed_full.set(len(self.track) >= self.capacity)
        for callback in self.on_tile:
            callback(self.side, tile)

    def _tile_passed(self) -> None:
        self.optic_busy = False
        self._tile_in.set(False)

    def _push_stack(self) -> None:
        if not self.track:
            return
        n = min(2, len(self.track))
        stack = tuple(self.track.popleft() for _ in range(n))
        self.groove.append(stack)
        self._feed_full.set(len(self.track) >= self.capacity)

    def clear_uncounted(self) -> list[SimTile]:
        """A technician takes the tiles the controller never counted out of the track."""
        taken, self.uncounted = self.uncounted, []
        for tile in taken:
            if tile in self.track:
                self.track.remove(tile)
        self.settle()
        return taken

    def settle(self) -> None:
        """The feed-full sensor after the track was filled by hand (a table restored between runs)."""
        self._feed_full.set(len(self.track) >= self.capacity)

    def take_groove(self) -> list[tuple[SimTile, ...]]:
        stacks, self.groove = self.groove, []
        return stacks
