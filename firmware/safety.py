"""Table-wide interlocks, checked by level before every movement: supply good, service lid, reset key, stuck keys.

Physically: the 24 V supply's "supply good" line drops in a brown-out; the
service lid's switch opens when a technician lifts it; the reset key is the
players' stop button; a key held far longer than a press is stuck (or
something rests on it).  While any of these is present no motor may start:
every movement asks :meth:`SafetySupervisor.refusal` before it starts, which
reads the *levels* now (not the last edge), refuses with the interlock's
fault and reports it once per activation.  Power-on, releasing a hold,
acknowledging a latched fault and starting a service test ask
:meth:`SafetySupervisor.check`.  The edges are kept only to make the stop
instant: a supply drop (E01, latched), a reset press (E02) and a key found
stuck (E05) stop every output whatever the table is doing; the lid opening
(E04) does when anything is moving (an open lid on a table at rest is
refused at the next movement).

After a latched or holding fault the controller puts the supervisor in
shutdown (:meth:`shut_down`): every movement is refused until the controller
resumes it, so a stray timer can never start a motor on a stopped table.
"""

from __future__ import annotations

import enum
import logging
from typing import Callable

from firmware.faults import Fault, FaultCode, FaultReporter
from firmware.loop import Loop
from firmware.mechanisms.panel import Panel
from firmware.ports.hardware import DigitalInput

log = logging.getLogger(__name__)


class Interlock(enum.Enum):
    """Each interlock, with the fault it raises and the words that name it."""

    SUPPLY = ("supply", FaultCode.E01, "supply low (supply_ok reads low)")
    RESET = ("reset_key", FaultCode.E02, "reset key held")
    LID = ("lid", FaultCode.E04, "service lid open")
    STUCK_KEY = ("stuck_key", FaultCode.E05, "panel key stuck")

    def __init__(self, key: str, code: FaultCode, words: str) -> None:
        self.key, self.code, self.words = key, code, words


class SafetySupervisor:
    def __init__(self, loop: Loop, faults: FaultReporter, panel: Panel, supply_ok: DigitalInput,
                 lid: DigitalInput | None, stop_all: Callable[[], None], moving: Callable[[], bool]) -> None:
        self.loop = loop
        self.faults = faults
        self.panel = panel
        self.supply_ok = supply_ok
        self.lid = lid
        self._stop_all = stop_all
        self._moving = moving
        self._reported: set[str] = set()        # activations already reported (cleared when they end)
        self._shutdown: Fault | None = None
        supply_ok.on_edge(self._supply_edge)
        if lid is not None:
            lid.on_edge(self._lid_edge)
        panel.keys["key_reset"].on_edge(self._reset_edge)     # raw: the stop does not wait for the debounce
        panel.on_key(self._key)
        panel.on_stuck(self._stuck)

    # -- levels ---------------------------------------------------------------------
    @property
    def lid_open(self) -> bool:
        return bool(self.lid is not None and self.lid.active)

    def active(self) -> list[Fault]:
        """Every interlock present now, most serious first (the one a refusal names)."""
        now = self.loop.now()
        causes = []
        if not self.supply_ok.active:
            causes.append(self._fault(Interlock.SUPPLY, now))
        if self.panel.keys["key_reset"].active:
            causes.append(self._fault(Interlock.RESET, now))
        if self.lid_open:
            causes.append(self._fault(Interlock.LID, now))
        for key in sorted(self.panel.stuck):
            causes.append(self._fault(Interlock.STUCK_KEY, now, key=key))
        return causes

    def check(self, when: str) -> Fault | None:
        """A level check at a decision point (``when``: power-on, release, acknowledge, service test): the
        most serious interlock present is tripped (reported once per activation) and returned."""
        causes = self.active()
        if not causes:
            return None
        fault = causes[0]
        log.warning("%s: %s (%s)", when, fault.detail["interlock"], fault.code.value)
        self._trip(fault)
        return fault

    def refusal(self, mechanism: str) -> Fault | None:
        """Asked by every movement before it starts: None when it may move, else the reason (the
        interlock present now, or the fault the table is stopped for)."""
        if self._shutdown is not None:
            log.warning("%s refused: the table is stopped (%s)", mechanism, self._shutdown.code.value)
            return self._shutdown
        causes = self.active()
        if not causes:
            return None
        fault = causes[0]
        log.warning("%s refused: %s (%s)", mechanism, fault.detail["interlock"], fault.code.value)
        self._trip(Fault(fault.code, fault.at_s, fault.source, {**fault.detail, "refused": mechanism}))
        return fault

    def may_move(self, mechanism: str) -> bool:
        return self.refusal(mechanism) is None

    # -- shutdown while a fault stops the table -----------------------------------------
    def shut_down(self, fault: Fault) -> None:
        """Refuse every movement until :meth:`resume` (a latched or holding fault stopped the table)."""
        self._shutdown = fault
        self._stop_all()

    def resume(self) -> None:
        self._shutdown = None

    @property
    def stopped_for(self) -> Fault | None:
        return self._shutdown

    # -- edges: the instant stop ----------------------------------------------------------
    def _supply_edge(self, ok: bool) -> None:
        if not ok:
            self._trip(self._fault(Interlock.SUPPLY, self.loop.now(), edge="supply-good input dropped"))
        else:
            self._cleared(Interlock.SUPPLY)

    def _lid_edge(self, open_: bool) -> None:
        self.faults.bus.publish("lid", open=open_)
        if not open_:
            self._cleared(Interlock.LID)
        elif self._moving():
            self._trip(self._fault(Interlock.LID, self.loop.now(), edge="lid opened with motors running"))

    def _reset_edge(self, pressed: bool) -> None:
        if pressed:
            self._trip(self._fault(Interlock.RESET, self.loop.now(), edge="reset key pressed"))

    def _key(self, name: str, pressed: bool) -> None:
        if name == "key_reset" and not pressed:
            self._cleared(Interlock.RESET)      # (debounced: a bounce of the release is not a release)

    def _stuck(self, name: str, stuck: bool) -> None:
        if stuck:
            self._trip(self._fault(Interlock.STUCK_KEY, self.loop.now(), key=name,
                                   held_s=self.panel.key_stuck_s))
        else:
            self._cleared(Interlock.STUCK_KEY, name)

    # -- tripping -------------------------------------------------------------------------
    def _fault(self, interlock: Interlock, now: float, **detail) -> Fault:
        return Fault(interlock.code, now, "safety", {"interlock": interlock.words, **detail})

    def _activation(self, fault: Fault) -> str:
        return f"{fault.code.value}:{fault.detail.get('key', '')}"

    def _trip(self, fault: Fault) -> None:
        """Every output safe now; the fault reported once per activation of its interlock."""
        self._stop_all()
        present = {self._activation(f) for f in self.active()}
        self._reported &= present | {self._activation(fault)}    # an activation that ended (even unseen) is over
        activation = self._activation(fault)
        if activation in self._reported:
            return
        self._reported.add(activation)
        self.faults.report(fault)

    def _cleared(self, interlock: Interlock, key: str = "") -> None:
        activation = f"{interlock.code.value}:{key}"
        if activation in self._reported:
            self._reported.discard(activation)
            self.faults.bus.publish("interlock.cleared", interlock=interlock.key, code=interlock.code.value,
                                    key=key or None)
