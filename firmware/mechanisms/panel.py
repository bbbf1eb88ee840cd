"""The panel: lift, dice and reset keys, dealer/status/ready lamps and the buzzer.

Keys are debounced on the loop clock (gpiozero's bounce handling is not
used: it runs on real-time threads and mock pins ignore it).  A key press
is reported once the key has stayed down for ``debounce_s``.  A key that
stays down longer than ``key_stuck_s`` is stuck (a broken key, or something
resting on it): it is reported to the ``on_stuck`` listeners and ignored
(:meth:`Panel.is_down` is False for it, so it never makes a chord) until it
comes up.  A key already down at power-on counts as pressed since then (no
press is reported: holding keys at power-on is a gesture of its own).
The buzzer beeps for a set time.
"""

from __future__ import annotations

from typing import Callable

from firmware.listeners import Listeners, Listening
from firmware.loop import Handle, Loop
from hal.interfaces import DigitalInput, DigitalOutput

KeyCallback = Callable[[str, bool], None]  # (key name, pressed)
StuckCallback = Callable[[str, bool], None]  # (key name, stuck)


class Panel:
    def __init__(self, loop: Loop, keys: dict[str, DigitalInput], lamps: dict[str, DigitalOutput],
                 buzzer: DigitalOutput, debounce_s: float, key_stuck_s: float = 20.0) -> None:
        self.loop = loop
        self.keys = keys
        self.lamps = lamps
        self.buzzer = buzzer
        self.debounce_s = debounce_s
        self.key_stuck_s = key_stuck_s
        self.pressed: dict[str, bool] = {name: False for name in keys}
        self.stuck: set[str] = set()
        self._listeners: Listeners[KeyCallback] = Listeners()
        self._stuck_listeners: Listeners[StuckCallback] = Listeners()
        self._debounce: dict[str, Handle] = {}
        self._stuck_timers: dict[str, Handle] = {}
        self._beep: Handle | None = None
        for name, key in keys.items():
            key.on_edge(lambda active, name=name: self._edge(name, active))
            if key.active:
                self.pressed[name] = True           # held since power-on
                self._arm_stuck(name)

    @property
    def outputs(self) -> list[DigitalOutput]:
        return [*self.lamps.values(), self.buzzer]

    def on_key(self, callback: KeyCallback) -> Listening:
        return self._listeners.add(callback)

    def on_stuck(self, callback: StuckCallback) -> Listening:
        return self._stuck_listeners.add(callback)

    def held(self, *names: str) -> bool:
        """Every key named is down now (raw levels: power-on gestures)."""
        return all(self.keys[n].active for n in names)

    def is_down(self, name: str) -> bool:
        """Pressed and not stuck: what a chord may count."""
        return self.pressed[name] and name not in self.stuck

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
        if active:
            self._arm_stuck(name)
        else:
            timer = self._stuck_timers.pop(name, None)
            if timer is not None:
                timer.cancel()
        was_stuck = name in self.stuck
        if not active and was_stuck:
            self.stuck.discard(name)
        self._listeners.notify(name, active)
        if not active and was_stuck:
            self._stuck_listeners.notify(name, False)

    def _arm_stuck(self, name: str) -> None:
        timer = self._stuck_timers.pop(name, None)
        if timer is not None:
            timer.cancel()
        self._stuck_timers[name] = self.loop.call_later(self.key_stuck_s, self._check_stuck, name)

    def _check_stuck(self, name: str) -> None:
        self._stuck_timers.pop(name, None)
        if self.pressed[name] and self.keys[name].active and name not in self.stuck:
            self.stuck.add(name)
            self._stuck_listeners.notify(name, True)

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
