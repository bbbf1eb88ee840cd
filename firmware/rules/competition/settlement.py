"""竞技麻将 settlement: who pays what for a win, with 倍打 and the chips floor.

S is the winner's fans plus extra points.  On a discard the discarder alone
pays 2·S; self-drawn, each other seat pays S; a robbed kong is paid 3·S by
the kong's owner alone.  During a dealer streak (倍打) every amount is
doubled (never more).  Nobody pays more chips than they hold, and winning
off a player with no chips is refused.  A declared win that is not legal
(not a shape, or no fan) is a false win: 10 to each other seat (the rules'
penalty unit) and the declarer plays on as 相公.  Under 包付 the liable seat
alone pays 3·S (see :mod:`firmware.rules.competition.liability`).
"""

from __future__ import annotations

from firmware.rules.competition.scorer import CompetitionScore
from firmware.rules.ruleset import CompetitionSettlement
from firmware.rules.transfers import each_pays_one, one_pays_each

SEATS = 4
PENALTY_UNIT = 10
LIABLE_MULTIPLIER = 3   # 包付: the liable seat pays what all three would (3·S)


class WinRefused(ValueError):
    """The win is not allowed (the discarder has no chips left)."""


def win_payments(score: CompetitionScore, winner: int, discarder: int | None, cfg: CompetitionSettlement,
                 robbed_kong: bool = False, double: bool = False, chips: list[int] | None = None,
                 liable: int | None = None) -> list[int]:
    """Each seat's gain or loss for a win; ``liable`` (包付): that seat alone pays 3·S, whoever discarded."""
    if not score.meets_minimum:
        return false_win_payments(winner)
    if discarder is not None and chips is not None and chips[discarder] <= 0:
        raise WinRefused("the discarder has no chips left: winning off them is not allowed")
    s = score.total * (cfg.double_factor if double else 1)
    if liable is not None and liable != winner:
        owed = {liable: s * LIABLE_MULTIPLIER}
    elif discarder is None:
        owed = {seat: s * cfg.self_drawn_multiplier for seat in range(SEATS) if seat != winner}
    else:
        owed = {discarder: s * (cfg.robbed_kong_multiplier if robbed_kong else cfg.discard_multiplier)}
    deltas = [0] * SEATS
    for payer, amount in owed.items():
        if chips is not None:
            amount = min(amount, max(0, chips[payer]))
        deltas[payer] -= amount
        deltas[winner] += amount
    return deltas


def false_win_payments(declarer: int) -> list[int]:
    return one_pays_each(declarer, PENALTY_UNIT)


def kong_payments(kind: str, maker: int, feeder: int | None, cfg: CompetitionSettlement,
                  double: bool = False) -> list[int]:
    """On-the-spot kong money (现场汇): ``kind`` is ``melded`` (点杠, the feeder pays), ``added``,
    ``concealed`` or ``flower`` (each other seat pays)."""
    factor = cfg.double_factor if double else 1
    deltas = [0] * SEATS
    if kind == "melded":
        if feeder is None:
            raise ValueError("a kong on a discard needs the feeder")
        deltas[feeder] -= cfg.melded_kong_from_discard * factor
        deltas[maker] += cfg.melded_kong_from_discard * factor
        return deltas
    each = {"added": cfg.added_kong_each, "concealed": cfg.concealed_kong_each,
            "flower": cfg.flower_kong_each}[kind] * factor
    return each_pays_one(maker, each)


def chase_payments(first: int, cfg: CompetitionSettlement) -> list[int]:
    """追牌: four players in a row discard the same tile; the first of them pays each of the others."""
    return one_pays_each(first, cfg.chase_each)
