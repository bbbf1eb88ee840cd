"""Event-driven motion: a phase that advances while a motor runs.

Physics is not ticked.  When a motor starts, stops or jams, the model
computes where it is now and schedules one timer for the next boundary it
will reach (a sensor edge, an end stop, a mid-turn action).  Times are
therefore exact: a cam turn started at t completes at t + T.
"""

from __future__ import annotations

from typing import Callable

from firmware.loop import Handle, Loop


class Axis:
    """A position that moves at ``speed`` per second between ``boundaries``.

    ``on_boundary(position)`` is called when the axis reaches one of the
    boundaries while moving.  ``wrap`` makes it a cam (position modulo 1).
    """

    def __init__(self, loop: Loop, boundaries: list[float], on_boundary: Callable[[float], None],
                 position: float = 0.0, wrap: bool = False, lo: float = 0.0, hi: float = 1.0) -> None:
        self._loop = loop
        self._boundaries = sorted(boundaries)
        self._on_boundary = on_boundary
        self._position = position
        self._velocity = 0.0
        self._since = loop.now()
        self._timer: Handle | None = None
        self._wrap = wrap
        self._lo, self._hi = lo, hi
        self.jammed = False

    @property
    def position(self) -> float:
        return self._position_at(self._loop.now())

    @property
    def moving(self) -> bool:
        return self._velocity != 0.0 and not self.jammed

    def _position_at(self, now: float) -> float:
        if self.jammed or self._velocity == 0.0:
            return self._position
        pos = self._position + self._velocity * (now - self._since)
        if not self._wrap:
            pos = min(self._hi, max(self._lo, pos))
        return pos

    def place(self, position: float) -> None:
        """Put a stopped axis where it was left (a table restored between runs); no boundary fires."""
        self._freeze()
        self._position = position % 1.0 if self._wrap else min(self._hi, max(self._lo, position))
        self._schedule()

    def set_velocity(self, velocity: float) -> None:
        self._freeze()
        self._velocity = velocity
        self._schedule()

    def jam(self, jammed: bool = True) -> None:
        """Stop moving although the motor is driven (a tile caught in the mechanism)."""
        self._freeze()
        self.jammed = jammed
        self._schedule()

    def _freeze(self) -> None:
        now = self._loop.now()
        self._position = self._position_at(now)
        self._since = now
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _schedule(self) -> None:
        if self.jammed or self._velocity == 0.0:
            return
        pos = self._position
        eps = 1e-9
        if self._velocity > 0:
            ahead = [b for b in self._boundaries if b > pos + eps]
            if not ahead and self._wrap:
                ahead = [b + 1.0 for b in self._boundaries]
            if not ahead:
                return
            target = ahead[0]
        else:
            behind = [b for b in self._boundaries if b < pos - eps]
            if not behind:
                return
            target = behind[-1]
        delay = (target - pos) / self._velocity
        self._timer = self._loop.call_later(delay, self._arrive, target)

    def _arrive(self, target: float) -> None:
        self._timer = None
        now = self._loop.now()
        if self._wrap and target >= 1.0:
            target -= 1.0
        self._position = target
        self._since = now
        self._on_boundary(target)
        self._schedule()
