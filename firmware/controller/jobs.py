"""Operations the controller starts on entering a state: each reports done or the fault that stopped it.

A job drives several mechanisms at once and calls ``done(fault)`` exactly
once: ``fault`` is None when every part finished.  The first failure stops
the others (a latched fault's safe stop is the controller's business).
"""

from __future__ import annotations

import logging
from typing import Callable

from firmware.faults import Fault
from firmware.mechanisms.base import MoveResult
from firmware.mechanisms.center_lift import LiftStop
from firmware.table import Table

log = logging.getLogger(__name__)

JobDone = Callable[[Fault | None], None]


class Job:
    """Counts its parts down; the first fault ends it."""

    def __init__(self, name: str, done: JobDone) -> None:
        self.name = name
        self._done: JobDone | None = done
        self._parts = 0

    def part(self) -> Callable[[MoveResult], None]:
        self._parts += 1
        return self._part_done

    def _part_done(self, result: MoveResult) -> None:
        if self._done is None:
            return
        if not result.ok:
            self._finish(result.fault)
            return
        self._parts -= 1
        if self._parts == 0:
            self._finish(None)

    def finish_if_empty(self) -> None:
        if self._parts == 0:
            self._finish(None)

    def cancel(self) -> None:
        self._done = None

    def _finish(self, fault: Fault | None) -> None:
        done, self._done = self._done, None
        if done is not None:
            log.debug("%s: %s", self.name, "done" if fault is None else fault)
            done(fault)


def home_all(table: Table, done: JobDone) -> Job:
    """Centre down, every wall lift and stacking cam to its home switch (one turn where it is not)."""
    job = Job("homing", done)
    for head in table.heads:
        head.stop()
    table.turntable.stop()
    if table.center_lift.position is not LiftStop.DOWN:
        table.center_lift.move_to(LiftStop.DOWN, job.part())
    for cam in [*table.lifts, *(h.cam for h in table.heads)]:
        if not cam.at_home:
            cam.turn(job.part())
    job.finish_if_empty()
    return job


def raise_walls(table: Table, done: JobDone) -> Job:
    """One cam turn of all four wall lifts: the set stacked underneath rises as four walls."""
    job = Job("raising", done)
    for lift in table.lifts:
        lift.turn(job.part())
    return job


def move_center(table: Table, stop: LiftStop, done: JobDone) -> Job:
    job = Job(f"centre {stop.value}", done)
    if table.center_lift.position is stop:
        job.finish_if_empty()
    else:
        table.center_lift.move_to(stop, job.part())
    return job
