"""The IDLE decision: what the table does next, from the bookkeeping alone."""

import pytest

from firmware.controller.bookkeeping import Bookkeeping, StackingProgress
from firmware.controller.next_step import NextStep, next_step
from firmware.controller.states import SetLocation as L


def book(**sets_and_flags):
    b = Bookkeeping()
    for key, value in sets_and_flags.items():
        if isinstance(value, L):
            b.put(key, value)
        else:
            setattr(b, key, value)
    return b


@pytest.mark.parametrize("b, just_closed, step", [
    (book(), False, NextStep.WAIT),                                              # an empty table
    (book(unknown_on_disk=True), True, NextStep.STACK),                          # something was poured in
    (book(A=L.STACKED), False, NextStep.READY),                                  # first set ready: wait
    (book(A=L.STACKED), True, NextStep.RAISE),                                   # the centre just closed
    (book(A=L.STACKED, hand=3), False, NextStep.RAISE),
    (book(A=L.TABLE, B=L.DISK), False, NextStep.DICE),                           # B stacks below the dice
    (book(A=L.TABLE, B=L.DISK, hand_open=True), False, NextStep.PLAY),
    (book(A=L.TABLE, B=L.STACKED, hand_over=True), False, NextStep.OPEN),        # the hand is over
    (book(A=L.TABLE, B=L.DISK, hand_over=True), False, NextStep.STACK),          # not before B is stacked
    (book(A=L.STACKED, raising=True), False, NextStep.RAISE),                    # an interrupted raise
    (book(A=L.TABLE, B=L.DISK, rejected={"A": ["unknown tile"]}), False, NextStep.REJECTED),
])
def test_next_step(b, just_closed, step):
    assert next_step(b, just_closed) is step


def test_a_stacking_cycle_in_progress_goes_on():
    b = book(A=L.TABLE, hand_open=True)
    b.stacking = StackingProgress("B", 1, [10, 9, 9, 8], [10, 8, 8, 8], [[], [], [], []])
    assert next_step(b, False) is NextStep.PLAY
    b.sets.pop("A")
    assert next_step(b, False) is NextStep.STACK


def test_every_step_is_a_controller_trigger():
    from firmware.controller.states import TRANSITIONS

    triggers = {row["trigger"] for row in TRANSITIONS}
    assert {s.value for s in NextStep if s.value} <= triggers
