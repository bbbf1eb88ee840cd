"""Turntable (大盘) and magnet ring (磁圈): run together to shuffle and feed.

They have no end position, so they are supervised differently.  The disk's
index sensor pulses once a revolution: the running time since the last
pulse is counted over every run of the disk, across the starts and stops of
back-pressure (a disk that turns 0.7 s at a time still owes a pulse every
revolution), and past ``stall_revolutions`` x the revolution time the disk
has stalled, or its index sensor is dead (E60).  No single run may exceed
``max_run_s`` (motor duty protection, E90).  A start is refused like any
movement while an interlock holds (the safety supervisor's permit).
"""

from __future__ import annotations

import logging
from typing import Callable

from firmware.faults import Fault, FaultCode, FaultReporter
from firmware.loop import Handle, Loop
from firmware.mechanisms.base import Mechanism, Permit
from firmware.mechanisms.nominal import NominalTime
from firmware.ports.hardware import DigitalInput, DigitalOutput

log = logging.getLogger(__name__)


class Turntable(Mechanism):
    def __init__(self, loop: Loop, faults: FaultReporter, permit: Permit, disk: DigitalOutput, ring: DigitalOutput,
                 index: DigitalInput, revolution_s: float, stall_revolutions: float, max_run_s: float) -> None:
        super().__init__("turntable", loop, faults, NominalTime(revolution_s, max_run_s), FaultCode.E60, permit)
        self.disk, self.ring, self.index = disk, ring, index
        self.outputs = [disk, ring]
        self.revolution_s = revolution_s
        self.stall_after_s = revolution_s * stall_revolutions
        self.max_run_s = max_run_s
        self.revolutions = 0
        self.on_fault: Callable[[Fault], None] | None = None
        self._stall_timer: Handle | None = None
        self._duty_timer: Handle | None = None
        self._run_started_s: float | None = None
        self._since_index_s = 0.0           # running time since the last index pulse, over every run
        self._segment_started_s = 0.0       # start of the part of this run not yet added to it
        self.run_s_total = 0.0
        index.on_edge(self._index_edge)

    @property
    def running(self) -> bool:
        return self.disk.active

    @property
    def turning(self) -> bool:
        """Running, and its index pulsed within the last revolution and a half: the disk really turns now."""
        if not self.running:
            return False
        since_s = self._since_index_s + self.loop.now() - self._segment_started_s
        return since_s <= 1.5 * self.revolution_s

    def start(self) -> bool:
        """Run disk and ring; False when the safety supervisor refuses (nothing moves then)."""
        if self.running:
            return True
        if self.permit(self.name) is not None:
            return False
        now = self.loop.now()
        self._run_started_s = self._segment_started_s = now
        self.runs += 1
        self.disk.set(True)
        self.ring.set(True)
        self._arm_stall(self.stall_after_s - self._since_index_s)
        self._duty_timer = self.loop.call_at(now + self.max_run_s, self._duty_exceeded)
        return True

    def stop(self) -> None:
        if self._run_started_s is not None:
            now = self.loop.now()
            self.run_s_total += now - self._run_started_s
            self._since_index_s += now - self._segment_started_s
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
            self._since_index_s = 0.0
            self._segment_started_s = self.loop.now()
            self._arm_stall(self.stall_after_s)

    def _arm_stall(self, delay_s: float) -> None:
        if self._stall_timer is not None:
            self._stall_timer.cancel()
        self._stall_timer = self.loop.call_later(max(0.0, delay_s), self._stalled)

    def _stalled(self) -> None:
        ran_s = self._since_index_s + self.loop.now() - self._segment_started_s
        self._report(FaultCode.E60, reason="no index pulse: the disk stalled or its index sensor is dead",
                     ran_without_pulse_s=round(ran_s, 2), limit_s=self.stall_after_s)

    def _duty_exceeded(self) -> None:
        self._report(FaultCode.E90, reason="ran past its maximum run time", limit_s=self.max_run_s)

    def _report(self, code: FaultCode, **detail) -> None:
        self.stop()
        if code is FaultCode.E60:
            self._since_index_s = 0.0       # reported: after the repair the disk gets its whole allowance again
        fault = Fault(code, self.loop.now(), self.name, detail)
        self.faults.report(fault)
        if self.on_fault is not None:
            self.on_fault(fault)
