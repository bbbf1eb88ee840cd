"""A tournament round's assignments in the table database (``assignments``, schema 5).

One row per assignment id: ``state`` is ``pending`` (received, waiting for
the game in play to end), ``taken`` (its game, ``game``, is being played),
``ended`` (played) or ``cleared`` (withdrawn by the hall before it was
taken); ``body`` is its data as JSON (validated again when read, by
:mod:`firmware.game.rounds`).  Written in the caller's batch, so that taking
an assignment, the new game and the bookkeeping are one transaction.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from firmware.store.table_store import TableStore

PENDING, TAKEN, ENDED, CLEARED = "pending", "taken", "ended", "cleared"


class AssignmentRows:
    def __init__(self, store: "TableStore") -> None:
        self.store = store

    def put_pending(self, assignment_id: str, body: dict[str, Any], received_s: float) -> None:
        """The assignment waiting (the one waiting before it, if another, is withdrawn)."""
        with self.store.batch("assignment received"):
            self.store.write("UPDATE assignments SET state = ? WHERE state = ? AND id != ?",
                             (CLEARED, PENDING, assignment_id))
            self.store.write("INSERT INTO assignments (id, body, state, game, received_s) VALUES (?, ?, ?, NULL, ?) "
                             "ON CONFLICT (id) DO UPDATE SET body = excluded.body, state = excluded.state "
                             "WHERE assignments.state IN (?, ?)",
                             (assignment_id, json.dumps(body, ensure_ascii=False), PENDING, received_s, PENDING,
                              CLEARED))

    def clear_pending(self) -> int:
        """The hall withdrew the assignment waiting (an empty retained payload): how many were withdrawn."""
        with self.store.batch("assignment withdrawn"):
            cur = self.store.write("UPDATE assignments SET state = ? WHERE state = ?", (CLEARED, PENDING))
        return cur.rowcount if not self.store.failing else 0

    def take(self, assignment_id: str, game: int) -> None:
        """(in the caller's batch) The assignment is played as ``game``."""
        self.store.write("UPDATE assignments SET state = ?, game = ? WHERE id = ?", (TAKEN, game, assignment_id))

    def end(self, assignment_id: str) -> None:
        """(in the caller's batch) Its game ended."""
        self.store.write("UPDATE assignments SET state = ? WHERE id = ?", (ENDED, assignment_id))

    def state_of(self, assignment_id: str) -> str | None:
        rows = self.store.read("SELECT state FROM assignments WHERE id = ?", (assignment_id,))
        return str(rows[0][0]) if rows else None

    def rows(self, state: str) -> list[tuple[str, str, int | None]]:
        """(id, body, game) of the assignments in ``state``, oldest first."""
        return [(str(i), str(b), g) for i, b, g in self.store.read(
            "SELECT id, body, game FROM assignments WHERE state = ? ORDER BY rowid", (state,))]

    def hands_of(self, game: int) -> int:
        """Hands recorded in ``game``."""
        return int(self.store.read("SELECT count(*) FROM hand_results WHERE game = ?", (game,))[0][0])
