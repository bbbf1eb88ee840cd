"""A hand's groups (each suit, the honours) for the MCR scorer: kept by their tiles, with their readings.

A group is given by its tiles as sorted kinds in bytes (a slice of the hand's
sorted tiles, so taking it costs no counting), and looked up once per hand:
its packed summary (:mod:`firmware.hands.group_info`), every way to read it
as sets and at most a pair (tile codes: chows by their middle tile), how
many kinds it holds four of, and the OR and the AND of its tiles' property
masks (what the tile-wide fans read).  Suit patterns recur across hands
even when whole hands do not, so a hand never seen is mostly assembled from
groups already looked up.
"""

from __future__ import annotations

from functools import lru_cache

from firmware.hands import group_info as gi
from firmware.hands.suit_tables import CHOW as SPLIT_CHOW
from firmware.hands.suit_tables import all_splits, packed
from firmware.hands.suit_tables import status as complete_status
from firmware.rules.mcr.tiles import BAMBOO, CHARACTERS, CODE, DOTS, GREEN, REVERSIBLE, WINDS, is_honor

# Per kind, a bit mask of what the tile-wide fans ask of it; a hand ORs (any tile) and ANDs (every tile) them.
HONOR, WIND, DRAGON, TERMINAL, TERM_OR_HONOR, REVERSIBLE_BIT, GREEN_BIT = (1 << i for i in range(7))
SUIT_BIT = {CHARACTERS: 1 << 7, BAMBOO: 1 << 8, DOTS: 1 << 9}
RANK_SHIFT = 10
ALL_BITS = (1 << 20) - 1


def _properties(c: int) -> int:
    bits = (REVERSIBLE_BIT if c in REVERSIBLE else 0) | (GREEN_BIT if c in GREEN else 0)
    if is_honor(c):
        return bits | HONOR | TERM_OR_HONOR | (WIND if c in WINDS else DRAGON)
    bits |= SUIT_BIT[c >> 4] | 1 << (RANK_SHIFT + (c & 15))
    return bits | (TERMINAL | TERM_OR_HONOR if c & 15 in (1, 9) else 0)


PROPS: tuple[int, ...] = tuple(_properties(CODE[k]) for k in range(34))
# a chow's three tiles: (OR, AND) of their masks, by its lowest kind
CHOW_PROPS = tuple((PROPS[k] | PROPS[k + 1] | PROPS[k + 2], PROPS[k] & PROPS[k + 1] & PROPS[k + 2])
                   if k < 27 and k % 9 < 7 else (0, ALL_BITS) for k in range(34))

# A reading of one group: (pair code, 0 for none; its chows' middle codes, sorted; its pungs' codes, sorted;
# its sets as ints ordered like their tiles (first code x 2, + 1 for a chow), for ordering readings)
Reading = tuple[int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]
# (summary, readings, kinds held four times, any-tile properties, every-tile properties, the suit's pattern
# packed as :func:`firmware.hands.suit_tables.packed` reads it (0 for the honours))
GroupEntry = tuple[int, tuple[Reading, ...], int, int, int, int]


def _make_entry(group: int, pattern: tuple[int, ...]) -> GroupEntry:
    suited = group < 3
    base = group * 9
    status = complete_status(pattern, suited)
    split = all_splits(pattern, suited) if status else ()
    info = gi.suited_info(pattern, status) if suited else gi.honours_info(pattern, status)
    any_bits, every_bits = 0, ALL_BITS
    for r, n in enumerate(pattern):
        if n:
            any_bits |= PROPS[base + r]
            every_bits &= PROPS[base + r]
    readings = []
    for pair, sets in split:
        chows, pungs, order = [], [], []
        for kind, r in sets:            # (sets come by their lowest rank: each list is sorted)
            c = CODE[base + r]
            if kind == SPLIT_CHOW:
                chows.append(c + 1)
                order.append(c * 2 + 1)
            else:
                pungs.append(c)
                order.append(c * 2)
        readings.append((CODE[base + pair] if pair >= 0 else 0, tuple(chows), tuple(pungs), tuple(order)))
    return info, tuple(readings), pattern.count(4), any_bits, every_bits, packed(pattern) if suited else 0


EMPTY: tuple[GroupEntry, ...] = tuple(_make_entry(g, (0,) * (9 if g < 3 else 7)) for g in range(4))

# Groups kept with what the scorer asks of them: an LRU sized by the scoring benchmark (bench/scoring.py prints
# its hit rate and memory).  Keyed by the group's tiles (a suit's pattern in one suit is another key than in the
# next), so at most 3 x 405,350 suit keys and 78,125 honour keys exist; 16,384 hold what a table meets.
GROUPS_KEPT = 16384


@lru_cache(maxsize=GROUPS_KEPT)
def group_entry(tiles: bytes) -> GroupEntry:
    """The entry of a group by its tiles (sorted kinds of one suit, or of the honours; not empty)."""
    group = tiles[0] // 9 if tiles[0] < 27 else 3
    base = group * 9
    pattern = [0] * (9 if group < 3 else 7)
    for k in tiles:
        pattern[k - base] += 1
    return _make_entry(group, tuple(pattern))
