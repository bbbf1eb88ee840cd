"""The wear monitor: quiet on a healthy part with timing noise, names a wearing part long before it jams."""

import random

import pytest

from firmware.maintenance.wear import WearMonitor, part_label
from sim.wear import jams, parse_wear, worn_turn_s


def test_healthy_noisy_part_raises_nothing():
    rng = random.Random(1)
    monitor = WearMonitor()
    for _ in range(10_000):
        assert monitor.observe("wall_lift1", 1.0 * (1 + rng.gauss(0, 0.02))) is None
    assert monitor.warnings == []


def test_wearing_part_is_named_with_its_trend_before_the_jam():
    rng = random.Random(2)
    monitor = WearMonitor()
    cycle = 0
    while True:
        cycle += 1
        turn_s = worn_turn_s(1.2, 0.5, max(0, cycle - 30))
        if jams(1.2, turn_s):
            break
        monitor.observe("stacker2", turn_s * (1 + rng.gauss(0, 0.02)), at_s=cycle, hand=3)
    [warning] = monitor.warnings
    assert warning.part == "head2" and warning.hand == 3
    assert cycle - warning.cycle >= 20
    assert warning.trend_pct_per_cycle == pytest.approx(0.5, abs=0.35) and warning.slower_pct > 4


def test_reset_learns_the_baseline_again():
    monitor = WearMonitor()
    for i in range(200):
        monitor.observe("stacker0", 1.0 * 1.01 ** i)
    assert monitor.warnings
    monitor.reset("stacker0")
    assert monitor.warnings == [] and "stacker0" not in monitor.parts


def test_part_labels():
    assert (part_label("stacker3"), part_label("wall_lift0"), part_label("center_lift")) == \
        ("head3", "lift0", "center_lift")


@pytest.mark.parametrize("spec, message", [("head5:1", "head0..head3"), ("head2", "PART:PERCENT"),
                                           ("lift1:x", "not a number"), ("lift1:0", "above 0")])
def test_bad_wear_specs_say_what_is_wrong(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_wear([spec])
