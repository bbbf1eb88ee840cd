"""One settlement for every hand: from the hand's record to every payment with its reason.

:func:`settle_hand` folds a hand's record action by action through a
:class:`Settler`; the simulated game feeds the same :class:`Settler` one
action at a time as the hand is played, so kong money, 追牌 and 跟庄 are paid
when they happen and the payments are the same either way.  The referee of a
real table and ``mjtable score`` settle the record they make.  Each action
is priced by the rule set (:class:`~firmware.rules.ruleset.RuleSet`):

* ``kong`` / ``added_kong`` / ``concealed_kong``: kong money; a whole set of
  four flowers shown: 花杠;
* four discards of one tile in a row: 追牌; the first four of the hand, the
  dealer's followed by the other three: 跟庄;
* ``penalty``: the referee's penalty (and maybe a dead hand);
* ``win``: the win scored with the hand's context (who opened, who fed what,
  杠流泪, the chips) and paid; a declaration that is not legal, or that the
  situation forbids (a dead hand, a discarder with no points, a forbidden
  局结), is a false win;
* ``wall_end``: 黄庄.

Chips are followed through the hand from those at the deal, so a chips floor
holds for every payment in turn, and a payment that would end a 局 the way
the rule set forbids is held off the board (``held``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from firmware.i18n import worded
from firmware.rules.hand_facts import Derived, DerivedEvent, HandFacts, SideFacts
from firmware.rules.hand_record import Action, BadRecord, HandRecord, Verb, paying_rank
from firmware.rules.money import ROBBED_KONG, Breakdown, Item, Payment, deltas
from firmware.rules.ruleset import DrawnEnd, HandOutcome, Kong, RuleSet, Score, WinSituation
from firmware.rules.win import HandError, MeldKind, Win
from firmware.tiles.tile import code

# verbs apply() compares every action with, bound once (looking an enum member up on its class costs ~0.1 us)
_WIN, _KONG, _ADDED_KONG, _CONCEALED_KONG = Verb.WIN, Verb.KONG, Verb.ADDED_KONG, Verb.CONCEALED_KONG


@dataclass
class WinVerdict:
    """The referee's verdict on one declared win."""

    side: int
    tile: int
    discarder: int | None
    legal: bool
    reason: str = ""
    score: Score | None = None
    win: Win | None = None
    payments: list[Payment] = field(default_factory=list)
    breakdown: list[Breakdown] = field(default_factory=list)
    liable: int | None = None
    context_items: list[Item] = field(default_factory=list)     # items the situation added (杠流泪, 长毛 ...)
    event: int = 0
    transferred: tuple[int, ...] = ()          # kongs whose money the win moved to the winner (呼叫转移)

    @property
    def items(self) -> list[Item]:
        """Every item the win scored, the situation's included (an item the situation adds again, 红中杠开's second
        杠开, is counted once more)."""
        out: list[Item] = []
        where: dict[tuple[str, int], int] = {}          # (key, points) -> its place in ``out`` (each once there)
        for i in (list(self.score.items) if self.score is not None else []) + list(self.context_items):
            same = where.get((i.key, i.points))
            if same is None:
                where[i.key, i.points] = len(out)
                out.append(i)
            else:
                out[same] = Item(i.key, i.name, i.en, i.points, out[same].count + i.count)
        return out

    @property
    def total(self) -> int:
        """The win's total in its rule set's unit, the situation's items included (辽宁 / 锦州: the winner's N
        that every payer counts)."""
        if self.score is None:
            return 0
        return self.score.total + sum(i.points * i.count for i in self.context_items)


@dataclass
class HandSettlement:
    record: HandRecord
    payments: list[Payment]
    verdicts: list[WinVerdict]
    drawn: bool = False
    followed: bool = False
    dead: frozenset[int] = frozenset()

    @property
    def outcome(self) -> HandOutcome:
        legal = [v for v in self.verdicts if v.legal]
        several = len(legal) > 1 and legal[0].discarder is not None and legal[1].event == legal[0].event + 1 \
            and (legal[1].discarder, legal[1].tile) == (legal[0].discarder, legal[0].tile)
        return HandOutcome(tuple(v.side for v in legal), self.drawn, self.followed,
                           legal[0].discarder if several else None)

    @property
    def winners(self) -> list[int]:
        return [v.side for v in self.verdicts if v.legal]

    def deltas(self, include_held: bool = False) -> list[int]:
        return deltas(self.payments, include_held)


