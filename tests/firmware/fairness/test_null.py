"""The fair walls' neighbour moments are exact: every ordering of small walls, enumerated."""

import itertools
import math

import pytest

from firmware.fairness.null import wall_neighbours
from firmware.fairness.patterns import Pattern, count_neighbours


@pytest.mark.parametrize("kinds, sides", [((0, 0, 1, 2, 9, 10, 10, 27), (3, 5)),
                                          ((0, 1, 1, 2, 3, 27, 27, 34), (4, 4)),
                                          ((0, 0, 0, 1, 2, 2, 9, 10, 18), (2, 3, 4)),
                                          ((0, 1, 2), (3,))])
@pytest.mark.parametrize("pattern", list(Pattern))
def test_wall_neighbours_moments_are_those_of_every_ordering(pattern, kinds, sides):
    xs = []
    for order in itertools.permutations(kinds):
        at, seqs = 0, []
        for length in sides:
            seqs.append(order[at:at + length])
            at += length
        xs.append(count_neighbours(pattern, seqs))
    mean = sum(xs) / len(xs)
    sd = math.sqrt(max(sum(x * x for x in xs) / len(xs) - mean * mean, 1e-9))
    got = wall_neighbours(pattern, tuple(sorted(kinds)), sides)
    assert got.mean == pytest.approx(mean, abs=1e-9) and got.sd == pytest.approx(sd, abs=1e-6)
