"""The dice: a dome motor on a relay, or electronic dice from the OS CSPRNG.

A physical roll runs the motor for a random time between the configured
minimum and maximum; the dome's hall sensor (when fitted) must pulse within
``SENSOR_GRACE_S`` of the start, else E70.  Electronic dice draw from the
injected generator, which is the operating system's CSPRNG on a table; every
roll is published (and so logged), because "program dice" are a known cheat.
"""

from __future__ import annotations

import random
from typing import Callable

from firmware.faults import FaultCode, FaultReporter
from firmware.loop import Loop
from firmware.mechanisms.base import Mechanism, MoveResult, Permit
from firmware.mechanisms.nominal import NominalTime
from firmware.ports.hardware import DigitalInput, DigitalOutput

SENSOR_GRACE_S = 0.5


class Dice(Mechanism):
    def __init__(self, loop: Loop, faults: FaultReporter, permit: Permit, rng: random.Random, motor: DigitalOutput,
                 sensor: DigitalInput | None, spin_min_s: float, spin_max_s: float, electronic: bool) -> None:
        super().__init__("dice", loop, faults, NominalTime(spin_max_s, spin_max_s * 3, 2.0, 3.0), FaultCode.E70,
                         permit)
        self.rng = rng
        self.motor = motor
        self.sensor = sensor
        self.spin_min_s, self.spin_max_s = spin_min_s, spin_max_s
        self.electronic = electronic
        self.outputs = [motor]
        self._pulses = 0
        if sensor is not None:
            sensor.on_edge(self._pulse)

    def throw(self, done: Callable[[MoveResult, tuple[int, int] | None], None]) -> None:
        """Throw two dice.  ``done(result, faces)``; faces are None when only people can read them."""
        if self.electronic:
            faces = (self.rng.randint(1, 6), self.rng.randint(1, 6))
            self.bus.publish("dice.rolled", faces=faces, electronic=True)
            now = self.loop.now()
            done(MoveResult(self.name, True, now, 0.0), faces)
            return
        spin_s = self.rng.uniform(self.spin_min_s, self.spin_max_s)
        self._pulses = 0

        def finished(result: MoveResult) -> None:
            if result.ok:
                self.bus.publish("dice.rolled", faces=None, electronic=False, spin_s=result.elapsed_s)
            done(result, None)

        if not self._begin(finished, learn=False):
            return
        self.motor.set(True)
        self._arm(spin_s, self._complete)
        if self.sensor is not None:
            self._arm(min(SENSOR_GRACE_S, spin_s), self._check_sensor)

    def _pulse(self, _active: bool) -> None:
        if self.busy:
            self._pulses += 1

    def _check_sensor(self) -> None:
        if self.busy and self._pulses == 0:
            self._fail(FaultCode.E70, reason="no pulse from the dome sensor")
