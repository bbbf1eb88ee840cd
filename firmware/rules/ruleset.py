"""A rule set: one object behind one interface, asked by the referee, the settlement, the game and the players.

Each family (MCR, 竞技麻将, the northeastern 辽宁 / 锦州) subclasses
:class:`RuleSet` in its own package; :mod:`firmware.rules.registry` makes
one from its TOML.  The interface covers:

* the tiles and the deal: tile set, winning shapes, dice throws, the tail kept;
* legality and scoring of a declared win (:meth:`score`): a :class:`Score`
  with uniform items;
* settlement: a win (:meth:`win_payments`), a false or refused win, kongs and
  the other on-the-spot money (追牌, 跟庄, 花杠), a drawn hand (黄庄; 四川's
  查花猪 / 查大叫 / 退税), the referee's penalties; every payment with its
  reason; which actions the rules forbid (:meth:`action_refusal`);
* the game: how a hand is played (:class:`PlayRules`: several winners on one
  discard, winners leaving and the rest playing on, chows, 定缺, 换三张),
  when it is over (:meth:`hand_over`), who deals next (:meth:`next_dealer`),
  when a 局 ends (:meth:`match_end`);
* the simulated players' aims (:class:`Aims`).

Nothing outside the registry asks a rule set for its name to decide
anything: what differs is a method of the family or a switch in its TOML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from firmware.hands.analysis import Shape
from firmware.i18n import worded
from firmware.rules.config import RuleSetConfig
from firmware.rules.money import (FALSE_WIN, SEATS, Breakdown, Item, Payment, Reason, one_pays_each,
                                  penalty_reason)
from firmware.rules.win import Meld, Win
from firmware.tiles.dealing import DealRules
from firmware.tiles.sets import TileSet, tile_set

FALSE_WIN_EACH = 10


@dataclass(frozen=True)
class Dealership:
    dealer: int           # physical side of the dealer
    streak: int = 0       # hands the dealer has kept the seat (竞技麻将 倍打 when > 0)
    long_hair: int = 0    # 辽宁 长毛 carried into the next hand


@dataclass(frozen=True)
class HandOutcome:
    """What the dealer rotation needs of a settled hand."""

    winners: tuple[int, ...] = ()      # sides with a legal win
    drawn: bool = False                # the wall ran out (荒牌 / 黄庄)
    followed: bool = False             # 跟庄
    discarder: int | None = None       # the hand's first win was several on one discard (一炮多响): the discarder


@dataclass(frozen=True)
class PlayRules:
    """How a hand is played, as the table's flow and the simulated players see it."""

    several_winners: bool = False      # every claim to win a discard wins (一炮多响), paid 下家 first
    plays_on: bool = False             # a win does not end the hand: the rest play on (四川)
    winners_leave: bool = True         # ... and a winner leaves it (血战到底; 血流成河: stays in, hand locked)
    winners_to_end: int = 1            # the hand is over when this many have won (0: only the wall ends it)
    chows: bool = True                 # 吃 allowed
    void_suit: bool = False            # 定缺: each names a suit after the deal and may not win holding it
    void_first: bool = False           # ... and discards its tiles before any other
    swap_tiles: int = 0                # 换三张: tiles of one suit each passes after the deal (0: none)
    first_turn: bool = False           # a win on the first turn is marked (天胡 / 地胡)


@dataclass(frozen=True)
class Kong:
    """A kong as the settlement prices it: ``kind`` ``melded`` (on ``feeder``'s discard), ``added`` or
    ``concealed``; ``still_in`` the sides still in the hand (四川: a winner has left and pays nothing more);
    ``drawn_now``: an added kong's tile was drawn this turn (四川 pays no 转手杠, one held from an earlier turn)."""

    kind: str
    maker: int
    feeder: int | None
    tile: int
    event: int
    still_in: frozenset[int] = frozenset(range(SEATS))
    drawn_now: bool = True


