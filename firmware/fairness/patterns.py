"""What the shuffle monitor counts: pairs in a starting hand, and neighbouring tiles of one suit in a wall.

A fair shuffle puts every tile anywhere with equal chance, so what a seat
is dealt, and which tiles lie side by side in a wall, follow from the set's
tile counts alone.  Two things a worn or rigged shuffle changes are counted
here: the **pairs** in a seat's starting hand (kinds held twice or more in
its first 13 tiles), and, along each side's wall in the order its head
stacked it, **neighbours of one suit** (characters, dots, bamboo, honours,
flowers) and **consecutive neighbours** (one suit, ranks one apart).  The
exact fair expectations are in :mod:`firmware.fairness.null`.
"""

from __future__ import annotations

from enum import Enum
from typing import Iterable, Sequence

from firmware.tiles.tile import FLOWER_BASE, KINDS, is_flower, is_suited, rank_of, suit_of
from firmware.tiles.wall import BOTTOM, TOP, Wall, position_at

HAND_TILES = 13         # the dealer's 14th tile is left out: every seat is compared on 13


class Pattern(str, Enum):
    """A wall pattern the monitor charts."""

    SAME_SUIT = "same_suit"
    CONSECUTIVE = "consecutive"


def suit_class(kind: int) -> int:
    """0..2 for characters, dots, bamboo; 3 for honours; 4 for flowers."""
    if is_suited(kind):
        return suit_of(kind)
    return 4 if is_flower(kind) else 3


def neighbours_match(pattern: Pattern, a: int, b: int) -> bool:
    if pattern is Pattern.SAME_SUIT:
        return suit_class(a) == suit_class(b)
    return is_suited(a) and is_suited(b) and suit_of(a) == suit_of(b) and abs(rank_of(a) - rank_of(b)) == 1


def pairs(hand: Iterable[int]) -> int:
    """Kinds held at least twice (a kong counts once: it is one pair more than nothing)."""
    seen: dict[int, int] = {}
    for kind in hand:
        seen[kind] = seen.get(kind, 0) + 1
    return sum(1 for kind, n in seen.items() if n >= 2 and kind < FLOWER_BASE)


def side_sequences(wall: Wall) -> list[list[int | None]]:
    """Each side's tiles in the order its head stacked them: stack 1 first, bottom then top."""
    out: list[list[int | None]] = []
    for side in range(4):
        seq: list[int | None] = []
        for stack in range(1, wall.stacks_per_side + 1):
            for level in (BOTTOM, TOP):
                at = position_at(side, stack, level)
                if at in wall:
                    seq.append(wall[at])
        out.append(seq)
    return out


_MATCH = {p: tuple(tuple(neighbours_match(p, a, b) for b in range(KINDS)) for a in range(KINDS)) for p in Pattern}


def count_neighbours(pattern: Pattern, sequences: Sequence[Sequence[int]]) -> int:
    table = _MATCH[pattern]
    return sum(1 for seq in sequences for a, b in zip(seq, seq[1:]) if table[a][b])
