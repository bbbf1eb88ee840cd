"""The four dealer lamps: who deals (and the dealer's streak), or a fault code blinked digit by digit.

Real tables have no display, so the dealer lamps (one per side) carry both
messages.  In play the dealer's lamp is lit, and during a streak (连庄) the
next lamps counter-clockwise light up to show its length, up to three.  For a
fault the lamps blink the code's two digits in turn, each as a 4-bit pattern
(side 0 = 1, side 1 = 2, side 2 = 4, side 3 = 8): tens, dark, ones, then a
long dark pause, over and over.  E82 shows side 3 (8), then side 1 (2);
E03 shows nothing for the tens, then sides 0 and 1 (3).
"""

from __future__ import annotations

from firmware.faults import FaultCode
from firmware.loop import Handle, Loop

SIDES = 4
BLINK_S = 0.4           # one digit lit, and the gap after it
PAUSE_S = 1.6           # dark between repetitions of the code


def digit_sides(digit: int) -> set[int]:
    """The sides whose lamps light for a digit (0..9) as a 4-bit pattern."""
    return {side for side in range(SIDES) if digit >> side & 1}


def lamp_pattern(code: FaultCode) -> str:
    """How the dealer lamps blink a code: the sides lit for the tens digit, then for the ones digit."""
    tens, ones = divmod(code.number, 10)
    return " then ".join("+".join(str(s) for s in sorted(digit_sides(d))) or "none" for d in (tens, ones))


class DealerLamps:
    def __init__(self, panel, loop: Loop, blink_s: float = BLINK_S, pause_s: float = PAUSE_S) -> None:
        self.panel, self.loop = panel, loop
        self.blink_s, self.pause_s = blink_s, pause_s
        self._timer: Handle | None = None
        self.blinking: int | None = None        # the code number being blinked

    def show_dealer(self, dealer: int, streak: int) -> None:
        """The dealer's lamp, and up to three more for the streak (stops any blinking)."""
        self.stop()
        lit = {dealer} | {(dealer + i) % SIDES for i in range(1, min(streak, 3) + 1)}
        self._light(lit)

    def blink(self, number: int) -> None:
        """Blink a fault code's two digits until :meth:`stop` or :meth:`show_dealer`."""
        self.stop()
        self.blinking = number
        tens, ones = divmod(number, 10)
        # (lamp pattern, how long it stays) for one repetition
        steps = [(digit_sides(tens), self.blink_s), (set(), self.blink_s),
                 (digit_sides(ones), self.blink_s), (set(), self.pause_s)]

        def step(i: int) -> None:
            sides, hold_s = steps[i % len(steps)]
            self._light(sides)
            self._timer = self.loop.call_later(hold_s, step, i + 1)
        step(0)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.blinking = None

    def _light(self, sides: set[int]) -> None:
        for side in range(SIDES):
            self.panel.lamp(f"led_dealer{side}", side in sides)
