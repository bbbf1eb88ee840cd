"""A recorded hand as the scoreboard page shows it: who won, its fans, its payments by reason, its deal.

:func:`payment_lines` is the one place that turns a hand's stored payments
into what the page lists, one line per reason with each side's amount.  The
table database keeps today, per hand, each side's sum with one reason
(``hand``: the hand's settlement, 和牌); when the scoreboard keeps one row
per payment (payer, payee, amount, reason key and its Chinese name), this
function groups those rows by reason (and :func:`hand_view` may list the
rows themselves), and the template ``_payments.html`` stays as it is.
"""

from __future__ import annotations

from typing import Any

SIDES = 4
WINDS = "ESWN"
HONOURS = "ESWNCFP"
SUIT_BASE = {"m": 0, "p": 9, "s": 18, "f": 34}
REASON_NAMES = {"hand": "和牌"}        # (today's only stored reason: the hand's whole settlement)


def tile_order(code: str) -> int:
    """Where a tile code goes in a hand as players sort it: characters, dots, bamboo, winds, dragons, flowers."""
    if code in HONOURS:
        return 27 + HONOURS.index(code)
    if len(code) == 2 and code[0] in "123456789" and code[1] in SUIT_BASE:
        return SUIT_BASE[code[1]] + int(code[0]) - 1
    return 99                                       # (a place the reader did not read: '?')


def seat_wind(side: int, dealer: int) -> str:
    """The seat wind of a physical side when ``dealer`` deals (the dealer is East)."""
    return WINDS[(side - dealer) % SIDES]


def payment_lines(result: dict[str, Any]) -> list[dict[str, Any]]:
    """A hand's payments, one line per reason: ``reason`` (key), ``name`` (Chinese), ``amounts`` by side."""
    amounts = list(result.get("payments") or [0] * SIDES)
    if not any(amounts):
        return []
    return [{"reason": "hand", "name": REASON_NAMES["hand"], "amounts": amounts}]


def hand_view(result: dict[str, Any], dealt: dict[str, Any] | None = None,
              deal: dict[str, Any] | None = None) -> dict[str, Any]:
    """One hand for a template: result, winners with seat winds, fans, payment lines, dice, starting hands."""
    dealer = result.get("dealer", dealt.get("dealer", 0) if dealt else 0)
    fans = [{"name": f[0], "points": f[1], "count": f[2] if len(f) > 2 else 1} for f in result.get("fans", [])]
    hands = None
    if deal is not None and deal.get("hands"):
        hands = [{"side": int(side), "wind": seat_wind(int(side), dealer), "tiles": sorted(tiles, key=tile_order)}
                 for side, tiles in sorted(deal["hands"].items(), key=lambda kv: int(kv[0]))]
    return {
        "hand": result["hand"], "dealer": dealer, "dealer_wind": seat_wind(dealer, dealer),
        "round_wind": WINDS[int(result.get("round_wind", 0)) % SIDES],
        "winners": [{"side": s, "wind": seat_wind(s, dealer)} for s in result.get("winners", [])],
        "drawn": bool(result.get("drawn")), "note": result.get("note", ""),
        "fans": fans, "total": sum(f["points"] * f["count"] for f in fans),
        "payments": payment_lines(result),
        "dice": list(dealt["dice"]) if dealt else (list(deal["dice"]) if deal and deal.get("dice") else None),
        "set_id": dealt.get("set_id") if dealt else None,
        "starting_hands": hands,
        "sides": [{"side": s, "wind": seat_wind(s, dealer)} for s in range(SIDES)],
    }
