"""The special winning shapes: seven pairs, thirteen orphans, knitted hands.

==============  =====================================================
shape           tiles (no declared sets unless stated)
==============  =====================================================
七对            seven pairs (four identical tiles count as two pairs)
十三幺          the 1 and 9 of each suit and the 7 honours, one paired
全不靠          14 singles from 147/258/369 (one suit each) + honours
七星不靠        全不靠 holding all seven honours
组合龙          147/258/369 in three suits + one set + a pair (one set may be declared)
十四不靠/大乱   14 singles; within a suit ranks differ by 3 or more (竞技麻将)
==============  =====================================================
"""

from __future__ import annotations

from itertools import permutations

from firmware.tile_constants import HONOUR_KINDS, TERMINALS_AND_HONOURS

# The six ways to give 147, 258 and 369 one suit each.
KNITTED: tuple[tuple[int, ...], ...] = tuple(
    tuple(sorted(suit * 9 + start + 3 * i for start, suit in zip((0, 1, 2), perm) for i in range(3)))
    for perm in permutations(range(3))
)
KNITTED_SETS = tuple(frozenset(k) for k in KNITTED)


def seven_pairs(counts: list[int]) -> bool:
    return sum(counts) == 14 and all(c % 2 == 0 for c in counts)


def thirteen_orphans(counts: list[int]) -> bool:
    if sum(counts) != 14:
        return False
    return all(counts[k] >= 1 for k in TERMINALS_AND_HONOURS) and \
        sum(counts[k] for k in TERMINALS_AND_HONOURS) == 14


def knitted_arrangement(counts: list[int]) -> int | None:
    """Index into KNITTED of the arrangement whose 9 tiles the hand all holds, if any."""
    for i, tiles in enumerate(KNITTED):
        if all(counts[k] for k in tiles):
            return i
    return None


def honours_and_knitted(counts: list[int]) -> bool:
    """全不靠 (including 七星不靠): 14 distinct tiles from one knitted arrangement plus honours."""
    if sum(counts) != 14 or any(c > 1 for c in counts):
        return False
    held = {k for k, c in enumerate(counts) if c}
    suited = {k for k in held if k < 27}
    return any(suited <= tiles for tiles in KNITTED_SETS)


def seven_star(counts: list[int]) -> bool:
    return honours_and_knitted(counts) and all(counts[k] for k in HONOUR_KINDS)


def fourteen_unrelated(counts: list[int]) -> bool:
    """十四不靠 / 大乱 (竞技麻将): 14 singles, suited ranks of one suit at least 3 apart."""
    if sum(counts) != 14 or any(c > 1 for c in counts):
        return False
    return spaced_suits(counts)


def spaced_suits(counts: list[int]) -> bool:
    """Within each suit, the ranks held are at least 3 apart."""
    for suit in range(3):
        ranks = [r for r in range(9) if counts[suit * 9 + r]]
        if any(b - a < 3 for a, b in zip(ranks, ranks[1:])):
            return False
    return True
