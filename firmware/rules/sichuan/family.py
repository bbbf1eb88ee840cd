"""四川 血战到底 (and 血流成河) as a rule set: 108 tiles, 定缺, no chows, winners leave, money on the spot and after.

The hand (docs/rules.md, 四川; ``[sichuan]`` in the TOML): after the deal
each passes three tiles of one suit (换三张, the way given by the dice) and
names a void suit (定缺) it discards first and may not win with; pungs and
kongs may be claimed, chows not; everyone who claims a discard wins
(一炮多响, paid 下家 first).  A winner leaves the hand and pays and collects
nothing more; the rest play on until three have won or the wall is empty
(血流成河: winners stay in, their hands locked, until the wall is empty).

Money, in units of ``base``: a win is worth base x 2^min(F, cap) (F from
:mod:`.fans`, 杠上炮 +1); on a discard the discarder pays it, self-drawn each
player still in pays it (+ base: 自摸加底); kongs are paid when made (刮风下雨:
暗杠 2 from each player still in, 补杠 of a tile just drawn 1 from each, 直杠
2 from the discarder; a robbed 补杠 nothing); the discard after a kong won
by another moves that kong's money to each winner (杠上炮, 呼叫转移); a false
win pays the cap value to each player still in and returns its kong money;
the drawn end's 查花猪, 查大叫 and 退税 are :mod:`.drawn_end`.  The first
winner deals next; after 一炮多响 the discarder; nobody won, the dealer
stays.
"""

from __future__ import annotations

from typing import Any

from firmware.i18n import reworded, worded_text
from firmware.rules.config import RuleSetConfig
from firmware.rules.hand_record import CLAIMS, Action, BadRecord, Verb
from firmware.rules.money import (ADDED_KONG, CONCEALED_KONG, FALSE_WIN, KONG_REASONS, KONG_REFUND, KONG_TRANSFER,
                                  MELDED_KONG, SEATS, WIN, Breakdown, Item, Payment)
from firmware.rules.ruleset import (Dealership, DrawnEnd, HandOutcome, Kong, PlayRules, RuleSet, Score, WinMoney,
                                    WinSituation)
from firmware.rules.sichuan.drawn_end import MissingHand, drawn_end_payments, refunds
from firmware.rules.sichuan.fans import SichuanScore, item, score_sichuan
from firmware.rules.win import Win
from firmware.tiles.tile import SUITS, code

PLAY_VERBS = CLAIMS | {Verb.DRAW, Verb.DISCARD, Verb.ADDED_KONG, Verb.CONCEALED_KONG, Verb.WIN}


