"""A slow, obviously correct reference for the hand analysis (for property tests).

It tries every tile as pair, then removes the lowest tile as a pung or as the
start of a chow, recursively; special shapes are checked from their
definitions tile by tile.  No tables, no shortcuts.
"""

from __future__ import annotations

from itertools import permutations

HONOURS = list(range(27, 34))
YAO = [0, 8, 9, 17, 18, 26] + HONOURS


def sets_only(counts: list[int]) -> bool:
    for i, c in enumerate(counts):  # noqa: B007 - i is used after the loop
        if c:
            break
    else:
        return True
    if counts[i] >= 3:
        counts[i] -= 3
        ok = sets_only(counts)
        counts[i] += 3
        if ok:
            return True
    if i < 27 and i % 9 <= 6 and counts[i + 1] and counts[i + 2]:
        for k in (i, i + 1, i + 2):
            counts[k] -= 1
        ok = sets_only(counts)
        for k in (i, i + 1, i + 2):
            counts[k] += 1
        if ok:
            return True
    return False


def standard(counts: list[int], declared: int) -> bool:
    if sum(counts) != 14 - 3 * declared:
        return False
    for i in range(34):
        if counts[i] >= 2:
            counts[i] -= 2
            ok = sets_only(counts)
            counts[i] += 2
            if ok:
                return True
    return False


def knitted_sets():
    for perm in permutations(range(3)):
        yield {perm[j] * 9 + j + 3 * i for j in range(3) for i in range(3)}


def mcr_win(counts: list[int], declared: int) -> bool:
    if standard(counts, declared):
        return True
    if declared == 0 and sum(counts) == 14:
        if all(c in (0, 2, 4) for c in counts):
            return True
        if all(counts[k] >= 1 for k in YAO) and sum(counts[k] for k in YAO) == 14:
            return True
        held = {k for k in range(34) if counts[k]}
        if all(c <= 1 for c in counts) and any({k for k in held if k < 27} <= ks for ks in knitted_sets()):
            return True
    if declared <= 1:
        for ks in knitted_sets():
            if all(counts[k] for k in ks):
                rest = list(counts)
                for k in ks:
                    rest[k] -= 1
                if standard(rest, declared + 3):
                    return True
    return False


def mcr_waits(counts: list[int], declared: int) -> list[int]:
    out = []
    for k in range(34):
        if counts[k] < 4:
            counts[k] += 1
            if mcr_win(counts, declared):
                out.append(k)
            counts[k] -= 1
    return out


def competition_win(counts: list[int], declared: int) -> bool:
    """竞技麻将: standard, seven pairs, or 十四不靠 (14 singles, suit ranks at least 3 apart)."""
    if standard(counts, declared):
        return True
    if declared or sum(counts) != 14:
        return False
    if all(c in (0, 2, 4) for c in counts):
        return True
    if any(c > 1 for c in counts):
        return False
    for suit in range(3):
        ranks = [r for r in range(9) if counts[suit * 9 + r]]
        if any(b - a < 3 for a, b in zip(ranks, ranks[1:])):
            return False
    return True


def waits_for(win, counts: list[int], declared: int) -> list[int]:
    out = []
    for k in range(34):
        if counts[k] < 4:
            counts[k] += 1
            if win(counts, declared):
                out.append(k)
            counts[k] -= 1
    return out
