"""One hand in play: the authoritative state of draws, discards, claims, kongs and flowers.

Pure bookkeeping, no policy and no clock: the players (people, or the
simulated players) choose, this module checks that the choice is legal and
applies it.  Tiles come from the dealt wall in the deal's order; flowers are
replaced from the tail at once (补花); kongs take a replacement from the
tail.  Claims on a discard are resolved by priority (win > pung/kong >
chow, chow only by 下家) and, among winners, counter-clockwise from the
discarder; rule sets that allow several winners take them all.  Seats are
physical sides; seat winds count counter-clockwise from the dealer (East).
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from firmware.rules.win import Meld, MeldKind, Win
from firmware.tiles.dealing import Deal
from firmware.tiles.tile import is_flower
from firmware.tiles.wall import Position

SIDES = 4
SOURCES = {1: "left", 2: "opposite", 3: "right"}    # discarder relative to the claimer (上家, 对家, 下家)


class Phase(enum.Enum):
    DISCARD = "discard"      # the seat to act holds 14 (or 14 - 3 per meld) and must discard or declare
    CLAIMS = "claims"        # a discard is on the table, waiting for claims
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

    @property
    def opened(self) -> bool:
        return any(not m.concealed for m in self.melds)


@dataclass
class Claim:
    side: int
    kind: str                          # "win", "pung", "kong", "chow"
    tile: int                          # the chow's lowest tile, else the claimed tile


@dataclass
class HandResult:
    winners: list[int]                 # sides
    discarder: int | None              # side, None when self-drawn
    win_tile: int | None
    drawn: bool                        # 荒牌 / 黄庄
    flags: dict[str, bool] = field(default_factory=dict)


class HandPlay:
    def __init__(self, deal: Deal, face_of: Callable[[Position], int], dealer: int, round_wind: int,
                 several_winners: bool = False) -> None:
        self.deal = deal
        self.face_of = face_of
        self.dealer = dealer
        self.round_wind = round_wind
        self.several_winners = several_winners
        self.seats = [Seat(side, (side - dealer) % SIDES) for side in range(SIDES)]
        self.history: list[tuple[str, int, int | None]] = []
        self.visible: Counter[int] = Counter()                 # discards and exposed melds (和绝张)
        self.last_draw_was_replacement = False                 # kong (杠上开花) or flower (补花和)
        self.last_replacement_kind = ""                        # "kong" / "flower"
        for side, positions in deal.hands.items():
            for position in positions:
                self._take(self.seats[side], position)
        for offset in range(SIDES):                    # 补花: dealer first, then counter-clockwise
            self._replace_flowers(self.seats[(dealer + offset) % SIDES])
        self.turn = dealer
        self.phase = Phase.DISCARD
        self.last_discard: tuple[int, int] | None = None      # (side, tile)
        self.last_draw_was_replacement = False
        self.after_kong_discard = False                        # the discard right after a kong replacement
        self.result: HandResult | None = None

    # -- tiles in -------------------------------------------------------------
    def _take(self, seat: Seat, position: Position) -> int:
        kind = self.face_of(position)
        if is_flower(kind):
            seat.flowers += 1
        else:
            seat.hand.append(kind)
        return kind

    def _replace_flowers(self, seat: Seat) -> bool:
        """Draw replacements for flowers until none is left; False if the tail ran out."""
        while seat.flowers > sum(1 for h in self.history if h[0] == "flower" and h[1] == seat.side):
            self.history.append(("flower", seat.side, None))
            position = self.deal.replacement()
            if position is None:
                return False
            self._take(seat, position)
            self.last_draw_was_replacement, self.last_replacement_kind = True, "flower"
        return True

    @property
    def wall_left(self) -> int:
        return self.deal.remaining()

    def draw(self) -> int | None:
        """The seat to play draws; None when the live wall is exhausted (the hand is drawn)."""
        position = self.deal.draw()
        seat = self.seats[self.turn]
        if position is None:
            self._end(HandResult([], None, None, True))
            return None
        self.last_draw_was_replacement = False
        kind = self._take(seat, position)
        if is_flower(kind) and not self._replace_flowers(seat):
            self._end(HandResult([], None, None, True))
            return None
        self.phase = Phase.DISCARD
        self.history.append(("draw", seat.side, None))
        return seat.hand[-1]

    # -- the seat to play ----------------------------------------------------
    def discard(self, tile: int) -> None:
        seat = self.seats[self.turn]
        if self.phase is not Phase.DISCARD or tile not in seat.hand:
            raise ValueError(f"side {seat.side} cannot discard {tile} now")
        seat.hand.remove(tile)
        seat.discards.append(tile)
        self.visible[tile] += 1
        self.after_kong_discard = self.last_draw_was_replacement and self.last_replacement_kind == "kong"
        self.last_draw_was_replacement = False
        self.last_discard = (seat.side, tile)
        self.phase = Phase.CLAIMS
        self.history.append(("discard", seat.side, tile))

    def discard_flower(self, side: int) -> None:
        """A player throws away a flower instead of showing it: 相公, they may no longer win (竞技麻将)."""
        seat = self.seats[side]
        if seat.flowers <= 0:
            raise ValueError(f"side {side} holds no flower")
        seat.flowers -= 1
        seat.dead = True
        self.history.append(("flower_discard", side, None))

    def can_concealed_kong(self, side: int) -> list[int]:
        seat = self.seats[side]
        return sorted(k for k, n in Counter(seat.hand).items() if n == 4)

    def can_added_kong(self, side: int) -> list[int]:
        seat = self.seats[side]
        return sorted(m.tile for m in seat.melds if m.kind is MeldKind.PUNG and m.tile in seat.hand)

    def kong(self, side: int, tile: int, robbers: Callable[[int, int], list[int]] | None = None) -> int | None:
        """A concealed or added kong by the seat to play, then its replacement draw.  ``robbers(side,
        tile)`` lists the sides that rob an added kong (抢杠和); then the hand ends with their win."""
        seat = self.seats[side]
        added = any(m.kind is MeldKind.PUNG and m.tile == tile for m in seat.melds)
        if added:
            if robbers is not None:
                thieves = robbers(side, tile)
                if thieves:
                    seat.hand.remove(tile)
                    self._end(HandResult(thieves[: None if self.several_winners else 1], side, tile, False,
                                         {"kong_win": True}))
                    return None
            seat.hand.remove(tile)
            seat.melds = [Meld(MeldKind.KONG, tile, m.source) if m.kind is MeldKind.PUNG and m.tile == tile else m
                          for m in seat.melds]
            self.visible[tile] += 1
        else:
            if seat.hand.count(tile) != 4:
                raise ValueError(f"side {side} has no four {tile} to kong")
            for _ in range(4):
                seat.hand.remove(tile)
            seat.melds.append(Meld(MeldKind.KONG, tile, None))
        self.history.append(("kong", side, tile))
        position = self.deal.replacement(kong=True)
        if position is None:
            self._end(HandResult([], None, None, True))
            return None
        kind = self._take(seat, position)
        self.last_draw_was_replacement, self.last_replacement_kind = True, "kong"
        if is_flower(kind) and not self._replace_flowers(seat):
            self._end(HandResult([], None, None, True))
            return None
        self.phase = Phase.DISCARD
        return seat.hand[-1]

    # -- claims on a discard -----------------------------------------------------
    def claim_options(self, side: int, can_win: Callable[[int, int], bool]) -> list[Claim]:
        """What ``side`` may claim on the discard on the table (``can_win(side, tile)`` asks the rules)."""
        assert self.last_discard is not None
        discarder, tile = self.last_discard
        if side == discarder:
            return []
        seat = self.seats[side]
        out: list[Claim] = []
        if not seat.dead and can_win(side, tile):
            out.append(Claim(side, "win", tile))
        if self.wall_left == 0:
            return out                                 # nothing but a win on the last discard
        n = seat.hand.count(tile)
        if n >= 2:
            out.append(Claim(side, "pung", tile))
        if n == 3:
            out.append(Claim(side, "kong", tile))
        if (discarder + 1) % SIDES == side and tile < 27:          # chow only from 上家
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
            self.turn = (discarder + 1) % SIDES
            self.last_discard = None
            return
        if claims[0].kind == "win":
            self._end(HandResult([c.side for c in claims], discarder, tile, False))
            return
        claim = claims[0]
        seat = self.seats[claim.side]
        self.seats[discarder].discards.pop()
        source = SOURCES[(claim.side - discarder) % SIDES]
        if claim.kind == "chow":
            for k in (claim.tile, claim.tile + 1, claim.tile + 2):
                if k != tile:
                    seat.hand.remove(k)
            seat.melds.append(Meld(MeldKind.CHOW, claim.tile, source))
            self.visible.update(k for k in (claim.tile, claim.tile + 1, claim.tile + 2) if k != tile)
        else:
            for _ in range(3 if claim.kind == "kong" else 2):
                seat.hand.remove(tile)
            seat.melds.append(Meld(MeldKind.KONG if claim.kind == "kong" else MeldKind.PUNG, tile, source))
            self.visible[tile] += 3 if claim.kind == "kong" else 2
        self.history.append((claim.kind, claim.side, tile))
        self.turn = claim.side
        self.last_discard = None
        if claim.kind == "kong":
            position = self.deal.replacement(kong=True)
            if position is None:
                self._end(HandResult([], None, None, True))
                return
            self._take(seat, position)
            self.last_draw_was_replacement, self.last_replacement_kind = True, "kong"
            self._replace_flowers(seat)
        self.phase = Phase.DISCARD

    def self_drawn_win(self, side: int) -> None:
        flags = {"kong_win": self.last_draw_was_replacement and self.last_replacement_kind == "kong",
                 "flower_win": self.last_draw_was_replacement and self.last_replacement_kind == "flower"}
        self._end(HandResult([side], None, self.seats[side].hand[-1], False, flags))

    def _end(self, result: HandResult) -> None:
        self.result = result
        self.phase = Phase.OVER

    # -- what the referee needs ---------------------------------------------------
    def win_for(self, side: int, tile: int, self_drawn: bool, kong_win: bool = False) -> Win:
        """The Win description of ``side`` winning on ``tile`` (its hand holds the tile if self-drawn)."""
        seat = self.seats[side]
        hand = list(seat.hand)
        if self_drawn:
            hand.remove(tile)
        last = self.wall_left == 0
        # 和绝张: the other three copies are on view (a discard on the table counts itself: not one of them)
        others_visible = self.visible[tile] - (0 if self_drawn else 1)
        last_of_kind = others_visible == 3 and hand.count(tile) == 0
        return Win(tuple(sorted(hand)), tuple(seat.melds), tile, self_drawn, last_of_kind, kong_win, last,
                   seat.wind, self.round_wind, seat.flowers,
                   flower_win=self_drawn and self.last_draw_was_replacement and self.last_replacement_kind == "flower")
