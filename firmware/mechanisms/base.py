"""Supervised movements: start, complete on a sensor, warn at 2T, fault at 3T.

A :class:`Mechanism` runs at most one movement at a time.  Before it starts
one it asks its ``permit`` (the safety supervisor: lid, supply, reset key,
a stopped table); a refused movement never drives its motor and ends at once
with the refusal as its result.  Starting arms two loop timers from the
learned nominal time; the sensor that ends the movement calls
:meth:`Mechanism._complete`; a timer or an impossible sensor state calls
:meth:`Mechanism._fail`, which first drives every output of the mechanism to
its safe value and reports the fault (a direct call to the fault policy).
The outcome goes to the caller's ``done`` callback as a :class:`MoveResult`
and to the event bus.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable

from firmware.frozen import quick_init
from firmware.faults import Fault, FaultCode, FaultReporter
from firmware.loop import Handle, Loop, call_later_again
from firmware.mechanisms.nominal import NominalTime
from firmware.ports.hardware import DigitalOutput

log = logging.getLogger(__name__)


@quick_init
@dataclass(frozen=True)
class MoveResult:
    mechanism: str
    ok: bool
    started_s: float
    elapsed_s: float
    fault: Fault | None = None
    warned: bool = False
    refused: bool = False          # never started: an interlock (or a stopped table) refused it


DoneCallback = Callable[[MoveResult], None]
Permit = Callable[[str], "Fault | None"]     # mechanism name -> None (may move) or the refusal


def always_permitted(_mechanism: str) -> Fault | None:
    """A permit for a mechanism on a test bench, with no safety supervisor."""
    return None


class Mechanism:
    """Base of every mechanism: outputs with safe values plus movement supervision."""

    def __init__(self, name: str, loop: Loop, faults: FaultReporter, nominal: NominalTime,
                 fault_code: FaultCode, permit: Permit) -> None:
        self.name = name
        self.loop = loop
        self.faults = faults
        self.bus = faults.bus
        self.permit = permit
        self.nominal = nominal
        self.fault_code = fault_code
        self.outputs: list[DigitalOutput] = []
        self.runs = 0
        self.warnings = 0
        self._done: DoneCallback | None = None
        self._started_s = 0.0
        self._timers: list[Handle] = []
        # the last movement's warning and timeout timers, cancelled when it ended: the next movement's put off
        # (Loop.move) while the loop still holds them, instead of two new timers every movement
        self._warn_timer: Handle | None = None
        self._timeout_timer: Handle | None = None
        self._warned = False
        self._learn = True

    @property
    def busy(self) -> bool:
        return self._done is not None

    def safe_stop(self) -> None:
        """Drive every output of this mechanism to its safe value (never raises)."""
        for output in self.outputs:
            try:
                output.set(output.safe_value)
            except Exception:  # noqa: BLE001 - keep stopping the others
                log.exception("%s: could not drive %s to its safe value", self.name, output.name)

    def abort(self) -> None:
        """Stop at once, without reporting (reset key, latched fault elsewhere)."""
        self._cancel_timers()
        self._done = None
        self.safe_stop()

    def outputs_safe(self) -> bool:
        return all(o.active == o.safe_value for o in self.outputs)

    # -- movement supervision ---------------------------------------------
    def _begin(self, done: DoneCallback, learn: bool = True) -> bool:
        """Start supervising a movement; False (and ``done`` already called) when it is refused."""
        if self._done is not None:
            raise RuntimeError(f"{self.name} is already moving")
        refusal = self.permit(self.name)
        if refusal is not None:
            now = self.loop.now()
            self.bus.publish("move.refused", mechanism=self.name, code=refusal.code.value)
            done(MoveResult(self.name, False, now, 0.0, refusal, refused=True))
            return False
        self._done = done
        self._learn = learn
        self._warned = False
        self._started_s = self.loop.now()
        self._warn_timer = warn = call_later_again(self.loop, self._warn_timer, self.nominal.warn_after_s, self._warn)
        self._timeout_timer = timeout = call_later_again(self.loop, self._timeout_timer, self.nominal.fault_after_s,
                                                         self._timeout)
        self._timers = [warn, timeout]
        return True

    def _arm(self, delay_s: float, fn: Callable[..., Any], *args: Any) -> None:
        """An extra supervision timer, cancelled with the movement."""
        self._timers.append(self.loop.call_later(delay_s, fn, *args))

    def _warn(self) -> None:
        if self._warned or self._done is None:
            return
        self._warned = True
        self.warnings += 1
        log.warning("%s: movement slower than %.1fx nominal (%.2fs)", self.name,
                    self.nominal.warn_factor, self.nominal.value_s)
        self.bus.publish("move.warn", mechanism=self.name, nominal_s=self.nominal.value_s)

    def _timeout(self) -> None:
        self._fail(self.fault_code, reason="timeout", limit_s=round(self.nominal.fault_after_s, 3))

    def _stop_outputs(self) -> None:
        """Stop the movement's motor; subclasses may stop more precisely."""
        self.safe_stop()

    def _complete(self) -> None:
        done = self._done
        if done is None:
            return
        self._stop_outputs()
        self._cancel_timers()
        self._done = None
        elapsed = self.loop.now() - self._started_s
        self.runs += 1
        if self._learn:
            self.nominal.record(elapsed)
        result = MoveResult(self.name, True, self._started_s, elapsed, warned=self._warned)
        self.bus.publish("move.done", mechanism=self.name, elapsed_s=elapsed, learned=self._learn)
        done(result)

    def _fail(self, code: FaultCode, **detail: Any) -> None:
        done = self._done
        self.safe_stop()
        self._cancel_timers()
        self._done = None
        now = self.loop.now()
        fault = Fault(code, now, self.name, detail)
        self.faults.report(fault)
        if done is not None:
            done(MoveResult(self.name, False, self._started_s, now - self._started_s, fault, self._warned))

    def _cancel_timers(self) -> None:
        for timer in self._timers:
            timer.cancel()
        self._timers = []
