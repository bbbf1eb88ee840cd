"""Dealer rotation per rule set: each family's next_dealer."""

import pytest

from firmware.rules.registry import load_ruleset
from firmware.rules.ruleset import Dealership, HandOutcome


def outcome(winner):
    return HandOutcome((winner,), False) if winner is not None else HandOutcome((), True)


@pytest.mark.parametrize("rules, winner, expected", [
    ("mcr", 0, Dealership(1)), ("mcr", None, Dealership(1)), ("mcr", 2, Dealership(1)),
    ("competition", 0, Dealership(0, 1)), ("competition", 3, Dealership(1)), ("competition", None, Dealership(1)),
    ("liaoning", 0, Dealership(0, 1)), ("liaoning", None, Dealership(0, 0, 1)), ("liaoning", 1, Dealership(1)),
    ("jinzhou", 0, Dealership(0, 1)), ("jinzhou", None, Dealership(1)), ("jinzhou", 2, Dealership(1)),
])
def test_next_dealer(rules, winner, expected):
    assert load_ruleset(rules).next_dealer(Dealership(0), outcome(winner)) == expected


def test_streaks_and_long_hair_accumulate():
    competition, liaoning = load_ruleset("competition"), load_ruleset("liaoning")
    d = Dealership(2)
    for _ in range(3):
        d = competition.next_dealer(d, outcome(2))
    assert d == Dealership(2, 3)
    d = liaoning.next_dealer(liaoning.next_dealer(Dealership(1), outcome(None)), outcome(None))
    assert d == Dealership(1, 0, 2)


def test_the_dealer_among_several_winners_keeps_the_seat():
    assert load_ruleset("competition").next_dealer(Dealership(1), HandOutcome((3, 1))) == Dealership(1, 1)
