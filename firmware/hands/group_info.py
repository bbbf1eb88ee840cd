"""One packed integer per suit pattern: everything the win and wait checks ask of it.

A hand is four groups (three suits of nine ranks, the seven honours).  The
questions the analysis asks (complete? with a pair? all counts even? all
singles? could it be part of a 组合龙 or a 全不靠?) depend on one group
at a time, so each group's answers are computed once per pattern and packed
into a single int.  A hand check is then four dictionary look-ups, one
``&`` of the four summaries for the all-groups flags, and one ``+`` for the
additive fields (tile total, pairs, terminal and honour tiles), which sit
high enough that the flag bits below them cannot carry into them.

Layout (bit: meaning):

* 0-1: completion status, 0 = no, 1 = sets only, 2 = sets plus one pair;
* 2: every count even; 3: every count at most 1;
* 4: 十三幺 part (a suit holding only its 1 and 9, both; the honours all 7);
* 5: ranks held at least 3 apart (十四不靠; always set for honours);
* 8-10: knitted run held, bit s for ranks s+1, s+4, s+7 (suits only);
* 11-13: held ranks all inside the run s+1, s+4, s+7;
* 14-16: run s+1, s+4, s+7 missing exactly one rank;
* 24-31: tiles; 32-38: pairs (count // 2 summed); 40-47: terminal and honour tiles.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import permutations

from firmware.hands.suit_tables import status

EVEN, SINGLES, ORPHANS, SPACED = 1 << 2, 1 << 3, 1 << 4, 1 << 5
KNIT_SHIFT, SUB_SHIFT, NEAR_SHIFT = 8, 11, 14
TOTAL_SHIFT, PAIRS_SHIFT, ORPHAN_TILES_SHIFT = 24, 32, 40
KNIT_ANY = 7 << KNIT_SHIFT                      # some run held
RUN_ANY = KNIT_ANY | 7 << NEAR_SHIFT            # some run held or one short

_RUNS = tuple(frozenset((s, s + 3, s + 6)) for s in range(3))


def suited_info(pattern: tuple[int, ...], known_status: int | None = None) -> int:
    """The packed summary of one suit's nine counts (``known_status``: its completion status, if known)."""
    held = 0
    for r, n in enumerate(pattern):
        if n:
            held |= 1 << r
    return _common(pattern, True, known_status) | held_bits(held) | (pattern[0] + pattern[8]) << ORPHAN_TILES_SHIFT


@lru_cache(maxsize=512)
def held_bits(held: int) -> int:
    """The bits of a suit's summary that depend only on which ranks it holds (bit r: rank r + 1 held):
    十三幺 part, spaced, and the knitted runs held, one short, and containing all.  (512 masks: bounded.)"""
    ranks = [r for r in range(9) if held >> r & 1]
    held_set = frozenset(ranks)
    info = ORPHANS if held_set == {0, 8} else 0
    if all(b - a >= 3 for a, b in zip(ranks, ranks[1:])):
        info |= SPACED
    for s, run in enumerate(_RUNS):
        inside = len(run & held_set)
        if inside == 3:
            info |= 1 << (KNIT_SHIFT + s)
        elif inside == 2:
            info |= 1 << (NEAR_SHIFT + s)
        if held_set <= run:
            info |= 1 << (SUB_SHIFT + s)
    return info


def honours_info(pattern: tuple[int, ...], known_status: int | None = None) -> int:
    """The packed summary of the seven honour counts (``known_status``: its completion status, if known)."""
    info = _common(pattern, False, known_status) | SPACED
    if all(pattern):
        info |= ORPHANS
    return info | sum(pattern) << ORPHAN_TILES_SHIFT


def _common(pattern: tuple[int, ...], suited: bool, known_status: int | None) -> int:
    info = status(pattern, suited) if known_status is None else known_status
    odd = big = pairs = 0
    for c in pattern:
        odd |= c & 1
        big |= c > 1
        pairs += c >> 1
    if not odd:
        info |= EVEN
    if not big:
        info |= SINGLES
    return info | sum(pattern) << TOTAL_SHIFT | pairs << PAIRS_SHIFT


# The six knitted arrangements, as (start rank of suit 0, of suit 1, of suit 2),
# in the order of firmware.hands.shapes.KNITTED.
ARRANGEMENT_STARTS: tuple[tuple[int, int, int], ...] = tuple(
    (perm.index(0), perm.index(1), perm.index(2)) for perm in permutations(range(3)))


def _knitted_table() -> tuple[tuple[int, ...], ...]:
    """For 9 bits (3 per suit, one per run), the arrangements whose three runs are all set."""
    table = []
    for bits in range(512):
        per_suit = (bits & 7, bits >> 3 & 7, bits >> 6 & 7)
        table.append(tuple(i for i, starts in enumerate(ARRANGEMENT_STARTS)
                           if all(per_suit[suit] >> starts[suit] & 1 for suit in range(3))))
    return tuple(table)


KNITTED_BY_BITS = _knitted_table()


def run_bits(infos: tuple[int, int, int], shift: int) -> int:
    """The three suits' 3-bit run fields at ``shift``, as one 9-bit index."""
    a, b, c = infos
    return (a >> shift & 7) | (b >> shift & 7) << 3 | (c >> shift & 7) << 6


def one_short_of_knitted(infos: tuple[int, int, int]) -> bool:
    """Some arrangement with every run held, or all but one rank of one run."""
    return one_short(run_bits(infos, KNIT_SHIFT) | run_bits(infos, NEAR_SHIFT) << 9)


# (18 bits of runs held and runs one short: bounded by design, and kept in a small LRU all the same)
ONE_SHORT_KEPT = 1024


@lru_cache(maxsize=ONE_SHORT_KEPT)
def one_short(key: int) -> bool:
    """``one_short_of_knitted`` by the 9 bits of runs held and the 9 of runs one short."""
    full = [key >> (3 * s) & 7 for s in range(3)]
    near = [key >> (9 + 3 * s) & 7 for s in range(3)]
    for starts in ARRANGEMENT_STARTS:
        short = 0
        for suit in range(3):
            bit = 1 << starts[suit]
            if not full[suit] & bit:
                if near[suit] & bit:
                    short += 1
                else:
                    short = 2
                    break
        if short <= 1:
            return True
    return False
