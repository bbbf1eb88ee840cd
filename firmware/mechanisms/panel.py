"""The panel: lift, dice and reset keys, dealer/status/ready lamps and the buzzer.

Keys are debounced on the loop clock (gpiozero's bounce handling is not
used: it runs on real-time threads and mock pins ignore it).  A key press
is reported once the key has stayed down for ``debounce_s``.  A key that
stays down longer than ``key_stuck_s`` is stuck (a broken key, or something
resting on it): it is reported to the ``on_stuck`` listeners and ignored
(it clicks nothing and makes no chord) until it comes up.  A key already
down at power-on counts as pressed since then (no press is reported:
holding keys at power-on is a gesture of its own).

What a key *means* is a click: the key went down and came up again before
it was stuck (:meth:`Panel.on_click`, reported when it comes up).  So a key
that sticks down, or something left resting on it, never acts: a lift key
stuck in the middle of a hand does not end it.  Keys down together make a
chord, reported once, when the first of them comes up (the others' release
then means nothing); a key held since power-on clicks nothing.
The buzzer beeps for a set time.
"""

from __future__ import annotations

from typing import Callable

from firmware.listeners import Listeners, Listening
from firmware.loop import Handle, Loop
from firmware.ports.hardware import DigitalInput, DigitalOutput

KeyCallback = Callable[[str, bool], None]  # (key name, pressed)
ClickCallback = Callable[[str, frozenset[str]], None]  # (key name, the other keys down with it: a chord)
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
        self._click_listeners: Listeners[ClickCallback] = Listeners()
        self._chord: dict[str, set[str]] = {}   # a key down now -> the keys that were down with it meanwhile
        self._spent: set[str] = set()           # keys down now whose release clicks nothing (a chord fired, power-on)
        self._stuck_listeners: Listeners[StuckCallback] = Listeners()
        self._debounce: dict[str, Handle] = {}
        self._stuck_timers: dict[str, Handle] = {}
        self._beep: Handle | None = None
        for name, key in keys.items():
            key.on_edge(lambda active, name=name: self._edge(name, active))
            if key.active:
                self.pressed[name] = True           # held since power-on
                self._spent.add(name)
                self._arm_stuck(name)

    @property
    def outputs(self) -> list[DigitalOutput]:
        return [*self.lamps.values(), self.buzzer]

    def on_key(self, callback: KeyCallback) -> Listening:
        return self._listeners.add(callback)

    def on_click(self, callback: ClickCallback) -> Listening:
        """``callback(name, chord)`` when a key that went down comes up unstuck: ``chord`` are the other keys that
        were down with it (none: a single click)."""
        return self._click_listeners.add(callback)

    def on_stuck(self, callback: StuckCallback) -> Listening:
        return self._stuck_listeners.add(callback)

    def held(self, *names: str) -> bool:
        """Every key named is down now (raw levels: power-on gestures)."""
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
        if active:
            self._arm_stuck(name)
        else:
            timer = self._stuck_timers.pop(name, None)
            if timer is not None:
                timer.cancel()
        was_stuck = name in self.stuck
        if not active and was_stuck:
            self.stuck.discard(name)
        click = self._chording(name, active, was_stuck)
        self._listeners.notify(name, active)
        if not active and was_stuck:
            self._stuck_listeners.notify(name, False)
        if click is not None:
            self._click_listeners.notify(name, click)

    def _chording(self, name: str, down: bool, was_stuck: bool) -> frozenset[str] | None:
        """Keep track of which keys are down together; the chord a release clicks (None: no click)."""
        if down:
            mates = {k for k in self._chord if k not in self.stuck}
            self._chord[name] = set(mates)
            for mate in mates:
                self._chord[mate].add(name)
            return None
        mates = self._chord.pop(name, set())
        for other in self._chord.values():
            other.discard(name)
        spent = name in self._spent
        self._spent.discard(name)
        if was_stuck or spent:
            return None
        self._spent.update(k for k in mates if k in self._chord)     # (a chord clicks once)
        return frozenset(mates)

    def _arm_stuck(self, name: str) -> None:
        timer = self._stuck_timers.pop(name, None)
        if timer is not None:
            timer.cancel()
        self._stuck_timers[name] = self.loop.call_later(self.key_stuck_s, self._check_stuck, name)

    def _check_stuck(self, name: str) -> None:
        self._stuck_timers.pop(name, None)
        if self.pressed[name] and self.keys[name].active and name not in self.stuck:
            self.stuck.add(name)
            for mate in self._chord.get(name, ()):      # (a stuck key makes no chord: the others click alone)
                self._chord[mate].discard(name)
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
