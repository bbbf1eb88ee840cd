"""辽宁 and 锦州 as a rule set: the northeastern conditions, base x 2^N per payer, kong money, 黄庄, 跟庄, 长毛.

Each payer pays base x 2^N, N the winner's items (:mod:`.scoring`) plus the
items that concern that payer: 点炮 (the discarder), 庄 (the dealer wins or
pays), 闭门 (the payer had no chow, pung or melded kong), 三清 / 四清, 长毛
carried in, 杠流泪 (won on the discard made right after a kong; a 红中
kong counts +1 more where ``red_dragon_kong_factor`` > 1, and so does 杠开 on
the replacement of the winner's 红中 kong, the last kong it made), 穷; N is capped by
``cap``.  Who pays on a discard is ``who_pays``: the discarder only, every
seat, or the discarder for all three (一家炮 / 包三家; the breakdown still
lists each share).  On the spot: kong money from each other seat
(``kong_each``, 红中 kongs x factor; a robbed 加杠's returned where
``robbed_kong_paid`` is off), 黄庄 and 跟庄 paid by the dealer to each.
The dealer keeps the seat on a dealer win; a 黄庄 keeps it with 长毛 +1 where
``dealer_stays_on_draw``; 跟庄 adds 长毛 where ``follow_long_hair``.
"""

from __future__ import annotations

from collections import Counter

from firmware.rules.config import RuleSetConfig
from firmware.rules.money import (ADDED_KONG, CONCEALED_KONG, DRAW, FALSE_WIN, FOLLOW, MELDED_KONG, SEATS, WIN,
                                  Breakdown, Item, Payment, each_pays_one, one_pays_each)
from firmware.rules.northeast.scoring import item, score_northeast
from firmware.rules.ruleset import (Aims, Dealership, DrawnEnd, HandOutcome, Kong, RuleSet, Score, WinMoney,
                                    WinSituation)
from firmware.rules.win import Win
from firmware.tiles.tile import RED_DRAGON


