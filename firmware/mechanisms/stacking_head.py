"""A stacking head: counts incoming tiles, turns its cam once per two-tile stack.

Tiles from the ring enter the head's feed track through an entry gate and
pass the counter optic (one ``tile_in`` pulse each) and the reader antenna.
With two tiles waiting the head turns its cam once, pushing one stack (墩)
into the side's groove half way round; the owner hears of the stack as the
cam leaves home (``on_turn_start``), because from then on the stack is as
good as made (a cam stopped mid-turn by a power cut finishes the turn when
it is homed), and not before (a turn stopped at home pushes nothing).  When the side has counted its target the gate
closes; the 108 set's odd last tile makes a single-tile stack.  The
feed-full sensor is reported to the stacking cycle for back-pressure; held
active too long it is stuck (E51..E54).  A tile counted past the target is
E63; a cam that does not come home is E31..E34.

The stacking cycle may also close a side's gate for a while (``admit``)
so that the ring's tiles go to the sides that need them for their next
stack: a gate is open only while the side still counts towards its target
and the cycle admits tiles to it; the owner hears of every change of what
the side waits for (``on_need``).
"""

from __future__ import annotations

from typing import Callable

from firmware.faults import Fault, FaultCode
from firmware.loop import Handle, Loop
from firmware.mechanisms.base import MoveResult
from firmware.mechanisms.cam import CamMechanism
from firmware.ports.hardware import DigitalInput, DigitalOutput


