"""The panel: lift, dice and reset keys, dealer/status/ready lamps and the buzzer.

Keys are debounced on the loop clock (gpiozero's bounce handling is not
used: it runs on real-time threads and mock pins ignore it).  A key press
is reported once the key has stayed down for ``debounce_s``; both lift keys
down together are reported as one chord.  The buzzer beeps for a set time.
"""

from __future__ import annotations

from typing import Callable

from firmware.loop import Handle, Loop
from hal.interfaces import DigitalInput, DigitalOutput

KeyCallback = Callable[[str, bool], None]  # (key name, pressed)


class Panel:
    def __init__(self, loop: Loop, keys: dict[str, DigitalInput], lamps: dict[str, DigitalOutput],
                 buzzer: DigitalOutput, debounce_s: float) -> None:
        self.loop = loop
        self.keys = keys
        self.lamps = lamps
        self.buzzer = buzzer
        self.debounce_s = debounce_s
        self.pressed: dict[str, bool] = {name: False for name in keys}
        self._listeners: list[KeyCallback] = []
        self._debounce: dict[str, Handle] = {}
        self._beep: Handle | None = None
        for name, key in keys.items():
            key.on_edge(lambda active, name=name: self._edge(name, active))

    @property
    def outputs(self) -> list[DigitalOutput]:
        return [*self.lamps.values(), self.buzzer]

    def on_key(self, callback: KeyCallback) -> None:
        self._listeners.append(callback)

    def held(self, *names: str) -> bool:
        return all(self.keys[n].active for n in names)

    def _edge(self, name: str, active: bool) -> None:
        pending = self._debounce.pop(name, None)
        if pending is not None:
            pending.cancel()
        self._debounce[name] = self.loop.call_later(self.debounce_s, self._settled, name)

    def _settled(self, name: str) -> None:
        self._debounce.pop(name, None)
        active = self.keys[name].active
        if active == self.pressed[name]:
            return
        self.pressed[name] = active
        for listener in list(self._listeners):
            listener(name, active)

    def lamp(self, name: str, on: bool) -> None:
        self.lamps[name].set(on)

    def beep(self, duration_s: float = 0.2) -> None:
        if self._beep is not None:
            self._beep.cancel()
        self.buzzer.set(True)
        self._beep = self.loop.call_later(duration_s, self._beep_off)

    def _beep_off(self) -> None:
        self._beep = None
        self.buzzer.set(False)

    def safe_stop(self) -> None:
        for output in self.outputs:
            output.set(output.safe_value)
