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
from operator import mul

Pattern = tuple[int, ...]
# A decomposition of one group: (pair rank or -1, ((kind, rank), ...)) with kind 0 = chow, 1 = pung.
GroupSplit = tuple[int, tuple[tuple[int, int], ...]]

CHOW, PUNG = 0, 1
# Each cache holds at most this many group patterns (a table runs for years; a few MB each).
CACHE_SIZE = 8192
# the splits of patterns' tails kept for ``blocks`` (each a set of a few dozen small tuples: about 2 MB full)
REACH_KEPT = 1024


def all_splits(pattern: Pattern, suited: bool) -> tuple[GroupSplit, ...]:
    """Every way to split ``pattern`` into sets and at most one pair (all tiles used), sorted; none when
    it cannot be split (so its status is 0 exactly when there is none).  Not cached: :func:`splits` is."""
    out: list[GroupSplit] = []
    total = sum(pattern)
    if total % 3 == 1:
        return ()
    want_pair = total % 3 == 2
    _split(list(pattern), 0, want_pair, -1, [], suited, out)
    return tuple(sorted(set(out)))


splits = lru_cache(maxsize=CACHE_SIZE)(all_splits)


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


# A suit pattern packed into an int, four bits a rank (rank r's count times 16 ** r): the complete patterns
# of at most 14 tiles with at most five of a rank (five: the MCR 独听 test grows a held four) are few enough to
# be listed once, so that whether a pattern is complete is one set look-up.
_WEIGHTS = tuple(16 ** r for r in range(9))
_ABOVE_FIVE = 0x888888888          # a rank over five, once 2 is added to every rank
_PLUS_TWO = 0x222222222
_STEPS = tuple(3 << 4 * r for r in range(9)) + tuple(0x111 << 4 * r for r in range(7))     # pungs, chows


@lru_cache(maxsize=1)
def complete_patterns() -> tuple[frozenset[int], frozenset[int]]:
    """The packed suit patterns (at most 14 tiles, five of a rank) that split into sets only, and into sets
    and one pair: 3,346 and 26,213 of them, made once (13-25 ms here; bounded by design, 2.2 MB)."""
    level = sets_only = {0}
    for _ in range(4):
        level = {y for x in level for step in _STEPS if not ((y := x + step) + _PLUS_TWO) & _ABOVE_FIVE}
        sets_only = sets_only | level
    with_pair = {y for x in sets_only for r in range(9) if not ((y := x + (2 << 4 * r)) + _PLUS_TWO) & _ABOVE_FIVE}
    return frozenset(sets_only), frozenset(with_pair)


def packed(pattern: Pattern) -> int:
    """A suit pattern as the int :func:`complete_patterns` lists (four bits a rank)."""
    return sum(map(mul, pattern, _WEIGHTS))


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
    if total <= 14:
        key = packed(pattern)
        if not (key + _PLUS_TWO) & _ABOVE_FIVE:
            sets_only, with_pair = complete_patterns()
            return (1 if key in sets_only else 0) if r == 0 else (2 if key in with_pair else 0)
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
    to_sets: list[int] = []
    to_pair: list[int] = []
    limit = 5 if fifth else 4
    total = sum(pattern) + 1
    if total % 3 == 1:
        return (), ()
    if suited and total <= 14:
        key = packed(pattern)
        if not (key + _PLUS_TWO) & _ABOVE_FIVE:         # (a rank grown to six is never complete: skipped)
            table = complete_patterns()[0 if total % 3 == 0 else 1]
            found = to_sets if total % 3 == 0 else to_pair
            for r in range(9):
                if pattern[r] < limit and key + _WEIGHTS[r] in table:
                    found.append(r)
            return tuple(to_sets), tuple(to_pair)
    for r in range(len(pattern)):
        if pattern[r] >= limit:
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
