"""Test helper: a hand's record from action lines, settled by the one settlement."""

from __future__ import annotations

from firmware.rules.hand_record import HandRecord, parse_action
from firmware.rules.registry import load_ruleset
from firmware.rules.settlement import HandSettlement, settle_hand


def record(rules: str, *lines: str, chips=None, dealer: int = 0, streak: int = 0, long_hair: int = 0,
           hand: int = 1, round_wind: int = 0) -> HandRecord:
    return HandRecord(rules, hand, dealer, round_wind, streak, long_hair, tuple(chips) if chips else None,
                      [parse_action(line, i) for i, line in enumerate(lines)])


def settle(rules: str, *lines: str, **context) -> HandSettlement:
    """``settle("competition", "0 pung E from 1", "0 win N from 2 hand 123345678mN flowers 2")``."""
    return settle_hand(load_ruleset(rules), record(rules, *lines, **context))


def by_reason(settled: HandSettlement) -> dict[str, list[int]]:
    """Each reason's payments as deltas by side."""
    out: dict[str, list[int]] = {}
    for p in settled.payments:
        d = out.setdefault(p.reason.key, [0, 0, 0, 0])
        d[p.payer] -= p.amount
        d[p.payee] += p.amount
    return out


def settle_win(rules: str, win, discarder: int | None, **context) -> HandSettlement:
    """A declared Win (its seat wind as its side, East dealing) settled as the end of a hand's record."""
    from firmware.rules.case_record import _meld_actions
    from firmware.rules.hand_record import Action, Verb

    rec = record(rules, **context)
    rec.round_wind = win.round_wind
    side = win.seat_wind
    rec.actions += _meld_actions(side, win.melds)
    flags = frozenset(f for f in ("kong_win", "last_tile", "flower_win", "last_of_kind") if getattr(win, f))
    rec.actions.append(Action(Verb.WIN, side, win.win_tile, None if win.self_drawn else discarder, win.hand, flags,
                              win.flowers))
    return settle_hand(load_ruleset(rules), rec)
