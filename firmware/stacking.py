"""One stacking cycle: shuffle the used set and build four walls under the table.

The turntable and ring run; each head counts and stacks its side until its
target; the feed-full sensors pause the disk and ring while a track is
full (back-pressure).  The cycle watches the whole: no tile anywhere for
``tiles_out_s`` while the disk turns (a revolution at least, and turning
still: a disk that does not turn is the turntable's E60, not tiles missing)
means the set ran out (E62); one side
without tiles while the others progress is starved (E41..E44, reported,
stacking goes on); a cycle past ``cycle_limit_s`` is too slow (E61, reported).
A fault of a mechanism stops every motor of the cycle and ends it.  The
owner hears of every counted tile (``on_tile``) and of every stack as its
cam leaves home (``on_stack``, with the tiles the side will then hold), by
direct calls before observers hear of them on the bus: that is what it
persists and reads tags against.

The ring drops each tile into the first open head it passes, so left to
itself a side can run dry (its cam standing still, a stack's time lost to
the whole cycle) while another's track fills.  The cycle steers the tiles
to the sides that need them: while some side has fewer tiles waiting than
its next stack takes, only the gates of such sides are open (first those
whose cam already stands still); when none does, every counting side's gate
is open and the tracks fill up to their feed-full sensors.  A gate is never
closed on every side that still counts, so the tiles-out and starvation
supervision see what they saw before; a side's count, its stacks and its
reading are as they were (a tile is counted and read in whichever track it
falls).  A table model may turn the steering off (``[stacker] steer_tiles``:
a flap too slow to switch a few times a second).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable

from firmware.faults import Fault, FaultCode, FaultTier
from firmware.loop import Handle, call_later_again
from firmware.table import Table

log = logging.getLogger(__name__)


@dataclass
class CycleResult:
    ok: bool
    started_s: float
    finished_s: float
    target_tiles: int
    tiles: list[int]
    stacks: list[int]
    side_done_s: list[float | None]
    fault: Fault | None = None
    reported: list[Fault] = field(default_factory=list)
    pauses: int = 0
    empty: bool = False          # a probe found no tiles on the disk at all

    @property
    def duration_s(self) -> float:
        return self.finished_s - self.started_s


TileCallback = Callable[[int, int, float], None]    # (side, count, at_s)
StackCallback = Callable[[int, int], None]          # (side, tiles stacked once the stack begun now is made)


class StackingCycle:
    def __init__(self, table: Table, target_tiles: int, done: Callable[[CycleResult], None],
                 progress: list[tuple[int, int]] | None = None, probe: bool = False,
                 on_tile: TileCallback | None = None, on_stack: StackCallback | None = None) -> None:
        """``progress``: per side (counted, stacked) to continue an interrupted cycle.  ``probe``: the disk
        may be empty (the centre was opened to load); no tile at all then ends the cycle without a fault."""
        self.probe = probe
        self.on_tile = on_tile
        self.on_stack = on_stack
        self.progress = progress or [(0, 0)] * len(table.heads)
        self.table = table
        self.loop = table.loop
        self.limits = table.cfg.limits
        self.target_tiles = target_tiles
        self._done = done
        self.running = False
        self.started = False            # the heads were started by this cycle (their counts are its own)
        self.paused = False
        self.started_s = 0.0
        self.reported: list[Fault] = []
        self.pauses = 0
        self._full: set[int] = set()
        self._grace: dict[int, Handle] = {}
        self._timers: dict[str, Handle] = {}
        self._starve: dict[int, Handle] = {}
        self._starve_reported: set[int] = set()
        self._revolutions_at_arm = 0

    def start(self) -> bool:
        """Open the gates and run; False (nothing moved) when the safety supervisor refuses."""
        t = self.table
        if not t.safety.may_move("stacking"):
            return False            # an interlock holds: the fault policy stops the table (nothing opened)
        self.running = True
        self.started = True
        self.started_s = self.loop.now()
        t.bus.publish("stacking.start", target_tiles=self.target_tiles)
        for head in t.heads:
            head.on_tile = self._tile
            head.on_complete = self._side_complete
            head.on_fault = self._fault
            head.on_feed_full = self._feed_full
            head.on_stack = self._stack
            head.on_turn_start = self._turn_start
            head.on_need = self._need
            counted, stacked = self.progress[head.side]
            head.start(self.target_tiles, counted, stacked)
        self._steer()
        if all(h.complete for h in t.heads):
            self.loop.call_later(0.0, self._finish, None)
            return True
        t.turntable.on_fault = self._fault
        self._timers["cycle"] = self.loop.call_later(self.limits.cycle_limit_s, self._too_slow)
        if not self._full:
            self._run_disk()
        return True

    # -- disk and back-pressure --------------------------------------------
    def _run_disk(self) -> None:
        if not self.table.turntable.start():
            return                  # refused by an interlock: the fault policy stops the table
        self._arm_tiles_out()
        for head in self.table.heads:
            if head.active and head.side not in self._starve:
                self._arm_starve(head.side)

    def _hold_disk(self) -> None:
        # Starvation timers keep running through short back-pressure pauses: a side
        # that gets nothing while the others fill their tracks is still starved.
        self.table.turntable.stop()
        self._cancel("tiles_out")

    def _feed_full(self, side: int, full: bool) -> None:
        """A track filled or emptied.  A full track that stays full past the grace
        (a cam turn in progress frees room) pauses the disk and ring until every
        track has room again."""
        if not self.running:
            return
        grace = self._grace.pop(side, None)
        if grace is not None:
            grace.cancel()
        if full:
            self._grace[side] = self.loop.call_later(self.limits.feed_full_grace_s, self._hold_for, side)
            return
        was_paused = bool(self._full)
        self._full.discard(side)
        if was_paused and not self._full and not self.paused:
            self._run_disk()

    def _hold_for(self, side: int) -> None:
        self._grace.pop(side, None)
        if not self.running:
            return
        if not self._full:
            self.pauses += 1
            self._hold_disk()
        self._full.add(side)

    # -- progress ------------------------------------------------------------
    def _tile(self, side: int, count: int) -> None:
        if self.on_tile is not None:
            self.on_tile(side, count, self.loop.now())
        self.table.bus.publish("stacking.tile", side=side, count=count)
        self._arm_tiles_out()
        self._starve_reported.discard(side)
        if self.table.heads[side].counted < self.target_tiles:
            self._arm_starve(side)
        else:
            timer = self._starve.pop(side, None)
            if timer:
                timer.cancel()

    def _need(self, _side: int) -> None:
        if self.running:
            self._steer()

    def _steer(self) -> None:
        """Open the gates of the sides that need tiles for their next stack (the ones whose cam stands still
        first), else of every side that still counts.  A side reported starved keeps its gate open but takes no
        precedence."""
        if not self.table.cfg.stacker.steer_tiles:
            return                          # (every counting side's gate open: the heads' own default)
        counting = [h for h in self.table.heads if h.counting]
        # (a side reported starved gets nothing however open its gate: it does not hold the others back)
        needy = [h for h in counting if h.needs_tiles and h.side not in self._starve_reported]
        idle = [h for h in needy if h.idle]
        admitted = idle or needy or counting
        for head in admitted:               # (opened first: no instant with every gate closed)
            head.admit(True)
        for head in counting:
            if head not in admitted:
                head.admit(False)

    def _turn_start(self, side: int, stacked_after: int) -> None:
        if self.running and self.on_stack is not None:
            self.on_stack(side, stacked_after)

    def _stack(self, side: int, index: int, tiles: int) -> None:
        self.table.bus.publish("stacking.stack", side=side, index=index, tiles=tiles,
                               stacked=self.table.heads[side].stacked_tiles)

    def _arm_starve(self, side: int) -> None:
        # (put off, not made anew, where the loop can: every tile arms it, and it hardly ever runs)
        self._starve[side] = call_later_again(self.loop, self._starve.get(side), self.limits.starve_side_s,
                                              self._starved, side)

    def _starved(self, side: int) -> None:
        self._starve.pop(side, None)
        now = self.loop.now()
        others = [h for h in self.table.heads if h.side != side and h.last_tile_s is not None
                  and now - h.last_tile_s < self.limits.starve_side_s]
        if others and side not in self._starve_reported:
            self._starve_reported.add(side)
            self._report(Fault(FaultCode.starved(side), now, f"stacker{side}",
                               {"counted": self.table.heads[side].counted, "target": self.target_tiles}))
            if self.running:
                self._steer()

    def _side_complete(self, side: int) -> None:
        self.table.bus.publish("stacking.side_done", side=side, tiles=self.table.heads[side].stacked_tiles,
                               stacks=self.table.heads[side].stacks)
        timer = self._starve.pop(side, None)
        if timer:
            timer.cancel()
        if all(h.complete for h in self.table.heads):
            self._finish(None)

    def _arm_tiles_out(self) -> None:
        self._revolutions_at_arm = self.table.turntable.revolutions
        # (put off, not made anew, where the loop can: every tile arms it, and it hardly ever runs)
        self._timers["tiles_out"] = call_later_again(self.loop, self._timers.get("tiles_out"),
                                                     self.limits.tiles_out_s, self._tiles_out)

    def _tiles_out(self) -> None:
        turntable = self.table.turntable
        if turntable.revolutions == self._revolutions_at_arm or not turntable.turning:
            # the disk did not turn all that time, or does not turn now (stalled: its own supervisor says E60),
            # so the set has not run out
            self._arm_tiles_out()
            return
        heads = self.table.heads
        if self.probe and all(h.counted == 0 for h in heads) and not any(self.progress[h.side][0] for h in heads):
            self._finish(None, empty=True)
            return
        missing = {h.side: self.target_tiles - h.counted for h in heads if h.counted < self.target_tiles}
        self._fault(Fault(FaultCode.E62, self.loop.now(), "stacking",
                          {"missing_per_side": missing, "missing": sum(missing.values())}))

    def _too_slow(self) -> None:
        self._report(Fault(FaultCode.E61, self.loop.now(), "stacking", {"limit_s": self.limits.cycle_limit_s}))

    # -- outcome ---------------------------------------------------------------
    def _report(self, fault: Fault) -> None:
        self.reported.append(fault)
        self.table.faults.report(fault)

    def _fault(self, fault: Fault) -> None:
        if not self.running:
            return
        log.info("stacking stopped: %s", fault.code.value)
        if fault.source == "stacking":
            self.table.faults.report(fault)     # (the fault policy stops the cycle: no result then)
        self._finish(fault)

    def pause(self) -> None:
        """Players add forgotten tiles (both lift keys): the disk and ring stop, heads finish their turn."""
        if not self.running or self.paused:
            return
        self.paused = True
        self.pauses += 1
        for timer in [*self._timers.values(), *self._starve.values()]:
            timer.cancel()
        self._timers.clear()
        self._starve.clear()
        self.table.turntable.stop()
        self.table.bus.publish("stacking.paused")

    def resume(self) -> None:
        if not self.running or not self.paused:
            return
        self.paused = False
        self._timers["cycle"] = self.loop.call_later(self.limits.cycle_limit_s, self._too_slow)
        self.table.bus.publish("stacking.resumed")
        if not self._full:
            self._run_disk()

    def counts(self) -> list[tuple[int, int]]:
        """Per side (counted, stacked) as this cycle left it: the heads' own counts once it has started, else
        the progress it was given (a cycle refused at its start, or stopped before the reader answered, moved
        nothing: the heads still hold the counts of an earlier cycle)."""
        if not self.started:
            return list(self.progress)
        return [(h.counted, h.stacked_tiles) for h in self.table.heads]

    def fail(self, fault: Fault) -> None:
        """End the cycle with a fault raised elsewhere (safety interlock)."""
        self._finish(fault)

    def abort(self) -> None:
        """Stop everything now (reset key, latched fault elsewhere); no result is reported."""
        self.running = False
        self._stop_all()

    def _stop_all(self) -> None:
        for timer in [*self._timers.values(), *self._starve.values(), *self._grace.values()]:
            timer.cancel()
        self._timers.clear()
        self._starve.clear()
        self._grace.clear()
        self.table.turntable.stop()
        for head in self.table.heads:
            head.stop()

    def _finish(self, fault: Fault | None, empty: bool = False) -> None:
        if not self.running:
            return
        self.running = False
        self._stop_all()
        if fault is not None and fault.tier is FaultTier.LATCHED:
            self.table.safe_stop_all()
        heads = self.table.heads
        result = CycleResult(fault is None and not empty, self.started_s, self.loop.now(), self.target_tiles,
                             [h.stacked_tiles for h in heads], [h.stacks for h in heads],
                             [h.complete_s for h in heads], fault, self.reported, self.pauses, empty)
        self.table.bus.publish("stacking.done", ok=result.ok, duration_s=result.duration_s,
                               fault=fault.code.value if fault else None)
        self._done(result)

    def _arm(self, name: str, delay_s: float, fn: Callable[[], None]) -> None:
        self._cancel(name)
        self._timers[name] = self.loop.call_later(delay_s, fn)

    def _cancel(self, name: str) -> None:
        timer = self._timers.pop(name, None)
        if timer is not None:
            timer.cancel()