@dataclass
class DrawnEnd:
    """The wall ran out (``wall_end``, the record's action ``event``): what the drawn-end money needs."""

    dealer: int
    event: int
    still_in: frozenset[int] = frozenset(range(SEATS))
    won: tuple[int, ...] = ()                                  # the sides that have won, in order
    standing: list[Any] = field(default_factory=lambda: [None] * SEATS)     # Counter of each side's tiles, or None
    melds_by_side: list[list[Meld]] = field(default_factory=lambda: [[] for _ in range(SEATS)])
    voids: list[int | None] = field(default_factory=lambda: [None] * SEATS)  # 定缺 suits
    paid: tuple[Payment, ...] = ()                            # the hand's payments so far
    transferred: frozenset[int] = frozenset()                  # kongs whose money went to a winner (杠上炮)
    in_view: Any = None                                        # Counter of the tiles on view (discards, sets)


@dataclass(frozen=True)
class Aims:
    """What the simulated players play for, beyond winning."""

    lean_to_flush: bool = False        # a win needs a fan (竞技麻将): lean towards one suit
    eager_to_open: bool = False        # a win needs an open hand (辽宁): claim more readily
    safe_follow: bool = False          # a run of discards costs its first (追牌, 跟庄): follow the last discard
    #                                    when it is as good as any, never start a run that costs
    keeps_suits: bool = False          # a win needs all three suits (三门齐): keep the last tile of a suit
    keeps_terminal: bool = False       # a win needs a 1, 9 or honour (幺九): keep the last one


@dataclass
class Score:
    """A declared win as the rule set sees it: a winning ``shape``, ``legal`` when it also meets the rule
    set's conditions or minimum (``reason`` says why not), the winner's ``items``, their ``total`` in the
    rule set's ``unit`` (fans, points, doublings)."""

    shape: bool
    legal: bool
    reason: str = ""
    items: list[Item] = field(default_factory=list)
    total: int = 0
    total_without_flowers: int = 0
    unit: str = "fan"
    detail: Any = None                 # the family's own score (for its settlement)


@dataclass
class WinSituation:
    """What the settlement of one win needs of the hand around it (built from the hand's record)."""

    winner: int
    discarder: int | None              # None: self-drawn
    dealer: int
    robbed: bool = False               # 抢杠和: ``discarder`` is the kong's owner
    kong_discard: bool = False         # 杠流泪: won on the discard made right after a kong
    kong_discard_tile: int | None = None     # ... of this tile (None: not in the record)
    winner_last_kong: int | None = None      # the tile of the winner's last kong (杠开: the one it replaced)
    open_sides: frozenset[int] = frozenset()     # sides with a chow, pung or melded kong
    melds_by_side: list[list[Meld]] = field(default_factory=lambda: [[] for _ in range(SEATS)])
    hung_unchanged: bool = False       # 全求独钓 won on its hung tile, never swapped
    liable: int | None = None          # a seat a referee named liable (包付)
    streak: int = 0
    long_hair: int = 0
    chips: list[int] | None = None     # each side's chips when the tile won on was discarded, before any win on
    #                                    it was paid (self-drawn: now); None: not known
    event: int = 0
    still_in: frozenset[int] = frozenset(range(SEATS))     # the sides still in the hand, the winner included
    paid: tuple[Payment, ...] = ()     # the hand's payments so far
    kong_event: int | None = None      # 杠流泪 / 杠上炮: the action of the discarder's kong just made
    kong_fed_by: int | None = None     # 杠开: the side whose discard the winner's last kong was made on (点杠)
    transferred: frozenset[int] = frozenset()   # kongs whose money a win has moved already (呼叫转移)
    discard_event: int | None = None   # the action of the discard won on (None: self-drawn, or not in the record)


@dataclass
class WinMoney:
    payments: list[Payment]
    breakdown: list[Breakdown] = field(default_factory=list)
    liable: int | None = None
    context_items: list[Item] = field(default_factory=list)    # items the situation added (杠流泪, 长毛 ...)
    transferred: tuple[int, ...] = ()  # kongs (their actions) whose money this win moved (呼叫转移)


