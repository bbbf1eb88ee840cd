"""The centre island: rises to open the drop hole, lowers to close it.

A reversible motor on two relays (up, down) between two sensors.  A
movement ends when the target sensor fires; it fails with E10 (up not
reached) or E11 (down not reached) past 3T, and with E12 whenever both
sensors read active together (one is stuck or shorted).
"""

from __future__ import annotations

import enum

from firmware.faults import FaultCode, FaultReporter
from firmware.loop import Loop
from firmware.mechanisms.base import DoneCallback, Mechanism, Permit
from firmware.mechanisms.nominal import NominalTime
from firmware.ports.hardware import DigitalInput, DigitalOutput


class LiftStop(enum.Enum):
    UP = "up"
    DOWN = "down"


class CenterLift(Mechanism):
    def __init__(self, loop: Loop, faults: FaultReporter, nominal: NominalTime, permit: Permit,
                 up_motor: DigitalOutput, down_motor: DigitalOutput, up_sensor: DigitalInput,
                 down_sensor: DigitalInput) -> None:
        super().__init__("center_lift", loop, faults, nominal, FaultCode.E10, permit)
        self.up_motor, self.down_motor = up_motor, down_motor
        self.up_sensor, self.down_sensor = up_sensor, down_sensor
        self.outputs = [up_motor, down_motor]
        self.target: LiftStop | None = None
        up_sensor.on_edge(self._sensor_changed)
        down_sensor.on_edge(self._sensor_changed)

    @property
    def position(self) -> LiftStop | None:
        """Where the island is, or None between the stops."""
        up, down = self.up_sensor.active, self.down_sensor.active
        if up and not down:
            return LiftStop.UP
        if down and not up:
            return LiftStop.DOWN
        return None

    def move_to(self, stop: LiftStop, done: DoneCallback) -> None:
        """Drive to ``stop``; ``done`` gets the result (at once if already there)."""
        self.fault_code = FaultCode.E10 if stop is LiftStop.UP else FaultCode.E11
        self.target = stop
        if not self._begin(done):
            return
        if self.up_sensor.active and self.down_sensor.active:
            self._fail(FaultCode.E12, reason="both sensors active")
            return
        if self.position is stop:
            self._learn = False
            self._complete()
            return
        if self.position is None:
            self._learn = False   # from mid-travel (after a power cut): a partial move teaches nothing
        (self.up_motor if stop is LiftStop.UP else self.down_motor).set(True)

    def _sensor_changed(self, _active: bool) -> None:
        if self.up_sensor.active and self.down_sensor.active:
            if self.busy:
                self._fail(FaultCode.E12, reason="both sensors active")
            else:
                self.bus.publish("sensor.conflict", mechanism=self.name)
            return
        if self.busy and self.position is self.target:
            self._complete()
