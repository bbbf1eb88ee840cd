"""gpiozero mock pins on virtual time, wired to the simulated table.

:class:`SimPinFactory` is a ``MockFactory`` whose ``ticks()`` is the virtual
loop's clock and whose pins report every output change to the table model.
Inputs are driven by the model (``SimPin.drive``); a level the model has set
survives gpiozero re-applying the pull when a device is created on the pin.
"""

from __future__ import annotations

from collections import deque
from typing import Callable

from gpiozero.pins.mock import MockFactory, MockPWMPin, PinState

from firmware.loop import Loop

OutputListener = Callable[[float], None]
STATES_KEPT = 32          # recent level changes kept per pin


class SimPin(MockPWMPin):
    """A PWM-capable mock pin stamped with virtual time."""

    def __init__(self, factory: "SimPinFactory", info) -> None:
        self._driven: bool | None = None
        super().__init__(factory, info)
        self.states = deque(self.states, maxlen=STATES_KEPT)     # (gpiozero keeps every change: bounded here)

    def _change_state(self, value):
        if self._state == value:
            return False
        now = self.factory.ticks()
        self._state = value
        self.states.append(PinState(now - self._last_change, value))
        self._last_change = now
        if self._function == "output":
            self.factory.output_changed(self.info.name, float(value))
        return True

    def clear_states(self) -> None:
        self._last_change = self.factory.ticks()
        self.states = deque([PinState(0.0, self._state)], maxlen=STATES_KEPT)

    def _set_pull(self, value) -> None:
        super()._set_pull(value)
        if self._driven is not None:  # the model's level wins over the pull
            self.drive(self._driven)

    def drive(self, level: bool) -> None:
        """Set the electrical level of an input as the table model sees it."""
        self._driven = level
        if self._function != "input":
            self._state = level
            return
        if level:
            self.drive_high()
        else:
            self.drive_low()


class SimPinFactory(MockFactory):
    """One bank of simulated pins; all banks of a table share one loop."""

    def __init__(self, loop: Loop, bank: str) -> None:
        self._loop = loop
        self.bank = bank
        self._listeners: dict[str, list[OutputListener]] = {}
        super().__init__(pin_class=SimPin)

    def ticks(self) -> float:  # gpiozero's MockFactory reads monotonic(); we read the loop
        return self._loop.now()

    def sim_pin(self, line: int) -> SimPin:
        return self.pin(f"GPIO{line}")

    def listen(self, line: int, listener: OutputListener) -> None:
        self._listeners.setdefault(f"GPIO{line}", []).append(listener)

    def output_changed(self, pin_name: str, value: float) -> None:
        for listener in self._listeners.get(pin_name, ()):
            listener(value)
