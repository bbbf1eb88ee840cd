"""A roll of the dice for a deal: electronic, physical with the players reading the faces, and the fallback."""

import random

from firmware.controller.dice_roll import DiceRoll
from firmware.events import EventBus
from firmware.faults import Fault, FaultCode
from firmware.mechanisms.base import MoveResult


class Dome:
    def __init__(self, fail=False):
        self.spins, self.fail = 0, fail

    def throw(self, done):
        self.spins += 1
        fault = Fault(FaultCode.E70, 0.0, "dice", {}) if self.fail else None
        done(MoveResult("dice", not self.fail, 0.0, 1.8, fault), None)


def _roll(electronic, throws, dome=None):
    bus, got = EventBus(lambda: 0.0), []
    events = []
    bus.subscribe("dice", events.append)
    roll = DiceRoll(dome or Dome(), random.Random(4), bus, electronic, throws, got.append)
    return roll, got, events


def test_electronic_dice_roll_every_throw_at_once_and_say_so():
    roll, got, events = _roll(True, 2)
    roll.start()
    assert len(got) == 1 and len(got[0]) == 4 and all(1 <= f <= 6 for f in got[0])
    assert events[0].topic == "dice.rolled" and events[0].data["electronic"]
    assert not roll.enter((3, 4))                       # nobody reads electronic dice


def test_physical_dice_wait_for_the_players_once_per_throw():
    dome = Dome()
    roll, got, events = _roll(False, 2, dome)
    roll.start()
    roll.start()                                        # a second press while rolling does nothing
    assert dome.spins == 1 and [e.data["throw"] for e in events] == [1]
    assert roll.enter((2, 5)) and dome.spins == 2 and got == []
    assert roll.enter((6, 1)) and got == [(2, 5, 6, 1)] and not roll.busy


def test_a_dome_that_does_not_spin_falls_back_to_electronic_dice():
    roll, got, events = _roll(False, 1, Dome(fail=True))
    roll.start()
    assert len(got) == 1 and len(got[0]) == 2 and events[-1].data["electronic"]
