"""A log line that a flood cannot repeat: a few lines per window, then one summary of those left out."""

from __future__ import annotations

import logging
from typing import Any, Callable

BURST = 5              # lines logged per window
WINDOW_S = 60.0        # then one summary per window while the flood goes on

Schedule = Callable[[float, Callable[[], None]], Any]     # a loop's call_later(delay_s, fn)


class LogLimiter:
    """``warning(msg, *args)`` logs at most ``burst`` lines per ``window_s`` (by the injected ``clock``); those
    left out are counted (``suppressed_total``, for the owner's counters) and summed up in one line (``what``:
    what they were) when the window ends: at once by ``call_later`` (the loop's) when the owner gives one (the
    limit lifts: the summary comes even when the flood has stopped), else at the next line after the window."""

    def __init__(self, logger: logging.Logger, clock: Callable[[], float], what: str, burst: int = BURST,
                 window_s: float = WINDOW_S, call_later: Schedule | None = None) -> None:
        self.logger = logger
        self.clock = clock
        self.what = what
        self.burst = burst
        self.window_s = window_s
        self.call_later = call_later
        self.suppressed_total = 0
        self._opened_s: float | None = None
        self._said = 0
        self._suppressed = 0
        self._lift: Any = None                   # the timer that sums up when the window ends

    def warning(self, msg: str, *args: Any) -> bool:
        """Log one line unless this window's lines are spent (then it is counted); True when logged."""
        now_s = self.clock()
        if self._opened_s is None or not 0 <= now_s - self._opened_s < self.window_s:
            self.flush()
            self._opened_s, self._said = now_s, 0
        if self._said < self.burst:
            self._said += 1
            if self._said == self.burst:
                msg += f" (further {self.what} in the next {self.window_s:g} s are counted, then summed up)"
            self.logger.warning(msg, *args)
            return True
        self._suppressed += 1
        self.suppressed_total += 1
        if self._lift is None and self.call_later is not None:
            left_s = max(0.0, self._opened_s + self.window_s - now_s)
            self._lift = self.call_later(left_s, self._lifted)
        return False

    def _lifted(self) -> None:
        """(the loop's timer) The window has ended: the lines it left out are summed up now."""
        self._lift = None
        self.flush()
        self._opened_s = None                    # (the next line opens a window of its own)

    def flush(self) -> None:
        """Say how many lines were left out since the last summary (if any), and how many in all."""
        if self._lift is not None:
            cancel = getattr(self._lift, "cancel", None)
            if cancel is not None:
                cancel()
            self._lift = None
        if self._suppressed:
            self.logger.warning("%d more %s not logged in %g s (%d not logged since start)", self._suppressed,
                                self.what, self.window_s, self.suppressed_total)
            self._suppressed = 0
