"""A host clock that runs ``speed`` times faster than real time: the light tables' and their hall's, in a fault test.

Ten minutes of a parlour's play (its hands, its tables' 60 s counters and
their state, the hall's three-minute ``stale``) are played in ten minutes
divided by ``speed`` of real time.  Only the tables' and the hall's own
timing runs fast: the brokers, the bridges, the MQTT keep-alives and the
sockets stay in real time, so what a broker queues while a bridge is cut is
what ten minutes of play would make it queue.  Both clocks start at the
host's (the wall clock at the real date) and then advance ``speed`` seconds
a real second; a :class:`~firmware.loop.RealTimeLoop` on it is given the same
``speed`` so its waits for the next timer are real seconds.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timezone

log = logging.getLogger(__name__)


class SpedClock:
    """The port :class:`firmware.ports.clock.Clock`, ``speed`` times real time from the moment it is made."""

    def __init__(self, speed: float) -> None:
        if speed <= 0:
            raise ValueError("a clock's speed is a positive factor of real time")
        self.speed = speed
        self._real_0 = time.monotonic()
        self._wall_0 = time.time()

    def monotonic_s(self) -> float:
        """Seconds since the clock was made, sped up (they only go forward)."""
        return (time.monotonic() - self._real_0) * self.speed

    def wall_s(self) -> float:
        """Unix seconds: the date it was made, plus the sped-up seconds since."""
        return self._wall_0 + self.monotonic_s()

    def utc_now(self) -> datetime:
        return datetime.fromtimestamp(self.wall_s(), timezone.utc)

    def real_s(self, clock_s: float) -> float:
        """The real seconds ``clock_s`` of this clock take."""
        return clock_s / self.speed
