"""MCR / 国粹 (the 1998 national rules) as a rule set: the 81 fans, 8 + B, the deal always passes.

Scoring is :mod:`firmware.rules.mcr.scorer` (every reading, the exclusions and
the five principles, the highest kept); a legal win needs 8 fans without
flowers.  A self-drawn win is paid 8 + B by each other seat; on a discard the
discarder pays 8 + B and the other two 8 each (抢杠和 likewise, the robbed
kong's owner as discarder).  A false win pays 10 to each other seat.  There
is no kong money, no 追牌 or 跟庄 money and nothing paid on 荒牌; the deal
passes every hand ("无论是否和牌，庄家不连庄").
"""

from __future__ import annotations

from firmware.rules.mcr.fans import Fan
from firmware.rules.mcr.scorer import MINIMUM, score
from firmware.rules.money import SEATS, WIN, Item, Payment
from firmware.rules.ruleset import Dealership, HandOutcome, RuleSet, Score, WinMoney, WinSituation
from firmware.rules.win import Win

BASE = 8
# Items by (fan, count), made once: bounded by design (82 fans, counts of a few; an Item is never changed)
_ITEMS: dict[tuple[Fan, int], Item] = {}


def _item(fan: Fan, n: int) -> Item:
    item = Item(fan.name.lower(), fan.zh, fan.en, fan.points, n)
    if n <= 8:
        _ITEMS[fan, n] = item
    return item


class MCRRules(RuleSet):
    plain_settlement = True            # (its money below reads the winner, the discarder and the event alone)

    def score(self, win: Win) -> Score:
        s = score(win)
        items = [_ITEMS.get((fan, n)) or _item(fan, n) for fan, n in s.fans]
        reason = s.reason if not s.win else ("" if s.meets_minimum else
                                             f"under {MINIMUM} fans without flowers ({s.total_without_flowers})")
        return Score(s.win, s.meets_minimum, reason, items, s.total, s.total_without_flowers, self.unit, s)

    def win_payments(self, win: Win, score: Score, situation: WinSituation) -> WinMoney:
        winner, discarder = situation.winner, situation.discarder
        payments = []
        for seat in range(SEATS):
            if seat != winner:
                amount = BASE + score.total if discarder is None or seat == discarder else BASE
                payments.append(Payment(seat, winner, amount, WIN, situation.event))
        return WinMoney(payments)

    def next_dealer(self, current: Dealership, outcome: HandOutcome) -> Dealership:
        return Dealership((current.dealer + 1) % SEATS)
