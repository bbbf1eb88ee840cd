"""gpiozero mock pins on virtual time, wired to the simulated table.

:class:`SimPinFactory` is a ``MockFactory`` whose ``ticks()`` is the virtual
loop's clock and whose pins report every output change to the table model.
Inputs are driven by the model (``SimPin.drive``); a level the model has set
survives gpiozero re-applying the pull when a device is created on the pin.

The simulator changes pins some 1,100 times a hand, so the pin's own side of
gpiozero's mock machinery is done here in one step each way (the same checks,
the same record of states, the same ``when_changed`` call into the device
that the HAL created): a level driven on an input, a state written to an
output, a state read.  The devices (``DigitalInputDevice`` ...) and the HAL
above them run unchanged, but for the device's two ``threading.Event`` s
(active, inactive), set and cleared on every edge for a thread that would
wait: on a simulated pin each is a :class:`LoopEvent`, the same flag without
the lock and condition (nothing can wait for a level on virtual time).
"""

from __future__ import annotations

from collections import deque
from typing import Callable

from gpiozero.exc import PinSetInput
from gpiozero.pins.mock import MockFactory, MockPWMPin, PinState

from firmware.loop import Loop

OutputListener = Callable[[float], None]
STATES_KEPT = 32          # recent level changes kept per pin
_RISING = frozenset({"both", "rising"})
_FALLING = frozenset({"both", "falling"})


class LoopEvent:
    """``threading.Event``'s flag for a device on a simulated pin: its level changes on the virtual loop, so no
    thread may wait for it (a wait that would block says so)."""

    __slots__ = ("_flag",)

    def __init__(self, flag: bool = False) -> None:
        self._flag = flag

    def is_set(self) -> bool:
        return self._flag

    def set(self) -> None:
        self._flag = True

    def clear(self) -> None:
        self._flag = False

    def wait(self, timeout: float | None = None) -> bool:
        if self._flag or timeout == 0:
            return self._flag
        raise RuntimeError("a simulated pin changes on the virtual loop: no thread can wait for its level")


def _loop_events(device: object) -> None:
    """A device that listens to a simulated pin: its active/inactive events as :class:`LoopEvent` s (the flags
    as they are)."""
    for name in ("_active_event", "_inactive_event"):
        event = getattr(device, name, None)
        if event is not None and not isinstance(event, LoopEvent):
            setattr(device, name, LoopEvent(event.is_set()))


class SimPin(MockPWMPin):
    """A PWM-capable mock pin stamped with virtual time."""

    def __init__(self, factory: "SimPinFactory", info) -> None:
        self._driven: bool | None = None
        self._now = factory.clock      # (the loop's own clock: ``ticks()`` without its call, at every change)
        self._name = info.name
        self._output_changed = factory.output_changed
        super().__init__(factory, info)
        self.states = deque(self.states, maxlen=STATES_KEPT)     # (gpiozero keeps every change: bounded here)

    def _change_state(self, value):
        if self._state == value:
            return False
        now = self._now()
        self._state = value
        self.states.append(PinState(now - self._last_change, value))
        self._last_change = now
        if self._function == "output":
            self._output_changed(self._name, float(value))
        return True

    # the pin's state, read and written without the base class's property and checks in several calls
    def _get_state(self):
        return self._state

    def _set_state(self, value):
        if self._function == "input":
            raise PinSetInput(f"cannot set state of pin {self!r}")
        assert self._function == "output"
        assert 0 <= value <= 1
        self._change_state(float(value))

    state = property(_get_state, _set_state, doc=MockPWMPin.state.__doc__)

    def _set_when_changed(self, value) -> None:
        super()._set_when_changed(value)
        if value is not None:
            _loop_events(getattr(value, "__self__", None))

    def clear_states(self) -> None:
        self._last_change = self.factory.ticks()
        self.states = deque([PinState(0.0, self._state)], maxlen=STATES_KEPT)

    def _set_pull(self, value) -> None:
        super()._set_pull(value)
        if self._driven is not None:  # the model's level wins over the pull
            self.drive(self._driven)

    def drive(self, level: bool) -> None:
        """Set the electrical level of an input as the table model sees it (``drive_high`` / ``drive_low``
        in one step: the state recorded, then the device told through ``when_changed`` on the edges it
        listens to)."""
        self._driven = level
        if self._function != "input":
            self._state = level
            return
        if not self._change_state(bool(level)):
            return
        if self._when_changed is not None and self._edges in (_RISING if level else _FALLING):
            method = self._when_changed()
            if method is None:
                self.when_changed = None
            else:
                method(self._last_change, self._state)


class SimPinFactory(MockFactory):
    """One bank of simulated pins; all banks of a table share one loop."""

    def __init__(self, loop: Loop, bank: str) -> None:
        self._loop = loop
        self.clock = loop.now
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
