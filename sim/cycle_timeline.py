"""Where a stacking cycle's time goes, per head, measured on the simulated table's own pins.

Instrumentation only: the timeline watches the pins the firmware drives
(each stacker cam's motor, the disk) and the sensors it reads (the tile
counters, the feed-full optics) through :meth:`sim.models.io.SimIO.observe`,
plus the controller's bus events that bound a cycle, and sorts every instant
of every head into one state:

* ``stacking``: its cam motor runs (a stack is being made);
* ``first_tiles``: the disk runs, the cam has not turned yet this cycle: the
  head waits for the two tiles of its first stack (the tracks fill);
* ``no_tiles``: the cam is still, the side not done, the disk runs: the head
  waits for the ring to drop its next tiles (the shuffle's supply);
* ``disk_held``: the cam is still, the side not done, the disk stopped: the
  head waits on the other heads (back-pressure of a full track) or a pause;
* ``side_done``: the side is complete and waits for the last side.

Around the cycle, for the set as a whole: ``reader_start`` (the controller
began the cycle until the disk started: the reader's stream must be up first),
``verify`` (the last side done until the walls were verified: the TAGs still
on the line, then the verification) and ``lift_gap`` (the wall lifts home
until the cycle began: the handover from raising one set to stacking the
next; a cycle that is not preceded by a raise has none).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from firmware.config import SIDES
from firmware.events import Event
from sim.world import TableWorld

HEAD_STATES = ("stacking", "first_tiles", "no_tiles", "disk_held", "side_done")


@dataclass
class CycleTimes:
    """One cycle: seconds per head and state, and the set's times around the cycle."""
    started_s: float
    duration_s: float = 0.0
    heads: list[dict[str, float]] = field(default_factory=lambda: [dict.fromkeys(HEAD_STATES, 0.0)
                                                                    for _ in range(SIDES)])
    side_done_s: list[float | None] = field(default_factory=lambda: [None] * SIDES)
    pauses: int = 0                 # the disk stopped while some side was not done
    gate_changes: int = 0           # a head's entry gate opened or closed (all four heads)
    reader_start_s: float = 0.0
    verify_s: float | None = None
    lift_gap_s: float | None = None
    ok: bool = False

    @property
    def last_side(self) -> int:
        done = [(t if t is not None else float("inf"), s) for s, t in enumerate(self.side_done_s)]
        return max(done)[1]


class CycleTimeline:
    """Attach to a world, and give :meth:`on_event` the controller's bus events (a ``SimRun`` observer)."""

    def __init__(self, world: TableWorld) -> None:
        self.world = world
        self.loop = world.loop
        self.cycles: list[CycleTimes] = []
        self._current: CycleTimes | None = None
        self._began_s: float | None = None          # controller.stacking
        self._lifts_home_s: float | None = None     # the last wall lift turn ended
        self._done: list[bool] = [False] * SIDES
        self._turned: list[bool] = [False] * SIDES
        self._last_s = self.loop.now()
        self._disk_on = False
        self._verifying: CycleTimes | None = None
        self._lifts_were_on = False
        names = {"disk", *(f"stacker{s}" for s in range(SIDES)), *(f"wall_lift{s}" for s in range(SIDES))}
        world.io.observe(frozenset(names), self._changing)
        world.io.observe(frozenset(f"gate{s}" for s in range(SIDES)), self._gate_changing)

    def _gate_changing(self, after: bool) -> None:
        if after and self._current is not None:
            self._current.gate_changes += 1

    # -- pins ---------------------------------------------------------------------------------------------
    def _changing(self, after: bool) -> None:
        if not after:
            self._account()
            return
        levels = self.world.io.output_levels
        disk_on = levels.get("disk", False)
        if self._current is not None and self._disk_on and not disk_on and not all(self._done):
            self._current.pauses += 1
        self._disk_on = disk_on
        for side in range(SIDES):
            if levels.get(f"stacker{side}", False):
                self._turned[side] = True
        lifts = [levels.get(f"wall_lift{s}", False) for s in range(SIDES)]
        if self._lifts_were_on and not any(lifts):
            self._lifts_home_s = self.loop.now()
        self._lifts_were_on = any(lifts)

    def _account(self) -> None:
        now = self.loop.now()
        span = now - self._last_s
        self._last_s = now
        cycle = self._current
        if cycle is None or span <= 0.0:
            return
        levels = self.world.io.output_levels
        disk = levels.get("disk", False)
        for side in range(SIDES):
            if self._done[side]:
                state = "side_done"
            elif levels.get(f"stacker{side}", False):
                state = "stacking"
            elif disk:
                state = "no_tiles" if self._turned[side] else "first_tiles"
            else:
                state = "disk_held"
            cycle.heads[side][state] += span

    # -- bus ----------------------------------------------------------------------------------------------
    def on_event(self, event: Event) -> None:
        topic = event.topic
        if topic == "controller.stacking":
            self._began_s = event.at_s
        elif topic == "stacking.start":
            self._account()
            cycle = CycleTimes(event.at_s)
            if self._began_s is not None:
                cycle.reader_start_s = event.at_s - self._began_s
            if self._lifts_home_s is not None and (self._began_s is None or self._lifts_home_s <= self._began_s):
                cycle.lift_gap_s = event.at_s - self._lifts_home_s
            self._lifts_home_s = None
            self._current = cycle
            self._done = [False] * SIDES
            self._turned = [False] * SIDES
            self._disk_on = self.world.io.output_levels.get("disk", False)
        elif topic == "stacking.side_done" and self._current is not None:
            self._account()
            self._done[event.data["side"]] = True
            self._current.side_done_s[event.data["side"]] = event.at_s - self._current.started_s
        elif topic == "stacking.done" and self._current is not None:
            self._account()
            cycle, self._current = self._current, None
            cycle.duration_s = event.data["duration_s"]
            cycle.ok = bool(event.data["ok"])
            if cycle.ok:
                self.cycles.append(cycle)
                self._verifying = cycle
            self._began_s = None
        elif topic == "wall.verified" and self._verifying is not None:
            cycle, self._verifying = self._verifying, None
            cycle.verify_s = event.at_s - (cycle.started_s + cycle.duration_s)


def summarise(cycles: list[CycleTimes]) -> dict:
    """Mean seconds per cycle: each head state averaged over the heads, the same for the side that finished last
    (its idle time is what the cycle lost to the cam bound), and the set's times around the cycle."""
    n = len(cycles)
    if n == 0:
        return {}
    mean_head = {state: sum(sum(h[state] for h in c.heads) / SIDES for c in cycles) / n for state in HEAD_STATES}
    last = {state: sum(c.heads[c.last_side][state] for c in cycles) / n for state in HEAD_STATES}

    def mean(values: list[float | None]) -> float | None:
        kept = [v for v in values if v is not None]
        return sum(kept) / len(kept) if kept else None

    return {"cycles": n, "duration_s": sum(c.duration_s for c in cycles) / n,
            "mean_head_s": mean_head, "last_side_s": last,
            "pauses": sum(c.pauses for c in cycles) / n,
            "gate_changes": sum(c.gate_changes for c in cycles) / n,
            "reader_start_s": mean([c.reader_start_s for c in cycles]),
            "verify_s": mean([c.verify_s for c in cycles]),
            "lift_gap_s": mean([c.lift_gap_s for c in cycles])}