class Settler:
    """Settles a hand one action at a time (``add`` for a hand being played, ``apply`` for a record)."""

    def __init__(self, ruleset: RuleSet, record: HandRecord) -> None:
        self.rules = ruleset
        self.tiles = ruleset.tiles
        self.record = record
        self.facts = HandFacts(record)
        self.chips = list(record.chips) if record.chips is not None else None
        self.payments: list[Payment] = []
        self.verdicts: list[WinVerdict] = []
        self._discard_wins: _WinsOnOneDiscard | None = None     # the discard the last action won on
        self._added_kong: tuple[int, int, int] | None = None     # (side, tile, event): the last action's 加杠, robbable

    def add(self, action: Action) -> list[Payment]:
        """Record ``action`` in the hand's record and settle it: the payments it makes now."""
        event = self.record.add(action)
        return self.apply(action, event)

    def apply(self, action: Action, event: int) -> list[Payment]:
        """Settle the record's action number ``event``; BadRecord when it cannot have happened."""
        self._check_tiles(action, event)
        why = self.rules.action_refusal(action, self.facts)
        if why is not None:
            raise worded(BadRecord, "action %(event)s (%(action)s): %(why)s", event=event, action=action.text(),
                         why=why)
        v = action.verb
        drawn_now = v is _ADDED_KONG and action.side is not None and action.tile is not None \
            and self.facts.drawn_now(action.side, action.tile)
        derived = self.facts.observe(action, event)
        out: list[Payment] = []
        if v is _WIN:
            out += self._win(action, event)
        elif v is _KONG or v is _ADDED_KONG or v is _CONCEALED_KONG:
            assert action.side is not None and action.tile is not None
            kind = {Verb.KONG: "melded", Verb.ADDED_KONG: "added", Verb.CONCEALED_KONG: "concealed"}[v]
            kong = Kong(kind, action.side, action.source, action.tile, event, self._still_in(),
                        drawn_now or v is not Verb.ADDED_KONG)
            out += self._pay(self.rules.kong_payments(kong), action.side)
        elif v is Verb.PENALTY:
            assert action.side is not None
            repeat = self.facts.sides[action.side].penalties[action.kind]
            try:
                money = self.rules.penalty_payments(action.side, action.kind, repeat, action.to, event)
            except ValueError as exc:
                raise worded(BadRecord, "action %(event)s: %(why)s", event=event, why=exc) from None
            out += self._pay(money, None)
            if self.rules.penalty_kills_hand(action.kind):
                self.facts.sides[action.side].dead = True
        elif v is Verb.WALL_END:
            out += self._pay(self.rules.draw_payments(self.drawn_end(event)), None)
        for d in derived:
            out += self._derived(d, event)
        if v is not _WIN:
            self._discard_wins = None                  # (another action: the next win is on another tile)
            self._added_kong = (action.side, action.tile, event) if v is _ADDED_KONG else None
        return out

    def _still_in(self) -> frozenset[int]:
        return self.facts.still_in(self.rules.play.winners_leave)

    def drawn_end(self, event: int) -> DrawnEnd:
        """What the rule set's drawn-end money needs of the hand so far."""
        f = self.facts
        return DrawnEnd(self.record.dealer, event, self._still_in(), tuple(f.won),
                        [Counter(s.standing) if s.standing is not None else None for s in f.sides],
                        f.melds_by_side(), [s.void for s in f.sides], tuple(self.payments), frozenset(f.transferred),
                        f.in_view())

    def _check_tiles(self, action: Action, event: int) -> None:
        """Every tile an action names is one of the rule set's set (锦州 plays no winds, 辽宁 no flowers)."""
        copies = self.tiles.copies
        kinds = list(action.hand)
        if action.tile is not None:
            kinds += list(action.chow_tiles) if action.verb is Verb.CHOW else [action.tile]
        if all(map(copies.__getitem__, kinds)):        # (every tile one of the set's: no loop in Python)
            kinds = []
        for kind in kinds:
            if not copies[kind]:
                raise worded(BadRecord, "action %(event)s (%(action)s): %(tile)s is not a tile of %(rules)s's "
                             "%(size)s-tile set", event=event, action=action.text(), tile=code(kind),
                             rules=self.rules.title, size=self.tiles.size)
        if action.verb is not Verb.WIN or not action.flowers:      # (no flowers declared: none too many)
            return
        flowers = sum(copies[34:])
        if action.flowers > flowers:
            if not flowers:
                raise worded(BadRecord, "action %(event)s (%(action)s): %(rules)s's set has no flowers", event=event,
                             action=action.text(), rules=self.rules.title)
            raise worded(BadRecord, "action %(event)s (%(action)s): %(rules)s's set has %(count)s flowers",
                         event=event, action=action.text(), rules=self.rules.title, count=flowers)

    def _derived(self, d: DerivedEvent, event: int) -> list[Payment]:
        assert d.side is not None
        if d.what is Derived.CHASE:
            return self._pay(self.rules.chase_payments(d.side, event), None)
        if d.what is Derived.FOLLOW:
            return self._pay(self.rules.follow_payments(d.side, event), None)
        return self._pay(self.rules.flower_kong_payments(d.side, event), d.side)

    def _pay(self, payments: list[Payment], gainer: int | None, *, double: bool = True,
             hold: bool = True) -> list[Payment]:
        """Apply ``payments`` to the chips in turn; under a chips floor nobody pays more than they hold.

        ``double``: on-the-spot money (kongs, 追牌, 跟庄, 黄庄, penalties) is doubled during a dealer streak
        where the rule set says so (a win's money, a false or refused win's included, comes doubled already).
        ``hold``: money that would end the 局 the way the rule set forbids is held off the board (挂于盘外;
        ``gainer``: the one side it is for, None when no single side gains it): every payment but a legal
        win's, which is refused instead.  A held payment is owed in full: the floor is the board's
        ("盘面100分付完为止"), and money off the board is added to the 局's scores when it ends ("局结后累积得分",
        as a penalty off the board is "盘外的死分，不再计算为盘内分"), so a 局's final score may be below nothing."""
        if double:
            payments = [p if self.rules.doubled(p.amount, self.record.streak) == p.amount else
                        Payment(p.payer, p.payee, self.rules.doubled(p.amount, self.record.streak), p.reason,
                                p.event) for p in payments]
        if hold and self.chips is not None and payments \
                and self.rules.ends_match_badly(self._preview(payments), gainer):
            held = [Payment(p.payer, p.payee, p.amount, p.reason, p.event, held=True) for p in payments]
            self.payments += held
            return held
        out = self._floored(payments, self.chips) if self.chips is not None else list(payments)
        self.payments += out
        return out

    def _floored(self, payments: list[Payment], chips: list[int]) -> list[Payment]:
        """``payments`` made in turn from ``chips`` (changed in place): under the floor each is cut to what its
        payer holds then, and one cut to nothing is left out."""
        out: list[Payment] = []
        for p in payments:
            amount = min(p.amount, max(0, chips[p.payer])) if self.rules.floor else p.amount
            if amount <= 0:
                continue
            chips[p.payer] -= amount
            chips[p.payee] += amount
            out.append(p if amount == p.amount else Payment(p.payer, p.payee, amount, p.reason, p.event))
        return out

    def _preview(self, payments: list[Payment]) -> list[int]:
        """The chips after ``payments``, under the floor (nothing is applied)."""
        assert self.chips is not None
        chips = list(self.chips)
        self._floored(payments, chips)
        return chips

    # -- a declared win --------------------------------------------------------------------------------------
    def judge(self, action: Action) -> WinVerdict:
        """The verdict a ``win`` action would get now, with nothing applied (a careful player's check)."""
        return self._verdict(action, len(self.record.actions))[0]

    def _verdict(self, action: Action, event: int) -> tuple[WinVerdict, list[Payment]]:
        """(verdict, the payments it calls for): nothing is applied.  A declaration that is not legal (or by a
        dead hand) calls for the false-win payments, one the situation refuses for the refused-win ones."""
        assert action.side is not None and action.tile is not None
        side = action.side
        win = self.win_of(action)
        try:
            win.validate()
        except HandError as exc:
            raise worded(BadRecord, "action %(event)s: %(why)s", event=event, why=exc) from None
        situation = self.situation(action, event)
        verdict = WinVerdict(side, action.tile, action.source, False, win=win, event=event)
        score = verdict.score = self.rules.score(win)
        if self.facts.sides[side].dead:
            verdict.reason = "相公: a dead hand (a discarded flower, a false win, a wrong claim) may not win"
        elif not score.legal:
            verdict.reason = score.reason or "not a legal win"
        if verdict.reason:
            return verdict, self.rules.false_win_payments(side, situation)
        refused = self.rules.refusal(score, situation)
        money = self.rules.win_payments(win, score, situation) if refused is None else None
        after = self._preview(money.payments) if money is not None and self.chips is not None else None
        if after is not None and after != self.chips and self.rules.ends_match_badly(after, side):
            refused = "局结: a win that ends the 局 with another player first is not allowed (禁止非胜式局结)"
        if refused is not None or money is None:
            verdict.reason = refused or "refused"
            return verdict, self.rules.refused_win_payments(win, score, situation)
        verdict.legal = True
        verdict.liable = money.liable
        verdict.breakdown = money.breakdown
        verdict.context_items = money.context_items
        verdict.transferred = money.transferred
        return verdict, money.payments

    def _win(self, action: Action, event: int) -> list[Payment]:
        assert action.side is not None and action.tile is not None
        same = self._same_discard(action)
        if same is not None:
            _check_paying_order(same, action, event)
        before = self._chips_at_discard(action)
        verdict, money = self._verdict(action, event)
        self.verdicts.append(verdict)
        verdict.payments = self._pay(money, None, double=False, hold=not verdict.legal)
        if action.source is None:
            self._discard_wins = None
        elif same is not None:
            same.sides.append(action.side)
        else:
            self._discard_wins = _WinsOnOneDiscard(action.source, action.tile, before, [action.side])
        if verdict.legal:
            self.facts.liable_next = None
            if action.side not in self.facts.won:
                self.facts.won.append(action.side)
            standing = self.facts.sides[action.side].standing
            if self.rules.play.plays_on and action.self_drawn and standing is not None:
                standing[action.tile] -= 1                  # (laid aside: 血流成河's winner plays on without it)
            self.facts.transferred.update(verdict.transferred)
            verdict.payments += self._robbed(action, event)
        else:
            self.facts.sides[action.side].dead = True          # a false or refused win: 相公 for the hand
        return verdict.payments

    def _robbed(self, action: Action, event: int) -> list[Payment]:
        """A legal win robbing the 加杠 the record has just taken (抢杠和): that kong was never made, its side keeps
        the pung; where the rule set does not pay a robbed kong (锦州: "这个杠也就不算分了"), its money goes back."""
        kong = self._added_kong
        if kong is None or "kong_win" not in action.flags or (kong[0], kong[1]) != (action.source, action.tile):
            return []
        self._added_kong = None                         # (robbed once, by one winner or several)
        side, tile, kong_event = kong
        self.facts.unmake_added_kong(side, tile)
        if self.rules.robbed_kong_paid:
            return []
        back = [Payment(p.payee, p.payer, p.amount, ROBBED_KONG, event, held=p.held)
                for p in self.payments if p.event == kong_event]
        for p in back:
            if not p.held and self.chips is not None:
                self.chips[p.payer] -= p.amount
                self.chips[p.payee] += p.amount
        self.payments += back
        return back

    def win_of(self, action: Action) -> Win:
        """The Win described by a ``win`` action, with the side's sets and flowers from the record."""
        assert action.side is not None and action.tile is not None
        side = action.side
        facts = self.facts
        standing = facts.sides[side].standing
        hand = action.hand
        if standing is not None:
            held = sorted(k for k, n in standing.items() for _ in range(n))
            if action.self_drawn:
                if action.tile in held:
                    held.remove(action.tile)
            if hand and tuple(hand) != tuple(held):
                raise worded(BadRecord, "side %(side)s declares %(hand)s standing, the record shows %(held)s",
                             side=side, hand=_tiles(hand), held=_tiles(held))
            hand = tuple(held)
        flowers = action.flowers if action.flowers is not None else facts.flowers_of(side)
        flags = action.flags
        return Win(tuple(sorted(hand)), facts.melds_of(side), action.tile, action.self_drawn,
                   "last_of_kind" in flags, "kong_win" in flags, "last_tile" in flags, self.record.seat_wind(side),
                   self.record.round_wind, min(flowers, 8), flower_win="flower_win" in flags,
                   void=facts.sides[side].void, first_turn="first_turn" in flags)

    def _chips_at_discard(self, action: Action) -> list[int] | None:
        """The chips as they stood when the tile won on was discarded: a later winner on one discard is judged
        (盘面无分者点炮) against the chips before the first win on it was paid, not after (数家同时和牌)."""
        if self.chips is None:
            return None
        same = self._same_discard(action)
        if same is not None and same.chips is not None:
            return list(same.chips)
        return list(self.chips)

    def _same_discard(self, action: Action) -> "_WinsOnOneDiscard | None":
        """The wins taken just before ``action`` on the discard it wins on too (数家同时和牌), if any."""
        same = self._discard_wins
        if action.source is None or same is None or (same.discarder, same.tile) != (action.source, action.tile):
            return None
        return same

    def situation(self, action: Action, event: int) -> WinSituation:
        assert action.side is not None and action.tile is not None
        facts = self.facts
        discarder = action.source
        robbed = discarder is not None and "kong_win" in action.flags
        after_kong = discarder is not None and not robbed and facts.after_kong_tile is not None \
            and facts.last_discard == (discarder, action.tile)
        kong_discard = after_kong or (discarder is not None and not robbed and "kong_discard" in action.flags)
        kong_tile = facts.after_kong_tile if after_kong else (
            facts.sides[discarder].last_kong if kong_discard and discarder is not None else None)
        winner = facts.sides[action.side]
        return WinSituation(
            action.side, discarder, self.record.dealer, robbed=robbed, kong_discard=kong_discard,
            kong_discard_tile=kong_tile, winner_last_kong=winner.last_kong,
            open_sides=facts.open_sides(), melds_by_side=facts.melds_by_side(),
            hung_unchanged=discarder is not None and facts.hung_unchanged(action.side, action.tile),
            liable=facts.liable_next, streak=self.record.streak, long_hair=self.record.long_hair,
            chips=self._chips_at_discard(action), event=event, still_in=self._still_in() | {action.side},
            paid=tuple(self.payments),
            kong_event=facts.sides[discarder].last_kong_event if kong_discard and discarder is not None else None,
            kong_fed_by=_kong_feeder(winner), transferred=frozenset(facts.transferred),
            discard_event=facts.last_discard_event if discarder is not None and not robbed else None)

    def result(self) -> HandSettlement:
        return HandSettlement(self.record, list(self.payments), list(self.verdicts), self.facts.drawn,
                              self.facts.followed, frozenset(i for i, s in enumerate(self.facts.sides) if s.dead))


