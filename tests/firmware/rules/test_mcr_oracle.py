"""MCR scoring against PyMahjongGB on generated hands (runs where the ``bench`` extra is installed).

The case files are fixed; this draws fresh hands of every shape (melds,
kongs, flags, winds, flowers, seven pairs, knitted hands, 十三幺, 九莲宝灯)
and compares totals with the C++ reference, and fan lists unless the two
readings tie.
"""

import random
from collections import Counter

import pytest

from bench.mcr_hands import generated_wins, to_pymahjonggb
from firmware.rules.mcr.scorer import score

gb = pytest.importorskip("MahjongGB")


@pytest.mark.parametrize("seed", [20261130, 1, 2])      # (1 and 2 added with the scorer's fast paths)
def test_generated_hands_match_the_reference(seed):
    checked = 0
    for w in generated_wins(random.Random(seed), 1500):
        try:
            reference = gb.MahjongFanCalculator(**to_pymahjonggb(w), verbose=True)
        except TypeError:
            assert not score(w).win, w
            continue
        result = score(w)
        assert result.win and result.total == sum(p * c for p, c, _, _ in reference), w
        assert Counter({f.zh: n for f, n in result.fans}) == Counter({name: c for _, c, name, _ in reference}), w
        checked += 1
    assert checked > 800
