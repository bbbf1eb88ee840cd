"""What a hand's actions establish, action by action: sets and who fed them, runs of discards, dead hands.

The settlement reads a hand's record through this: each side's exposed
sets with the side that fed each (包付, 闭门 / 开门), flowers shown (a full
set of four is a 花杠), the discards in a row of one tile (four in a row is
追牌; the first four of the hand, the dealer's followed by the other three,
is 跟庄), whether a discard came right after its discarder's kong
(杠流泪), which sides are dead (相公), penalties given so far, each side's
void suit (定缺) and the tiles passed at 换三张 (received once all have
passed), the sides that have won (and, in 血战到底, left the hand), and, when
the deal is in the record, each side's standing tiles (so a 全求独钓's hung
tile is known, and a win's hand can be checked against what was dealt and
drawn).  :meth:`HandFacts.observe` returns the derived events an action
makes (``chase``, ``follow``, ``flower_kong``) for the rule set to price.
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field

from firmware.i18n import worded
from firmware.rules.hand_record import Action, BadRecord, HandRecord, Verb
from firmware.rules.win import Meld, MeldKind
from firmware.tiles.tile import code, format_tiles

SIDES = 4
_EVERY_SIDE = frozenset(range(SIDES))
_WIN = Verb.WIN                 # (bound once: looking an enum member up on its class costs ~0.1 us)
FLOWER_SETS = (frozenset(range(34, 38)), frozenset(range(38, 42)))    # 春夏秋冬, 梅兰竹菊
OFFSET_SOURCE = {1: "left", 2: "opposite", 3: "right"}                 # (claimer - feeder) % 4


class Derived(enum.Enum):
    CHASE = "chase"                # four discards of one tile in a row: ``side`` is the first of them
    FOLLOW = "follow"              # the dealer's first discard followed by the other three
    FLOWER_KONG = "flower_kong"    # ``side`` has shown a whole set of four flowers


@dataclass(frozen=True)
class DerivedEvent:
    what: Derived
    side: int | None = None


@dataclass
class SideFacts:
    melds: list[Meld] = field(default_factory=list)       # exposed sets and concealed kongs, in order
    feeders: list[int | None] = field(default_factory=list)
    flowers: list[int] = field(default_factory=list)
    flower_kongs: int = 0
    declared_open: bool = False
    dead: bool = False
    standing: Counter[int] | None = None                   # the side's tiles (None: not known)
    hung: int | None = None                                # 全求独钓: the single tile hung since the fourth claim
    hung_changed: bool = False
    penalties: Counter[str] = field(default_factory=lambda: Counter.__new__(Counter))     # (an empty Counter:
    #                                                      what Counter() makes, without its __init__'s update)
    last_kong: int | None = None                           # the tile of the side's last kong
    last_kong_event: int | None = None                     # ... and the action of the record that made it
    kong_pending: int | None = None                        # a kong of this tile, its replacement not discarded yet
    void: int | None = None                                # 定缺: the suit (0 m, 1 p, 2 s) it may not win with
    swapped: int = 0                                       # 换三张: the times it has passed tiles
    draws_known: bool = False                              # a draw with its tile is in the record
    last_drawn: int | None = None                          # the tile it drew this turn (None: none since it played)
    discarded: bool = False                                # it has made a discard this hand

    @property
    def opened(self) -> bool:
        return self.declared_open or bool(self.melds) and any(not m.concealed for m in self.melds)

    @property
    def claimed(self) -> list[int]:
        """The feeders of the sets claimed from discards, in order."""
        return [f for f in self.feeders if f is not None]


class HandFacts:
    def __init__(self, record: HandRecord) -> None:
        self.record = record
        self.sides = [SideFacts() for _ in range(SIDES)]
        self.discards: list[tuple[int, int]] = []       # (side, tile), claimed ones included
        self.last_discard: tuple[int, int] | None = None
        self.last_discard_event: int | None = None
        self.after_kong_tile: int | None = None          # the last discard came right after its side's kong of this
        self.run: list[int] = []                         # sides of the current run of one tile, in turn
        self.run_tile: int | None = None
        self.claims_seen = False
        self.followed = False
        self.liable_next: int | None = None
        self.drawn = False
        self.won: list[int] = []                         # the sides with a legal win, in the order they won
        self.incoming: dict[int, list[int]] = {}         # 换三张: tiles passed, received once all have passed
        self.transferred: set[int] = set()               # kongs (their actions) whose money went to a winner (杠上炮)

    def feeder_source(self, claimer: int, feeder: int) -> str:
        return OFFSET_SOURCE[(claimer - feeder) % SIDES]

    def observe(self, action: Action, event: int = 0) -> list[DerivedEvent]:
        """Take one action (the record's number ``event``) in; the derived events it makes.  BadRecord when it
        cannot happen."""
        v, side = action.verb, action.side
        out: list[DerivedEvent] = []
        s = self.sides[side] if side is not None else None
        if v is not Verb.SWAP and self.incoming:
            self._receive()
        if v is _WIN:                   # (no fact of the hand changes: the settlement takes the win in)
            return out
        if v is Verb.DEAL:
            assert s is not None
            s.standing = Counter(k for k in action.hand if k < 34)
            s.flowers += [k for k in action.hand if k >= 34]
        elif v is Verb.DRAW:
            assert s is not None
            s.last_drawn = action.tile
            s.draws_known = s.draws_known or action.tile is not None
            if s.standing is not None:
                if action.tile is None:
                    s.standing = None
                elif action.tile < 34:
                    s.standing[action.tile] += 1
                    self._check_count(side, action.tile)
        elif v is Verb.DISCARD:
            assert s is not None and action.tile is not None
            self._take(side, [action.tile])
            if len(s.claimed) == 4 and s.standing is not None:
                rest = [k for k, n in s.standing.items() if n]
                single = rest[0] if len(rest) == 1 else None
                if s.hung is not None and single != s.hung:
                    s.hung_changed = True              # the hung tile was swapped: no more 全求独钓 danger
                s.hung = single
            self.after_kong_tile, s.kong_pending = s.kong_pending, None
            s.last_drawn, s.discarded = None, True
            self.last_discard_event = event
            self.discards.append((side, action.tile))
            self.last_discard = (side, action.tile)
            out += self._run(side, action.tile)
        elif v is Verb.CHOW or v is Verb.PUNG or v is Verb.KONG:          # (CLAIMS, without hashing an enum)
            assert s is not None and action.tile is not None and action.source is not None
            self._claim(side, action)
        elif v is Verb.ADDED_KONG:
            assert s is not None and action.tile is not None
            for i, m in enumerate(s.melds):
                if m.kind is MeldKind.PUNG and m.tile == action.tile:
                    s.melds[i] = Meld(MeldKind.KONG, m.tile, m.source, added=True)
                    break
            else:
                raise worded(BadRecord, "side %(side)s adds %(tile)s to a pung it does not have", side=side,
                             tile=code(action.tile))
            self._take(side, [action.tile])
        elif v is Verb.CONCEALED_KONG:
            assert s is not None and action.tile is not None
            self._take(side, [action.tile] * 4)
            s.melds.append(Meld(MeldKind.KONG, action.tile, None))
            s.feeders.append(None)
        elif v is Verb.FLOWER:
            assert s is not None and action.tile is not None
            s.flowers.append(action.tile)
            shown = set(s.flowers)
            kongs = sum(1 for group in FLOWER_SETS if group <= shown)
            if kongs > s.flower_kongs:
                s.flower_kongs = kongs
                out.append(DerivedEvent(Derived.FLOWER_KONG, side))
        elif v in (Verb.FLOWER_DISCARD, Verb.DEAD):
            assert s is not None
            s.dead = True
        elif v is Verb.OPENED:
            assert s is not None
            s.declared_open = True
        elif v is Verb.LIABLE:
            self.liable_next = side
        elif v is Verb.FOLLOW:
            if not self.followed:
                self.followed = True
                out.append(DerivedEvent(Derived.FOLLOW, self.record.dealer))
        elif v is Verb.WALL_END:
            self.drawn = True
        elif v is Verb.PENALTY:
            assert s is not None
            s.penalties[action.kind] += 1
        elif v in (Verb.SWAP, Verb.VOID, Verb.SHOW, Verb.WON):
            self._hand_news(action)
        if s is not None and v in (Verb.KONG, Verb.ADDED_KONG, Verb.CONCEALED_KONG):
            s.last_kong = s.kong_pending = action.tile
            s.last_kong_event = event
        elif s is not None and v in (Verb.CHOW, Verb.PUNG):
            s.kong_pending = s.last_drawn = None
        return out

    def _hand_news(self, action: Action) -> None:
        """换三张, 定缺, a hand shown at the drawn end, a side that won earlier."""
        v, side = action.verb, action.side
        assert side is not None
        s = self.sides[side]
        if v is Verb.SWAP:
            assert action.to is not None
            self._take(side, list(action.hand))
            self.incoming.setdefault(action.to, []).extend(action.hand)
            s.swapped += 1
        elif v is Verb.VOID:
            s.void = "mps".index(action.kind)
        elif v is Verb.SHOW:
            shown = Counter(action.hand)
            if s.standing is not None and +s.standing != shown:
                held = sorted(k for k, n in s.standing.items() for _ in range(n))
                raise worded(BadRecord, "side %(side)s shows %(hand)s, the record shows %(held)s", side=side,
                             hand=_tiles(action.hand), held=_tiles(held))
            s.standing = shown
        elif v is Verb.WON and side not in self.won:
            self.won.append(side)

    def _receive(self) -> None:
        """换三张: every side has passed its tiles; each receives what was passed to it."""
        for side, tiles in sorted(self.incoming.items()):
            standing = self.sides[side].standing
            if standing is not None:
                standing.update(tiles)
        self.incoming = {}

    def drawn_now(self, side: int, tile: int) -> bool:
        """Whether ``side`` drew ``tile`` this turn (a 加杠 of it then pays; one of a tile held since an earlier turn,
        转手杠, may not): True when the record has no draws of that side with their tiles."""
        s = self.sides[side]
        return not s.draws_known or s.last_drawn == tile

    def in_view(self) -> Counter[int]:
        """The tiles on view: the discards nobody claimed and every exposed set (a chow's claimed tile counted as
        a discard too)."""
        seen = Counter(tile for _, tile in self.discards)
        for s in self.sides:
            for meld, feeder in zip(s.melds, s.feeders):
                seen.update(meld.tiles)
                if feeder is not None and meld.kind is not MeldKind.CHOW:
                    seen[meld.tile] -= 1
        return +seen

    def still_in(self, winners_leave: bool) -> frozenset[int]:
        """The sides still in the hand (where winners leave it, those that have not won)."""
        if not (winners_leave and self.won):
            return _EVERY_SIDE
        return frozenset(i for i in range(SIDES) if i not in self.won)

    def unmake_added_kong(self, side: int, tile: int) -> None:
        """``side``'s 加杠 of ``tile`` was robbed (抢杠和): the kong was never made, the pung stays, the tile is the
        robber's."""
        s = self.sides[side]
        for i, m in enumerate(s.melds):
            if m.kind is MeldKind.KONG and m.added and m.tile == tile:
                s.melds[i] = Meld(MeldKind.PUNG, m.tile, m.source)
                break
        if s.kong_pending == tile:
            s.kong_pending = None

    # -- helpers ------------------------------------------------------------------------------------
    def _take(self, side: int, tiles: list[int]) -> None:
        standing = self.sides[side].standing
        if standing is None:
            return
        for k in tiles:
            if standing[k] <= 0:
                raise worded(BadRecord, "side %(side)s does not hold %(tile)s", side=side, tile=code(k))
            standing[k] -= 1

    def _check_count(self, side: int, tile: int) -> None:
        standing = self.sides[side].standing
        if standing is not None and standing[tile] > 4:
            raise worded(BadRecord, "side %(side)s would hold five %(tile)s", side=side, tile=code(tile))

    def _claim(self, side: int, action: Action) -> None:
        s = self.sides[side]
        feeder, tile = action.source, action.tile
        assert feeder is not None and tile is not None
        self.claims_seen = True
        self.run, self.run_tile = [], None
        if action.verb is Verb.CHOW:
            claimed = self.last_discard[1] if self.last_discard and self.last_discard[0] == feeder else None
            if claimed is not None:                 # (else the claimed tile is not in the record)
                tiles = list(action.chow_tiles)
                if claimed not in tiles:
                    raise worded(BadRecord, "side %(side)s chows %(tile)s.. without side %(feeder)s's discard "
                                 "%(claimed)s", side=side, tile=code(tile), feeder=feeder, claimed=code(claimed))
                tiles.remove(claimed)
                self._take(side, tiles)
            s.melds.append(Meld(MeldKind.CHOW, tile, self.feeder_source(side, feeder)))
        else:
            if self.last_discard is not None and self.last_discard[0] == feeder and self.last_discard[1] != tile:
                raise worded(BadRecord, "side %(side)s claims %(tile)s but side %(feeder)s discarded %(discarded)s",
                             side=side, tile=code(tile), feeder=feeder, discarded=code(self.last_discard[1]))
            kind = MeldKind.PUNG if action.verb is Verb.PUNG else MeldKind.KONG
            self._take(side, [tile] * (2 if kind is MeldKind.PUNG else 3))
            s.melds.append(Meld(kind, tile, self.feeder_source(side, feeder)))
        s.feeders.append(feeder)
        s.hung, s.hung_changed = None, False           # (a fourth claim: its next discard leaves the hung tile)
        self.last_discard = None

    def _run(self, side: int, tile: int) -> list[DerivedEvent]:
        """A run of one tile discarded by the sides in turn, with no claim between: four is 追牌."""
        if self.run and tile == self.run_tile and side == (self.run[-1] + 1) % SIDES:
            self.run.append(side)
        else:
            self.run, self.run_tile = [side], tile
        out: list[DerivedEvent] = []
        if len(self.run) == 4:
            first = self.run[0]
            out.append(DerivedEvent(Derived.CHASE, first))
            if len(self.discards) == 4 and not self.claims_seen and first == self.record.dealer and not self.followed:
                self.followed = True
                out.append(DerivedEvent(Derived.FOLLOW, first))
            self.run, self.run_tile = [], None
        return out

    # -- what a win needs ------------------------------------------------------------------------------
    def flowers_of(self, side: int) -> int:
        return len(self.sides[side].flowers)

    def melds_of(self, side: int) -> tuple[Meld, ...]:
        return tuple(self.sides[side].melds)

    def open_sides(self) -> frozenset[int]:
        return frozenset(i for i, s in enumerate(self.sides) if s.opened)

    def melds_by_side(self) -> list[list[Meld]]:
        return [list(s.melds) for s in self.sides]

    def hung_unchanged(self, side: int, tile: int) -> bool:
        """全求独钓: ``side`` has four claimed sets and waits, since then unchanged, on ``tile``."""
        s = self.sides[side]
        return s.hung == tile and not s.hung_changed and len(s.claimed) == 4


def _tiles(kinds) -> str:
    return format_tiles(list(kinds)) or "nothing"
