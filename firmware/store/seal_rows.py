"""Committed walls in the table database: each stacked set's seal, and the seal each hand was dealt from.

A set's seal (its commitment and the preimage behind it,
:mod:`firmware.tiles.fair_walls`) is written with its wall when its walls
are verified, and replaced when the set is stacked again; at the deal the
hand's seal row is appended once (a repeated deal after a power cut is
ignored), with how its dice were thrown.  The preimage is kept from the
deal, so a power cut loses nothing; it is *shown* (the reveal) only once the
hand's result is written.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from firmware.store.records import RecordError
from firmware.store.score_rows import unpack_text

if TYPE_CHECKING:
    from firmware.store.table_store import TableStore


class SealRows:
    def __init__(self, store: "TableStore") -> None:
        self.store = store

    def put_wall_seal(self, set_id: str, commitment: str, preimage: str) -> None:
        """(in the caller's batch: the wall's)"""
        self.store.write("INSERT INTO wall_seals (set_id, commitment, preimage) VALUES (?, ?, ?) ON CONFLICT(set_id) "
                         "DO UPDATE SET commitment = excluded.commitment, preimage = excluded.preimage",
                         (set_id, commitment, preimage))

    def wall_seal(self, set_id: str) -> tuple[str, str] | None:
        """(commitment, preimage) of the set's walls, None when they were not sealed (stacked by an older
        release)."""
        rows = self.store.read("SELECT commitment, preimage FROM wall_seals WHERE set_id = ?", (set_id,))
        return (rows[0][0], rows[0][1]) if rows else None

    def seal_hand(self, hand: int, set_id: str, commitment: str, preimage: str, dice_by: str) -> None:
        """(in the deal's batch) The seal hand ``hand`` is dealt from."""
        self.store.write("INSERT OR IGNORE INTO hand_seals (hand, set_id, commitment, preimage, dice_by) "
                         "VALUES (?, ?, ?, ?, ?)", (hand, set_id, commitment, preimage, dice_by))

    def hand_seal(self, hand: int) -> dict[str, Any] | None:
        """Hand ``hand``'s commitment, and its reveal once its result is written (else None)."""
        rows = self.sealed_hands(since=hand - 1, limit=1)
        return rows[0] if rows and rows[0]["hand"] == hand else None

    def sealed_hands(self, since: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        """Every dealt hand from ``since + 1`` on, oldest first: its deal (set, dealer, dice), its seal
        (``commitment`` None when it has none), and, once its result is written, its ``reveal`` and ``record``."""
        rows = self.store.read(
            "SELECT h.hand, h.set_id, h.dealer, h.dice, s.commitment, s.preimage, s.dice_by, r.record, "
            "r.hand IS NOT NULL FROM hands h LEFT JOIN hand_seals s ON s.hand = h.hand "
            "LEFT JOIN hand_results r ON r.hand = h.hand WHERE h.hand > ? ORDER BY h.hand LIMIT ?",
            (since, -1 if limit is None else limit))
        out = []
        for hand, set_id, dealer, dice, commitment, preimage, dice_by, record, ended in rows:
            out.append({"hand": hand, "set_id": set_id, "dealer": dealer, "dice": _json(dice, []),
                        "dice_by": dice_by or "", "commitment": commitment,
                        "reveal": preimage if ended else None,
                        "record": _record(hand, record) if ended and record else None})
        return out


def _json(text: Any, default: Any) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return default


def _record(hand: int, value: Any) -> dict[str, Any] | None:
    """A hand's record as written with its result (deflated when long); None when it cannot be read."""
    try:
        data = json.loads(unpack_text(value, f"hand {hand}: its record"))
    except (RecordError, ValueError):
        return None
    return data if isinstance(data, dict) else None
