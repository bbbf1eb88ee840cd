"""Scoring cases in the JSON-lines format: one result per line, an ``error`` result for a line that
cannot be read (and the next line still scored).  ``mjtable score`` reads and writes the lines."""

from __future__ import annotations

import json
from typing import Any, Iterable, TextIO

from firmware.rules.case_format import Case, CaseError, parse_line
from firmware.rules.mcr.payment import false_win_payments, win_payments
from firmware.rules.mcr.scorer import score
from firmware.rules.names import RULE_NAMES
from firmware.rules.win import WIND_CODES

SCORERS = RULE_NAMES


def score_stream(lines: Iterable[str], out: TextIO, rules: str | None = None) -> int:
    """Score every non-blank line; returns how many lines were scored."""
    n = 0
    for line in lines:
        if not line.strip():
            continue
        n += 1
        out.write(json.dumps(score_line(line, rules), ensure_ascii=False) + "\n")
        out.flush()
    return n


def score_line(line: str, default_rules: str | None = None) -> dict[str, Any]:
    case_id = None
    try:
        case_id = _peek_id(line)
        _, case = parse_line(line)
    except CaseError as exc:
        return {"id": case_id, "error": str(exc)}
    rules = case.rules or default_rules or "mcr"
    if default_rules and case.rules and case.rules != default_rules:
        return {"id": case.id, "error": f"case is for rules '{case.rules}', --rules says '{default_rules}'"}
    if rules not in SCORERS:
        return {"id": case.id, "error": f"rules '{rules}' cannot be scored yet; scorers: {', '.join(SCORERS)}"}
    try:
        if rules == "competition":
            return competition_result(case, json.loads(line))
        if rules in ("liaoning", "jinzhou"):
            return northeast_result(case, json.loads(line), rules)
    except (ValueError, TypeError) as exc:
        return {"id": case.id, "error": str(exc)}
    return mcr_result(case, _wants_payments(line))


def _peek_id(line: str) -> Any:
    try:
        data = json.loads(line)
    except json.JSONDecodeError:
        return None
    return data.get("id") if isinstance(data, dict) else None


def _wants_payments(line: str) -> bool:
    data = json.loads(line)
    return "discarder" in data


def mcr_result(case: Case, with_payments: bool) -> dict[str, Any]:
    result = score(case.win)
    winner = case.win.seat_wind
    if not result.win:
        out: dict[str, Any] = {"id": case.id, "win": False, "reason": result.reason}
        if with_payments:
            out["payments"] = _by_wind(false_win_payments(winner))
        return out
    out = {"id": case.id, "win": True, "total": result.total, "total_without_flowers": result.total_without_flowers,
           "meets_minimum": result.meets_minimum,
           "fans": [{"name": fan.zh, "en": fan.en, "points": fan.points, "count": n} for fan, n in result.fans]}
    if with_payments:
        out["payments"] = _by_wind(win_payments(result, winner, None if case.win.self_drawn else case.discarder))
    return out


def _by_wind(deltas: list[int]) -> dict[str, int]:
    return {WIND_CODES[seat]: delta for seat, delta in enumerate(deltas)}


