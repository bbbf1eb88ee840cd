"""Warnings that are not faults: a shuffle that looks biased, a part slowing towards a jam.

The controller feeds the shuffle monitor (:mod:`firmware.fairness.monitor`)
each deal with the wall the reader mapped and every seat's starting tiles,
and the wear monitor (:mod:`firmware.maintenance.wear`) every completed,
learned cam movement (``move.done`` of a stacking head or a wall lift).  A
warning is logged and published (``warning.fairness``,
``warning.maintenance``) with its evidence, and shown in the status
(``warnings`` component: ``mjtable diag``, the page, the fleet); the table
keeps playing.  The shuffle charts are written with each deal and read
back at start (:meth:`TableWatch.restore`), so a restart loses no evidence
of a bias; the wear baselines are learned again after a restart (a few
cycles of each part).
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Mapping, Sequence

from firmware.events import Event, EventBus
from firmware.fairness.monitor import ShuffleMonitor
from firmware.maintenance.wear import WearMonitor, part_mechanism
from firmware.tiles.wall import Wall

log = logging.getLogger(__name__)

WATCHED_PARTS = ("stacker", "wall_lift")       # the cams whose cycle times are trended


class TableWatch:
    def __init__(self, bus: EventBus, hand_now: Callable[[], int], cycles_now: Callable[[], int] = lambda: 0) -> None:
        self.bus = bus
        self.hand_now = hand_now
        self.cycles_now = cycles_now
        self.fairness = ShuffleMonitor()
        self.wear = WearMonitor()
        self._subscription = bus.subscribe("move.done", self._moved)

    def restore(self, saved: Mapping[str, Any]) -> None:
        """The shuffle charts the table database kept (a document that does not fit: they start afresh)."""
        try:
            self.fairness.restore(saved)
        except (TypeError, ValueError, AttributeError) as exc:
            log.warning("shuffle monitor: the saved charts do not fit (%s): they start afresh", exc)
            self.fairness = ShuffleMonitor()

    def close(self) -> None:
        self._subscription.cancel()

    def dealt(self, hand: int, wall: Wall | None, starting: Mapping[int, Sequence[int | None]]) -> None:
        for warning in self.fairness.observe(hand, wall, starting, self.cycles_now()):
            self.bus.publish("warning.fairness", **warning.to_dict())

    def _moved(self, event: Event) -> None:
        mechanism = str(event.data.get("mechanism", ""))
        if not event.data.get("learned", True) or not mechanism.startswith(WATCHED_PARTS):
            return
        warning = self.wear.observe(mechanism, float(event.data.get("elapsed_s", 0.0)), event.at_s, self.hand_now())
        if warning is not None:
            self.bus.publish("warning.maintenance", **warning.to_dict())

    def status(self) -> dict[str, Any]:
        """The warnings only (a status component: it changes when a warning is raised or reset)."""
        return {"fairness": [w.to_dict() for w in self.fairness.warnings],
                "maintenance": [w.to_dict() for w in self.wear.warnings]}

    def evidence(self) -> dict[str, Any]:
        """The warnings with every chart's and part's statistic now (``mjtable diag warnings``)."""
        return {"fairness": self.fairness.status(), "maintenance": self.wear.status()}

    def reset(self, what: str) -> None:
        """``fairness``: the shuffle charts start again; ``maintenance``: every part learns its baseline again; a
        part (head0..3, lift0..3): that part only (it was repaired or replaced).  ValueError for anything else."""
        if what == "fairness":
            self.fairness.reset()
        elif what == "maintenance":
            self.wear.reset()
        else:
            mechanism = part_mechanism(what)
            if mechanism is None:
                raise ValueError("reset: fairness, maintenance or a part (head0..head3, lift0..lift3), "
                                 f"not {what!r:.40}")
            self.wear.reset(mechanism)
        log.info("warnings reset: %s", what)
        self.bus.publish("warning.reset", what=what)
