"""Fans made by combining sets: the chow family and the pung family.

Sets are given by tile codes (a chow by its middle tile).  The principles of
the rules shape this module:

* 不拆移 / 不得相同: once three or four chows (pungs) form a fan, they are
  not split to form smaller fans among themselves;
* 套算一次: a set not used yet may combine **once** with a set already used;
  so four chows with a three-chow fan give at most one more two-chow fan,
  and four chows without one give at most three two-chow fans (fewer when a
  chow relates to none of the others), trimmed from the most repeated kind.
"""

from __future__ import annotations

from itertools import combinations

from firmware.rules.mcr.fans import Fan
from firmware.rules.mcr.tiles import C, E, F, N, P, S, W

# The four two-chow fans, in the order they are trimmed back to (一般高 kept longest).
TWO_CHOW_FANS = (Fan.PURE_DOUBLE_CHOW, Fan.MIXED_DOUBLE_CHOW, Fan.SHORT_STRAIGHT, Fan.TWO_TERMINAL_CHOWS)


def _shifted_1(a: int, b: int, c: int) -> bool:
    return a + 1 == b and b + 1 == c


def _shifted_1_any_order(a: int, b: int, c: int) -> bool:
    lo, mid, hi = sorted((a, b, c))
    return lo + 1 == mid and mid + 1 == hi


def _three_suits(a: int, b: int, c: int) -> bool:
    sa, sb, sc = a >> 4, b >> 4, c >> 4
    return sa != sb and sa != sc and sb != sc


# -- chows --------------------------------------------------------------------
def four_chows_fan(t: tuple[int, int, int, int]) -> Fan | None:
    """一色四步高 (steps of 1 or 2) or 一色四同顺; ``t`` sorted."""
    a, b, c, d = t
    if (a + 2 == b and b + 2 == c and c + 2 == d) or (a + 1 == b and b + 1 == c and c + 1 == d):
        return Fan.FOUR_PURE_SHIFTED_CHOWS
    if a == b == c == d:
        return Fan.QUADRUPLE_CHOW
    return None


def three_chows_fan(a: int, b: int, c: int) -> Fan | None:
    """The three-chow fans; ``a <= b <= c``."""
    if _three_suits(a, b, c):
        ra, rb, rc = a & 15, b & 15, c & 15
        if _shifted_1_any_order(ra, rb, rc):
            return Fan.MIXED_SHIFTED_CHOWS
        if ra == rb == rc:
            return Fan.MIXED_TRIPLE_CHOW
        if sorted((ra, rb, rc)) == [2, 5, 8]:
            return Fan.MIXED_STRAIGHT
        return None
    if a + 3 == b and b + 3 == c:
        return Fan.PURE_STRAIGHT
    if (a + 2 == b and b + 2 == c) or _shifted_1(a, b, c):
        return Fan.PURE_SHIFTED_CHOWS
    if a == b == c:
        return Fan.PURE_TRIPLE_CHOW
    return None


def two_chows_fan(a: int, b: int) -> Fan | None:
    if a >> 4 != b >> 4:
        return Fan.MIXED_DOUBLE_CHOW if a & 15 == b & 15 else None
    if a + 3 == b or b + 3 == a:
        return Fan.SHORT_STRAIGHT
    if {a & 15, b & 15} == {2, 8}:
        return Fan.TWO_TERMINAL_CHOWS
    if a == b:
        return Fan.PURE_DOUBLE_CHOW
    return None


def _extra_chow_fan(used: tuple[int, int, int], extra: int) -> Fan | None:
    """The one two-chow fan the fourth chow may add to a three-chow fan (套算一次)."""
    found = {two_chows_fan(x, extra) for x in used}
    for fan in TWO_CHOW_FANS:
        if fan in found:
            return fan
    return None


def _limited_pairs(fans: list[Fan | None], limit: int, table: list[int]) -> None:
    """Score two-chow fans, at most ``limit`` of them, trimming the most repeated first."""
    counts = [sum(1 for f in fans if f is fan) for fan in TWO_CHOW_FANS]
    total = sum(counts)
    keep = 1
    while total > limit and keep >= 0:
        for i in range(3, -1, -1):
            while counts[i] > keep and total > limit:
                counts[i] -= 1
                total -= 1
        keep -= 1
    for fan, n in zip(TWO_CHOW_FANS, counts):
        table[fan] = n


def score_four_chows(t: tuple[int, int, int, int], table: list[int]) -> None:
    fan = four_chows_fan(t)
    if fan is not None:
        table[fan] = 1
        return
    for i, j, k, rest in ((0, 1, 2, 3), (0, 1, 3, 2), (0, 2, 3, 1), (1, 2, 3, 0)):
        fan = three_chows_fan(t[i], t[j], t[k])
        if fan is not None:
            table[fan] = 1
            extra = _extra_chow_fan((t[i], t[j], t[k]), t[rest])
            if extra is not None:
                table[extra] = 1
            return
    pair_fans = [two_chows_fan(t[i], t[j]) for i, j in combinations(range(4), 2)]
    # A chow related to none of the other three takes one possible pairing away.
    limit = 3 - sum(1 for i in range(4) if all(f is None for (x, y), f in zip(combinations(range(4), 2), pair_fans)
                                                if i in (x, y)))
    if limit > 0:
        _limited_pairs(pair_fans, limit, table)


