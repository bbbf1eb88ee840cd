"""The injected clock and event loop: the only source of time in the firmware.

Everything in ``firmware/`` asks the loop for the time (``now()``) and for
timers (``call_at``/``call_later``); nothing sleeps or reads the wall clock.
Hardware callbacks arrive on foreign threads (gpiozero, serial) and may only
hand work over with :meth:`Loop.post`, which is thread-safe.

Two implementations share the :class:`Loop` protocol: :class:`RealTimeLoop`
here, which runs on the table, and ``sim.virtual_loop.VirtualLoop``, which
jumps from timer to timer for tests and the simulator.  They share two rules,
so that the simulator runs what the table runs:

* **Order.** Posted callbacks run first, one at a time; a due timer runs only
  when nothing posted waits.  A posted callback is an input that has already
  happened (a sensor edge, a serial reply, a technician's request); a timer is
  the controller's own deadline.  Taking inputs first means a home sensor
  that arrived in time is never judged late by the timeout due at the same
  instant, and an interlock's edge stops the motors before a timer can start
  another movement.
* **Exceptions.** :func:`run_callback` runs every callback: with an
  ``on_error`` handler (the controller's: every output safe, E99 latched) an
  exception goes to the handler and the loop goes on; without one it
  propagates and ends the loop (tests fail loudly; a service without a
  controller exits and systemd restarts it).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import queue
import threading
from typing import Any, Callable, Protocol

log = logging.getLogger(__name__)


class Handle:
    """A scheduled callback that can be cancelled before it runs (or put off: :meth:`Loop.move`)."""

    __slots__ = ("when", "fn", "args", "cancelled", "seq")

    def __init__(self, when: float, fn: Callable[..., Any], args: tuple) -> None:
        self.when = when
        self.fn = fn
        self.args = args
        self.cancelled = False
        self.seq = -1           # its place among timers due at the same time; -1: not in a loop's heap (yet, or now)

    def cancel(self) -> None:
        self.cancelled = True

    def __repr__(self) -> str:
        state = "cancelled" if self.cancelled else "pending"
        return f"<Handle {getattr(self.fn, '__qualname__', self.fn)} at {self.when:.3f}s {state}>"


class Loop(Protocol):
    """What the firmware may use of a loop."""

    on_error: "ErrorHandler | None"       # the exception policy; the controller installs its own

    def now(self) -> float:
        """Seconds since the loop started (monotonic)."""

    def call_at(self, when: float, fn: Callable[..., Any], *args: Any) -> Handle:
        """Run ``fn(*args)`` at loop time ``when`` (at once if it is past)."""

    def call_later(self, delay_s: float, fn: Callable[..., Any], *args: Any) -> Handle:
        """Run ``fn(*args)`` ``delay_s`` seconds from now."""

    def post(self, fn: Callable[..., Any], *args: Any) -> None:
        """Thread-safe: run ``fn(*args)`` on the loop thread as soon as possible."""

    def move(self, handle: Handle, when: float) -> bool:
        """(The loop's thread.) Run ``handle``'s callback at ``when`` instead, as if it had been cancelled and
        scheduled again now (a cancelled one too: it runs again): see :meth:`TimerHeap.move`.  False, and
        nothing changed, when it cannot: schedule a new timer then."""


def call_later_again(loop: Loop, timer: Handle | None, delay_s: float, fn: Callable[..., Any], *args: Any) -> Handle:
    """``loop.call_later(delay_s, fn, *args)`` for a watchdog armed again and again (every tile, every movement):
    ``timer``, its last one (running the same callback), put off to then when the loop can (:meth:`Loop.move`),
    else cancelled and a new timer made.  The callbacks run in the same order either way."""
    if timer is not None:
        if loop.move(timer, loop.now() + delay_s):
            return timer
        timer.cancel()
    return loop.call_later(delay_s, fn, *args)


class TimerHeap:
    """Timers ordered by time, ties broken by insertion order (deterministic).

    A watchdog is put off again and again (every tile, every movement) and
    mostly never runs.  :meth:`move` puts a timer off without a new entry:
    the handle takes the new time and the next insertion number, exactly what
    cancelling it and scheduling a new one would give, and its old entry,
    when it comes to the top, is pushed again at the new time.  The order in
    which callbacks run is the same either way, tie for tie.
    """

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, Handle]] = []    # (when, insertion order, handle)
        self.seq = itertools.count()

    def push(self, handle: Handle) -> Handle:
        handle.seq = seq = next(self.seq)
        heapq.heappush(self.heap, (handle.when, seq, handle))
        return handle

    def move(self, handle: Handle, when: float) -> bool:
        """Run ``handle`` at ``when`` (not earlier than it was due), as a timer scheduled now would; a cancelled
        one that is still in the heap runs again.  False when it is not in the heap (it ran, or its cancelled
        entry was dropped) or ``when`` is earlier."""
        if handle.seq < 0 or when < handle.when:
            return False
        handle.when = when
        handle.seq = next(self.seq)
        handle.cancelled = False
        return True

    def settle(self) -> None:
        """Drop cancelled timers from the top and push moved ones back at their new time."""
        heap = self.heap
        while heap:
            _, seq, handle = heap[0]
            if handle.cancelled:
                heapq.heappop(heap)
                handle.seq = -1
            elif seq != handle.seq:
                heapq.heapreplace(heap, (handle.when, handle.seq, handle))
            else:
                return

    def next_time(self) -> float | None:
        """Time of the earliest live timer, dropping cancelled ones."""
        self.settle()
        return self.heap[0][0] if self.heap else None

    def pop_due(self, now: float) -> Handle | None:
        """The earliest live timer due at or before ``now``, removed."""
        when = self.next_time()
        if when is None or when > now:
            return None
        handle = heapq.heappop(self.heap)[2]
        handle.seq = -1
        return handle

    def __len__(self) -> int:
        return sum(1 for _, _, h in self.heap if not h.cancelled)


ErrorHandler = Callable[[BaseException, Callable[..., Any]], None]


def run_callback(fn: Callable[..., Any], args: tuple, on_error: ErrorHandler | None) -> None:
    """Run one callback under the loop's exception policy (see the module's docstring)."""
    try:
        fn(*args)
    except Exception as exc:
        if on_error is None:
            raise
        on_error(exc, fn)


class RealTimeLoop:
    """The table's loop: monotonic time, a timer heap and a thread-safe queue.

    ``clock`` is a zero-argument function returning monotonic seconds; the
    composition root passes ``time.monotonic`` so that this module never reads
    the clock by itself.  The loop blocks on its queue until the next timer is
    due, so posted callbacks run with no polling delay.  ``on_error`` is the
    exception policy (see the module's docstring).  ``speed``: the clock's
    seconds per real second (1 on a table; the simulator's light tables run a
    clock ``speed`` times faster), what a wait for the next timer is divided by.
    """

    def __init__(self, clock: Callable[[], float], speed: float = 1.0) -> None:
        if speed <= 0:
            raise ValueError("a loop's speed is a positive number of clock seconds per real second")
        self._clock = clock
        self._speed = speed
        self._epoch = clock()
        self._timers = TimerHeap()
        self._posted: queue.SimpleQueue[tuple[Callable[..., Any], tuple]] = queue.SimpleQueue()
        self._running = False
        self._thread: threading.Thread | None = None
        self.on_error: ErrorHandler | None = None

    def now(self) -> float:
        return self._clock() - self._epoch

    def call_at(self, when: float, fn: Callable[..., Any], *args: Any) -> Handle:
        handle = Handle(when, fn, args)
        if threading.current_thread() is self._thread or self._thread is None:
            return self._timers.push(handle)
        self.post(self._timers.push, handle)
        return handle

    def call_later(self, delay_s: float, fn: Callable[..., Any], *args: Any) -> Handle:
        return self.call_at(self.now() + delay_s, fn, *args)

    def move(self, handle: Handle, when: float) -> bool:
        if threading.current_thread() is not self._thread and self._thread is not None:
            return False            # (another thread: the caller schedules anew, through a post)
        return self._timers.move(handle, when)

    def post(self, fn: Callable[..., Any], *args: Any) -> None:
        self._posted.put((fn, args))

    def stop(self) -> None:
        """Thread-safe: end :meth:`run_forever` after the current callback."""
        self.post(self._set_stopped)

    def _set_stopped(self) -> None:
        self._running = False

    def run_forever(self) -> None:
        self._thread = threading.current_thread()
        self._running = True
        while self._running:
            try:
                fn, args = self._posted.get_nowait()         # inputs first (see the module's docstring)
            except queue.Empty:
                now = self.now()
                handle = self._timers.pop_due(now)
                if handle is not None:
                    fn, args = handle.fn, handle.args
                else:
                    next_when = self._timers.next_time()
                    wait_s = None if next_when is None else max(0.0, next_when - now) / self._speed
                    try:
                        fn, args = self._posted.get(timeout=wait_s)
                    except queue.Empty:
                        continue
            run_callback(fn, args, self.on_error)
