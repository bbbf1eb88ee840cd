"""Who deals next, by rule set: the one function the game layer calls at the end of every hand.

============  ===========================  ==================================
rule set      a dealer win                 荒牌 / 黄庄 (no winner)
============  ===========================  ==================================
mcr           the deal passes anyway       the deal passes
competition   the dealer stays (倍打 next)  the deal passes
liaoning      the dealer stays             the dealer stays, 长毛 +1
jinzhou       the dealer stays             the deal passes (configurable)
============  ===========================  ==================================

Any other winner passes the deal to 下家 (counter-clockwise).
"""

from __future__ import annotations

from dataclasses import dataclass

from firmware.rules.ruleset import load_ruleset

SEATS = 4


@dataclass(frozen=True)
class Dealership:
    dealer: int           # physical side (or seat index) of the dealer
    streak: int = 0       # hands the dealer has kept the seat (竞技麻将 倍打 when > 0)
    long_hair: int = 0    # 辽宁 长毛 carried into the next hand


def next_dealer(rules_name: str, current: Dealership, winner: int | None) -> Dealership:
    passed = Dealership((current.dealer + 1) % SEATS)
    if rules_name == "mcr":
        return passed
    if winner is not None:
        if winner == current.dealer:
            return Dealership(current.dealer, current.streak + 1)
        return passed
    rules = load_ruleset(rules_name)
    if rules.doubling is not None and rules.doubling.dealer_stays_on_draw:
        return Dealership(current.dealer, current.streak, current.long_hair + 1)
    return passed
