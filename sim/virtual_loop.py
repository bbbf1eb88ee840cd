"""Virtual time: a loop that jumps straight to the next timer.

Same protocol, ordering and exception policy as
``firmware.loop.RealTimeLoop`` (posted callbacks first, then one due timer;
``on_error`` or propagate).  ``now()`` only changes when the loop pops a
timer and ties run in insertion order, so a run is deterministic for a seed
and a simulated stacking cycle of half a minute takes milliseconds.  ``pace`` > 0 slows the
run to that factor of real time for demonstrations (the only place outside
the composition root that may sleep, and only when asked).
"""

from __future__ import annotations

import collections
import heapq
import logging
from typing import Any, Callable

from firmware.loop import ErrorHandler, Handle, TimerHeap, run_callback

log = logging.getLogger(__name__)


class SimTimeout(RuntimeError):
    """The awaited condition did not come true before the virtual deadline."""


class VirtualLoop:
    """Deterministic loop on virtual time (seconds from 0)."""

    def __init__(self, start_s: float = 0.0) -> None:
        self._now = start_s
        self._timers = TimerHeap()
        self._heap = self._timers.heap
        self._seq = self._timers.seq
        self._posted: collections.deque[tuple[Callable[..., Any], tuple]] = collections.deque()
        self.pacer: Callable[[float], None] | None = None  # called with the next time before each jump
        self.on_error: ErrorHandler | None = None   # None: a failing callback propagates (a test fails)

    def now(self) -> float:
        return self._now

    def call_at(self, when: float, fn: Callable[..., Any], *args: Any) -> Handle:
        return self.schedule(when, fn, args)

    def call_later(self, delay_s: float, fn: Callable[..., Any], *args: Any) -> Handle:
        return self.schedule(self._now + delay_s, fn, args)

    def schedule(self, when: float, fn: Callable[..., Any], args: tuple) -> Handle:
        """``call_at`` with the arguments as a tuple (the simulator's hot path: no repacking)."""
        if when < self._now:
            when = self._now
        handle = Handle(when, fn, args)
        handle.seq = seq = next(self._seq)
        heapq.heappush(self._heap, (when, seq, handle))
        return handle

    def move(self, handle: Handle, when: float) -> bool:
        """Run ``handle`` at ``when`` instead, ordered as a timer scheduled now (``TimerHeap.move``)."""
        return self._timers.move(handle, when)

    def post(self, fn: Callable[..., Any], *args: Any) -> None:
        self._posted.append((fn, args))

    def has_posted(self) -> bool:
        return bool(self._posted)

    def pending_timers(self) -> int:
        return len(self._timers)

    def step(self, deadline_s: float | None = None) -> bool:
        """Run one posted callback or the next timer; False when nothing is due."""
        if self._posted:
            fn, args = self._posted.popleft()
            run_callback(fn, args, self.on_error)
            return True
        when = self._timers.next_time()
        if when is None or (deadline_s is not None and when > deadline_s):
            return False
        if self.pacer is not None:
            self.pacer(when)
            if self._posted or self._timers.next_time() != when:
                return True     # posted from another thread while the pacer waited: that comes first
        handle = self._timers.pop_due(when)
        assert handle is not None
        self._now = when
        run_callback(handle.fn, handle.args, self.on_error)
        return True

    def run_until(self, done: Callable[[], bool], timeout_s: float) -> float:
        """Run until ``done()`` is true; raise :class:`SimTimeout` past ``timeout_s``.

        Returns the virtual time at which the condition became true.
        """
        deadline = self._now + timeout_s
        if self.pacer is None:
            if not self.run_steps(done, deadline):
                self._timed_out(deadline)
            return self._now
        while not done():
            if not self.step(deadline):
                self._timed_out(deadline)
        return self._now

    def run_steps(self, done: Callable[[], bool], deadline_s: float) -> bool:
        """Without a pacer: ``while not done(): if not self.step(deadline_s): return False``, then True, in one
        frame (:meth:`step` and ``TimerHeap.settle`` inlined, the loop's attributes looked up once: some 200,000
        steps a 64-hand run).  (The kill campaigns of the tests put that loop back, to see every step.)"""
        posted = self._posted
        heap = self._heap
        heappop, heapreplace = heapq.heappop, heapq.heapreplace
        while not done():
            if posted:
                fn, args = posted.popleft()
            else:
                while heap:                         # (TimerHeap.settle, inlined)
                    _, seq, handle = heap[0]
                    if handle.cancelled:
                        heappop(heap)
                        handle.seq = -1
                    elif seq != handle.seq:         # put off (moved): on at its new time
                        heapreplace(heap, (handle.when, handle.seq, handle))
                    else:
                        break
                if not heap or heap[0][0] > deadline_s:
                    return False
                when, _, handle = heappop(heap)
                handle.seq = -1
                self._now = when
                fn, args = handle.fn, handle.args
            try:
                fn(*args)
            except Exception as exc:
                if self.on_error is None:
                    raise
                self.on_error(exc, fn)
        return True

    def _timed_out(self, deadline: float) -> None:
        self._now = max(self._now, deadline) if self._timers.next_time() is not None else self._now
        raise SimTimeout(f"condition not met by t={deadline:.3f}s (now {self._now:.3f}s)")

    def run_for(self, duration_s: float) -> None:
        """Run every event up to ``now + duration_s`` and leave time there."""
        deadline = self._now + duration_s
        while self.step(deadline):
            pass
        self._now = deadline

    def run_all(self, limit_s: float = 1e9) -> None:
        """Run until nothing is scheduled (or the limit is reached)."""
        deadline = self._now + limit_s
        while self.step(deadline):
            pass


class ScopedLoop:
    """The firmware's view of the virtual loop: everything it schedules can be killed at once.

    A simulated power cut kills the controller process, not the table: the
    world's motors, sensors and tiles keep their timers, while every timer
    and posted callback the firmware made becomes a no-op (``kill``: it
    still leaves the heap when it falls due, so nothing is listed per timer).  The
    firmware's callbacks run under the firmware's exception policy
    (``on_error``, the controller's E99), the world's under the virtual
    loop's own (a bug in the simulator propagates).
    """

    def __init__(self, loop: VirtualLoop) -> None:
        self._loop = loop
        self._post = loop._posted.append       # (VirtualLoop.post without the call: a pin edge or a frame each)
        self.alive = True
        self.on_error: ErrorHandler | None = None

    def now(self) -> float:
        return self._loop._now          # (VirtualLoop.now without the call: the firmware asks some 2,000 times a hand)

    def call_at(self, when: float, fn: Callable[..., Any], *args: Any) -> Handle:
        return self._schedule(when, fn, args)

    def call_later(self, delay_s: float, fn: Callable[..., Any], *args: Any) -> Handle:
        return self._schedule(self._loop._now + delay_s, fn, args)

    def _schedule(self, when: float, fn: Callable[..., Any], args: tuple) -> Handle:
        return self._loop.schedule(when, self._guard, (fn, *args))

    def move(self, handle: Handle, when: float) -> bool:
        return self._loop.move(handle, when)

    def post(self, fn: Callable[..., Any], *args: Any) -> None:
        self._post((self._guard, (fn, *args)))

    def _guard(self, fn: Callable[..., Any], *args: Any) -> None:
        if self.alive:
            try:                                # (run_callback's policy, inlined: every firmware callback)
                fn(*args)
            except Exception as exc:
                if self.on_error is None:
                    raise
                self.on_error(exc, fn)

    def kill(self) -> None:
        self.alive = False