class NortheastRules(RuleSet):
    unit = "doubling"

    def __init__(self, config: RuleSetConfig) -> None:
        super().__init__(config)
        if config.doubling is None or config.conditions is None:
            raise ValueError(f"rule set {config.rules.name}: the northeastern family needs [doubling] and "
                             "[conditions]")
        self.dbl, self.cond = config.doubling, config.conditions
        self.robbed_kong_paid = self.dbl.robbed_kong_paid
        self.needs_open_seats = any(self.dbl.items.get(k, 0) > 0
                                    for k in ("payer_closed", "three_closed", "four_closed"))
        self.aims = Aims(eager_to_open=self.cond.must_open, safe_follow=self.dbl.follow_dealer_pays_each > 0,
                         keeps_suits=self.cond.all_three_suits,
                         keeps_terminal=self.cond.must_have_terminal)

    def score(self, win: Win) -> Score:
        s = score_northeast(win, self.cond, self.dbl)
        items = _merge(s.items, self.dbl)
        total = sum(i.points * i.count for i in items)
        return Score(s.shape, s.legal, s.reason, items, total, total, self.unit, s)

    # -- a win -----------------------------------------------------------------------------------------------
    def win_payments(self, win: Win, score: Score, situation: WinSituation) -> WinMoney:
        dbl, v = self.dbl, self.dbl.items
        winner, discarder, dealer = situation.winner, situation.discarder, situation.dealer
        others = [s for s in range(SEATS) if s != winner]
        closed = {s for s in range(SEATS) if s not in situation.open_sides}
        if score.detail is not None and score.detail.opened:
            closed.discard(winner)
        else:
            closed.add(winner)
        context: list[tuple[str, int]] = []
        if situation.long_hair:
            context.append(("long_hair", v.get("long_hair", 0) * situation.long_hair))
        if situation.kong_discard:
            context.append(("kong_discard", v.get("kong_discard", 0)))
            if situation.kong_discard_tile == RED_DRAGON and dbl.red_dragon_kong_factor > 1:
                context.append(("kong_discard", v.get("kong_discard", 0)))      # 红中杠流泪 doubles again
        if win.kong_win and win.self_drawn and situation.winner_last_kong == RED_DRAGON \
                and dbl.red_dragon_kong_factor > 1 and any(i.key == "kong_replacement" for i in score.items):
            context.append(("kong_replacement", v.get("kong_replacement", 0)))  # 红中杠开: the kong it replaced
        shares: list[Breakdown] = []
        for payer in others:
            items = [(i.key, i.points) for i in score.items for _ in range(i.count)] + context
            if discarder is not None and payer == discarder:
                items.append(("discard", v.get("discard", 0)))
            if dealer in (winner, payer):
                items.append(("dealer", v.get("dealer", 0)))
            if payer in closed:
                items.append(("payer_closed", v.get("payer_closed", 0)))
            if len(closed) == SEATS:
                items.append(("four_closed", v.get("four_closed", 0)))
            elif all(s in closed for s in others):
                items.append(("three_closed", v.get("three_closed", 0)))
            merged = _merge([(k, n) for k, n in items if n > 0], dbl)
            n = sum(i.points * i.count for i in merged)
            if dbl.cap is not None:
                n = min(n, dbl.cap)
            shares.append(Breakdown(payer, merged, dbl.base * 2 ** n))
        if discarder is not None and dbl.who_pays == "discarder_for_all":
            payments = [Payment(discarder, winner, sum(b.amount for b in shares), WIN, situation.event)]
        elif discarder is not None and dbl.who_pays == "discarder":
            shares = [b for b in shares if b.payer == discarder]
            payments = [Payment(discarder, winner, shares[0].amount, WIN, situation.event)]
        else:
            payments = [Payment(b.payer, winner, b.amount, WIN, situation.event) for b in shares]
        return WinMoney(payments, shares, context_items=_merge([c for c in context if c[1] > 0], dbl))

    def false_win_payments(self, declarer: int, situation: WinSituation) -> list[Payment]:
        """诈和: the declarer pays ``false_win_each`` to each other seat and plays on as a dead hand."""
        return one_pays_each(declarer, self.dbl.false_win_each, FALSE_WIN, situation.event)

    # -- on the spot --------------------------------------------------------------------------------------------
    def kong_payments(self, kong: Kong) -> list[Payment]:
        kind = "concealed" if kong.kind == "concealed" else "melded"
        each = self.dbl.kong_each.get(kind, 0)   # type: ignore[call-overload]
        each *= self.dbl.red_dragon_kong_factor if kong.tile == RED_DRAGON else 1
        reason = {"melded": MELDED_KONG, "added": ADDED_KONG, "concealed": CONCEALED_KONG}[kong.kind]
        return each_pays_one(kong.maker, each, reason, kong.event)

    def follow_payments(self, dealer: int, event: int) -> list[Payment]:
        return one_pays_each(dealer, self.dbl.follow_dealer_pays_each, FOLLOW, event)

    def draw_payments(self, end: DrawnEnd) -> list[Payment]:
        return one_pays_each(end.dealer, self.dbl.draw_dealer_pays_each, DRAW, end.event)

    # -- the game ------------------------------------------------------------------------------------------
    def next_dealer(self, current: Dealership, outcome: HandOutcome) -> Dealership:
        follow = 1 if outcome.followed and self.dbl.follow_long_hair else 0
        if outcome.winners:
            if current.dealer in outcome.winners:
                return Dealership(current.dealer, current.streak + 1, follow)
            return Dealership((current.dealer + 1) % SEATS, 0, follow)
        if self.dbl.dealer_stays_on_draw:
            return Dealership(current.dealer, current.streak, current.long_hair + 1 + follow)
        return Dealership((current.dealer + 1) % SEATS, 0, follow)


def _merge(items: list[tuple[str, int]], dbl) -> list[Item]:
    """(key, +N) pairs as Items, a repeated key counted (two 四归一, 红中杠开's second +1)."""
    counts: Counter[tuple[str, int]] = Counter(items)
    return [item(key, n, dbl, count) for (key, n), count in counts.items()]