class SichuanRules(RuleSet):
    unit = "doubling"
    options_section = "sichuan"
    robbed_kong_paid = False           # "抢杠胡 ... 刮风下雨无效" (a robbed 补杠 earns nothing)

    def __init__(self, config: RuleSetConfig) -> None:
        super().__init__(config)
        if config.sichuan is None:
            raise ValueError(f"rule set {config.rules.name}: the 四川 family needs [sichuan]")
        self.cfg = c = config.sichuan
        river = c.blood_river
        self.play = PlayRules(several_winners=c.several_winners, plays_on=True, winners_leave=not river,
                              winners_to_end=0 if river else 3, chows=False, void_suit=True, void_first=c.void_first,
                              swap_tiles=c.swap_tiles, first_turn=c.heavenly_earthly and not river)

    @property
    def cap_value(self) -> int:
        return self.cfg.base * 2 ** self.cfg.cap

    def value(self, doublings: int) -> int:
        return self.cfg.base * 2 ** min(doublings, self.cfg.cap)

    # -- scoring -----------------------------------------------------------------------------------------
    def score(self, win: Win) -> Score:
        s = score_sichuan(win, self.cfg, self.cfg.blood_river)
        return Score(s.shape, s.legal, s.reason, s.items, s.doublings, s.doublings, self.unit, s)

    def win_payments(self, win: Win, score: Score, situation: WinSituation) -> WinMoney:
        winner = situation.winner
        context = [item("kong_discard", 1)] if situation.kong_discard else []
        doublings = score.total + len(context)
        value = self.value(doublings)
        fed_bloom = win.self_drawn and win.kong_win and situation.kong_fed_by is not None \
            and self.cfg.fed_kong_bloom == "discard" and situation.kong_fed_by in situation.still_in
        if situation.discarder is not None:
            payers, each = [situation.discarder], value
        elif fed_bloom:
            assert situation.kong_fed_by is not None
            payers, each = [situation.kong_fed_by], value            # 点杠花 paid as 点炮 by the kong's feeder
        else:
            payers = sorted(situation.still_in - {winner})
            each = value + (self.cfg.base if self.cfg.self_drawn == "add_base" else 0)
        items = list(score.items) + context
        capped = [Item("cap", "封顶", "capped", self.cfg.cap - doublings)] if doublings > self.cfg.cap else []
        payments = [Payment(p, winner, each, WIN, situation.event) for p in payers]
        breakdown = [Breakdown(p, items + capped, each) for p in payers]
        moved, transferred = self._kong_discard_money(situation)
        return WinMoney(payments + moved, breakdown, context_items=context, transferred=transferred)

    def _kong_discard_money(self, situation: WinSituation) -> tuple[list[Payment], tuple[int, ...]]:
        """杠上炮: the money of the kong just made moves to the winner (呼叫转移; every winner on the discard gets it),
        or all of the discarder's kong money, or it goes back to its payers (once)."""
        mode, kong = self.cfg.kong_discard_transfer, situation.kong_event
        maker = situation.discarder
        if not situation.kong_discard or kong is None or maker is None or mode == "off":
            return [], ()
        if mode == "cancel":
            if kong in situation.transferred:
                return [], ()
            back = [Payment(maker, p.payer, p.amount, KONG_REFUND, situation.event) for p in situation.paid
                    if p.event == kong and p.payee == maker and p.reason.key in KONG_REASONS and not p.held]
            return back, (kong,)
        if mode == "kong":
            events = {kong}
        else:
            events = {p.event for p in situation.paid if p.payee == maker and p.reason.key in KONG_REASONS}
            before = situation.discard_event
            events -= {e for e in situation.transferred if before is None or e < before}
            events |= {kong}
        amount = sum(p.amount for p in situation.paid if p.event in events and p.payee == maker
                     and p.reason.key in KONG_REASONS and not p.held)
        moved = [Payment(maker, situation.winner, amount, KONG_TRANSFER, situation.event)] if amount > 0 else []
        return moved, tuple(sorted(events))

    def false_win_payments(self, declarer: int, situation: WinSituation) -> list[Payment]:
        """诈和: the cap value to each player still in, and its kong money back (it plays on as a dead hand)."""
        out = [Payment(declarer, s, self.cap_value, FALSE_WIN, situation.event)
               for s in sorted(situation.still_in - {declarer})]
        return out + refunds(declarer, situation.paid, situation.transferred, situation.event)

    # -- on the spot (刮风下雨) ---------------------------------------------------------------------------------
    def kong_payments(self, kong: Kong) -> list[Payment]:
        c, base = self.cfg, self.cfg.base
        others = sorted(kong.still_in - {kong.maker})
        if kong.kind == "concealed":
            return [Payment(s, kong.maker, c.concealed_kong_each * base, CONCEALED_KONG, kong.event)
                    for s in others if c.concealed_kong_each]
        if kong.kind == "added":
            if not kong.drawn_now or not c.added_kong_each:
                return []                               # 转手杠: a tile held since an earlier turn pays nothing
            return [Payment(s, kong.maker, c.added_kong_each * base, ADDED_KONG, kong.event) for s in others]
        assert kong.feeder is not None
        out = [Payment(kong.feeder, kong.maker, c.melded_kong * base, MELDED_KONG, kong.event)] if c.melded_kong else []
        return out + [Payment(s, kong.maker, c.melded_kong_others * base, MELDED_KONG, kong.event)
                      for s in others if s != kong.feeder and c.melded_kong_others]

    def draw_payments(self, end: DrawnEnd) -> list[Payment]:
        """The wall ran out with two or more still in: 查花猪, 查大叫, 退税 (BadRecord: a hand not known)."""
        if len(end.still_in) < 2:
            return []
        penalty = self.cap_value if self.cfg.pig_penalty == "cap" else int(self.cfg.pig_penalty) * self.cfg.base
        try:
            return drawn_end_payments(end, self.ready_value, penalty,
                                      self.cfg.ready_winners_collect or self.cfg.blood_river,
                                      self.cfg.dead_wait_not_ready)
        except MissingHand as exc:
            raise reworded(BadRecord, exc) from None

    def ready_value(self, win: Win) -> int | None:
        """What a ready hand winning on ``win``'s tile is worth at the drawn end (None: not a legal win)."""
        s: SichuanScore = score_sichuan(win, self.cfg)
        return self.value(s.hand_doublings) if s.legal else None

    # -- what may happen -------------------------------------------------------------------------------
    def action_refusal(self, action: Action, facts: Any) -> str | None:
        v, side = action.verb, action.side
        if v is Verb.CHOW:
            return worded_text("四川 has no chows (吃)")
        if side is None:
            return None
        if v in PLAY_VERBS or v is Verb.SWAP:
            over = facts.won if self.play.winners_to_end and len(facts.won) >= self.play.winners_to_end else []
            if over:
                return worded_text("the hand is over: sides %(sides)s have won", sides=", ".join(map(str, over)))
            if self.play.winners_leave and side in facts.won:
                return worded_text("side %(side)s has won and left the hand (血战到底)", side=side)
        s = facts.sides[side]
        if v is Verb.SWAP:
            return self._swap_refusal(action, facts)
        if v is Verb.VOID and (s.void is not None or s.discarded):
            return worded_text("side %(side)s names its void suit once, before its first discard (定缺)", side=side)
        if s.void is not None and action.tile is not None and action.tile // 9 == s.void \
                and v in (Verb.PUNG, Verb.KONG, Verb.ADDED_KONG, Verb.CONCEALED_KONG):
            return worded_text("side %(side)s may not claim or kong %(tile)s of its void suit (定缺 %(suit)s)",
                               side=side, tile=code(action.tile), suit=SUITS[s.void])
        if v is Verb.DISCARD and self.play.void_first and s.void is not None and s.standing is not None \
                and action.tile is not None and action.tile // 9 != s.void:
            held = sorted(k for k, n in s.standing.items() if n and k // 9 == s.void)
            if held:
                return worded_text("side %(side)s holds %(tile)s of its void suit: it discards that suit first (定缺)",
                                   side=side, tile=code(held[0]))
        return None

    def _swap_refusal(self, action: Action, facts: Any) -> str | None:
        side = action.side
        if not self.play.swap_tiles:
            return worded_text("换三张 is off in this rule set")
        if facts.sides[side].swapped or facts.sides[side].discarded or facts.sides[side].void is not None:
            return worded_text("side %(side)s passes tiles once, after the deal and before 定缺 (换三张)", side=side)
        tiles = action.hand
        if len(tiles) != self.play.swap_tiles or len({k // 9 for k in tiles}) != 1:
            return worded_text("换三张 passes %(count)s tiles of one suit", count=self.play.swap_tiles)
        return None

    # -- the game ------------------------------------------------------------------------------------------
    def lead_winner(self, winners: list[int], dealer: int) -> int | None:
        """The first winner deals next (先胡者坐庄)."""
        return winners[0] if winners else None

    def next_dealer(self, current: Dealership, outcome: HandOutcome) -> Dealership:
        """The first winner deals; after 一炮多响 the discarder; nobody won: the dealer stays (or 下家 deals)."""
        nxt = outcome.discarder if outcome.discarder is not None else (
            outcome.winners[0] if outcome.winners else None)
        if nxt is None:
            nxt = current.dealer if self.cfg.dealer_on_draw == "stays" else (current.dealer + 1) % SEATS
        return Dealership(nxt, current.streak + 1 if nxt == current.dealer else 0)