class RuleSet:
    """The base of every family: the TOML's values, and the defaults most families share."""

    unit = "fan"                       # what its items and totals count: fan, point (竞技麻将 S), doubling (2^N)
    play = PlayRules()
    needs_open_seats = False           # does what a payer pays depend on whether that payer had opened?
    robbed_kong_paid = True            # does a 加杠 robbed by a win (抢杠和) keep its kong money?
    # a plain settlement: a win's money (win_payments, false_win_payments, refused_win_payments, refusal) reads
    # only the situation's winner, discarder and event, no kong or other on-the-spot money is paid, and play
    # does not go on after a win; a case of the winner's sets alone may then be settled without the record
    # (firmware.rules.case_record), the same payments as settle_hand's
    plain_settlement = False
    aims = Aims()
    _shapes: frozenset[Shape] = frozenset()
    _shapes_of: RuleSetConfig | None = None

    def __init__(self, config: RuleSetConfig) -> None:
        self.config = config

    # -- what the table and the deal need --------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.config.rules.name

    @property
    def title(self) -> str:
        return self.config.rules.title

    @property
    def tile_set(self) -> int:
        return self.config.rules.tile_set

    @property
    def tiles(self) -> TileSet:
        """The tile set the rule set plays (which kinds, how many copies)."""
        return tile_set(self.config.rules.tile_set)

    @property
    def shapes(self) -> frozenset[Shape]:
        """(Made once for a configuration: the referee asks at every standing hand it has not seen.)"""
        if self._shapes_of is not self.config:
            self._shapes, self._shapes_of = self.config.shape_set, self.config
        return self._shapes

    @property
    def deal_rules(self) -> DealRules:
        return self.config.deal_rules

    @property
    def throws(self) -> int:
        return self.config.deal.throws

    @property
    def start_chips(self) -> int:
        return self.config.scoreboard.chips

    @property
    def floor(self) -> bool:
        """Nobody pays more chips than they hold."""
        return self.config.scoreboard.floor

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    @property
    def several_winners(self) -> bool:
        """May several win on one discard (paid in turn, 下家 first)?"""
        return self.play.several_winners

    options_section: str | None = None     # the TOML section whose keys a case's ``table.options`` may set

    def with_options(self, options: dict[str, Any]) -> "RuleSet":
        """This rule set with some switches of its ``options_section`` set (a case's ``table.options``);
        ValueError names a key it does not have or a value it does not take."""
        if not options:
            return self
        if self.options_section is None:
            raise ValueError(f"rule set {self.name} has no options")
        from pydantic import ValidationError

        section = getattr(self.config, self.options_section)
        try:
            changed = type(section).model_validate({**section.model_dump(), **options})
        except ValidationError as exc:
            first = exc.errors()[0]
            key = ".".join(str(k) for k in first["loc"]) or "?"
            if first["type"] == "extra_forbidden":
                raise ValueError(f"{key!r} is not a switch of [{self.options_section}] (switches: "
                                 f"{', '.join(type(section).model_fields)})") from None
            raise ValueError(f"option {key!r}: {first['msg']}") from None
        return type(self)(self.config.model_copy(update={self.options_section: changed}))

    # -- scoring -------------------------------------------------------------------------------------
    def score(self, win: Win) -> Score:
        raise NotImplementedError

    def refusal(self, score: Score, situation: WinSituation) -> str | None:
        """Why a legal-looking win may not be taken in this situation (None: it may)."""
        return None

    # -- settlement ---------------------------------------------------------------------------------------
    def win_payments(self, win: Win, score: Score, situation: WinSituation) -> WinMoney:
        raise NotImplementedError

    def false_win_payments(self, declarer: int, situation: WinSituation) -> list[Payment]:
        """诈和: the declarer pays each other seat (and plays on as a dead hand)."""
        return one_pays_each(declarer, FALSE_WIN_EACH, FALSE_WIN, situation.event)

    def refused_win_payments(self, win: Win, score: Score, situation: WinSituation) -> list[Payment]:
        """A win the situation forbids (:meth:`refusal`): by default a false win."""
        return self.false_win_payments(situation.winner, situation)

    def kong_payments(self, kong: Kong) -> list[Payment]:
        """On-the-spot kong money.  None by default (the kong is one of the winner's fans)."""
        return []

    def flower_kong_payments(self, maker: int, event: int) -> list[Payment]:
        return []

    def chase_payments(self, first: int, event: int) -> list[Payment]:
        """追牌: four discards of one tile in a row, ``first`` the side that started it."""
        return []

    def follow_payments(self, dealer: int, event: int) -> list[Payment]:
        """跟庄: the other three followed the dealer's first discard."""
        return []

    def draw_payments(self, end: DrawnEnd) -> list[Payment]:
        """荒牌 / 黄庄: the live wall ran out (四川: with two or more still in, 查花猪 / 查大叫 / 退税)."""
        return []

    def action_refusal(self, action: Any, facts: Any) -> str | None:
        """Why ``action`` (a :class:`~firmware.rules.hand_record.Action`) cannot happen in this rule set now, given
        what the hand's record established so far (its :class:`~firmware.rules.hand_facts.HandFacts`); None: it
        may.  By default anything the record's own checks let through."""
        return None

    def hand_over(self, winners: list[int]) -> bool:
        """Is the hand over once ``winners`` (the sides with a legal win so far, in order) have won?"""
        return len(set(winners)) >= max(1, self.play.winners_to_end) if self.play.winners_to_end else False

    def lead_winner(self, winners: list[int], dealer: int) -> int | None:
        """The winner the dealer rotation follows: by default the dealer when among them, else the first."""
        if not winners:
            return None
        return dealer if dealer in winners else winners[0]

    def doubled(self, amount: int, streak: int) -> int:
        """Every gain and loss during a dealer streak (竞技麻将 倍打); unchanged by default."""
        return amount

    def penalty_payments(self, side: int, kind: str, repeat: int, to: int | None, event: int) -> list[Payment]:
        """A referee's penalty of the kind ``kind`` (the ``repeat``-th in this hand, from 1): ``each`` to
        every other seat, or three times that to the harmed side ``to``.  ValueError for an unknown kind."""
        penalty = self.config.penalties.get(kind)
        if penalty is None:
            if not self.config.penalties:
                raise worded(ValueError, "rule set %(rules)s has no penalty %(kind)r (kinds: none)", rules=self.name,
                             kind=kind)
            raise worded(ValueError, "rule set %(rules)s has no penalty %(kind)r (kinds: %(kinds)s)", rules=self.name,
                         kind=kind, kinds=", ".join(self.config.penalties))
        steps = [penalty.each, *penalty.repeat_each]
        nth = repeat - 1 if penalty.first_is_warning else repeat
        if nth < 1:
            return []                               # a warning: recorded, no points
        each = steps[min(nth, len(steps)) - 1]
        reason = penalty_reason(kind, penalty.name, penalty.en)
        if to is not None:
            return [Payment(side, to, each * (SEATS - 1), reason, event)]
        return one_pays_each(side, each, reason, event)

    def penalty_kills_hand(self, kind: str) -> bool:
        penalty = self.config.penalties.get(kind)
        return bool(penalty and penalty.dead_hand)

    def penalty_reason(self, kind: str) -> Reason:
        penalty = self.config.penalties[kind]
        return penalty_reason(kind, penalty.name, penalty.en)

    # -- the game ----------------------------------------------------------------------------------------------
    def next_dealer(self, current: Dealership, outcome: HandOutcome) -> Dealership:
        """Who deals next.  By default a dealer win keeps the seat (the streak grows), anything else passes
        the deal counter-clockwise."""
        if current.dealer in outcome.winners:
            return Dealership(current.dealer, current.streak + 1)
        return Dealership((current.dealer + 1) % SEATS)

    def _broke(self, chips: list[int]) -> bool:
        match = self.config.match
        return match is not None and match.broke_players > 0 and \
            sum(1 for c in chips if c <= 0) >= match.broke_players

    @property
    def match_rounds(self) -> int:
        """The 圈 after which a game (局) ends (0: it does not end by rounds)."""
        match = self.config.match
        return match.rounds if match is not None and match.rounds else 0

    def match_end(self, chips: list[int], rounds_played: int) -> str | None:
        """Why the game (局) ends after a hand with these chips, ``rounds_played`` 圈 dealt (None: it goes on);
        from ``[match]`` (no section: a game never ends)."""
        match = self.config.match
        if match is None:
            return None
        if self._broke(chips):
            return f"局结: {match.broke_players} players have no points"
        if match.rounds and rounds_played >= match.rounds:
            return f"局结: the {match.rounds} 圈 are played"
        return None

    def ends_match_badly(self, chips_after: list[int], gainer: int | None) -> bool:
        """Would a movement of chips that leaves ``chips_after`` end the 局 with someone other than ``gainer``
        first (a 非胜式局结, forbidden where ``[match] no_losing_end``; ``gainer`` None: nobody may end it so)?"""
        match = self.config.match
        if match is None or not match.no_losing_end or not self._broke(chips_after):
            return False
        return gainer is None or chips_after[gainer] < max(chips_after)
