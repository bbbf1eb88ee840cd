"""The centre island: a reversible motor between a down and an up stop.

Two relays drive it up or down; with both (or neither) on it stands still.
Position runs from 0 (down, drop hole closed) to 1 (up, drop hole open) in
``travel_s``; the up and down sensors are active only at the ends.  A jam
freezes it where it is.
"""

from __future__ import annotations

from firmware.loop import Loop
from sim.models.io import SimSensor
from sim.models.motion import Axis


class CenterLiftModel:
    def __init__(self, loop: Loop, travel_s: float, up_sensor: SimSensor, down_sensor: SimSensor) -> None:
        self.travel_s = travel_s
        self._up_sensor = up_sensor
        self._down_sensor = down_sensor
        self._drive_up = False
        self._drive_down = False
        self.axis = Axis(loop, [0.0, 1.0], self._arrived, position=0.0)
        self.on_opened: list = []   # called when the island reaches the top (drop hole open)
        self._update_sensors()

    def set_up_relay(self, on: bool) -> None:
        self._drive_up = on
        self._drive()

    def set_down_relay(self, on: bool) -> None:
        self._drive_down = on
        self._drive()

    def jam(self) -> None:
        self.axis.jam()
        self._update_sensors()

    @property
    def position(self) -> float:
        return self.axis.position

    def place(self, position: float) -> None:
        """Stand the island where it stopped (a table restored between runs)."""
        self.axis.place(position)
        self._update_sensors()

    def _drive(self) -> None:
        direction = int(self._drive_up) - int(self._drive_down)
        self.axis.set_velocity(direction / self.travel_s)
        self._update_sensors()

    def _arrived(self, position: float) -> None:
        self._update_sensors()
        if position >= 1.0:
            for callback in self.on_opened:
                callback()

    def _update_sensors(self) -> None:
        pos = self.axis.position
        self._up_sensor.set(pos >= 1.0 - 1e-9)
        self._down_sensor.set(pos <= 1e-9)
