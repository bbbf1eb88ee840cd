"""Running the virtual loop against the wall clock: as fast as possible, or X times real time to watch.

The simulated table has no clock of its own; the virtual loop jumps from
event to event.  To watch a run (``mjtable sim --speed 1``) the pacer holds
each jump back until the wall clock has caught up with it, scaled by the
speed factor, and calls ``on_tick`` about every ``tick_s`` of wall time while
it waits, so a live line can show the table between events.  At ``max`` the
loop runs unpaced in slices of simulated time, with ``on_tick`` between
slices.  This is the one place on the simulated side that reads the host
clock and sleeps; the firmware never does.
"""

from __future__ import annotations

import time
from typing import Callable

from sim.virtual_loop import VirtualLoop

TICK_S = 0.2            # wall seconds between live-line updates while paced
SLICE_S = 30.0          # simulated seconds between progress updates at max speed


class Stopwatch:
    """Wall time of a run (for the report's ``wall_s`` and ``speedup``)."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._start = clock()

    @property
    def elapsed_s(self) -> float:
        return self._clock() - self._start


class Pacer:
    def __init__(self, loop: VirtualLoop, speed: float | None, on_tick: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
                 tick_s: float = TICK_S) -> None:
        if speed is not None and speed <= 0:
            raise ValueError("--speed is 'max' or a positive factor of real time")
        self.loop, self.speed = loop, speed
        self.on_tick = on_tick
        self._clock, self._sleep, self.tick_s = clock, sleep, tick_s
        self._origin: tuple[float, float] | None = None     # (simulated s, wall s) when pacing began

    @property
    def shown_now_s(self) -> float:
        """The simulated time to show now: between events, where the wall clock says the table is."""
        if self._origin is None or self.speed is None or self.loop.pacer is None:
            return self.loop.now()
        sim0, wall0 = self._origin
        return max(self.loop.now(), sim0 + (self._clock() - wall0) * self.speed)

    def run_until(self, done: Callable[[], bool], timeout_s: float) -> bool:
        """Run the loop until ``done()``; False if ``timeout_s`` of simulated time passed first."""
        deadline = self.loop.now() + timeout_s
        if self.speed is not None:
            self._origin = (self.loop.now(), self._clock())
            self.loop.pacer = self._hold
        try:
            while not done():
                now = self.loop.now()
                if now >= deadline:
                    return False
                slice_end = min(now + SLICE_S, deadline)
                if self.loop.pacer is None:
                    self.loop.run_steps(done, slice_end)
                else:
                    while not done() and self.loop.step(slice_end):
                        pass
                if done():
                    break
                if self.loop.pending_timers() == 0:
                    return False            # nothing will ever happen again
                if self.loop.pacer is not None:
                    self._hold(slice_end)
                self.loop.run_for(slice_end - self.loop.now())
                if self.on_tick is not None:
                    self.on_tick()
            return True
        finally:
            self.loop.pacer = None

    def _hold(self, when_s: float) -> None:
        """Before the loop jumps to ``when_s``: wait until the wall clock (times speed) is there."""
        assert self._origin is not None and self.speed is not None
        sim0, wall0 = self._origin
        target_wall = wall0 + (when_s - sim0) / self.speed
        while True:
            left = target_wall - self._clock()
            if left <= 0 or self.loop.has_posted():
                return          # (a request posted from another thread, e.g. the diag socket, goes first)
            self._sleep(min(left, self.tick_s))
            if self.on_tick is not None and left > self.tick_s:
                self.on_tick()
