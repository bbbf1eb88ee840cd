"""What a simulated run remembers of itself, in bounded memory: recent events, faults and running tallies.

A run of ten thousand hands publishes millions of events; keeping them all
would make the simulator (and its garbage collector) slower with every hand.
The record keeps the last ``EVENTS_KEPT`` events for tests and debugging,
every fault (a table raises few; capped all the same), and running tallies
of what the report says: stacking times, the players' waits, walls verified,
counted only (a set not enrolled) and rejected, power cuts.  A tally keeps its count, mean and maximum exactly
and its 95th percentile from a bounded, deterministic sample.
"""

from __future__ import annotations

import math
import random
from collections import deque
from typing import Iterator

from firmware.events import Event

EVENTS_KEPT = 50_000
FAULTS_KEPT = 10_000
SAMPLE_KEPT = 4096


class Tally:
    """Count, mean, max exactly; p95 exactly up to ``SAMPLE_KEPT`` values, then from a reservoir sample."""

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        self.max: float | None = None
        self._sample: list[float] = []
        self._rng = random.Random(0)

    def add(self, value: float) -> None:
        self.count += 1
        self.total += value
        self.max = value if self.max is None else max(self.max, value)
        if len(self._sample) < SAMPLE_KEPT:
            self._sample.append(value)
        else:
            slot = self._rng.randrange(self.count)
            if slot < SAMPLE_KEPT:
                self._sample[slot] = value

    def stats(self, p95: bool = True) -> dict[str, float | None]:
        if not self.count:
            return {"mean": None, **({"p95": None} if p95 else {}), "max": None}
        out: dict[str, float | None] = {"mean": round(self.total / self.count, 2)}
        if p95:
            ordered = sorted(self._sample)
            out["p95"] = round(ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)], 2)     # nearest rank
        out["max"] = round(self.max, 2) if self.max is not None else None
        return out


WARNINGS_KEPT = 100     # per kind (a chart or part warns once a boot)


class RecentEvents:
    """The last ``EVENTS_KEPT`` events, read back as :class:`Event` s in order.

    Each is kept as ``(topic, at_s, keys, values)``, tuples of its data's keys and values: the garbage
    collector stops tracking a tuple that holds only strings, numbers and such tuples, so a full collection
    does not walk the tens of thousands of events kept (an ``Event``, or any tuple holding a dict, stays
    tracked for life).  Reading one back makes a new ``Event`` with an equal data dict.
    """

    __slots__ = ("_kept",)

    def __init__(self, maxlen: int = EVENTS_KEPT) -> None:
        self._kept: deque[tuple[str, float, tuple, tuple]] = deque(maxlen=maxlen)

    def append(self, event: Event) -> None:
        data = event.data
        self._kept.append((event.topic, event.at_s, tuple(data), tuple(data.values())))

    def __iter__(self) -> Iterator[Event]:
        for topic, at_s, keys, values in self._kept:
            yield Event(topic, at_s, dict(zip(keys, values)))

    def __len__(self) -> int:
        return len(self._kept)


class RunRecord:
    def __init__(self) -> None:
        self.events = RecentEvents()
        self.faults: deque = deque(maxlen=FAULTS_KEPT)
        self.stack_s = Tally()
        self.waits_s = Tally()
        self.walls_verified = 0
        self.walls_counted = 0          # accepted by count alone: the set is not enrolled
        self.walls_rejected = 0
        self.power_cuts = 0
        self.warnings: dict[str, deque] = {"fairness": deque(maxlen=WARNINGS_KEPT),
                                           "maintenance": deque(maxlen=WARNINGS_KEPT)}

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        topic = event.topic
        if topic == "fault":
            self.faults.append(event.data["fault"])
        elif topic == "stacking.done" and event.data["ok"]:
            self.stack_s.add(event.data["duration_s"])
        elif topic == "players.waited":
            self.waits_s.add(event.data["waited_s"])
        elif topic == "wall.verified":
            if event.data["may_rise"] and not event.data.get("verified", True):
                self.walls_counted += 1
            elif event.data["may_rise"]:
                self.walls_verified += 1
            else:
                self.walls_rejected += 1
        elif topic in ("warning.fairness", "warning.maintenance"):
            self.warnings[topic.split(".", 1)[1]].append({**event.data, "at_s": round(event.at_s, 3)})
        elif topic == "power.cut":
            self.power_cuts += 1
