"""Dealer rotation per rule set."""

import pytest

from firmware.rules.rotation import Dealership, next_dealer


@pytest.mark.parametrize("rules, winner, expected", [
    ("mcr", 0, Dealership(1)), ("mcr", None, Dealership(1)), ("mcr", 2, Dealership(1)),
    ("competition", 0, Dealership(0, 1)), ("competition", 3, Dealership(1)), ("competition", None, Dealership(1)),
    ("liaoning", 0, Dealership(0, 1)), ("liaoning", None, Dealership(0, 0, 1)), ("liaoning", 1, Dealership(1)),
    ("jinzhou", 0, Dealership(0, 1)), ("jinzhou", None, Dealership(1)), ("jinzhou", 2, Dealership(1)),
])
def test_next_dealer(rules, winner, expected):
    assert next_dealer(rules, Dealership(0), winner) == expected


def test_streaks_and_long_hair_accumulate():
    d = Dealership(2)
    for _ in range(3):
        d = next_dealer("competition", d, winner=2)
    assert d == Dealership(2, 3)
    d = next_dealer("liaoning", next_dealer("liaoning", Dealership(1), None), None)
    assert d == Dealership(1, 0, 2)
