"""A rule set: one object behind one interface, asked by the referee, the settlement, the game and the players.

Each family (MCR, 竞技麻将, the northeastern 辽宁 / 锦州) subclasses
:class:`RuleSet` in its own package; :mod:`firmware.rules.registry` makes
one from its TOML.  The interface covers:

* the tiles and the deal: tile set, winning shapes, dice throws, the tail kept;
* legality and scoring of a declared win (:meth:`score`): a :class:`Score`
  with uniform items;
* settlement: a win (:meth:`win_payments`), a false or refused win, kongs and
  the other on-the-spot money (追牌, 跟庄, 花杠), a drawn hand (黄庄), the
  referee's penalties; every payment with its reason;
* the game: who deals next (:meth:`next_dealer`), when a 局 ends
  (:meth:`match_end`), how many may win on one discard;
* the simulated players' aims (:class:`Aims`).

Nothing outside the registry asks a rule set for its name to decide
anything: what differs is a method of the family or a switch in its TOML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from firmware.hands.analysis import Shape
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


@dataclass
class WinMoney:
    payments: list[Payment]
    breakdown: list[Breakdown] = field(default_factory=list)
    liable: int | None = None
    context_items: list[Item] = field(default_factory=list)    # items the situation added (杠流泪, 长毛 ...)


class RuleSet:
    """The base of every family: the TOML's values, and the defaults most families share."""

    unit = "fan"                       # what its items and totals count: fan, point (竞技麻将 S), doubling (2^N)
    several_winners = False            # may several win on one discard (paid in turn)?
    needs_open_seats = False           # does what a payer pays depend on whether that payer had opened?
    aims = Aims()

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
        return self.config.shape_set

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

    def kong_payments(self, kind: str, maker: int, feeder: int | None, tile: int, event: int) -> list[Payment]:
        """On-the-spot kong money: ``kind`` is ``melded`` (on a discard, ``feeder`` known), ``added`` or
        ``concealed``.  None by default (the kong is one of the winner's fans)."""
        return []

    def flower_kong_payments(self, maker: int, event: int) -> list[Payment]:
        return []

    def chase_payments(self, first: int, event: int) -> list[Payment]:
        """追牌: four discards of one tile in a row, ``first`` the side that started it."""
        return []

    def follow_payments(self, dealer: int, event: int) -> list[Payment]:
        """跟庄: the other three followed the dealer's first discard."""
        return []

    def draw_payments(self, dealer: int, event: int) -> list[Payment]:
        """荒牌 / 黄庄: the live wall ran out with no win."""
        return []

    def doubled(self, amount: int, streak: int) -> int:
        """Every gain and loss during a dealer streak (竞技麻将 倍打); unchanged by default."""
        return amount

    def penalty_payments(self, side: int, kind: str, repeat: int, to: int | None, event: int) -> list[Payment]:
        """A referee's penalty of the kind ``kind`` (the ``repeat``-th in this hand, from 1): ``each`` to
        every other seat, or three times that to the harmed side ``to``.  ValueError for an unknown kind."""
        penalty = self.config.penalties.get(kind)
        if penalty is None:
            known = ", ".join(self.config.penalties) or "none"
            raise ValueError(f"rule set {self.name} has no penalty {kind!r} (kinds: {known})")
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
