"""A settled case's answer as one JSON line, from fragments encoded once: the text ``to_json`` makes of it."""

# The encoder (no indent, ", " and ": ") writes a list or an object inside another exactly as it writes it
# alone, so the answer's fixed parts are written once here, each item's and reason's text is encoded once
# and kept (by the object, which the entry holds, so its id is not reused), and the numbers are written as
# the encoder writes an int.  Anything else (a breakdown, a liable seat, a value of another type, a text
# that is not valid UTF-8) is left to the encoder of the whole answer (None here).

from __future__ import annotations

import json
from typing import Any

from firmware.rules.case_format import Case, valid_id
from firmware.rules.money import Item, Payment, Reason, deltas
from firmware.rules.settlement import WinVerdict
from firmware.rules.win import WIND_CODES

MAX_FRAGMENTS = 1024                    # items and reasons kept (a rule set has a few hundred at most)
_ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode      # as case_scoring's
_ITEM_TEXT: dict[int, tuple[Item, str]] = {}
_REASON_TEXT: dict[int, tuple[Reason, str]] = {}
_WIND_KEYS = [_ENCODE(w) + ": " for w in WIND_CODES]
_PAIRS = [[f'{{"payer": {_ENCODE(a)}, "payee": {_ENCODE(b)}, "amount": ' for b in WIND_CODES] for a in WIND_CODES]
_UNIT_TEXT: dict[str, str] = {}         # a rule set's unit (fan, point, doubling) as JSON
_BOOL = {True: "true", False: "false"}


def _number(value: Any) -> str:
    return int.__repr__(value) if type(value) is int else _ENCODE(value)


def _truth(value: Any) -> str:
    return _BOOL[value] if type(value) is bool else _ENCODE(value)


def _item(item: Item) -> str:
    kept = _ITEM_TEXT.get(id(item))
    if kept is not None and kept[0] is item:
        return kept[1]
    text = _ENCODE(item.to_json())
    if len(_ITEM_TEXT) >= MAX_FRAGMENTS:
        _ITEM_TEXT.clear()
    _ITEM_TEXT[id(item)] = (item, text)
    return text


def _money(p: Payment) -> str:
    reason = p.reason
    kept = _REASON_TEXT.get(id(reason))
    if kept is not None and kept[0] is reason:
        why = kept[1]
    else:
        why = f'"reason": {_ENCODE(reason.key)}, "name": {_ENCODE(reason.name)}, "en": {_ENCODE(reason.en)}'
        if len(_REASON_TEXT) >= MAX_FRAGMENTS:
            _REASON_TEXT.clear()
        _REASON_TEXT[id(reason)] = (reason, why)
    held = ', "held": true}' if p.held else "}"
    return f'{_PAIRS[p.payer][p.payee]}{_number(p.amount)}, {why}, "event": {_number(p.event)}{held}'


def _unit(unit: Any) -> str:
    text = _UNIT_TEXT.get(unit) if type(unit) is str else None
    if text is None:
        text = _ENCODE(unit)
        if type(unit) is str and len(_UNIT_TEXT) < MAX_FRAGMENTS:
            _UNIT_TEXT[unit] = text
    return text


def case_json(case: Case, verdict: WinVerdict, payments: list[Payment], wants: bool) -> str | None:
    """``to_json(outcome_answer(case, verdict, payments, wants))``, or None: ask that."""
    if verdict.breakdown or verdict.liable is not None or not valid_id(case.id):
        return None
    try:
        text = _text(case, verdict, payments, wants)
        text.encode("utf-8")
    except (TypeError, ValueError, IndexError):     # (a lone surrogate, a value the encoder refuses, a seat
        return None                                 # out of range: as outcome_answer and to_json say it)
    if "\x85" in text or "\u2028" in text or "\u2029" in text:
        return None
    return text


def _text(case: Case, verdict: WinVerdict, payments: list[Payment], wants: bool) -> str:
    score = verdict.score
    assert score is not None
    parts = ['{"id": ', _number(case.id)]
    if not score.shape:
        parts += [', "win": false, "reason": ', _ENCODE(verdict.reason)]
    else:
        total = verdict.total
        parts += [', "win": true, "total": ', _number(total), ', "total_without_flowers": ',
                  _number(score.total_without_flowers + (total - score.total)), ', "meets_minimum": ',
                  _truth(score.legal), ', "unit": ', _unit(score.unit), ', "fans": [',
                  ", ".join(map(_item, verdict.items)), "]"]
        if not verdict.legal:
            parts += [', "reason": ', _ENCODE(verdict.reason)]
            if score.legal:
                parts += [', "refused": ', _ENCODE(verdict.reason)]
    if wants:
        parts.append(', "payments": {')
        parts.append(", ".join(k + _number(d) for k, d in zip(_WIND_KEYS, deltas(payments, include_held=True))))
        parts += ['}, "money": [', ", ".join(map(_money, payments)), "]"]
    parts.append("}")
    return "".join(parts)
