"""A hand's groups (each suit, the honours) for the MCR scorer: kept by their tiles, with their readings.

A group is given by its tiles as sorted kinds in bytes (a slice of the hand's
sorted tiles, so taking it costs no counting), and looked up once per hand:
its packed summary (:mod:`firmware.hands.group_info`), every way to read it
as sets and at most a pair (tile codes: chows by their middle tile), how
many kinds it holds four of, and the OR and the AND of its tiles' property
masks (what the tile-wide fans read).  Suit patterns recur across hands
even when whole hands do not, so a hand never seen is mostly assembled from
groups already looked up.  The fans of the hand's tiles as a whole (flushes,
断幺, 全大 ...) follow from those masks (:func:`hand_tile_fans`).
"""

from __future__ import annotations

from functools import lru_cache

from firmware.hands import group_info as gi
from firmware.hands.suit_tables import CHOW as SPLIT_CHOW
from firmware.hands.suit_tables import all_splits, packed
from firmware.hands.suit_tables import status as complete_status
from firmware.rules.mcr.fans import FAN_COUNT, Fan
from firmware.rules.mcr.tiles import BAMBOO, CHARACTERS, CODE, DOTS, GREEN, HONORS, REVERSIBLE, WINDS, is_honor

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


# -- the fans of the hand's tiles as a whole, from the OR and the AND of their property masks --------------------
_LOW_BITS = (1 << RANK_SHIFT) - 1
_EVERY_BITS = HONOR | WIND | DRAGON | TERMINAL | TERM_OR_HONOR | REVERSIBLE_BIT | GREEN_BIT
_FANS: tuple[Fan, ...] = tuple(Fan)


def hand_tile_fans(any_bits: int, every_bits: int) -> tuple[tuple[Fan, int], ...]:
    """Fans of the hand's tiles as a whole by the OR and the AND of their masks (cut to what the fans read)."""
    return tile_fans_of(any_bits & _LOW_BITS | _RANKS_CANON[any_bits >> RANK_SHIFT], every_bits & _EVERY_BITS)


def _ranks_class(ranks: set[int]) -> int:
    """The rank bits of a representative of ``ranks``'s class for the rank fans (全大 ... 全小)."""
    if not ranks:
        return 0
    if ranks <= {1, 2, 3, 4}:
        one = {4} if 4 in ranks else {1}
    elif ranks <= {6, 7, 8, 9}:
        one = {6} if 6 in ranks else {9}
    elif ranks <= {4, 5, 6}:
        one = {5}
    else:
        one = {1, 9}
    return sum(1 << (RANK_SHIFT + r) for r in one)


_RANKS_CANON = tuple(_ranks_class({r for r in range(1, 10) if bits >> r & 1}) for bits in range(1 << 10))
# (the OR and the AND of the tiles' masks, cut to the bits the fans read: at most a few hundred keys)
TILE_FANS_KEPT = 1024


@lru_cache(maxsize=TILE_FANS_KEPT)
def tile_fans_of(any_bits: int, every_bits: int) -> tuple[tuple[Fan, int], ...]:
    """Fans of the hand's tiles as a whole (suits, terminals and honours, ranks), from the OR and
    the AND of its tiles' property masks."""
    t = [0] * FAN_COUNT
    suits = {s for s, bit in SUIT_BIT.items() if any_bits & bit} | ({HONORS} if any_bits & HONOR else set())
    if HONORS not in suits:
        t[Fan.NO_HONORS] = 1
    missing = 3 - len(suits - {HONORS})
    t[Fan.ONE_VOIDED_SUIT] = missing
    if missing == 2:
        t[Fan.ONE_VOIDED_SUIT] = 0
        if t[Fan.NO_HONORS]:
            t[Fan.FULL_FLUSH] = 1
            t[Fan.NO_HONORS] = 0
        else:
            t[Fan.HALF_FLUSH] = 1
    if len(suits) == 4 and any_bits & WIND and any_bits & DRAGON:
        t[Fan.ALL_TYPES] = 1
    if not any_bits & TERM_OR_HONOR:
        t[Fan.ALL_SIMPLES] = 1
    if every_bits & REVERSIBLE_BIT:
        t[Fan.REVERSIBLE_TILES] = 1
    if every_bits & GREEN_BIT:
        t[Fan.ALL_GREEN] = 1
    if not t[Fan.ALL_SIMPLES]:
        if every_bits & HONOR:
            t[Fan.ALL_HONORS] = 1
        elif every_bits & TERMINAL:
            t[Fan.ALL_TERMINALS] = 1
        elif every_bits & TERM_OR_HONOR:
            t[Fan.ALL_TERMINALS_AND_HONORS] = 1
    if HONORS not in suits:
        ranks = {r for r in range(1, 10) if any_bits >> (RANK_SHIFT + r) & 1}
        if ranks <= {1, 2, 3, 4}:
            t[Fan.LOWER_FOUR if 4 in ranks else Fan.LOWER_TILES] = 1
        elif ranks <= {6, 7, 8, 9}:
            t[Fan.UPPER_FOUR if 6 in ranks else Fan.UPPER_TILES] = 1
        elif ranks <= {4, 5, 6}:
            t[Fan.MIDDLE_TILES] = 1
    return tuple((_FANS[i], n) for i, n in enumerate(t) if n)