def score_three_chows(t: tuple[int, int, int], table: list[int]) -> None:
    fan = three_chows_fan(*t)
    if fan is not None:
        table[fan] = 1
        return
    _limited_pairs([two_chows_fan(t[0], t[1]), two_chows_fan(t[0], t[2]), two_chows_fan(t[1], t[2])], 2, table)


def score_two_chows(a: int, b: int, table: list[int]) -> None:
    fan = two_chows_fan(a, b)
    if fan is not None:
        table[fan] += 1


# -- pungs ---------------------------------------------------------------------
def four_pungs_fan(t: tuple[int, int, int, int]) -> Fan | None:
    a, b, c, d = t
    if a < 0x40 and a + 1 == b and b + 1 == c and c + 1 == d:
        return Fan.FOUR_PURE_SHIFTED_PUNGS
    if t == (E, S, W, N):
        return Fan.BIG_FOUR_WINDS
    return None


_THREE_WINDS = {(E, S, W), (E, S, N), (E, W, N), (S, W, N)}


def three_pungs_fan(a: int, b: int, c: int) -> Fan | None:
    """``a <= b <= c``."""
    if c < 0x40:                # sorted: all three suited
        if _three_suits(a, b, c):
            ra, rb, rc = a & 15, b & 15, c & 15
            if _shifted_1_any_order(ra, rb, rc):
                return Fan.MIXED_SHIFTED_PUNGS
            if ra == rb == rc:
                return Fan.TRIPLE_PUNG
        elif a + 1 == b and b + 1 == c:
            return Fan.PURE_SHIFTED_PUNGS
        return None
    if (a, b, c) in _THREE_WINDS:
        return Fan.BIG_THREE_WINDS
    if (a, b, c) == (C, F, P):
        return Fan.BIG_THREE_DRAGONS
    return None


def two_pungs_fan(a: int, b: int) -> Fan | None:
    if a < 0x40 and b < 0x40:
        return Fan.DOUBLE_PUNG if a & 15 == b & 15 else None
    if a >= C and b >= C:
        return Fan.TWO_DRAGONS_PUNGS
    return None


def score_four_pungs(t: tuple[int, int, int, int], table: list[int]) -> None:
    fan = four_pungs_fan(t)
    if fan is not None:
        table[fan] = 1
        return
    for i, j, k, free in ((0, 1, 2, 3), (0, 1, 3, 2), (0, 2, 3, 1), (1, 2, 3, 0)):
        fan = three_pungs_fan(t[i], t[j], t[k])
        if fan is not None:
            table[fan] = 1
            # the fourth pung may pair once with one of the three
            for other in (x for x in range(4) if x != free):
                extra = two_pungs_fan(t[other], t[free])
                if extra is not None:
                    table[extra] += 1
                    break
            return
    for i, j in combinations(range(4), 2):
        fan = two_pungs_fan(t[i], t[j])
        if fan is not None:
            table[fan] += 1


def score_three_pungs(t: tuple[int, int, int], table: list[int]) -> None:
    fan = three_pungs_fan(*t)
    if fan is not None:
        table[fan] = 1
        return
    for i, j in ((0, 1), (0, 2), (1, 2)):
        fan = two_pungs_fan(t[i], t[j])
        if fan is not None:
            table[fan] += 1


def score_two_pungs(a: int, b: int, table: list[int]) -> None:
    fan = two_pungs_fan(a, b)
    if fan is not None:
        table[fan] += 1


def kongs_and_concealed_pungs(concealed_pungs: int, melded_kongs: int, concealed_kongs: int, table: list[int]) -> None:
    """The kong family and the concealed-pung family: one fan from each at most.

    A concealed kong is also a concealed pung; one melded and one concealed
    kong score 明暗杠.
    """
    kongs = melded_kongs + concealed_kongs
    concealed = concealed_pungs + concealed_kongs          # concealed pungs, concealed kongs included
    if kongs == 1:
        table[Fan.MELDED_KONG if melded_kongs else Fan.CONCEALED_KONG] = 1
    elif kongs == 2:
        table[(Fan.TWO_MELDED_KONGS, Fan.CONCEALED_KONG_AND_MELDED_KONG, Fan.TWO_CONCEALED_KONGS)[concealed_kongs]] = 1
    elif kongs == 3:
        table[Fan.THREE_KONGS] = 1
    elif kongs == 4:
        table[Fan.FOUR_KONGS] = 1
    if kongs == 2 and concealed_kongs == 2:
        concealed_family = concealed if concealed >= 3 else 0     # 双暗杠 already covers 双暗刻
    elif kongs == 3 and concealed_kongs == 1:
        concealed_family = 2 if concealed_pungs else 0          # 1 concealed kong + a concealed pung
    elif kongs == 4:
        concealed_family = concealed_kongs if concealed_kongs >= 2 else 0
    else:
        concealed_family = concealed
    if concealed_family == 2:
        table[Fan.TWO_CONCEALED_PUNGS] = 1
    elif concealed_family == 3:
        table[Fan.THREE_CONCEALED_PUNGS] = 1
    elif concealed_family == 4:
        table[Fan.FOUR_CONCEALED_PUNGS] = 1
