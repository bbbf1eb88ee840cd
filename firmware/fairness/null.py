"""What a fair shuffle gives: exact means (and variances) of the counted patterns for a set's tile counts.

Pairs in a 13-tile hand: the hand is a uniform draw without replacement, so
the chance that a kind with ``c`` copies appears twice or more is
hypergeometric, and the covariance of two kinds comes from the bivariate
hypergeometric; both are summed exactly.  Neighbours in a wall: every
neighbouring pair of positions holds an ordered pair of distinct tiles
drawn uniformly, so the mean is exact (matching ordered pairs over
``N(N-1)``, times the neighbouring positions); so is the variance, from the
covariances of two neighbouring pairs: sharing a tile (three distinct tiles,
the shared one matching both others) or not (four distinct tiles, two
matching pairs), counted over the tile counts (a bounded cache).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from firmware.fairness.patterns import HAND_TILES, Pattern, neighbours_match
from firmware.tiles.tile import FLOWER_BASE

@dataclass(frozen=True)
class Moments:
    mean: float
    sd: float


def _comb(n: int, r: int) -> int:
    return math.comb(n, r) if 0 <= r <= n else 0


@lru_cache(maxsize=16)
def hand_pairs(copies: tuple[int, ...], hand: int = HAND_TILES) -> Moments:
    """Pairs in ``hand`` tiles dealt uniformly from a set with ``copies`` per kind."""
    n = sum(copies)
    total = _comb(n, hand)
    kinds = [c for k, c in enumerate(copies) if c >= 2 and k < FLOWER_BASE]
    p = [1.0 - (_comb(n - c, hand) + c * _comb(n - c, hand - 1)) / total for c in kinds]
    var = sum(q * (1 - q) for q in p)
    for i, ci in enumerate(kinds):
        for j in range(i + 1, len(kinds)):
            cj = kinds[j]
            rest = n - ci - cj
            both = sum(_comb(ci, a) * _comb(cj, b) * _comb(rest, hand - a - b)
                       for a in range(2, ci + 1) for b in range(2, cj + 1)) / total
            var += 2 * (both - p[i] * p[j])
    return Moments(sum(p), math.sqrt(max(var, 1e-12)))


@lru_cache(maxsize=16)
def wall_neighbours(pattern: Pattern, kinds: tuple[int, ...], side_lengths: tuple[int, ...]) -> Moments:
    """Neighbours matching ``pattern`` along walls of ``side_lengths`` laid from the tiles ``kinds`` (sorted).

    With ``I_s`` a neighbouring pair of positions matching and ``d(t)`` the tiles other than ``t`` that
    match it, over the ``N`` tiles: ``P(I_s) = M / N(N-1)`` with ``M = sum d(t)``; two pairs sharing a
    position both match with ``sum d(t)(d(t)-1) / N(N-1)(N-2)``, two disjoint ones with
    ``(M^2 - 4 sum d(t)^2 + 2M) / N(N-1)(N-2)(N-3)`` (the matching pairs less those meeting the first)."""
    n = len(kinds)
    counts: dict[int, int] = {}
    for kind in kinds:
        counts[kind] = counts.get(kind, 0) + 1
    others = {a: sum(cb for b, cb in counts.items() if neighbours_match(pattern, a, b))
              - neighbours_match(pattern, a, a) for a in counts}                 # d(t) for a tile of kind a
    matching = sum(ca * others[a] for a, ca in counts.items())
    slots = sum(max(0, length - 1) for length in side_lengths)
    if n < 2 or not slots:
        return Moments(0.0, math.sqrt(1e-9))
    p = matching / (n * (n - 1))
    sharing = sum(2 * max(0, length - 2) for length in side_lengths)    # ordered pairs of pairs sharing a tile
    disjoint = slots * (slots - 1) - sharing
    var = slots * p * (1 - p)
    if sharing:
        both = sum(ca * others[a] * (others[a] - 1) for a, ca in counts.items()) / (n * (n - 1) * (n - 2))
        var += sharing * (both - p * p)
    if disjoint:
        squares = sum(ca * others[a] ** 2 for a, ca in counts.items())
        both = (matching * matching - 4 * squares + 2 * matching) / (n * (n - 1) * (n - 2) * (n - 3))
        var += disjoint * (both - p * p)
    return Moments(slots * p, math.sqrt(max(var, 1e-9)))
