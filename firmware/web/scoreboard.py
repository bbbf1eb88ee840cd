"""A recorded hand as the scoreboard page shows it: who won, its items, its payments by reason, its deal.

:func:`payment_lines` is the one place that turns a hand's stored payments
into what the page lists: the scoreboard keeps one row per payment (payer,
payee, amount, reason key, the action of the hand's record that caused it),
grouped here by reason, one line per reason with each side's gain or loss
(和牌, 点杠, 追牌, 跟庄, 黄庄, a penalty ...), in the order they were paid.
The starting hands come from the hand's stored record (its ``deal`` actions),
or from the deal the page saw.  Items are labelled in the rule set's unit
(:mod:`firmware.web.units`: fans, points, doublings).
"""

from __future__ import annotations

import json
from typing import Any

from firmware.rules.money import PENALTY_PREFIX, REASONS
from firmware.web.units import Unit, unit_of

SIDES = 4
WINDS = "ESWN"
HONOURS = "ESWNCFP"
SUIT_BASE = {"m": 0, "p": 9, "s": 18, "f": 34}


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


def reason_name(key: str, rules: str | None = None) -> str:
    """The Chinese name of a payment's reason (a penalty by the rule set's name for it, else by its kind)."""
    if key in REASONS:
        return REASONS[key].name
    if key.startswith(PENALTY_PREFIX):
        kind = key[len(PENALTY_PREFIX):]
        if rules is not None:
            from firmware.faults import ConfigError
            from firmware.rules.registry import load_ruleset
            try:
                penalties = load_ruleset(rules).config.penalties
            except (ConfigError, ValueError):
                penalties = {}
            if kind in penalties:
                return penalties[kind].name
        return "罚分 " + kind
    return key


def reason_words(line: dict[str, Any], locale: str) -> str:
    """A payment line's reason in the page's language: its Chinese name, or the reason's English name in English
    (a penalty named by a rule set keeps the rule set's name)."""
    if locale != "en":
        return line["name"]
    reason = REASONS.get(line["reason"])
    return reason.en if reason is not None and reason.en else line["name"]


def payment_lines(result: dict[str, Any]) -> list[dict[str, Any]]:
    """A hand's payments, one line per reason, in the order first paid: ``reason`` (key), ``name`` (Chinese),
    ``amounts`` by side (what each side gained or lost for that reason; held payments not counted)."""
    lines: dict[str, dict[str, Any]] = {}
    for p in result.get("money") or []:
        if p.get("held"):
            continue
        line = lines.setdefault(p["reason"], {"reason": p["reason"],
                                              "name": p.get("name") or reason_name(p["reason"], result.get("rules")),
                                              "amounts": [0] * SIDES})
        line["amounts"][p["payer"]] -= p["amount"]
        line["amounts"][p["payee"]] += p["amount"]
    return list(lines.values())


def dealt_hands(result: dict[str, Any]) -> dict[str, list[str]] | None:
    """The starting hands of a hand's stored record (what the reader knew at the deal: ``?`` where a tile was not
    read), by side; None without them."""
    try:
        dealt = json.loads(result.get("record") or "{}").get("dealt") or {}
    except (ValueError, AttributeError):
        return None
    hands = {}
    for side, text in dealt.items():
        tiles, i = [], 0
        while i < len(text):                       # codes of one or two characters: 5m, E, ?
            if text[i] in "123456789" and i + 1 < len(text):
                tiles.append(text[i:i + 2])
                i += 2
            else:
                tiles.append(text[i])
                i += 1
        hands[side] = tiles
    return hands or None


def hand_view(result: dict[str, Any], dealt: dict[str, Any] | None = None,
              deal: dict[str, Any] | None = None) -> dict[str, Any]:
    """One hand for a template: result, winners with seat winds, the items (fans, points or doublings: ``unit``)
    and their ``title``, payment lines, dice, starting hands."""
    dealer = result.get("dealer", dealt.get("dealer", 0) if dealt else 0)
    unit = unit_of(result["rules"]) if result.get("rules") else Unit("item")
    fans = [{"name": f["name"], "en": f.get("en") or "", "points": f["points"], "count": f.get("count", 1),
             "value": unit.value(f["points"])}
            for f in result.get("fans", [])]
    total = sum(f["points"] * f["count"] for f in fans)
    hands = None
    starting = dealt_hands(result) or (deal.get("hands") if deal is not None else None)
    if starting:
        hands = [{"side": int(side), "wind": seat_wind(int(side), dealer), "tiles": sorted(tiles, key=tile_order)}
                 for side, tiles in sorted(starting.items(), key=lambda kv: int(kv[0]))]
    return {
        "hand": result["hand"], "dealer": dealer, "dealer_wind": seat_wind(dealer, dealer),
        "round_wind": WINDS[int(result.get("round_wind", 0)) % SIDES],
        "winners": [{"side": s, "wind": seat_wind(s, dealer)} for s in result.get("winners", [])],
        "drawn": bool(result.get("drawn")), "note": result.get("note", ""),
        "fans": fans, "total": total, "unit": unit, "title": unit.title(total),
        "payments": payment_lines(result),
        "dice": list(dealt["dice"]) if dealt else (list(deal["dice"]) if deal and deal.get("dice") else None),
        "set_id": dealt.get("set_id") if dealt else None,
        "starting_hands": hands,
        "sides": [{"side": s, "wind": seat_wind(s, dealer)} for s in range(SIDES)],
    }


def items_heading(hands: list[dict[str, Any]], rules: str | None = None) -> str:
    """The scoreboard's column of the hands' items: the unit (fans, points, doublings) of ``rules``, the game's
    rule set whose hands are listed (none may be yet); without it, the listed hands' unit, or "items" when they
    were played under rule sets of different units (or none is listed)."""
    if rules:
        return unit_of(rules).column
    columns = {h["unit"].column for h in hands}
    return columns.pop() if len(columns) == 1 else "items"


def items_unit(hands: list[dict[str, Any]], rules: str | None = None) -> str:
    """The key of :func:`items_heading`'s unit (fan, point, doubling; item when it cannot be told)."""
    if rules:
        return unit_of(rules).key
    keys = {h["unit"].key for h in hands}
    return keys.pop() if len(keys) == 1 else "item"