def _kong_feeder(side: SideFacts) -> int | None:
    """The side whose discard ``side``'s last kong was made on (点杠), None when that kong was its own (暗杠, 加杠)."""
    if side.last_kong is None:                      # (no kong made)
        return None
    for meld, feeder in zip(side.melds, side.feeders):
        if meld.kind is MeldKind.KONG and meld.tile == side.last_kong:
            return feeder if not meld.added else None
    return None


@dataclass
class _WinsOnOneDiscard:
    """Wins on one discard so far (数家同时和牌): the chips when it was discarded (None: not known) and the
    winners in the order they were paid."""

    discarder: int
    tile: int
    chips: list[int] | None
    sides: list[int]


def _check_paying_order(same: _WinsOnOneDiscard, action: Action, event: int) -> None:
    """Several wins on one discard are paid counter-clockwise from the discarder, 下家 first (S001 §35:
    "数家同时和牌，点炮方按逆时针顺序付分"): where the discarder cannot pay every winner in full, that order decides who
    is paid; a win recorded after one it comes before cannot be paid in that order."""
    assert action.side is not None
    if action.side in same.sides:
        raise worded(BadRecord, "action %(event)s: side %(side)s has won on side %(discarder)s's %(tile)s already",
                     event=event, side=action.side, discarder=same.discarder, tile=code(same.tile))
    rank = paying_rank(same.discarder, action.side)
    late = [s for s in same.sides if paying_rank(same.discarder, s) > rank]
    if late:
        raise worded(BadRecord, "action %(event)s: several wins on one discard are paid counter-clockwise from the "
                     "discarder (下家, 对家, 上家: 点炮方按逆时针顺序付分): side %(side)s's win on side "
                     "%(discarder)s's %(tile)s comes before side %(late)s's", event=event, side=action.side,
                     discarder=same.discarder, tile=code(same.tile), late=late[0])


def settle_hand(ruleset: RuleSet, record: HandRecord) -> HandSettlement:
    """Every payment of a hand from its record (BadRecord names the action that cannot have happened)."""
    settler = Settler(ruleset, record)
    for event, action in enumerate(record.actions):
        settler.apply(action, event)
    return settler.result()


def _tiles(kinds) -> str:
    from firmware.tiles.tile import format_tiles

    return format_tiles(list(kinds)) or "nothing"

