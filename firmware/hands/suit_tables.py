"""Per-suit lookup tables: what a pattern of one suit can be split into.

A hand's suits are independent: a suit's nine counts (a *pattern*) either
split into sets only, into sets plus one pair, or not at all.  Every
question about a hand (is it a win, what does it wait on, how far is it
from ready) reduces to a few lookups of its three suit patterns plus the
honours.  Results are memoised by pattern, so after warm-up a win check is
a handful of dictionary look-ups.  Honour groups use the same tables with
chows disabled.
"""

from __future__ import annotations

from functools import lru_cache

Pattern = tuple[int, ...]
# A decomposition of one group: (pair rank or -1, ((kind, rank), ...)) with kind 0 = chow, 1 = pung.
GroupSplit = tuple[int, tuple[tuple[int, int], ...]]

CHOW, PUNG = 0, 1
# Each cache holds at most this many group patterns (a table runs for years; a few MB each).
CACHE_SIZE = 8192
# the splits of patterns' tails kept for ``blocks`` (each a set of a few dozen small tuples: about 2 MB full)
REACH_KEPT = 1024


@lru_cache(maxsize=CACHE_SIZE)
def splits(pattern: Pattern, suited: bool) -> tuple[GroupSplit, ...]:
    """Every way to split ``pattern`` into sets and at most one pair (all tiles used)."""
    out: list[GroupSplit] = []
    total = sum(pattern)
    if total % 3 == 1:
        return ()
    want_pair = total % 3 == 2
    _split(list(pattern), 0, want_pair, -1, [], suited, out)
    return tuple(sorted(set(out)))


def _split(counts: list[int], start: int, want_pair: bool, pair: int, sets: list[tuple[int, int]],
           suited: bool, out: list[GroupSplit]) -> None:
    i = start
    n = len(counts)
    while i < n and counts[i] == 0:
        i += 1
    if i == n:
        if not want_pair or pair >= 0:
            out.append((pair, tuple(sets)))
        return
    if want_pair and pair < 0 and counts[i] >= 2:
        counts[i] -= 2
        _split(counts, i, want_pair, i, sets, suited, out)
        counts[i] += 2
    if counts[i] >= 3:
        counts[i] -= 3
        sets.append((PUNG, i))
        _split(counts, i, want_pair, pair, sets, suited, out)
        sets.pop()
        counts[i] += 3
    if suited and i + 2 < n and counts[i + 1] and counts[i + 2]:
        counts[i] -= 1
        counts[i + 1] -= 1
        counts[i + 2] -= 1
        sets.append((CHOW, i))
        _split(counts, i, want_pair, pair, sets, suited, out)
        sets.pop()
        counts[i] += 1
        counts[i + 1] += 1
        counts[i + 2] += 1


@lru_cache(maxsize=CACHE_SIZE)
def status(pattern: Pattern, suited: bool) -> int:
    """0: not complete; 1: sets only; 2: sets plus one pair."""
    total = sum(pattern)
    if total == 0:
        return 1
    r = total % 3
    if r == 1:
        return 0
    if not suited:
        if r == 0:
            return 1 if all(c in (0, 3) for c in pattern) else 0
        twos = sum(1 for c in pattern if c == 2)
        return 2 if twos == 1 and all(c in (0, 2, 3) for c in pattern) else 0
    if _complete(list(pattern), r == 2):
        return 1 if r == 0 else 2
    return 0


def _complete(counts: list[int], want_pair: bool) -> bool:
    """Fast yes/no split for a suit (no enumeration)."""
    if want_pair:
        for i in range(9):
            if counts[i] >= 2:
                counts[i] -= 2
                ok = _sets_only(counts)
                counts[i] += 2
                if ok:
                    return True
        return False
    return _sets_only(counts)


def _sets_only(counts: list[int]) -> bool:
    c = list(counts)
    for i in range(9):
        k = c[i] % 3
        if k:
            if i > 6 or c[i + 1] < k or c[i + 2] < k:
                return False
            c[i + 1] -= k
            c[i + 2] -= k
    return True


@lru_cache(maxsize=CACHE_SIZE)
def completers(pattern: Pattern, suited: bool, fifth: bool = False) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Ranks whose addition completes ``pattern``: (to sets only, to sets plus pair).

    A rank already held four times is skipped, unless ``fifth`` (the MCR 独听
    test counts such a wait)."""
    to_sets, to_pair = [], []
    for r in range(len(pattern)):
        if pattern[r] >= (5 if fifth else 4):
            continue
        grown = pattern[:r] + (pattern[r] + 1,) + pattern[r + 1:]
        s = status(grown, suited)
        if s == 1:
            to_sets.append(r)
        elif s == 2:
            to_pair.append(r)
    return tuple(to_sets), tuple(to_pair)


@lru_cache(maxsize=CACHE_SIZE)
def blocks(pattern: Pattern, suited: bool) -> tuple[tuple[int, int, int], ...]:
    """Pareto set of (sets, partial sets, pair 0/1) a group can be split into, for shanten."""
    found = _reach(pattern, suited)
    best = [b for b in found if not any(o != b and o[0] >= b[0] and o[1] >= b[1] and o[2] >= b[2] for o in found)]
    return tuple(sorted(best))


@lru_cache(maxsize=REACH_KEPT)
def _reach(c: Pattern, suited: bool) -> frozenset[tuple[int, int, int]]:
    """Every (sets, partial sets, pair 0/1) the counts ``c`` split into, its first tile taken every way in turn
    (a set of three alike, a chow, the pair, a partial pair, two partial chows, or left alone) and the rest
    looked up again: the splits of a pattern share their tails, so each tail is split once."""
    n = len(c)
    i = 0
    while i < n and c[i] == 0:
        i += 1
    if i == n:
        return _NOTHING
    if i:
        return _reach(c[i:], suited)
    a, b, d = c[0], c[1] if n > 1 else 0, c[2] if n > 2 else 0
    out: set[tuple[int, int, int]] = set()
    if a >= 3:
        out.update([(m + 1, t, p) for m, t, p in _reach((a - 3,) + c[1:], suited)])
    if suited and b and d:
        out.update([(m + 1, t, p) for m, t, p in _reach((a - 1, b - 1, d - 1) + c[3:], suited)])
    if a >= 2:
        rest = _reach((a - 2,) + c[1:], suited)
        out.update([(m, t, 1) for m, t, p in rest if p == 0])
        out.update([(m, t + 1, p) for m, t, p in rest])
    if suited and b:
        out.update([(m, t + 1, p) for m, t, p in _reach((a - 1, b - 1) + c[2:], suited)])
    if suited and d:
        out.update([(m, t + 1, p) for m, t, p in _reach((a - 1, b, d - 1) + c[3:], suited)])
    out.update(_reach((a - 1,) + c[1:], suited))
    return frozenset(out)


_NOTHING = frozenset({(0, 0, 0)})
