"""Turntable (大盘) and magnet ring (磁圈): run together to shuffle and feed.

They have no end position, so they are supervised differently: while
running, the disk's index sensor must pulse at least every
``stall_revolutions`` x revolution time, else the disk has stalled (E60);
and no run may exceed ``max_run_s`` (motor duty protection, E90).
"""

from __future__ import annotations

import logging
from typing import Callable

from firmware.events import EventBus
from firmware.faults import Fault, FaultCode
from firmware.loop import Handle, Loop
from firmware.mechanisms.base import Mechanism
from firmware.mechanisms.nominal import NominalTime
from hal.interfaces import DigitalInput, DigitalOutput

log = logging.getLogger(__name__)


class Turntable(Mechanism):
    def __init__(self, loop: Loop, bus: EventBus, disk: DigitalOutput, ring: DigitalOutput,
                 index: DigitalInput, revolution_s: float, stall_revolutions: float, max_run_s: float) -> None:
        super().__init__("turntable", loop, bus, NominalTime(revolution_s, max_run_s), FaultCode.E60)
        self.disk, self.ring, self.index = disk, ring, index
        self.outputs = [disk, ring]
        self.stall_after_s = revolution_s * stall_revolutions
        self.max_run_s = max_run_s
        self.revolutions = 0
        self.on_fault: Callable[[Fault], None] | None = None
        self._stall_timer: Handle | None = None
        self._duty_timer: Handle | None = None
        self._run_started_s: float | None = None
        self.run_s_total = 0.0
        index.on_edge(self._index_edge)

    @property
    def running(self) -> bool:
        return self.disk.active

    def start(self) -> None:
        if self.running:
            return
        self._run_started_s = self.loop.now()
        self.disk.set(True)
        self.ring.set(True)
        self._rearm_stall()
        self._duty_timer = self.loop.call_at(self._run_started_s + self.max_run_s, self._duty_exceeded)

    def stop(self) -> None:
        if self._run_started_s is not None:
            self.run_s_total += self.loop.now() - self._run_started_s
            self._run_started_s = None
        self.disk.set(False)
        self.ring.set(False)
        for timer in (self._stall_timer, self._duty_timer):
            if timer is not None:
                timer.cancel()
        self._stall_timer = self._duty_timer = None

    def abort(self) -> None:
        self.stop()
        super().abort()

    def _index_edge(self, active: bool) -> None:
        if active and self.running:
            self.revolutions += 1
            self._rearm_stall()

    def _rearm_stall(self) -> None:
        if self._stall_timer is not None:
            self._stall_timer.cancel()
        self._stall_timer = self.loop.call_later(self.stall_after_s, self._stalled)

    def _stalled(self) -> None:
        self._report(FaultCode.E60, reason="no index pulse", limit_s=self.stall_after_s)

    def _duty_exceeded(self) -> None:
        self._report(FaultCode.E90, reason="ran past its maximum run time", limit_s=self.max_run_s)

    def _report(self, code: FaultCode, **detail) -> None:
        self.stop()
        fault = Fault(code, self.loop.now(), self.name, detail)
        log.error("%s", fault)
        self.bus.publish("fault", fault=fault)
        if self.on_fault is not None:
            self.on_fault(fault)
