"""Model-side view of the pins: sensors the model drives, outputs it watches.

Pin specs follow the table config (``[!][bank:]GPIOn``).  A sensor's
*active* state is translated to the electrical level by its polarity, and a
stuck fault (injected) overrides what the mechanism would show.
"""

from __future__ import annotations

from typing import Callable

from firmware.config import pin_line
from firmware.loop import Loop
from sim.pin_factory import SimPinFactory


class SimSensor:
    """A sensor line driven by a mechanics model."""

    def __init__(self, name: str, pin, active_low: bool, observers: list[Callable[[bool], None]] | None = None) -> None:
        self.name = name
        self._pin = pin
        self._active_low = active_low
        self._model_active = False
        self.stuck: bool | None = None  # None, or the level (active) it is stuck at
        # told before (False) and after (True) each change (the list is the SimIO's, which adds to it)
        self._observers = observers if observers is not None else []
        self._apply()

    def set(self, active: bool) -> None:
        if active == self._model_active and not self._observers:
            return          # (the level as it is, and nobody to tell: a track's feed-full after every tile)
        self._model_active = active
        self._apply()

    def stick(self, active: bool | None) -> None:
        """Inject a stuck-on (True) / stuck-off (False) fault, or clear it (None)."""
        self.stuck = active
        self._apply()

    @property
    def active(self) -> bool:
        return self._model_active if self.stuck is None else self.stuck

    def _apply(self) -> None:
        observers = self._observers
        for observer in observers:
            observer(False)                     # before the level changes: observers close the interval up to now
        active = self._model_active if self.stuck is None else self.stuck       # (self.active)
        self._pin.drive(active != self._active_low)
        for observer in observers:
            observer(True)


class SimIO:
    """Pin factories of every bank and the model's handles on their pins."""

    def __init__(self, loop: Loop, banks: list[str]) -> None:
        self.factories = {bank: SimPinFactory(loop, bank) for bank in banks}
        self.sensors: dict[str, SimSensor] = {}
        self.output_levels: dict[str, bool] = {}
        # observers of named lines, told before (False) and after (True) each change of one of them
        self.observers: list[tuple[frozenset[str], Callable[[bool], None]]] = []
        self._observers_of: dict[str, list[Callable[[bool], None]]] = {}    # the same, by line (in order)
        self.outputs_on: set[str] = set()                    # outputs active now (kept as they change)

    def sensor(self, name: str, spec: str) -> SimSensor:
        bank, line, active_low = pin_line(spec)
        observers = self._observers_of.setdefault(name, [])
        sensor = SimSensor(name, self.factories[bank].sim_pin(line), active_low, observers)
        self.sensors[name] = sensor
        return sensor

    def observe(self, names: frozenset[str], observer: Callable[[bool], None]) -> None:
        """``observer(after)`` just before (False) and after (True) any of these inputs or outputs changes."""
        self.observers.append((names, observer))
        for name in names:
            self._observers_of.setdefault(name, []).append(observer)

    def watch(self, name: str, spec: str, on_change: Callable[[bool], None]) -> None:
        """Call ``on_change(active)`` whenever the firmware changes this output."""
        bank, line, active_low = pin_line(spec)
        self.output_levels[name] = False

        def listener(value: float) -> None:
            active = (value >= 0.5) != active_low
            if self.output_levels.get(name) != active:
                observers = self._observers_of.get(name, ())        # (self._changing, once for both)
                for observer in observers:
                    observer(False)
                self.output_levels[name] = active
                (self.outputs_on.add if active else self.outputs_on.discard)(name)
                for observer in observers:
                    observer(True)
                on_change(active)

        self.factories[bank].listen(line, listener)

    def reset(self) -> None:
        for factory in self.factories.values():
            factory.reset()
