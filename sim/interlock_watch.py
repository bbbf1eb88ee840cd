"""How long any motor ran while an interlock was active, measured on the simulated table's own pins.

An independent check of the safety supervisor, from outside the firmware:
the watch sees the same input levels as the controller (the lid switch, the
supply-good line, the reset key, every panel key) and every motor output,
and integrates the time during which a motor was on while an interlock was
present: the lid open, the supply low, the reset key down, or a key held
past the panel's stuck time (from when the controller can know it: the
debounce plus ``key_stuck_s``).  On a table that holds its interlocks the
total is zero: motors stop in the very instant (the same loop tick) the
level changes.
"""

from __future__ import annotations

from sim.world import TableWorld

INTERLOCKS = ("lid", "supply", "reset_key", "stuck_key")


class InterlockWatch:
    def __init__(self, world: TableWorld) -> None:
        self.world = world
        panel = world.cfg.panel
        self.stuck_after_s = panel.debounce_s + panel.key_stuck_s
        self.motor_s: dict[str, float] = {name: 0.0 for name in INTERLOCKS}
        self.worst: dict[str, tuple[float, list[str]] | None] = {name: None for name in INTERLOCKS}
        self._since: dict[str, float | None] = {name: None for name in ("lid", "supply", "reset_key")}
        self._key_down: dict[str, float] = {}
        self._last_s = world.loop.now()
        self._keys = list(world.keys.items())
        self._none_active = True
        self._sample()
        world.io.observe(world.MOTORS, self._motor_changing)
        world.io.observe(frozenset({"lid", "supply_ok"} | set(world.keys)), self._changing)

    @property
    def total_s(self) -> float:
        return sum(self.motor_s.values())

    def _motors_on(self) -> set[str]:
        return self.world.motors_on()

    def _changing(self, after: bool) -> None:
        """Before a change: account for the interval since the last one; after it: read the levels again."""
        if after:
            self._sample()
            return
        self._account()

    def _motor_changing(self, after: bool) -> None:
        """A motor's output: the interlocks' levels do not change with it (nothing to read again after)."""
        if not after:
            self._account()

    def _account(self) -> None:
        """The interval since the last change: the motor time under each interlock active in it."""
        now = self.world.loop.now()
        if self._none_active:
            self._last_s = now              # (no interlock: no motor time to count, whatever runs)
            return
        running = self._motors_on()
        if running and now > self._last_s:
            for name, since in self._active_since().items():
                start = max(self._last_s, since)
                if now > start:
                    self.motor_s[name] += now - start
                    worst = self.worst[name]
                    if worst is None or now - start > worst[0]:
                        self.worst[name] = (round(now - start, 3), sorted(running))
        self._last_s = now

    def _active_since(self) -> dict[str, float]:
        active = {name: since for name, since in self._since.items() if since is not None}
        stuck = [down + self.stuck_after_s for down in self._key_down.values()]
        if stuck:
            active["stuck_key"] = min(stuck)
        return active

    def _sample(self) -> None:
        w = self.world
        now = w.loop.now()
        for name, active in (("lid", bool(w.lid is not None and w.lid.active)), ("supply", not w.supply_ok.active),
                             ("reset_key", w.keys["key_reset"].active)):
            if not active:
                self._since[name] = None
            elif self._since[name] is None:
                self._since[name] = now
        for key, sensor in self._keys:
            if sensor.active:
                if key not in self._key_down:
                    self._key_down[key] = now
            elif self._key_down:
                self._key_down.pop(key, None)
        # (what _account asks at every motor's edge, known until the levels are read again)
        self._none_active = not self._key_down and all(since is None for since in self._since.values())

    def finish(self) -> dict[str, float]:
        """Close the last interval (at the end of a run) and return the motor seconds per interlock."""
        self._account()
        return {name: round(s, 3) for name, s in self.motor_s.items()}
