"""The special winning shapes: their definitions and the 组合龙 arrangements.

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

The fast checks live in :mod:`firmware.hands.group_info` (per-suit summaries);
``tests/support/hand_reference.py`` checks them against the definitions above.
"""

from __future__ import annotations

from itertools import permutations

from firmware.tile_constants import HONOUR_KINDS

# The six ways to give 147, 258 and 369 one suit each.
KNITTED: tuple[tuple[int, ...], ...] = tuple(
    tuple(sorted(suit * 9 + start + 3 * i for start, suit in zip((0, 1, 2), perm) for i in range(3)))
    for perm in permutations(range(3))
)


def knitted_arrangement(counts: list[int]) -> int | None:
    """Index into KNITTED of the arrangement whose 9 tiles the hand all holds, if any."""
    for i, tiles in enumerate(KNITTED):
        if all(counts[k] for k in tiles):
            return i
    return None


def seven_star(counts: list[int]) -> bool:
    """七星不靠: 全不靠 holding all seven honours (the scorers' distinction)."""
    if sum(counts) != 14 or any(c > 1 for c in counts) or not all(counts[k] for k in HONOUR_KINDS):
        return False
    suited = {k for k in range(27) if counts[k]}
    return any(suited <= set(tiles) for tiles in KNITTED)
