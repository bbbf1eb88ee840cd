"""Real time for the simulated tables' fleet links: where N virtual loops meet the real network thread.

A simulated table runs on virtual time (:class:`~sim.virtual_loop.VirtualLoop`:
a stacking cycle in milliseconds), but its MQTT traffic is real: a connect
timeout of 15 s, a backoff, a PUBACK are real seconds, and the network
thread reports at real instants.  So the links of ``sim --fleet N`` do not
run on the tables' virtual loops but on one :class:`LinkClock`: real
(monotonic) time, a timer heap, and a thread-safe queue for the network
thread's reports.  The simulator's driver runs it between slices of the
virtual loops (:meth:`LinkClock.run_due`), on the same thread as the
controllers, so a link reads its table's status and outbox without a lock.
Nothing from the network enters a virtual loop: the tables stay
deterministic for a seed, whatever the broker does.

:class:`ScopedClock` is one boot's view of the clock: a simulated power cut
kills it, and every timer and report of that boot's link is dropped.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any, Callable

from firmware.loop import ErrorHandler, Handle, TimerHeap, run_callback

log = logging.getLogger(__name__)

MAX_POSTED_PER_RUN = 10_000      # (a run_due call never starves the virtual loops)


class LinkClock:
    """Real-time timers and thread-safe posts, run by the simulator's driver (see the module's docstring)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._epoch = clock()
        self._timers = TimerHeap()
        self._posted: queue.SimpleQueue[tuple[Callable[..., Any], tuple]] = queue.SimpleQueue()
        self._woken = threading.Event()      # set by every post (what :meth:`wait` waits on)
        self.on_error: ErrorHandler | None = None
        self.ran = 0

    def now(self) -> float:
        return self._clock() - self._epoch

    def call_at(self, when: float, fn: Callable[..., Any], *args: Any) -> Handle:
        """(the driver's thread only: the links call it from their callbacks)"""
        return self._timers.push(Handle(when, fn, args))

    def call_later(self, delay_s: float, fn: Callable[..., Any], *args: Any) -> Handle:
        return self.call_at(self.now() + delay_s, fn, *args)

    def move(self, handle: Handle, when: float) -> bool:
        return self._timers.move(handle, when)

    def post(self, fn: Callable[..., Any], *args: Any) -> None:
        """Thread-safe (the network thread posts its reports here; a signal handler may post too)."""
        self._posted.put((fn, args))
        self._woken.set()

    def run_due(self) -> int:
        """Run what was posted, then every timer due now; how many callbacks ran."""
        ran = 0
        while ran < MAX_POSTED_PER_RUN:
            try:
                fn, args = self._posted.get_nowait()
            except queue.Empty:
                break
            run_callback(fn, args, self._log_error)
            ran += 1
        now = self.now()
        while True:
            handle = self._timers.pop_due(now)
            if handle is None:
                break
            run_callback(handle.fn, handle.args, self._log_error)
            ran += 1
        self.ran += ran
        return ran

    def wait(self, timeout_s: float) -> int:
        """Wait for a post or the next timer (at most ``timeout_s``), then :meth:`run_due`.

        (It waits on an event, not in ``SimpleQueue.get(timeout=...)``: CPython's get, interrupted by a signal
        whose handler outlasts the time left, goes on waiting with a negative timeout, which means for ever:
        ``sim --fleet --speed X`` never saw its SIGINT/SIGTERM flag again.  A lock's wait treats that case as
        a timeout.)"""
        next_when = self._timers.next_time()
        if next_when is not None:
            timeout_s = min(timeout_s, max(0.0, next_when - self.now()))
        if timeout_s > 0 and self._posted.empty():
            self._woken.wait(timeout_s)
        self._woken.clear()             # (a post after this sets it again; what was posted runs now)
        return self.run_due()

    def _log_error(self, exc: BaseException, fn: Callable[..., Any]) -> None:
        if self.on_error is not None:
            self.on_error(exc, fn)
            return
        log.error("link clock: %s failed: %r", getattr(fn, "__qualname__", fn), exc,
                  exc_info=(type(exc), exc, exc.__traceback__))


class ScopedClock:
    """One boot's view of a :class:`LinkClock`: :meth:`kill` (a power cut) drops every timer and post of it."""

    def __init__(self, clock: LinkClock) -> None:
        self._clock = clock
        self.alive = True
        self.on_error: ErrorHandler | None = None

    def now(self) -> float:
        return self._clock.now()

    def call_at(self, when: float, fn: Callable[..., Any], *args: Any) -> Handle:
        return self._clock.call_at(when, self._guard, fn, *args)

    def call_later(self, delay_s: float, fn: Callable[..., Any], *args: Any) -> Handle:
        return self._clock.call_later(delay_s, self._guard, fn, *args)

    def move(self, handle: Handle, when: float) -> bool:
        return self._clock.move(handle, when)

    def post(self, fn: Callable[..., Any], *args: Any) -> None:
        self._clock.post(self._guard, fn, *args)

    def _guard(self, fn: Callable[..., Any], *args: Any) -> None:
        if self.alive:
            fn(*args)

    def kill(self) -> None:
        self.alive = False
