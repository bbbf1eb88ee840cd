"""What a fair shuffle gives: exact means (and variances) of the counted patterns for a set's tile counts.

Pairs in a 13-tile hand: the hand is a uniform draw without replacement, so
the chance that a kind with ``c`` copies appears twice or more is
hypergeometric, and the covariance of two kinds comes from the bivariate
hypergeometric; both are summed exactly.  Neighbours in a wall: every
neighbouring pair of positions holds an ordered pair of distinct tiles
drawn uniformly, so the mean is exact (matching ordered pairs over
``N(N-1)``, times the neighbouring positions); the variance, which depends
on overlapping neighbours, is estimated once per composition by a seeded
simulation of uniform shuffles (deterministic, a bounded cache).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from functools import lru_cache

from firmware.fairness.patterns import HAND_TILES, Pattern, count_neighbours, neighbours_match
from firmware.tiles.tile import FLOWER_BASE

VARIANCE_SHUFFLES = 3000


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
    """Neighbours matching ``pattern`` along walls of ``side_lengths`` laid from the tiles ``kinds`` (sorted)."""
    n = len(kinds)
    counts: dict[int, int] = {}
    for kind in kinds:
        counts[kind] = counts.get(kind, 0) + 1
    matching = sum(ca * (cb - (a == b)) for a, ca in counts.items() for b, cb in counts.items()
                   if neighbours_match(pattern, a, b))
    slots = sum(max(0, length - 1) for length in side_lengths)
    mean = slots * matching / (n * (n - 1)) if n > 1 else 0.0
    rng = random.Random(f"mjtable-fairness-null:{pattern.value}:{n}:{side_lengths}")
    tiles = list(kinds)
    total = total_sq = 0.0
    for _ in range(VARIANCE_SHUFFLES):
        rng.shuffle(tiles)
        seqs, at = [], 0
        for length in side_lengths:
            seqs.append(tiles[at:at + length])
            at += length
        x = count_neighbours(pattern, seqs)
        total += x
        total_sq += x * x
    var = total_sq / VARIANCE_SHUFFLES - (total / VARIANCE_SHUFFLES) ** 2
    return Moments(mean, math.sqrt(max(var, 1e-9)))
