"""中国竞技麻将 as a rule set: fans + extra points = S, 2S / S / 3S, 包付, 倍打, kong money, 追牌, the 局.

Scoring is :mod:`.scorer` (a legal win needs a 技术型番种: "无番禁和牌").  A
win pays S (fans plus extra points, flowers included): the discarder alone
2·S, self-drawn each other seat S, a robbed kong 3·S from its owner; under
包付 (:mod:`.liability`: three claims from one feeder, the 清一色 danger, a
全求独钓 won on its hung tile) the liable seat pays 3·S alone.  During a
dealer streak every gain and loss is doubled (倍打, never more).  Several may
win on one discard; the discarder pays them in turn.  Nobody pays more than
they hold (``[scoreboard] floor``), and winning off a player with no points
is refused: the winner pays that player S and 10 to each of the three (the
points are those at the discard, so a later winner on one discard is not
refused because an earlier one took the rest: it gets what is left).
Kong money is paid on the spot (点杠 12 from the feeder, 加杠 4 and 暗杠 6
from each, 花杠 8 from each), so is 追牌 (the first of four discards of one
tile pays each other seat 4).  A 局 ends (局结) when two players have no
points or its 圈 are dealt (the base class, from ``[match]``); a win that
would end it with another player first is not allowed, and kong money or a
penalty (a false or refused win's too) that would is held off the board
until the 局 ends, owed in full (the floor is the board's): a 局's final
score may be below nothing.
"""

from __future__ import annotations

from firmware.rules.competition.liability import liable_for
from firmware.rules.competition.scorer import EXTRA_NAMES, FAN_NAMES, CompetitionScore, score_competition
from firmware.rules.config import RuleSetConfig
from firmware.rules.money import (ADDED_KONG, CHASE, CONCEALED_KONG, FLOWER_KONG, LIABLE_WIN, MELDED_KONG,
                                  REFUSED_WIN, SEATS, WIN, FALSE_WIN, Item, Payment, each_pays_one, one_pays_each,
                                  one_pays_one)
from firmware.rules.ruleset import Aims, Kong, PlayRules, RuleSet, Score, WinMoney, WinSituation
from firmware.rules.win import Win

NO_FAN = "no fan: 无番禁和牌 (a win needs a 技术型番种)"


class CompetitionRules(RuleSet):
    unit = "point"
    play = PlayRules(several_winners=True)
    aims = Aims(lean_to_flush=True, safe_follow=True)

    def __init__(self, config: RuleSetConfig) -> None:
        super().__init__(config)
        if config.competition is None:
            raise ValueError(f"rule set {config.rules.name}: the competition family needs [competition]")
        self.cfg = config.competition
        self.pay = config.competition.settlement

    def score(self, win: Win) -> Score:
        c = score_competition(win, self.cfg)
        items = [Item(k, FAN_NAMES[k][0], FAN_NAMES[k][1], p) for k, p in c.fans] + \
                [Item(k, EXTRA_NAMES[k][0], EXTRA_NAMES[k][1], p, n) for k, p, n in c.extras]
        reason = c.reason if not c.win else ("" if c.meets_minimum else NO_FAN)
        return Score(c.win, c.meets_minimum, reason, items, c.total, c.total - c.flower_points, self.unit, c)

    def refusal(self, score: Score, situation: WinSituation) -> str | None:
        d, chips = situation.discarder, situation.chips
        if d is not None and chips is not None and chips[d] <= 0:
            return "the discarder has no points left: winning off them is not allowed (盘面无分者点炮，禁止和牌)"
        return None

    def doubled(self, amount: int, streak: int) -> int:
        return amount * self.pay.double_factor if streak > 0 else amount

    def win_payments(self, win: Win, score: Score, situation: WinSituation) -> WinMoney:
        detail: CompetitionScore = score.detail
        s = self.doubled(score.total, situation.streak)
        winner, discarder = situation.winner, situation.discarder
        liable = situation.liable
        if liable is None:
            liable = liable_for(winner, situation.melds_by_side, discarder,
                                full_flush=any(k == "full_flush" for k, _ in detail.fans))
        if liable is None and situation.hung_unchanged:
            liable = discarder                     # the 全求独钓 danger: its hung tile was discarded
        if liable is not None and liable != winner:
            payments = [Payment(liable, winner, s * self.pay.liable_multiplier, LIABLE_WIN, situation.event)]
        elif discarder is None:
            payments = [Payment(p, winner, s * self.pay.self_drawn_multiplier, WIN, situation.event)
                        for p in range(SEATS) if p != winner]
            liable = None
        else:
            mult = self.pay.robbed_kong_multiplier if situation.robbed else self.pay.discard_multiplier
            payments = [Payment(discarder, winner, s * mult, WIN, situation.event)]
            liable = None
        return WinMoney(payments, liable=liable)

    def false_win_payments(self, declarer: int, situation: WinSituation) -> list[Payment]:
        return one_pays_each(declarer, self.doubled(self.pay.false_win_each, situation.streak), FALSE_WIN,
                             situation.event)

    def refused_win_payments(self, win: Win, score: Score, situation: WinSituation) -> list[Payment]:
        """Winning off a player with no points: the winner pays that player the win's score and 10 to each of
        the three (出现对无分者和牌，应向无分者罚分和牌得分，并向三家各赔付10分); any other refusal is a false win."""
        d, chips = situation.discarder, situation.chips
        if d is None or chips is None or chips[d] > 0:
            return self.false_win_payments(situation.winner, situation)
        each = self.doubled(self.pay.refused_win_each, situation.streak)
        out = one_pays_each(situation.winner, each, REFUSED_WIN, situation.event)
        return out + one_pays_one(situation.winner, d, self.doubled(score.total, situation.streak), REFUSED_WIN,
                                  situation.event)

    # -- on the spot (现场汇) --------------------------------------------------------------------------------
    def kong_payments(self, kong: Kong) -> list[Payment]:
        if kong.kind == "melded":
            assert kong.feeder is not None              # (a kong on a discard always names its feeder)
            return one_pays_one(kong.feeder, kong.maker, self.pay.melded_kong_from_discard, MELDED_KONG, kong.event)
        if kong.kind == "added":
            return each_pays_one(kong.maker, self.pay.added_kong_each, ADDED_KONG, kong.event)
        return each_pays_one(kong.maker, self.pay.concealed_kong_each, CONCEALED_KONG, kong.event)

    def flower_kong_payments(self, maker: int, event: int) -> list[Payment]:
        return each_pays_one(maker, self.pay.flower_kong_each, FLOWER_KONG, event)

    def chase_payments(self, first: int, event: int) -> list[Payment]:
        return one_pays_each(first, self.pay.chase_each, CHASE, event)
