"""The table database: what must survive a power cut, in SQLite (WAL, one transaction per change).

Kept here: the controller's state and its bookkeeping (which set is where,
stacking progress per side, the hand in play), learned nominal times, the
fault history, counters, and the scoreboard's hands.  Every write is one
transaction, so a power cut loses at most the change being written; on
restart the controller reads the last committed bookkeeping and continues
or repeats the interrupted step.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS faults (id INTEGER PRIMARY KEY, code TEXT NOT NULL, tier TEXT NOT NULL,
    at_s REAL NOT NULL, state TEXT NOT NULL, source TEXT NOT NULL, detail TEXT NOT NULL,
    acknowledged_at_s REAL);
CREATE TABLE IF NOT EXISTS hands (id INTEGER PRIMARY KEY, hand INTEGER NOT NULL, set_id TEXT NOT NULL,
    dealer INTEGER NOT NULL, dice TEXT NOT NULL, started_s REAL NOT NULL, ended_s REAL, result TEXT);
"""


class TableStore:
    """One SQLite file per table; ``path=":memory:"`` for a throwaway store."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._db = sqlite3.connect(self.path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        self._db.close()

    # -- key/value documents (bookkeeping, nominal times, counters) ---------------
    def get(self, key: str, default: Any = None) -> Any:
        row = self._db.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    def put(self, **values: Any) -> None:
        """Write several keys in one transaction."""
        with self._transaction():
            for key, value in values.items():
                self._db.execute("INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE "
                                 "SET value = excluded.value", (key, json.dumps(value, sort_keys=True)))

    # -- faults ----------------------------------------------------------------------
    def add_fault(self, code: str, tier: str, at_s: float, state: str, source: str, detail: dict) -> int:
        with self._transaction():
            cur = self._db.execute("INSERT INTO faults (code, tier, at_s, state, source, detail) VALUES "
                                   "(?, ?, ?, ?, ?, ?)", (code, tier, at_s, state, source,
                                                          json.dumps(detail, default=str, sort_keys=True)))
            return int(cur.lastrowid)

    def acknowledge_faults(self, at_s: float) -> int:
        with self._transaction():
            cur = self._db.execute("UPDATE faults SET acknowledged_at_s = ? WHERE acknowledged_at_s IS NULL "
                                   "AND tier = 'latched'", (at_s,))
            return cur.rowcount

    def faults(self) -> list[dict]:
        rows = self._db.execute("SELECT code, tier, at_s, state, source, detail, acknowledged_at_s FROM faults "
                                "ORDER BY id").fetchall()
        return [{"code": c, "tier": t, "at_s": a, "state": s, "source": src, "detail": json.loads(d),
                 "acknowledged_at_s": ack} for c, t, a, s, src, d, ack in rows]

    # -- hands -------------------------------------------------------------------------
    def start_hand(self, hand: int, set_id: str, dealer: int, dice: list, started_s: float) -> None:
        with self._transaction():
            self._db.execute("INSERT INTO hands (hand, set_id, dealer, dice, started_s) VALUES (?, ?, ?, ?, ?)",
                             (hand, set_id, dealer, json.dumps(dice), started_s))

    def end_hand(self, hand: int, ended_s: float, result: dict) -> None:
        with self._transaction():
            self._db.execute("UPDATE hands SET ended_s = ?, result = ? WHERE hand = ? AND ended_s IS NULL",
                             (ended_s, json.dumps(result, sort_keys=True), hand))

    def hands(self) -> list[dict]:
        rows = self._db.execute("SELECT hand, set_id, dealer, dice, started_s, ended_s, result FROM hands "
                                "ORDER BY id").fetchall()
        return [{"hand": h, "set_id": s, "dealer": d, "dice": json.loads(dice), "started_s": st, "ended_s": en,
                 "result": json.loads(r) if r else None} for h, s, d, dice, st, en, r in rows]

    def _transaction(self):
        return _Transaction(self._db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, exc, tb) -> None:
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")
