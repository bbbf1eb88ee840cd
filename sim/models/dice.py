"""The dice dome: a relay-driven motor that tumbles two dice.

While the motor runs, the dome's hall sensor pulses every ``pulse_s``; when
it stops, the dice come to rest showing a seeded random result.  A jammed
dome spins the motor without pulses.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from firmware.loop import Handle, Loop
from sim.models.io import SimSensor

if TYPE_CHECKING:
    from sim.shuffle_bias import FavourDice


class DiceModel:
    PULSE_S = 0.1

    def __init__(self, loop: Loop, rng: random.Random, sensor: SimSensor | None) -> None:
        self._loop = loop
        self._rng = rng
        self._sensor = sensor
        self._timer: Handle | None = None
        self.running = False
        self.jammed = False
        self.result: tuple[int, int] | None = None
        self.spins = 0
        self.rig: FavourDice | None = None     # rigged dice (sim.shuffle_bias): the faces the rig chooses

    def set_motor(self, on: bool) -> None:
        if on == self.running:
            return
        self.running = on
        if on:
            self.result = None
            self._pulse()
        else:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._sensor is not None:
                self._sensor.set(False)
            self.spins += 1
            fair = (self._rng.randint(1, 6), self._rng.randint(1, 6))
            self.result = fair if self.rig is None else self.rig.faces(fair)

    def _pulse(self) -> None:
        if self._sensor is not None and not self.jammed:
            self._sensor.set(not self._sensor.active)
        self._timer = self._loop.call_later(self.PULSE_S / 2, self._pulse)
