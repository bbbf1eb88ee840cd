"""One hand in play: the authoritative state of draws, discards, claims, kongs and flowers, and its record.

Pure bookkeeping, no policy and no clock: the players (people, or the
simulated players) choose, this module checks that the choice is legal and
applies it.  Tiles come from the dealt wall in the deal's order; flowers are
replaced from the tail at once (补花); kongs take a replacement from the
tail.  Claims on a discard are resolved by priority (win > pung/kong >
chow, chow only by 下家) and, among winners, counter-clockwise from the
discarder; rule sets that allow several winners take them all.  Seats are
physical sides; seat winds count counter-clockwise from the dealer (East).

How the hand flows is the rule set's :class:`~firmware.rules.ruleset.PlayRules`:
most end at the first win; in 四川 (血战到底) a winner leaves and the rest
play on, the next to draw being the first still in after the (last) winner
counted counter-clockwise from the discarder, until enough have won or the
wall is empty (血流成河: winners stay in with their hands locked, drawing and
discarding what they draw, and may win again).  There, after the deal, each
passes three tiles of one suit (换三张) to the side the dice give and names
a void suit (定缺): it discards that suit first, and claims and kongs none
of it; nobody chows.

Every step is written as an action of the hand's record
(:mod:`firmware.rules.hand_record`) through ``emit``: the settlement reads
that record, whether it is fed action by action during play or afterwards.
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from firmware.rules.hand_record import Action, HandRecord, Verb
from firmware.rules.ruleset import PlayRules
from firmware.rules.win import Meld, MeldKind, Win
from firmware.tiles.dealing import Deal
from firmware.tiles.tile import SUITS, is_flower
from firmware.tiles.wall import Position

SIDES = 4
SOURCES = {1: "left", 2: "opposite", 3: "right"}    # discarder relative to the claimer (上家, 对家, 下家)


class Phase(enum.Enum):
    SWAP = "swap"            # after the deal: each passes three tiles of one suit (换三张)
    VOID = "void"            # ... then each names its void suit (定缺)
    DISCARD = "discard"      # the seat to act holds 14 (or 14 - 3 per meld) and must discard or declare
    CLAIMS = "claims"        # a discard is on the table, waiting for claims
    DRAW = "draw"            # the seat to play draws next (after a win, where the rest play on)
    OVER = "over"


@dataclass
class Seat:
    side: int
    wind: int
    hand: list[int] = field(default_factory=list)
    melds: list[Meld] = field(default_factory=list)
    flowers: int = 0
    discards: list[int] = field(default_factory=list)
    dead: bool = False                 # 相公: may not win
    void: int | None = None            # 定缺: the suit (0 m, 1 p, 2 s) it may not win, claim or kong with
    won: bool = False                  # it has won: it left the hand (血战到底), or plays on locked (血流成河)

    @property
    def locked(self) -> bool:
        """A winner still in the hand (血流成河): it draws, and wins again or discards what it drew."""
        return self.won

    def holds_void(self) -> bool:
        return self.void is not None and any(k // 9 == self.void for k in self.hand if k < 27)

    @property
    def opened(self) -> bool:
        return any(not m.concealed for m in self.melds)


@dataclass
class Claim:
    side: int
    kind: str                          # "win", "pung", "kong", "chow"
    tile: int                          # the chow's lowest tile, else the claimed tile


@dataclass(frozen=True)
class WinTaken:
    """One win of the hand: who, on what, from whom (None: self-drawn), and the tiles it stood with (as the
    player holds them: a self-drawn tile among them, a discard won on not)."""

    side: int
    tile: int
    discarder: int | None
    hand: tuple[int, ...]
    melds: tuple[Meld, ...]

    def faces(self) -> list[int]:
        """Every face of the win as the player lays it on the pad: the hand, the discard won on, the sets."""
        faces = list(self.hand) + ([self.tile] if self.discarder is not None else [])
        for meld in self.melds:
            if meld.kind is MeldKind.CHOW:
                faces += [meld.tile, meld.tile + 1, meld.tile + 2]
            else:
                faces += [meld.tile] * (4 if meld.kind is MeldKind.KONG else 3)
        return faces


@dataclass
class HandResult:
    winners: list[int]                 # sides
    discarder: int | None              # side, None when self-drawn
    win_tile: int | None
    drawn: bool                        # 荒牌 / 黄庄
    flags: dict[str, bool] = field(default_factory=dict)


class HandPlay:
    def __init__(self, deal: Deal, face_of: Callable[[Position], int], dealer: int, round_wind: int,
                 play: PlayRules | None = None, emit: Callable[[Action], object] | None = None,
                 record: HandRecord | None = None) -> None:
        """``emit`` takes every action as it happens (the settlement); by default they go to ``record``."""
        self.deal = deal
        self.face_of = face_of
        self.dealer = dealer
        self.round_wind = round_wind
        self.play = play = play if play is not None else PlayRules()
        self.several_winners = play.several_winners
        self.wins: list[WinTaken] = []                         # every win of the hand, in order
        self.discards_made = 0                                 # (天胡 / 地胡: none yet, or the dealer's first)
        self.claims_made = 0
        self.record = record if record is not None else HandRecord("", dealer=dealer, round_wind=round_wind)
        self.emit: Callable[[Action], object] = emit if emit is not None else self.record.add
        self.seats = [Seat(side, (side - dealer) % SIDES) for side in range(SIDES)]
        self.visible: Counter[int] = Counter()                 # discards and exposed melds (和绝张)
        self.last_draw_was_replacement = False                 # kong (杠上开花) or flower (补花和)
        self.last_replacement_kind = ""                        # "kong" / "flower"
        self.turn = dealer
        self.phase = Phase.DISCARD
        self.last_discard: tuple[int, int] | None = None      # (side, tile)
        self.last_played: tuple[int, int] | None = None       # the last discard nobody claimed (side, tile)
        self.result: HandResult | None = None
        dealt: dict[int, list[int]] = {}
        for side, positions in deal.hands.items():
            dealt[side] = [self.face_of(p) for p in positions]
        for side in sorted(dealt):
            self.emit(Action(Verb.DEAL, side, hand=tuple(sorted(k for k in dealt[side] if not is_flower(k)))))
        for side, kinds in dealt.items():
            seat = self.seats[side]
            seat.hand += [k for k in kinds if not is_flower(k)]
        for offset in range(SIDES):                    # 补花: dealer first, then counter-clockwise
            side = (dealer + offset) % SIDES
            for flower in [k for k in dealt.get(side, []) if is_flower(k)]:
                if self.phase is Phase.OVER or not self._show_flower(self.seats[side], flower):
                    break
        self.last_draw_was_replacement = False
        if self.phase is Phase.DISCARD:
            self.phase = Phase.SWAP if play.swap_tiles else Phase.VOID if play.void_suit else Phase.DISCARD

    # -- tiles in -------------------------------------------------------------------------------------
    def _draw_from(self, seat: Seat, position: Position | None) -> int | None:
        """Take the tile at ``position`` into ``seat`` (a flower is shown and replaced); None when the wall
        ran out on the way (the hand is drawn)."""
        while True:
            if position is None:
                self._wall_end()
                return None
            kind = self.face_of(position)
            if not is_flower(kind):
                seat.hand.append(kind)
                self.emit(Action(Verb.DRAW, seat.side, kind))
                return kind
            seat.flowers += 1
            self.emit(Action(Verb.FLOWER, seat.side, kind))
            position = self.deal.replacement()
            self.last_draw_was_replacement, self.last_replacement_kind = True, "flower"

    def _show_flower(self, seat: Seat, flower: int) -> bool:
        """A flower dealt: shown and replaced from the tail; False if the tail ran out."""
        seat.flowers += 1
        self.emit(Action(Verb.FLOWER, seat.side, flower))
        self.last_draw_was_replacement, self.last_replacement_kind = True, "flower"
        return self._draw_from(seat, self.deal.replacement()) is not None

    def _wall_end(self) -> None:
        if self.phase is not Phase.OVER:
            self.emit(Action(Verb.WALL_END))
            winners = list(dict.fromkeys(w.side for w in self.wins))
            first = self.wins[0] if self.wins else None
            self._end(HandResult(winners, first.discarder if first else None, first.tile if first else None, True))

    @property
    def wall_left(self) -> int:
        return self.deal.remaining()

    def draw(self) -> int | None:
        """The seat to play draws; None when the live wall is exhausted (the hand is drawn)."""
        seat = self.seats[self.turn]
        self.last_draw_was_replacement = False
        kind = self._draw_from(seat, self.deal.draw())
        if kind is None:
            return None
        self.phase = Phase.DISCARD
        return seat.hand[-1]

    # -- the seat to play ----------------------------------------------------
    def discard(self, tile: int) -> None:
        seat = self.seats[self.turn]
        if self.phase is not Phase.DISCARD or tile not in seat.hand:
            raise ValueError(f"side {seat.side} cannot discard {tile} now")
        if self.play.void_first and seat.holds_void() and tile // 9 != seat.void:
            raise ValueError(f"side {seat.side} holds tiles of its void suit: it discards those first (定缺)")
        if seat.locked and tile != seat.hand[-1]:
            raise ValueError(f"side {seat.side} has won and its hand is locked: it discards the tile it drew")
        self.discards_made += 1
        seat.hand.remove(tile)
        seat.discards.append(tile)
        self.visible[tile] += 1
        self.last_draw_was_replacement = False
        self.last_discard = self.last_played = (seat.side, tile)
        self.phase = Phase.CLAIMS
        self.emit(Action(Verb.DISCARD, seat.side, tile))

    def discard_flower(self, side: int) -> None:
        """A player throws away a flower instead of showing it: 相公, they may no longer win (竞技麻将)."""
        seat = self.seats[side]
        if seat.flowers <= 0:
            raise ValueError(f"side {side} holds no flower")
        seat.flowers -= 1
        seat.dead = True
        self.emit(Action(Verb.FLOWER_DISCARD, side))

    def can_concealed_kong(self, side: int) -> list[int]:
        seat = self.seats[side]
        if seat.locked:
            return []
        return sorted(k for k, n in Counter(seat.hand).items() if n == 4 and not self._void_tile(seat, k))

    def can_added_kong(self, side: int) -> list[int]:
        seat = self.seats[side]
        if seat.locked:
            return []
        return sorted(m.tile for m in seat.melds if m.kind is MeldKind.PUNG and m.tile in seat.hand)

    @staticmethod
    def _void_tile(seat: Seat, tile: int) -> bool:
        return seat.void is not None and tile < 27 and tile // 9 == seat.void

    # -- after the deal (四川) -------------------------------------------------------------------------------
    def swap_offset(self) -> int:
        """换三张: every side passes its tiles to the side this many counter-clockwise (1 下家, 2 对家, 3 上家),
        from the dealer's dice: the total modulo 3 (each of the three ways in 12 of the 36 throws)."""
        return 1 + sum(self.deal.brk.dice) % 3

    def swap(self, passed: dict[int, list[int]]) -> int:
        """换三张: each side (all four) passes ``passed[side]``, tiles of one suit, to the side the dice give;
        all pass, then all receive.  The offset used (:meth:`swap_offset`)."""
        n = self.play.swap_tiles
        if self.phase is not Phase.SWAP:
            raise ValueError("换三张 comes after the deal, before 定缺, where the rule set has it")
        if sorted(passed) != list(range(SIDES)):
            raise ValueError("换三张: every side passes")
        for side, tiles in passed.items():
            left = Counter(self.seats[side].hand)
            left.subtract(tiles)
            if len(tiles) != n or len({k // 9 for k in tiles}) != 1 or any(k >= 27 for k in tiles) \
                    or min(left.values(), default=0) < 0:
                raise ValueError(f"side {side} passes {n} tiles of one suit it holds")
        offset = self.swap_offset()
        for i in range(SIDES):
            side = (self.dealer + i) % SIDES
            for k in passed[side]:
                self.seats[side].hand.remove(k)
            self.emit(Action(Verb.SWAP, side, hand=tuple(sorted(passed[side])), to=(side + offset) % SIDES))
        for side, tiles in passed.items():
            self.seats[(side + offset) % SIDES].hand.extend(tiles)
        self.phase = Phase.VOID if self.play.void_suit else Phase.DISCARD
        return offset

    def name_void(self, side: int, suit: int) -> None:
        """定缺: ``side`` names the suit (0 m, 1 p, 2 s) it will not win with."""
        seat = self.seats[side]
        if self.phase is not Phase.VOID or seat.void is not None or not 0 <= suit < 3:
            raise ValueError(f"side {side} cannot name a void suit now")
        seat.void = suit
        self.emit(Action(Verb.VOID, side, kind=SUITS[suit]))
        if all(s.void is not None for s in self.seats):
            self.phase = Phase.DISCARD

    def kong(self, side: int, tile: int, robbers: Callable[[int, int], list[int]] | None = None) -> int | None:
        """A concealed or added kong by the seat to play, then its replacement draw.  ``robbers(side,
        tile)`` lists the sides that rob an added kong (抢杠和); then the hand ends with their win."""
        seat = self.seats[side]
        added = any(m.kind is MeldKind.PUNG and m.tile == tile for m in seat.melds)
        if added:
            # declared first, as at the table, then robbed: the rule set's robbed_kong_paid says if its money stands
            seat.hand.remove(tile)
            self.emit(Action(Verb.ADDED_KONG, side, tile))
            if robbers is not None:
                thieves = robbers(side, tile)
                if thieves:
                    taken = thieves[: None if self.several_winners else 1]
                    for thief in taken:
                        self._take_win(thief, tile, side, kong_win=True)
                    self._after_wins(taken, side, tile, {"kong_win": True})
                    return None
            seat.melds = [Meld(MeldKind.KONG, tile, m.source, added=True) if m.kind is MeldKind.PUNG and m.tile == tile
                          else m
                          for m in seat.melds]
            self.visible[tile] += 1
        else:
            if seat.hand.count(tile) != 4:
                raise ValueError(f"side {side} has no four {tile} to kong")
            for _ in range(4):
                seat.hand.remove(tile)
            seat.melds.append(Meld(MeldKind.KONG, tile, None))
            self.emit(Action(Verb.CONCEALED_KONG, side, tile))
        return self._replacement(seat)

    def _replacement(self, seat: Seat) -> int | None:
        """A kong's replacement from the tail (None: the tail ran out, the hand is drawn)."""
        kind = self._draw_from(seat, self.deal.replacement(kong=True))
        if kind is None:
            return None
        self.last_draw_was_replacement, self.last_replacement_kind = True, "kong"
        self.phase = Phase.DISCARD
        return kind

    # -- claims on a discard -----------------------------------------------------
    def claim_options(self, side: int, can_win: Callable[[int, int], bool]) -> list[Claim]:
        """What ``side`` may claim on the discard on the table (``can_win(side, tile)`` asks the rules)."""
        assert self.last_discard is not None
        discarder, tile = self.last_discard
        seat = self.seats[side]
        if side == discarder or self.gone(side):
            return []
        out: list[Claim] = []
        if not seat.dead and can_win(side, tile):
            out.append(Claim(side, "win", tile))
        if self.wall_left == 0 or seat.locked or self._void_tile(seat, tile):
            return out                                 # nothing but a win on the last discard
        n = seat.hand.count(tile)
        if n >= 2:
            out.append(Claim(side, "pung", tile))
        if n == 3:
            out.append(Claim(side, "kong", tile))
        if self.play.chows and (discarder + 1) % SIDES == side and tile < 27:          # chow only from 上家
            base = tile // 9 * 9
            for low in (tile - 2, tile - 1, tile):
                if base <= low and low + 2 <= base + 8:
                    need = [k for k in (low, low + 1, low + 2) if k != tile]
                    if all(seat.hand.count(k) >= 1 for k in need):
                        out.append(Claim(side, "chow", low))
        return out

    def resolve(self, claims: list[Claim]) -> list[Claim]:
        """The claims that take effect: wins first (counter-clockwise from the discarder; one unless the
        rule set allows several), else a pung or kong, else a chow."""
        assert self.last_discard is not None
        discarder = self.last_discard[0]
        order = {(discarder + i) % SIDES: i for i in range(1, SIDES)}
        wins = sorted((c for c in claims if c.kind == "win"), key=lambda c: order[c.side])
        if wins:
            return wins if self.several_winners else wins[:1]
        for kinds in (("kong", "pung"), ("chow",)):
            chosen = [c for c in claims if c.kind in kinds]
            if chosen:
                return [min(chosen, key=lambda c: order[c.side])]
        return []

    def apply(self, claims: list[Claim]) -> None:
        """Apply resolved claims; with none, the turn passes to 下家."""
        assert self.last_discard is not None
        discarder, tile = self.last_discard
        if not claims:
            self.turn = self._next_in(discarder)
            self.last_discard = None
            return
        if claims[0].kind == "win":
            for claim in claims:
                self._take_win(claim.side, tile, discarder)
            self.last_discard = None
            self._after_wins([c.side for c in claims], discarder, tile, {})
            return
        self.claims_made += 1
        claim = claims[0]
        seat = self.seats[claim.side]
        self.last_played = None
        self.seats[discarder].discards.pop()
        source = SOURCES[(claim.side - discarder) % SIDES]
        if claim.kind == "chow":
            for k in (claim.tile, claim.tile + 1, claim.tile + 2):
                if k != tile:
                    seat.hand.remove(k)
            seat.melds.append(Meld(MeldKind.CHOW, claim.tile, source))
            self.visible.update(k for k in (claim.tile, claim.tile + 1, claim.tile + 2) if k != tile)
            self.emit(Action(Verb.CHOW, claim.side, claim.tile, discarder))
        else:
            kong = claim.kind == "kong"
            for _ in range(3 if kong else 2):
                seat.hand.remove(tile)
            seat.melds.append(Meld(MeldKind.KONG if kong else MeldKind.PUNG, tile, source))
            self.visible[tile] += 3 if kong else 2
            self.emit(Action(Verb.KONG if kong else Verb.PUNG, claim.side, tile, discarder))
        self.turn = claim.side
        self.last_discard = None
        if claim.kind == "kong":
            self._replacement(seat)
            return
        self.phase = Phase.DISCARD

    def self_drawn_win(self, side: int) -> None:
        seat = self.seats[side]
        tile = seat.hand[-1]
        kong_win = self.last_draw_was_replacement and self.last_replacement_kind == "kong"
        flower_win = self.last_draw_was_replacement and self.last_replacement_kind == "flower"
        self._take_win(side, tile, None, kong_win=kong_win)
        if self.play.plays_on:
            seat.hand.pop()                            # (the tile won with is laid aside)
        self._after_wins([side], None, tile, {"kong_win": kong_win, "flower_win": flower_win})

    def _take_win(self, side: int, tile: int, discarder: int | None, kong_win: bool = False) -> None:
        """A win declared: into the record, and kept (with the tiles it stood with) for laying on the pad."""
        action = self.win_action(side, tile, discarder, kong_win=kong_win)
        self.emit(action)
        seat = self.seats[side]
        self.wins.append(WinTaken(side, tile, discarder, tuple(seat.hand), tuple(seat.melds)))
        seat.won = True

    def _after_wins(self, winners: list[int], discarder: int | None, tile: int, flags: dict[str, bool]) -> None:
        """The hand ends at the first win, or (四川) once enough have won; else the next side still in after the
        last winner, counted counter-clockwise from the discarder, draws."""
        everyone = list(dict.fromkeys(w.side for w in self.wins))
        enough = self.play.winners_to_end
        if not self.play.plays_on or (enough and len(everyone) >= enough):
            first = self.wins[0] if self.play.plays_on else None
            if first is not None and len(self.wins) > len(winners):
                flags = {}
                discarder, tile = first.discarder, first.tile
            self._end(HandResult(everyone if self.play.plays_on else winners, discarder, tile, False, flags))
            return
        self.turn = self._next_in(winners[-1])
        self.phase = Phase.DRAW
        self.last_draw_was_replacement = False

    def _next_in(self, side: int) -> int:
        """The first side after ``side``, counter-clockwise, still in the hand."""
        for i in range(1, SIDES + 1):
            if not self.gone((side + i) % SIDES):
                return (side + i) % SIDES
        return side

    def gone(self, side: int) -> bool:
        """``side`` has won and left the hand (血战到底)."""
        return self.seats[side].won and self.play.winners_leave

    def _end(self, result: HandResult) -> None:
        self.result = result
        self.phase = Phase.OVER

    # -- what the referee needs ---------------------------------------------------
    def win_action(self, side: int, tile: int, discarder: int | None, kong_win: bool = False) -> Action:
        """The record's ``win`` action of ``side`` winning on ``tile`` (from ``discarder``; None: self-drawn,
        its hand holds the tile)."""
        seat = self.seats[side]
        self_drawn = discarder is None
        hand = list(seat.hand)
        if self_drawn:
            hand.remove(tile)
        flags = set()
        if kong_win:
            flags.add("kong_win")
        if self.wall_left == 0:
            flags.add("last_tile")
        if self.play.first_turn and self._first_turn(side, discarder):
            flags.add("first_turn")
        # 和绝张: the other three copies are on view (a discard on the table counts itself: not one of them)
        if self.visible[tile] - (0 if self_drawn else 1) == 3 and hand.count(tile) == 0:
            flags.add("last_of_kind")
        if self_drawn and self.last_draw_was_replacement and self.last_replacement_kind == "flower":
            flags.add("flower_win")
        return Action(Verb.WIN, side, tile, discarder, tuple(sorted(hand)), frozenset(flags), seat.flowers)

    def _first_turn(self, side: int, discarder: int | None) -> bool:
        """天胡: the dealer wins on its dealt tiles; 地胡: another wins on the dealer's first discard, no set
        claimed and no kong made before it."""
        if self.claims_made or any(seat.melds for seat in self.seats) or self.last_draw_was_replacement:
            return False
        if discarder is None:
            return side == self.dealer and self.discards_made == 0
        return discarder == self.dealer and self.discards_made == 1

    def win_for(self, side: int, tile: int, self_drawn: bool, kong_win: bool = False) -> Win:
        """The Win of ``side`` declaring on ``tile`` now (its hand holds the tile if self-drawn): what the
        players ask the referee about before declaring."""
        a = self.win_action(side, tile, None if self_drawn else (side + 1) % SIDES, kong_win)
        seat = self.seats[side]
        return Win(a.hand, tuple(seat.melds), tile, self_drawn, "last_of_kind" in a.flags, kong_win,
                   "last_tile" in a.flags, seat.wind, self.round_wind, seat.flowers,
                   flower_win="flower_win" in a.flags, void=seat.void, first_turn="first_turn" in a.flags)
