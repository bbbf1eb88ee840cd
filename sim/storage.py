"""The simulated table's SD card: the table database's file system, which a fault can make fail.

A real card fails by refusing writes (a worn card, a full or read-only file
system): SQLite then raises ``disk I/O error`` on a write or a commit while
reads from the cache still work.  ``disk-fail@WHEN`` does that to the
simulated card; the controller must latch E98 and keep the table safe.
The card belongs to the table, not the controller: it keeps failing across
power cuts until a technician replaces it (``repair``).
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any

# what still works on a failing card: reads from the cache, and starting or abandoning a transaction
STILL_WORKS = ("SELECT", "PRAGMA QUICK_CHECK", "PRAGMA USER_VERSION", "PRAGMA JOURNAL_MODE", "PRAGMA SYNCHRONOUS",
               "BEGIN", "ROLLBACK")


RAM_DIR = "/dev/shm"       # a memory-backed file system on Linux
RAM_FREE_MIN = 1 << 30     # free space it needs (a long run's database grows some 3 kB a hand; Docker's is 64 MB)


def scratch_dir() -> str | None:
    """Where a run without ``--state`` keeps its throwaway table database (None: the temporary directory).

    The simulated card is :class:`SimStorage`; the host's file under it is scratch, deleted when the run
    ends.  The store commits with ``synchronous=FULL`` (some 80 flushes a hand), and on a disk each flush
    waits for the host's disk: 0.6-0.9 s of the 3.5 s of CPU (user and system) a 64-hand run took.  On a
    memory-backed file system SQLite runs the same statements, commits and flushes, and a flush costs
    nothing.  A ``TMPDIR`` set by the user wins, and a small one is not used (a full card fails the table).
    """
    if "TMPDIR" in os.environ or not os.path.isdir(RAM_DIR) or not os.access(RAM_DIR, os.W_OK):
        return None
    free = os.statvfs(RAM_DIR)
    return RAM_DIR if free.f_bavail * free.f_frsize >= RAM_FREE_MIN else None


class SimStorage:
    def __init__(self) -> None:
        self.failing = False
        self.failed_writes = 0

    def connect(self, path: str, **kwargs: Any) -> sqlite3.Connection:
        """``sqlite3.connect`` for the table database on this card."""
        db = sqlite3.connect(path, factory=_CardConnection, **kwargs)
        db.card = self          # type: ignore[attr-defined]
        return db

    def repair(self) -> None:
        self.failing = False


class _CardConnection(sqlite3.Connection):
    card: SimStorage

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
        if self.card.failing and not sql.lstrip().upper().startswith(STILL_WORKS):
            self.card.failed_writes += 1
            raise sqlite3.OperationalError("disk I/O error")
        return super().execute(sql, *args)

    def executemany(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
        if self.card.failing:
            self.card.failed_writes += 1
            raise sqlite3.OperationalError("disk I/O error")
        return super().executemany(sql, *args)
