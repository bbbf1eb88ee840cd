"""The shuffle monitor: exact fair means, quiet on fair walls, fast on a favoured seat and on clumping."""

import random

import pytest

from firmware.fairness.monitor import ShuffleMonitor
from firmware.fairness.null import hand_pairs, wall_neighbours
from firmware.fairness.patterns import Pattern, count_neighbours, pairs
from firmware.tiles.dealing import DealRules, deal
from firmware.tiles.sets import TILE_SETS
from sim.shuffle_bias import ClumpRing, FavourRig, parse_shuffle_bias, synthetic_wall

KINDS = TILE_SETS[136].all_tiles()


def test_pairs_counts_kinds_held_twice_or_more():
    assert pairs([0, 0, 0, 1, 1, 2, 3, 3, 3, 3, 9, 10, 11]) == 3
    assert pairs([34, 34, 1]) == 0          # flowers never pair


def test_fair_pair_mean_matches_a_simulated_deal():
    rng = random.Random(1)
    xs = [pairs(rng.sample(KINDS, 13)) for _ in range(20000)]
    exact = hand_pairs(TILE_SETS[136].copies)
    assert abs(sum(xs) / len(xs) - exact.mean) < 0.03


def test_fair_neighbour_mean_matches_simulated_walls():
    rng = random.Random(2)
    kinds = list(KINDS)
    xs = []
    for _ in range(2000):
        rng.shuffle(kinds)
        xs.append(count_neighbours(Pattern.SAME_SUIT, [kinds[i * 34:(i + 1) * 34] for i in range(4)]))
    exact = wall_neighbours(Pattern.SAME_SUIT, tuple(sorted(KINDS)), (34,) * 4)
    assert abs(sum(xs) / len(xs) - exact.mean) < 0.4


ONE_THROW = DealRules(throws=1)


def _play(monitor, rng, hands, ring=None, rig=None, rules=ONE_THROW):
    raised = []
    for hand in range(1, hands + 1):
        wall = synthetic_wall(KINDS, rng, ring)
        dealer = rng.randrange(4)
        faces = (rng.randint(1, 6), rng.randint(1, 6))
        if rig is not None:
            faces = rig.choose(wall, dealer, faces)
        d = deal(wall, rules, faces, dealer)
        raised += monitor.observe(hand, wall, {s: d.hand_tiles(wall, s) for s in d.hands})
    return raised


def test_quiet_on_fair_walls():
    monitor = ShuffleMonitor()
    assert _play(monitor, random.Random(7), 300) == []
    assert all(c.cusum.n == 300 for c in monitor.charts.values())


def test_a_favoured_seat_is_named_with_its_evidence():
    rig = FavourRig(2, 1.0, DealRules(throws=1))
    raised = _play(ShuffleMonitor(), random.Random(8), 200, rig=rig)
    assert rig.gain / rig.hands == pytest.approx(1.0, abs=0.1)      # the rig really deals one pair more
    assert [w.seat for w in raised] == ["W"]
    w = raised[0]
    assert w.hands <= 100 and w.statistic > w.threshold and w.observed_mean > w.fair_mean + 0.5


def test_clumping_is_named_as_a_wall_pattern():
    rng = random.Random(9)
    raised = _play(ShuffleMonitor(), rng, 200, ring=ClumpRing(0.1, rng))
    assert "wall:same_suit" in [w.chart for w in raised]
    assert all(w.seat is None for w in raised)


def test_clumping_ring_really_clumps():
    rng = random.Random(3)
    fair = [count_neighbours(Pattern.SAME_SUIT, _sides(synthetic_wall(KINDS, rng))) for _ in range(300)]
    clumped = [count_neighbours(Pattern.SAME_SUIT, _sides(synthetic_wall(KINDS, rng, ClumpRing(0.1, rng))))
               for _ in range(300)]
    assert sum(clumped) / 300 - sum(fair) / 300 > 6       # about P x 132 x (1 - 1/4) more


def _sides(wall):
    from firmware.fairness.patterns import side_sequences
    return side_sequences(wall)


def test_walls_with_unknown_tiles_are_not_scored():
    monitor = ShuffleMonitor()
    assert monitor.observe(1, None, {}) == [] and monitor.unscored == 1


def test_restore_keeps_the_evidence():
    monitor = ShuffleMonitor()
    _play(monitor, random.Random(8), 60, rig=FavourRig(0, 1.0, DealRules(throws=1)))
    again = ShuffleMonitor()
    again.restore(monitor.to_dict())
    assert again.status() == monitor.status()


@pytest.mark.parametrize("spec, message", [
    (["favour=X:1"], "E S W N"), (["favour=E"], "E S W N"), (["favour=E:abc"], "not a number"),
    (["favour=E:0"], "above 0"), (["clump=2"], "at most 1"), (["loose=1"], "favour=SEAT:PAIRS"),
    (["clump=0.1", "clump=0.2"], "twice")])
def test_bad_bias_specs_say_what_is_wrong(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_shuffle_bias(spec)


def test_bias_specs_parse():
    bias = parse_shuffle_bias(["favour=S:1.5", "clump=0.1"])
    assert (bias.favour_side, bias.favour_pairs, bias.clump_p) == (1, 1.5, 0.1)
    assert parse_shuffle_bias([]) is None
