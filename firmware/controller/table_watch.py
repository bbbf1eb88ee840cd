"""Warnings that are not faults: a shuffle that looks biased, a part slowing towards a jam.

The controller feeds the shuffle monitor (:mod:`firmware.fairness.monitor`)
each deal with the wall the reader mapped and every seat's starting tiles,
and the wear monitor (:mod:`firmware.maintenance.wear`) every completed,
learned cam movement (``move.done`` of a stacking head or a wall lift).  A
warning is logged and published (``warning.fairness``,
``warning.maintenance``) with its evidence, and shown in the status
(``warnings`` component: ``mjtable diag``, the page, the fleet); the table
keeps playing.  The evidence restarts when the firmware starts.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Mapping, Sequence

from firmware.events import Event, EventBus
from firmware.fairness.monitor import ShuffleMonitor
from firmware.maintenance.wear import WearMonitor
from firmware.tiles.wall import Wall

log = logging.getLogger(__name__)

WATCHED_PARTS = ("stacker", "wall_lift")       # the cams whose cycle times are trended


class TableWatch:
    def __init__(self, bus: EventBus, hand_now: Callable[[], int]) -> None:
        self.bus = bus
        self.hand_now = hand_now
        self.fairness = ShuffleMonitor()
        self.wear = WearMonitor()
        self._subscription = bus.subscribe("move.done", self._moved)

    def close(self) -> None:
        self._subscription.cancel()

    def dealt(self, hand: int, wall: Wall | None, starting: Mapping[int, Sequence[int | None]]) -> None:
        for warning in self.fairness.observe(hand, wall, starting):
            self.bus.publish("warning.fairness", **warning.to_dict())

    def _moved(self, event: Event) -> None:
        mechanism = str(event.data.get("mechanism", ""))
        if not event.data.get("learned", True) or not mechanism.startswith(WATCHED_PARTS):
            return
        warning = self.wear.observe(mechanism, float(event.data.get("elapsed_s", 0.0)), event.at_s, self.hand_now())
        if warning is not None:
            self.bus.publish("warning.maintenance", **warning.to_dict())

    def status(self) -> dict[str, Any]:
        return {"fairness": self.fairness.status(), "maintenance": self.wear.status()}
