"""A cam mechanism: one motor turn from home to home (stacking heads, wall lifts).

The cam rests on its home interrupter.  A turn starts the motor, sees the
home sensor go inactive as the cam leaves home, and stops the motor when it
goes active again.  If the sensor never leaves home the switch is stuck; if
it never comes back the cam is jammed (or the switch is dead).  Once the cam
has left home its turn is as good as done: a turn stopped half way (a power
cut) is finished by the homing that follows, so ``on_left_home`` is when an
owner counts the turn's work.  Both raise
the mechanism's fault code (E21..E24 for wall lifts, E31..E34 for heads).
A cam found off home (after a power cut) is first turned to home.
"""

from __future__ import annotations

from typing import Callable

from firmware.faults import FaultCode, FaultReporter
from firmware.loop import Loop
from firmware.mechanisms.base import DoneCallback, Mechanism, Permit
from firmware.mechanisms.nominal import NominalTime
from firmware.ports.hardware import DigitalInput, DigitalOutput


class CamMechanism(Mechanism):
    def __init__(self, name: str, loop: Loop, faults: FaultReporter, nominal: NominalTime, fault_code: FaultCode,
                 permit: Permit, motor: DigitalOutput, home: DigitalInput, home_window: float) -> None:
        super().__init__(name, loop, faults, nominal, fault_code, permit)
        self.motor = motor
        self.home = home
        self.home_window = home_window
        self.outputs = [motor]
        self.turns = 0
        self._left_home = False
        self.on_left_home: Callable[[], None] | None = None     # the cam has left home: the turn will be completed
        home.on_edge(self._home_changed)

    @property
    def at_home(self) -> bool:
        return self.home.active

    def turn(self, done: DoneCallback) -> None:
        """One full turn, home to home (or to home, if the cam is off home)."""
        if not self._begin(done):
            return
        self._left_home = not self.home.active
        if self._left_home:
            self._learn = False   # a partial turn says nothing of the nominal time
        else:
            # Leaving home takes home_window of a turn; allow the fault factor on top.
            leave_limit_s = self.nominal.value_s * self.home_window * self.nominal.fault_factor + 0.05
            self._arm(leave_limit_s, self._check_left)
        self.motor.set(True)

    def _check_left(self) -> None:
        if self.busy and not self._left_home:
            self._fail(self.fault_code, reason="cam did not leave home (jammed, or home switch stuck active)")

    def _home_changed(self, active: bool) -> None:
        if not self.busy:
            if not active and not self.motor.active:
                self.bus.publish("sensor.unexpected", mechanism=self.name, sensor=self.home.name)
            return
        if not active:
            if not self._left_home:
                self._left_home = True
                if self.on_left_home is not None:
                    self.on_left_home()
        elif self._left_home:
            self.turns += 1
            self._complete()
