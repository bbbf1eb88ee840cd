"""A log line that a flood cannot repeat: a few lines per window, then one summary of those left out."""

from __future__ import annotations

import logging
from typing import Any, Callable

BURST = 5              # lines logged per window
WINDOW_S = 60.0        # then one summary per window while the flood goes on


class LogLimiter:
    """``warning(msg, *args)`` logs at most ``burst`` lines per ``window_s`` (by the injected ``clock``); the
    next window opens with one line saying how many were left out (``what``: what they were)."""

    def __init__(self, logger: logging.Logger, clock: Callable[[], float], what: str, burst: int = BURST,
                 window_s: float = WINDOW_S) -> None:
        self.logger = logger
        self.clock = clock
        self.what = what
        self.burst = burst
        self.window_s = window_s
        self.suppressed_total = 0
        self._opened_s: float | None = None
        self._said = 0
        self._suppressed = 0

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
        return False

    def flush(self) -> None:
        """Say how many lines were left out since the last summary (if any)."""
        if self._suppressed:
            self.logger.warning("%d more %s not logged in %g s", self._suppressed, self.what, self.window_s)
            self._suppressed = 0
