"""The table sessions (开台) staff open, one row each (:mod:`firmware.game.staff`), and the staff's settings.

A session's row is written when it opens (its minutes, when it is due on
the table's wall clock, the first hand it may play, who opened it) and
completed when it ends (when, why, by whom, how many hands were played in
it).  The staff's settings (the names at each seat, the rule set and the
chips chosen for the next games) are documents in ``kv``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from firmware.store.table_store import TableStore

SETTINGS = "staff"          # the kv document: {"players": {...} | null, "rules": str | null, "chips": int | null}


class StaffRows:
    def __init__(self, store: "TableStore") -> None:
        self.store = store

    # -- settings -------------------------------------------------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        rows = self.store.read("SELECT value FROM kv WHERE key = ?", (SETTINGS,))
        try:
            data = json.loads(rows[0][0]) if rows else {}
        except ValueError:
            data = {}
        return data if isinstance(data, dict) else {}

    def put_settings(self, settings: dict[str, Any]) -> None:
        """(in the caller's batch or its own)"""
        self.store.put(**{SETTINGS: settings})

    # -- sessions -------------------------------------------------------------------------------------------------
    def open(self, opened_s: float, minutes: int, ends_s: float, first_hand: int, by: str) -> int:
        """(in the caller's batch) A session's row; its id."""
        cur = self.store.write("INSERT INTO table_sessions (opened_s, minutes, ends_s, first_hand, opened_by) "
                               "VALUES (?, ?, ?, ?, ?)", (opened_s, minutes, ends_s, first_hand, by))
        return int(cur.lastrowid or 0)

    def extend(self, ident: int, minutes: int, ends_s: float) -> None:
        self.store.write("UPDATE table_sessions SET minutes = ?, ends_s = ? WHERE id = ?", (minutes, ends_s, ident))

    def end(self, ident: int, ended_s: float, hands: int, reason: str, by: str) -> None:
        self.store.write("UPDATE table_sessions SET ended_s = ?, hands = ?, reason = ?, ended_by = ? "
                         "WHERE id = ? AND ended_s IS NULL", (ended_s, hands, reason, by, ident))

    def hands_since(self, first_hand: int) -> int:
        """Hands with a result from ``first_hand`` on."""
        rows = self.store.read("SELECT count(*) FROM hand_results WHERE hand >= ?", (first_hand,))
        return int(rows[0][0]) if rows else 0

    def last(self) -> dict[str, Any] | None:
        rows = self.sessions(1)
        return rows[-1] if rows else None

    def sessions(self, limit: int = 20) -> list[dict[str, Any]]:
        """The newest sessions, oldest first."""
        rows = self.store.read("SELECT * FROM (SELECT id, opened_s, minutes, ends_s, first_hand, opened_by, ended_s, "
                               "hands, reason, ended_by FROM table_sessions ORDER BY id DESC LIMIT ?) ORDER BY id",
                               (limit,))
        keys = ("id", "opened_s", "minutes", "ends_s", "first_hand", "opened_by", "ended_s", "hands", "reason",
                "ended_by")
        return [dict(zip(keys, row)) for row in rows]
