"""The dealer lamps: the dealer and streak, and fault codes blinked digit by digit."""

import pytest

from firmware.controller.lamps import BLINK_S, PAUSE_S, DealerLamps, digit_sides
from sim.virtual_loop import VirtualLoop


class Panel:
    def __init__(self):
        self.lit = {}

    def lamp(self, name, on):
        self.lit[name] = on

    def sides(self):
        return {int(n[-1]) for n, on in self.lit.items() if on}


def test_dealer_and_streak():
    panel = Panel()
    lamps = DealerLamps(panel, VirtualLoop())
    lamps.show_dealer(2, 0)
    assert panel.sides() == {2}
    lamps.show_dealer(3, 5)                 # a streak shows up to three more lamps
    assert panel.sides() == {3, 0, 1, 2}


def test_a_fault_code_blinks_its_two_digits_then_pauses():
    panel, loop = Panel(), VirtualLoop()
    lamps = DealerLamps(panel, loop)
    lamps.blink(82)
    seen = []
    for _ in range(8):
        seen.append(panel.sides())
        loop.step()
    assert seen[:4] == [{3}, set(), {1}, set()]          # 8, gap, 2, pause
    assert seen[4:8] == seen[:4]                          # and again
    assert loop.now() == pytest.approx(2 * (3 * BLINK_S + PAUSE_S))


def test_codes_that_share_low_bits_look_different():
    assert (digit_sides(0), digit_sides(2)) != (digit_sides(8), digit_sides(2))      # E02 vs E82
    assert digit_sides(9) == {0, 3} and digit_sides(0) == set()


def test_the_dealer_lamp_stops_the_blinking():
    panel, loop = Panel(), VirtualLoop()
    lamps = DealerLamps(panel, loop)
    lamps.blink(33)
    lamps.show_dealer(1, 0)
    loop.run_for(10.0)
    assert panel.sides() == {1} and lamps.blinking is None
