"""The hand page's committed walls: the commitment and its QR code, the reveal once the hand is over, and its check.

Before the dice the table publishes a commitment to the walls
(:mod:`firmware.tiles.fair_walls`); the page shows it as text and as a QR
code a phone can keep, and once the hand's result is written, the reveal
(the preimage) and the table's own check of it (:mod:`firmware.rules.fair_check`:
the reveal hashes to the commitment, and the revealed walls deal exactly the
hand's starting hands and draws).  ``/verify`` does the whole check again in
the player's browser (``static/verify.js`` and ``static/verify_replay.js``):
the hash, against the commitment they kept, and the deal and every draw, from
the hand's data as ``/verify/data`` sends it (:func:`seal_data`: the seal, the
record and the rule set's dealing parameters, never a verdict).  The check
settles a hand's deal: it runs in the records' thread, never on the event loop.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Any

from firmware.rules.fair_check import SealedHand, check_hand
from firmware.rules.registry import load_ruleset

log = logging.getLogger(__name__)
QR_SCALE = 3                # pixels per module: 29 modules + the quiet zone, about 100 px


def qr_svg(text: str) -> str:
    """``text`` as an inline SVG QR code (black on white, whatever the page's theme: a phone reads it)."""
    import segno

    return segno.make(text, error="m").svg_inline(scale=QR_SCALE, dark="#000", light="#fff", border=4)


def seal_view(seal: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the hand page shows of a hand's seal (:meth:`~firmware.store.seal_rows.SealRows.hand_seal`): None for a
    hand dealt without one; else ``commitment``, ``qr``, ``dice_by``, ``reveal`` (None until the hand is over) and
    ``check`` (None until then: ``ok``, ``draws`` and ``problems``)."""
    if seal is None or not seal.get("commitment"):
        return None
    view = {"commitment": seal["commitment"], "qr": qr_svg(seal["commitment"]), "dice_by": seal["dice_by"],
            "reveal": seal["reveal"], "check": None}
    if seal["reveal"] is not None:
        try:
            check = check_hand(SealedHand.from_json(seal), load_ruleset)
        except ValueError as exc:             # (a row of the wrong shape: said, not a failed page)
            view["check"] = {"ok": False, "draws": 0, "problems": [str(exc)]}
        else:
            if not check.ok:
                log.warning("hand %s does not match its committed walls: %s", seal["hand"], check.problems[0])
            view["check"] = {"ok": check.ok, "draws": check.draws, "problems": check.problems}
    return view


def seal_data(seal: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the browser's own check needs of a hand (``/verify/data``): the seal as ``mjtable verify`` reads it
    (:meth:`~firmware.rules.fair_check.SealedHand.to_json`: set, dealer, dice, how they were thrown, commitment,
    and once the hand is over its reveal and record) and ``deal``, the dealing parameters of the record's rule
    set (None until the hand is over, or for a rule set this table does not know).  No verdict: the browser decides.
    None for a hand dealt without committed walls."""
    if seal is None or not seal.get("commitment"):
        return None
    try:
        data = SealedHand.from_json(seal).to_json()
    except ValueError as exc:                 # (a row of the wrong shape: the browser is told, not the page broken)
        log.warning("hand %s: its seal cannot be sent: %s", seal.get("hand"), exc)
        return None
    record, deal = data["record"], None
    if data["reveal"] is not None and isinstance(record, dict) and isinstance(record.get("rules"), str):
        try:
            deal = asdict(load_ruleset(record["rules"]).deal_rules)
        except (ValueError, OSError) as exc:
            log.warning("hand %s: rule set %r: %s", data["hand"], record["rules"], exc)
    return {**data, "deal": deal}
