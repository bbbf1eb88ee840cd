"""A cam turned by a motor, with a home interrupter: stacking heads and wall lifts.

The cam rests at home (phase 0).  Running, it turns once every
``turn_s``; the home sensor is covered for the first ``home_window`` of a
turn, so it goes inactive shortly after a start and active again exactly at
the end of the turn, where the firmware stops the motor.  Half way round the
cam does its work (push a stack into the groove, push the walls up), which
the owner receives through ``on_work``.
"""

from __future__ import annotations

from typing import Callable

from firmware.loop import Loop
from sim.models.io import SimSensor
from sim.models.motion import Axis

WORK_PHASE = 0.5


class CamModel:
    def __init__(self, loop: Loop, name: str, turn_s: float, home_window: float,
                 home: SimSensor, on_work: Callable[[], None] | None = None) -> None:
        self.name = name
        self.turn_s = turn_s
        self.home_window = home_window
        self._home = home
        self._on_work = on_work
        self.turns = 0
        self.before_turn: Callable[[], None] | None = None     # a wearing part (sim.wear) sets its next turn's time
        self.axis = Axis(loop, [0.0, home_window, WORK_PHASE], self._boundary, position=0.0, wrap=True)
        self._home.set(True)

    def set_motor(self, on: bool) -> None:
        if on and self.before_turn is not None and not self.axis.moving:
            self.before_turn()
        self.axis.set_velocity(1.0 / self.turn_s if on else 0.0)

    def jam(self) -> None:
        self.axis.jam()

    @property
    def phase(self) -> float:
        return self.axis.position % 1.0

    def place(self, phase: float) -> None:
        """Stand the cam where it stopped (a table restored with a cam caught mid-turn by a power cut)."""
        self.axis.place(phase)
        self._home.set(self.phase < self.home_window)

    def _boundary(self, phase: float) -> None:
        if phase == 0.0:
            self.turns += 1
            self._home.set(True)
        elif phase == self.home_window:
            self._home.set(False)
        elif phase == WORK_PHASE and self._on_work is not None:
            self._on_work()