def competition_result(case: Case, data: dict[str, Any]) -> dict[str, Any]:
    from firmware.rules.competition.scorer import EXTRA_NAMES, FAN_NAMES, score_competition
    from firmware.rules.competition.settlement import WinRefused, false_win_payments, win_payments
    from firmware.rules.ruleset import load_ruleset

    cfg = load_ruleset("competition").competition
    assert cfg is not None
    result = score_competition(case.win, cfg)
    winner = case.win.seat_wind
    dead = (data.get("table") or {}).get("dead_hands", []) if isinstance(data.get("table"), dict) else []
    if WIND_CODES[winner] in dead and result.win:
        result.win = False
        result.reason = "相公: a dead hand (a discarded flower, a wrong count, a false win) may not win"
    wants = "discarder" in data
    if not result.win:
        out: dict[str, Any] = {"id": case.id, "win": False, "reason": result.reason}
        if wants:
            out["payments"] = _by_wind(false_win_payments(winner))
        return out
    out = {"id": case.id, "win": True, "total": result.total,
           "total_without_flowers": result.total - result.flower_points, "meets_minimum": result.meets_minimum,
           "fans": [{"name": FAN_NAMES[k], "key": k, "points": p, "count": 1} for k, p in result.fans],
           "extras": [{"name": EXTRA_NAMES[k], "key": k, "points": p, "count": n} for k, p, n in result.extras]}
    if not result.meets_minimum:
        out["reason"] = "no fan: 无番禁和牌"
    if wants:
        table = _table(data)
        discarder = None if case.win.self_drawn else case.discarder
        try:
            deltas = win_payments(result, winner, discarder, cfg.settlement,
                                  robbed_kong=case.win.kong_win and not case.win.self_drawn,
                                  double=table["dealer_streak"] > 0, chips=table["chips"], liable=table["liable"])
            out["payments"] = _by_wind(deltas)
            out["breakdown"] = {
                "items": [{"item": FAN_NAMES[k], "points": p} for k, p in result.fans]
                + [{"item": EXTRA_NAMES[k], "points": p * n} for k, p, n in result.extras],
                "S": result.total, "double": table["dealer_streak"] > 0,
                "liable": WIND_CODES[table["liable"]] if table["liable"] is not None else None}
        except WinRefused as exc:
            out["refused"] = str(exc)
            out["payments"] = _by_wind(false_win_payments(winner))
    return out


def _table(data: dict[str, Any]) -> dict[str, Any]:
    """The optional ``"table"`` context of a case: dealer streak, open seats, chips, liability, 跟庄."""
    raw = data.get("table") or {}
    if not isinstance(raw, dict):
        raise ValueError("'table' must be an object")
    winds = tuple(WIND_CODES)
    chips = raw.get("chips")
    liable = raw.get("liable")
    if liable is not None and liable not in winds:
        raise ValueError(f"table.liable must be a seat wind, got {liable!r}")
    open_seats = raw.get("open_seats", [])
    if not isinstance(open_seats, list) or any(w not in winds for w in open_seats):
        raise ValueError("table.open_seats must be a list of seat winds")
    return {"dealer_streak": int(raw.get("dealer_streak", 0) or 0),
            "open_seats": frozenset(winds.index(w) for w in open_seats),
            "chips": [int(chips.get(w, 0)) for w in winds] if isinstance(chips, dict) else None,
            "liable": winds.index(liable) if liable is not None else None,
            "first_discard_followed": bool(raw.get("first_discard_followed", False)),
            "dead_hands": [w for w in raw.get("dead_hands", []) if w in winds]}


def northeast_result(case: Case, data: dict[str, Any], rules_name: str) -> dict[str, Any]:
    from firmware.rules.northeast import TableContext, dealer_pays_each, score_northeast, settle
    from firmware.rules.ruleset import load_ruleset

    rules = load_ruleset(rules_name)
    result = score_northeast(case.win, rules)
    winner = case.win.seat_wind
    if not result.win:
        return {"id": case.id, "win": False, "reason": result.reason}
    out: dict[str, Any] = {"id": case.id, "win": True, "meets_minimum": result.legal,
                           "fans": [{"name": name, "points": n, "count": 1} for name, n in result.items]}
    if not result.legal:
        out["reason"] = result.reason
    if "discarder" in data and result.legal:
        table = _table(data)
        ctx = TableContext(dealer=0, open_seats=table["open_seats"] - {winner},
                           chips=tuple(table["chips"]) if table["chips"] else None)
        settlement = settle(case.win, result, winner, None if case.win.self_drawn else case.discarder, ctx, rules)
        deltas = settlement.deltas
        breakdown = {WIND_CODES[p]: [{"item": name, "n": n} for name, n in items]
                     for p, items in settlement.breakdown.items()}
        if table["first_discard_followed"] and rules.doubling and rules.doubling.follow_dealer_pays_each:
            follow = dealer_pays_each(0, rules.doubling.follow_dealer_pays_each)
            deltas = [a + b for a, b in zip(deltas, follow)]
            breakdown["跟庄"] = [{"item": "dealer pays each", "n": rules.doubling.follow_dealer_pays_each}]
        out["total"] = out["total_without_flowers"] = deltas[winner]
        out["payments"] = _by_wind(deltas)
        out["breakdown"] = breakdown
    return out
