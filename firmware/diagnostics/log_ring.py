"""The service's own log, kept in memory for the technician: the last records, filtered by level and text.

:func:`install` adds one handler to the process's root logger (once): each
record is kept (level, logger, the message, its number) in a ring of
:data:`KEEP` records.  :func:`lines` answers ``mjtable diag log`` and the
web page: the records after a number (``after``: following live is asking
again with the last number seen), at or above a level, containing a text,
at most :data:`MAX_LINES`.  On a table the journal keeps the service's log
too (``journalctl -u mjtable``); this ring is what the page and a support
bundle read without the journal's permissions; in the simulator it is the
process's log.
"""

from __future__ import annotations

import collections
import logging
import threading
from typing import Any

KEEP = 5000
MAX_LINES = 500
MAX_TEXT = 100
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class LogRing(logging.Handler):
    def __init__(self, keep: int = KEEP) -> None:
        super().__init__(level=logging.INFO)
        self.records: collections.deque[dict[str, Any]] = collections.deque(maxlen=keep)
        self.count = 0
        self._guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string is still a line
            message = str(record.msg)
        with self._guard:
            self.count += 1
            self.records.append({"n": self.count, "at": record.created, "level": record.levelname,
                                 "logger": record.name, "message": message[:2000]})

    def lines(self, level: str = "INFO", text: str = "", after: int = 0, limit: int = MAX_LINES) -> dict[str, Any]:
        """The records after number ``after`` at ``level`` or above containing ``text`` (case-insensitive), the
        newest ``limit`` of them (at most :data:`MAX_LINES`), oldest first; ``last``: the newest number kept."""
        if level not in LEVELS:
            raise ValueError(f"level: one of {', '.join(LEVELS)}")
        if not isinstance(text, str) or len(text) > MAX_TEXT:
            raise ValueError(f"text: at most {MAX_TEXT} characters")
        if isinstance(after, bool) or not isinstance(after, int) or after < 0:
            raise ValueError("after: a whole number >= 0")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LINES:
            raise ValueError(f"limit: 1 to {MAX_LINES}")
        floor, needle = logging.getLevelName(level), text.casefold()
        with self._guard:
            kept = list(self.records)
            last = self.count
        found = [r for r in kept if r["n"] > after and logging.getLevelName(r["level"]) >= floor
                 and (not needle or needle in r["message"].casefold() or needle in r["logger"].casefold())]
        return {"lines": found[-limit:], "last": last, "more": len(found) > limit}


_RING: LogRing | None = None
_LOCK = threading.Lock()


def install() -> LogRing:
    """The process's ring (added to the root logger the first time)."""
    global _RING
    with _LOCK:
        if _RING is None:
            _RING = LogRing()
            root = logging.getLogger()
            root.addHandler(_RING)
            if root.level > logging.INFO or root.level == logging.NOTSET:
                pass                    # (the service sets its level; the ring keeps what reaches it)
        return _RING


def ring() -> LogRing | None:
    return _RING