class StackingHead:
    def __init__(self, side: int, loop: Loop, cam: CamMechanism, gate: DigitalOutput,
                 tile_in: DigitalInput, feed_full: DigitalInput, feed_full_stuck_s: float) -> None:
        self.side = side
        self.loop = loop
        self.cam = cam
        self.gate = gate
        self.tile_in = tile_in
        self.feed_full = feed_full
        self.feed_full_stuck_s = feed_full_stuck_s
        self.target_tiles = 0
        self.counted = 0
        self.stacked_tiles = 0
        self.stacks = 0
        self.pending = 0
        self.active = False
        self.last_tile_s: float | None = None
        self.complete_s: float | None = None
        self.on_tile: Callable[[int, int], None] | None = None        # (side, count)
        self.on_stack: Callable[[int, int, int], None] | None = None  # (side, stack index, tiles in it)
        self.on_turn_start: Callable[[int, int], None] | None = None  # (side, tiles stacked once this turn is done)
        self.on_complete: Callable[[int], None] | None = None
        self.on_fault: Callable[[Fault], None] | None = None
        self.on_feed_full: Callable[[int, bool], None] | None = None
        self.on_need: Callable[[int], None] | None = None             # (side): what it waits for changed
        self.admitting = True           # the cycle lets tiles in (it closes the gate of a side that has enough)
        self._feed_timer: Handle | None = None
        self._in_turn = 0
        cam.on_left_home = self._cam_left_home
        tile_in.on_edge(self._tile_edge)
        feed_full.on_edge(self._feed_full_edge)

    @property
    def outputs(self) -> list[DigitalOutput]:
        return [self.cam.motor, self.gate]

    @property
    def complete(self) -> bool:
        return self.active is False and self.complete_s is not None

    @property
    def counting(self) -> bool:
        """Still to count tiles towards its target (its gate may open)."""
        return self.active and self.counted < self.target_tiles

    @property
    def needs_tiles(self) -> bool:
        """Counting, and fewer tiles wait in the track than its next stack takes: the cam will stand still
        when its turn ends (or stands still now) unless tiles come."""
        if not self.counting:
            return False
        wanted = self.target_tiles - self.counted + self.pending        # (min(2, wanted): asked at every tile)
        return self.pending < (wanted if wanted < 2 else 2)

    @property
    def idle(self) -> bool:
        """Counting, the cam still: the side waits for tiles now."""
        return self.counting and not self.cam.busy

    def admit(self, admitting: bool) -> None:
        """Let tiles in (True) or keep the gate closed while the side has enough (False)."""
        if admitting != self.admitting:
            self.admitting = admitting
            self._set_gate()

    def _set_gate(self) -> None:
        """The gate is open while the side counts towards its target and the cycle admits tiles to it."""
        open_ = self.counting and self.admitting
        if open_ != self.gate.active:
            self.gate.set(open_)

    def _need_changed(self) -> None:
        if self.on_need is not None:
            self.on_need(self.side)

    def start(self, target_tiles: int, counted: int = 0, stacked: int = 0) -> None:
        """Begin a side: open the gate and stack until ``target_tiles`` are in.

        ``counted`` / ``stacked`` continue an interrupted side (after a power cut or
        missing tiles): the tiles counted but not yet stacked wait in the track.
        """
        self.target_tiles = target_tiles
        self.counted, self.stacked_tiles, self.pending = counted, stacked, counted - stacked
        self.stacks = (stacked + 1) // 2
        self.complete_s = None
        self.last_tile_s = None
        self.admitting = True
        if stacked >= target_tiles:
            self.active = False
            self.complete_s = self.loop.now()
            return
        self.active = True
        self._set_gate()
        if self.feed_full.active:
            self._feed_full_edge(True)
        self._maybe_turn()

    def stop(self) -> None:
        """Close the gate and stop the cam (the cycle is over or aborted)."""
        self.active = False
        self.gate.set(False)
        if self._feed_timer is not None:
            self._feed_timer.cancel()
            self._feed_timer = None
        self.cam.abort()

    def _tile_edge(self, active: bool) -> None:
        if not active:
            return
        self.counted += 1
        self.last_tile_s = self.loop.now()
        if not self.active or self.counted > self.target_tiles:
            self._fault(FaultCode.E63, counted=self.counted, target=self.target_tiles)
            return
        if self.on_tile is not None:
            self.on_tile(self.side, self.counted)
        if self.counted == self.target_tiles:
            self._set_gate()
        self.pending += 1
        self._maybe_turn()
        self._need_changed()

    def _maybe_turn(self) -> None:
        if self.cam.busy or not self.active:
            return
        last_tile = self.counted == self.target_tiles
        if self.pending >= 2 or (last_tile and self.pending == 1):
            self._in_turn = min(2, self.pending)
            self.pending -= self._in_turn
            self.cam.turn(self._turned)

    def _cam_left_home(self) -> None:
        # once the cam has left home this stack is pushed, by this turn or by the homing turn after a power cut:
        # the owner counts it now (a turn stopped before it left home pushes nothing and counts nothing)
        if self.on_turn_start is not None:
            self.on_turn_start(self.side, self.stacked_tiles + self._in_turn)

    def _turned(self, result: MoveResult) -> None:
        if not result.ok:
            self.active = False
            self.gate.set(False)
            if self.on_fault is not None and result.fault is not None:
                self.on_fault(result.fault)
            return
        self.stacks += 1
        self.stacked_tiles += self._in_turn
        if self.on_stack is not None:
            self.on_stack(self.side, self.stacks - 1, self._in_turn)
        if self.stacked_tiles >= self.target_tiles:
            self.active = False
            self.complete_s = self.loop.now()
            if self.on_complete is not None:
                self.on_complete(self.side)
            return
        self._maybe_turn()
        self._need_changed()

    def _feed_full_edge(self, active: bool) -> None:
        if self._feed_timer is not None:
            self._feed_timer.cancel()
            self._feed_timer = None
        if not self.active:
            return
        if active:
            self._feed_timer = self.loop.call_later(self.feed_full_stuck_s, self._feed_stuck)
        if self.on_feed_full is not None:
            self.on_feed_full(self.side, active)

    def _feed_stuck(self) -> None:
        self._feed_timer = None
        if self.active and self.feed_full.active:
            waiting = self.counted - self.stacked_tiles
            # a full track with (almost) nothing counted in it: either the sensor lies or the counter does
            reason = ("no counted tile waits in the track: the feed-full sensor is stuck, or the tile counter "
                      "(tile_in) missed the tiles there" if waiting < 2 else "the cam does not clear the track")
            self._fault(FaultCode.feed_full_stuck(self.side), held_s=self.feed_full_stuck_s,
                        counted_waiting=waiting, reason=reason)

    def _fault(self, code: FaultCode, **detail) -> None:
        self.stop()
        fault = Fault(code, self.loop.now(), f"stacker{self.side}", detail)
        self.cam.faults.report(fault)
        if self.on_fault is not None:
            self.on_fault(fault)
