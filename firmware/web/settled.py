"""A recorded hand settled again from its stored record, as the hand page explains it.

The table keeps each hand's record with its result; the one settlement
(:func:`~firmware.rules.settlement.settle_hand`) settles it again here, so
the page can show what the stored payments alone cannot: each declared
win with its winning hand and its items, and, where the rule set reckons
each payer's share on its own (辽宁, 锦州: base × 2^N), every share with the
items behind it and who paid it.  Settling takes a moment of a core: the
pages call :func:`settled_hand` in the records' thread, never on the event
loop.  A hand recorded before records were kept, or a record that cannot
be settled, is said so; a record that settles to other payments than the
table made (a rule set's file changed since) is flagged, its explanation
shown as the record settles now.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from typing import Any

from firmware.rules.hand_record import HandRecord
from firmware.rules.money import Item
from firmware.rules.registry import load_ruleset
from firmware.rules.settlement import WinVerdict, settle_hand
from firmware.tiles.tile import code
from firmware.web.i18n import N_
from firmware.web.scoreboard import seat_wind, tile_order
from firmware.web.units import Unit, unit_of

log = logging.getLogger(__name__)

NO_RECORD = N_("This hand was recorded before the table kept hands' records: its payments are shown as they were "
               "paid, not explained item by item.")
DIFFERS = N_("Settled again, this hand's record gives other payments than the table made (the rule set's file may "
             "have changed since): what follows is the record as it settles now.")
CANNOT = N_("This hand's record cannot be settled again (%(why)s): its payments are shown as they were paid.")


def settled_hand(result: dict[str, Any]) -> dict[str, Any]:
    """``wins`` (each declared win, see :func:`win_view`), ``problem`` (why the record cannot be settled, else
    None) and ``differs`` (None, or why the explanation may not be what was paid)."""
    text = result.get("record") or ""
    if not text:
        return {"wins": [], "problem": NO_RECORD, "message": NO_RECORD, "why": "", "differs": None}
    try:
        ruleset = load_ruleset(result["rules"])
        settled = settle_hand(ruleset, HandRecord.from_json(json.loads(text)))
    except ValueError as exc:          # (a BadRecord, JSON that is not, a rule set that cannot be loaded)
        log.warning("hand %s: its record cannot be settled again: %s", result["hand"], exc)
        return {"wins": [], "problem": CANNOT % {"why": exc}, "message": CANNOT, "why": str(exc), "differs": None}
    unit = unit_of(result["rules"])
    dealer = settled.record.dealer
    again = Counter((p.event, p.payer, p.payee, p.amount, p.reason.key, p.held) for p in settled.payments)
    paid = Counter((m["event"], m["payer"], m["payee"], m["amount"], m["reason"], m["held"])
                   for m in result.get("money") or [])
    if again != paid:
        log.warning("hand %s: its record settles to other payments than were made", result["hand"])
    return {"wins": [win_view(v, dealer, unit) for v in settled.verdicts], "problem": None,
            "differs": DIFFERS if again != paid else None}


def win_view(v: WinVerdict, dealer: int, unit: Unit) -> dict[str, Any]:
    """One declared win: who, off whom, on which tile, legal (else ``reason``), the winning hand (``standing``,
    ``melds``), its items (``scored``) and their ``title``, each payer's ``shares``, what was ``paid`` and ``one_paid``
    (one side paid every share: 一家炮, 包三家)."""
    items = [_item(i, unit) for i in v.items]
    win = v.win
    assert win is not None                      # (every verdict the settlement makes has its win)
    payers = {p.payer for p in v.payments}
    return {
        "side": v.side, "wind": seat_wind(v.side, dealer), "tile": code(v.tile),
        "discarder": None if v.discarder is None else {"side": v.discarder, "wind": seat_wind(v.discarder, dealer)},
        "legal": v.legal, "reason": v.reason,
        "standing": sorted((code(k) for k in win.hand), key=tile_order),
        "melds": [[code(k) for k in m.tiles] for m in win.melds],
        "scored": items, "title": unit.title(sum(i["points"] * i["count"] for i in items)),
        "total": sum(i["points"] * i["count"] for i in items),
        "shares": [{"payer": b.payer, "wind": seat_wind(b.payer, dealer), "amount": b.amount,
                    "scored": [_item(i, unit) for i in b.items],
                    "reckoned": unit.share(sum(i.points * i.count for i in b.items))} for b in v.breakdown],
        "paid": [{"payer": p.payer, "wind": seat_wind(p.payer, dealer), "payee": p.payee,
                  "payee_wind": seat_wind(p.payee, dealer), "amount": p.amount} for p in v.payments],
        "one_paid": len(v.breakdown) > 1 and len(payers) == 1,
    }


def _item(i: Item, unit: Unit) -> dict[str, Any]:
    return {"name": i.name, "key": i.key, "en": i.en, "points": i.points, "count": i.count,
            "value": unit.value(i.points)}
