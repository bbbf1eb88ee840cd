"""A declared win, as the referee and the scorers see it: tiles, melds, and how it was won.

This is the rule-set-independent description of a win (the JSON-lines case
format of ``mjtable score`` maps onto it field by field).  ``validate``
rejects what cannot be on a table: a wrong tile count, a fifth copy, a chow
that is not three consecutive tiles of one suit, a flower in the hand.
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass

from firmware.i18n import worded
from firmware.frozen import quick_init
from firmware.tiles.tile import SUITED, TileError, code, format_tiles

WIND_CODES = "ESWN"
_KINDS = 34                     # tile kinds that can be held (flowers are counted, not held)


class MeldKind(enum.Enum):
    CHOW = "chow"
    PUNG = "pung"
    KONG = "kong"


_CHOW, _KONG = MeldKind.CHOW, MeldKind.KONG      # (bound once: looking an enum member up on its class costs ~0.1 us)


class HandError(ValueError):
    """A win description that cannot be a real hand; the message names the problem."""


@quick_init
@dataclass(frozen=True)
class Meld:
    kind: MeldKind
    tile: int                      # lowest tile of a chow, the tile of a pung or kong
    source: str | None = None      # "left" / "opposite" / "right"; None for a concealed kong
    added: bool = False            # a kong made by adding a drawn tile to an exposed pung (加杠)

    @property
    def concealed(self) -> bool:
        return self.kind is _KONG and self.source is None

    @property
    def tiles(self) -> list[int]:
        if self.kind is _CHOW:
            return [self.tile, self.tile + 1, self.tile + 2]
        return [self.tile] * (4 if self.kind is _KONG else 3)

    def __str__(self) -> str:
        text = format_tiles(self.tiles, sort=False)
        return f"[{text}]" if not self.concealed else f"[{text} concealed]"


@quick_init
@dataclass(frozen=True)
class Win:
    hand: tuple[int, ...]          # concealed standing tiles, without the winning tile
    melds: tuple[Meld, ...]
    win_tile: int
    self_drawn: bool = False
    last_of_kind: bool = False     # 和绝张
    kong_win: bool = False         # 杠上开花 (self-drawn) / 抢杠和 (on a discard)
    last_tile: bool = False        # 妙手回春 (self-drawn) / 海底捞月 (on a discard)
    seat_wind: int = 0             # 0..3 = E S W N
    round_wind: int = 0
    flowers: int = 0
    flower_win: bool = False       # self-drawn on a flower replacement (补花和, 竞技麻将)
    void: int | None = None        # 定缺: the suit (0 m, 1 p, 2 s) the winner may not hold (四川); None: none named
    first_turn: bool = False       # won on the first turn: 天胡 (the dealer) / 地胡 (on the dealer's first discard)

    def concealed_counts(self) -> list[int]:
        """Counts of the standing tiles with the winning tile (what must form the shape)."""
        counts = [0] * 34
        for kind in self.hand:
            counts[kind] += 1
        counts[self.win_tile] += 1
        return counts

    def validate(self) -> None:
        if len(self.melds) > 4:
            raise worded(HandError, "%(count)s melds; a hand has at most 4", count=len(self.melds))
        expected = 13 - 3 * len(self.melds)
        if len(self.hand) != expected:
            raise worded(HandError, "%(count)s standing tiles with %(melds)s melds; expected %(expected)s (without the "
                         "winning tile)", count=len(self.hand), melds=len(self.melds), expected=expected)
        hand = self.hand
        if hand and not (0 <= min(hand) and max(hand) < 34) or not 0 <= self.win_tile < 34:
            for kind in (*hand, self.win_tile):         # (the first out of range, in order)
                if not 0 <= kind < 34:
                    raise worded(HandError, "%(tile)s cannot be in a hand (flowers are counted, not held)",
                                 tile=code(kind))
        for meld in self.melds:
            if meld.kind is _CHOW and (meld.tile >= SUITED or meld.tile % 9 > 6):
                raise worded(HandError, "chow %(meld)s: three consecutive tiles of one suit", meld=str(meld))
        every = [0] * _KINDS
        try:
            for kind in hand:
                every[kind] += 1
            every[self.win_tile] += 1
            for meld in self.melds:
                tile = meld.tile
                if tile < 0:
                    raise IndexError(tile)
                if meld.kind is _CHOW:                    # (meld.tiles, counted without making the list)
                    every[tile] += 1
                    every[tile + 1] += 1
                    every[tile + 2] += 1
                else:
                    every[tile] += 4 if meld.kind is _KONG else 3
            over = [f"{n} x {code(k)}" for k, n in enumerate(every) if n > 4] if max(every) > 4 else []
        except IndexError:                              # (a meld of no held kind: counted the general way)
            counted = Counter(self.hand)
            counted[self.win_tile] += 1
            for meld in self.melds:
                counted.update(meld.tiles)
            over = [f"{n} x {code(k)}" for k, n in sorted(counted.items()) if n > 4]
        if over:
            raise worded(HandError, "more than four of a tile: %(over)s", over=", ".join(over))
        if not 0 <= self.flowers <= 8:
            raise worded(HandError, "%(count)s flowers; a set has 8", count=self.flowers)
        if not (0 <= self.seat_wind < 4 and 0 <= self.round_wind < 4):
            raise worded(HandError, "winds are E, S, W or N")


def wind_index(text: str) -> int:
    if text not in WIND_CODES or len(text) != 1:
        raise worded(TileError, "wind %(wind)r: use E, S, W or N", wind=text)
    return WIND_CODES.index(text)
