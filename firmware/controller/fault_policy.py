"""What the table does when a fault is found: latch, hold or go on; software errors and storage failures.

Every part that finds a fault reports it through the table's
:class:`~firmware.faults.FaultReporter`, which calls :meth:`FaultPolicy.handle`
directly (no subscriber that could be skipped).  The tier comes from the
one table in :mod:`firmware.faults` (a wall verification fault E82 latches
in competition mode; E83 latches when the set before it was not read
completely either: the reader loses tags, a technician's job).  The policy
keeps why the table is stopped (the fault, the state it stopped, the stop
queued, what E62 asks the players to look for) and drives the controller
through its narrow :class:`StopHost` port.  The order is fixed: memory,
outputs and lamps first (every output safe, every movement refused, the
state changed or queued),
then the fault is written to the table database; a write that fails is a
fault of its own, E98, which changes nothing in that order.  Any exception
in the controller's code (a loop callback, a state callback, a subscriber,
a job) is :meth:`FaultPolicy.software_error`: every output safe in the same
tick and E99 latched, never a hardware code.  An interlock during a service
test stops the test and answers it, and the table stays in service mode.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, Protocol

from firmware.controller.states import TableState
from firmware.faults import Fault, FaultCode, FaultReporter, FaultTier, TableError
from firmware.loop import Loop
from firmware.refusals import Reason, Refusal
from firmware.tiles.tile import code

if TYPE_CHECKING:
    from firmware.controller.lamps import DealerLamps
    from firmware.controller.record import TableRecord
    from firmware.safety import SafetySupervisor

log = logging.getLogger(__name__)

S = TableState
RECENT_FAULTS = 32          # kept in memory for diagnostics even when the database cannot be read
UNREAD_WALLS_LATCH = 2      # E83 latches when the set before was rejected for tiles not read as well


class StopHost(Protocol):
    """What the fault policy drives of the controller: its state, and the triggers and stops the policy pulls."""

    state: str

    def stop_motion(self) -> None:
        """Every operation abandoned and every output safe."""

    def latch(self) -> Any: ...

    def hold(self) -> Any: ...

    def force_latched(self) -> None:
        """The latched state set without a transition (the last line of defence)."""

    def service_test_stopped(self, fault: Fault) -> None: ...

    def missing_faces(self) -> tuple[list[int], int] | None:
        """E62: the faces the set lacks by the tags read so far, and how many counted tiles are unread."""


class FaultPolicy:
    def __init__(self, host: StopHost, record: "TableRecord", safety: "SafetySupervisor", lamps: "DealerLamps",
                 faults: FaultReporter, loop: Loop, stop_all: Callable[[], None], competition: bool) -> None:
        """``stop_all``: every output of the table to its safe value now; ``competition``: a wall verification
        fault E82 latches."""
        self.host, self.record, self.safety, self.lamps = host, record, safety, lamps
        self.faults, self.loop, self.stop_all, self.competition = faults, loop, stop_all, competition
        self.fault: Fault | None = None          # what the table is stopped for (held or latched)
        self.latched_from: str | None = None     # the state a latched fault stopped (service returns there)
        self.pending_stop: str | None = None     # "hold" / "latch" queued, not yet entered
        self.missing_tiles: list[str] = []       # what E62 asked the players to look for
        self.check_hint = ""                     # what to check when E62 keeps coming back
        self.recent: deque[Fault] = deque(maxlen=RECENT_FAULTS)
        self.unwritten: deque[dict] = deque(maxlen=RECENT_FAULTS)     # faults the database could not take
        self.storage_error: str | None = None   # the last write failure, until a write succeeds again
        self._handling_error = False
        self._failures_since = 0
        self._handling: Fault | None = None      # the fault being handled (a storage failure then follows it)
        self._e62_repeats = 0
        self.active: dict[str, Fault] = {}      # recoverable faults raised and not acknowledged, by code
        self.unread_walls = 0                   # sets in a row whose walls were rejected for tiles not read
        self._last_short: dict | None = None

    @property
    def store(self):
        return self.record.store

    # -- deciding ---------------------------------------------------------------------
    def tier(self, fault: Fault) -> FaultTier:
        if fault.code is FaultCode.E82 and self.competition:
            return FaultTier.LATCHED
        if fault.code is FaultCode.E83 and self.unread_walls >= UNREAD_WALLS_LATCH:
            return FaultTier.LATCHED    # not chance any more: the reader's cable or an antenna, for a technician
        return fault.tier

    def wall_verified(self) -> None:
        """A set's walls were verified with every tile read: the sets not read in a row are counted again."""
        self.unread_walls = 0

    def handle(self, fault: Fault) -> None:
        """A fault was found: stop what must stop, show it, then persist it."""
        state_then = self.host.state
        if fault.code is FaultCode.E83 and not fault.detail.get("accepted", True):
            self.unread_walls += 1
        tier = self.tier(fault)
        self.recent.append(fault)
        outer, self._handling = self._handling, fault
        try:
            if tier is FaultTier.LATCHED:
                self._latch(fault, state_then)
            elif tier is FaultTier.HOLD:
                self._hold(fault)
            if tier is FaultTier.RECOVERABLE:
                self.active[fault.code.value] = fault
            if fault.code is not FaultCode.E98 or self.storage_error is None:
                with self.store.batch(f"fault {fault.code.value}"):     # (the row and its event: one transaction)
                    row = self.store.add_fault(fault.code.value, tier.value, fault.at_s, state_then, fault.source,
                                               fault.detail)
                    self.store.add_event("fault", {"event": "raised", "id": row, "code": fault.code.value,
                                                "tier": tier.value, "text": fault.code.text, "hint": fault.code.hint,
                                                "source": fault.source, "state": state_then, "at_s": fault.at_s,
                                                "detail": fault.detail})
            if self.store.failing:
                # kept in memory for diagnostics and reports: the history in the database cannot have it
                self.unwritten.append({"code": fault.code.value, "tier": tier.value, "at_s": fault.at_s,
                                       "state": state_then, "source": fault.source, "detail": fault.detail,
                                       "acknowledged_at_s": None, "written": False})
        finally:
            self._handling = outer

    def _latch(self, fault: Fault, state_then: str) -> None:
        if self.host.state == S.LATCHED.value or self.pending_stop == "latch":
            log.info("%s while latched for %s", fault.code.value, self.fault.code.value if self.fault else "?")
            self.safety.shut_down(self.fault or fault)
            return
        self.fault = fault
        self.latched_from = state_then
        self.safety.shut_down(fault)        # every output safe, every movement refused until the acknowledge
        self.host.stop_motion()
        self.host.service_test_stopped(fault)
        self.lamps.blink(fault.code.number)
        self.pending_stop = "latch"
        self.host.latch()

    def _hold(self, fault: Fault) -> None:
        host = self.host
        if host.state == S.SERVICE.value:
            # an interlock (or a stuck key) during a service test: stop it, answer it, stay in service mode
            self.stop_all()
            host.stop_motion()
            host.service_test_stopped(fault)
            self.lamps.blink(fault.code.number)    # until the next test starts with nothing in the way
            return
        if host.state == S.LATCHED.value or self.pending_stop == "latch":
            return                          # already stopped; the acknowledge re-checks the interlocks
        self.fault = fault
        self.safety.shut_down(fault)        # every output safe now, every movement refused until the release
        self.lamps.blink(fault.code.number)
        if host.state == S.HOLD.value or self.pending_stop == "hold":
            host.stop_motion()
            return                          # a new cause while held: the lamps show it
        if fault.code is FaultCode.E62:
            self._short_again(fault)
            self._say_what_is_missing()     # (from the wall read, before the stop abandons it)
        host.stop_motion()
        self.pending_stop = "hold"
        host.hold()

    def stopped(self) -> None:
        """The hold or latched state was entered: the stop queued is done."""
        self.pending_stop = None

    def resume_latched(self) -> bool:
        """Power-on: a latched fault the database still has open latches the table again (a power cycle is not
        an acknowledge); True if it did."""
        open_latched = self.store.open_latched()
        if not open_latched:
            return False
        last = open_latched[-1]
        self.fault = Fault(FaultCode(last["code"]), self.loop.now(), last["source"], last["detail"])
        self.latched_from = last["state"]
        self.safety.shut_down(self.fault)
        self.lamps.blink(self.fault.code.number)
        self.pending_stop = "latch"
        self.host.latch()
        return True

    def release_refusal(self) -> Fault | None:
        """A lift key in a hold: the cause still there (it is shown), or None (the hold is released)."""
        cause = self.safety.check("release")
        if cause is not None:
            self.fault = cause
            self.lamps.blink(cause.code.number)
            self.faults.bus.publish("hold.kept", code=cause.code.value, reason=cause.detail.get("interlock"))
            return cause
        self.fault = None
        self.safety.resume()
        return None

    def acknowledge(self) -> tuple[str | None, bool]:
        """A technician acknowledges the latched fault: (why not, None when done; whether the table returns to
        service mode).  Refused while an interlock is still there, or while the table runs without its
        database (nothing would be kept: a table never plays on with scores a power cut would lose)."""
        if self.host.state != S.LATCHED.value:
            return Refusal(Reason.NOTHING_TO_ACK, state=self.host.state), False
        missing = self.record.without_database
        if missing is not None:
            return Refusal(Reason.NO_DATABASE, detail=str(missing)), False
        cause = self.safety.check("acknowledge")
        if cause is not None:
            self.lamps.blink(cause.code.number)
            why = f"{cause.detail.get('interlock', cause.code.text)} ({cause.code.value})"
            self.faults.bus.publish("controller.ack_refused", code=cause.code.value, reason=why)
            return Refusal(Reason.INTERLOCK, fault=cause.code.value), False
        self.acknowledged()                 # (the rows and the fleet's event)
        self.faults.bus.publish("controller.acknowledged", at_s=self.loop.now())
        back_to_service = self.latched_from == S.SERVICE.value
        self.fault = None
        self.latched_from = None
        self.safety.resume()
        return None, back_to_service

    # -- software errors and storage ---------------------------------------------------
    def software_error(self, exc: BaseException, where: Any = None) -> None:
        """An exception in the controller's code: every output safe now, E99 latched, the traceback logged."""
        self.stop_all()
        where_text = getattr(where, "__qualname__", None) or str(where or "controller")
        if self._handling_error:
            log.critical("controller software error while handling another: %r", exc,
                         exc_info=(type(exc), exc, exc.__traceback__))
            return
        self._handling_error = True
        state = self.host.state
        fault = Fault(FaultCode.E99, self.loop.now(), "controller",
                      {"error": f"{type(exc).__name__}: {exc}"[:300], "where": where_text[:120], "state": state})
        try:
            log.error("%s controller software error in %s (state %s): %s", FaultCode.E99.value, where_text, state,
                      fault.detail["error"], exc_info=(type(exc), exc, exc.__traceback__))
            self.faults.report(fault)
        except Exception as again:  # noqa: BLE001 - the last line of defence must not fail open
            log.critical("could not latch E99 normally (%r): forcing the latched state", again,
                         exc_info=(type(again), again, again.__traceback__))
            self._force_latch(fault)
        finally:
            self._handling_error = False

    def _force_latch(self, fault: Fault) -> None:
        for step in (self.stop_all, lambda: self.safety.shut_down(fault), self.host.force_latched,
                     lambda: self.lamps.blink(fault.code.number)):
            try:
                step()
            except Exception:  # noqa: BLE001
                log.critical("forcing the latched state: a step failed", exc_info=True)
        self.fault = fault

    def storage_failed(self, exc: BaseException, what: str) -> None:
        """A write to the table database failed: E98 (latched), with the SQLite error; the write is lost,
        the table stops so that nothing more is played that could not be kept."""
        first = self.storage_error is None
        self.storage_error = f"{type(exc).__name__}: {exc}"
        if not first:
            self._failures_since += 1
            if self._failures_since in (1, 10, 100) or self._failures_since % 1000 == 0:
                log.error("table database still failing (%s, %d writes lost so far): %s", what,
                          self._failures_since, self.storage_error)
            return
        self._failures_since = 0
        fault = Fault(FaultCode.E98, self.loop.now(), "store",
                      {"error": self.storage_error[:300], "writing": what, "file": str(self.store.path)})
        if self._handling is not None:
            # a write failed while a fault was being handled: that fault is latched or held in memory already,
            # E98 follows it
            self.loop.call_later(0.0, self.faults.report, fault)
        else:
            self.faults.report(fault)

    def storage_ok(self) -> None:
        self.storage_error = None
        self._failures_since = 0

    # -- acknowledges -------------------------------------------------------------------
    def acknowledged(self, by: str = "table") -> None:
        """The latched fault is acknowledged (the controller's ack path): the rows and the event, one batch."""
        code = self.fault.code.value if self.fault is not None else None
        now = self.loop.now()
        with self.store.batch("acknowledge"):
            self.store.acknowledge_faults(now)
            self.store.add_event("fault", {"event": "acknowledged", "code": code, "tier": "latched", "by": by,
                                           "at_s": now})

    def hold_cleared(self) -> None:
        """The table left its hold (a key, the cause gone): the hold faults are cleared now."""
        self.store.clear_faults(self.loop.now(), "hold")

    def acknowledge_recoverable(self, code: str, by: str) -> str | None:
        """A recoverable fault acknowledged from afar (the fleet's ``ack``): its rows and the event, one batch;
        why not (None: done).  Nothing moves: the table went on after it anyway."""
        if code not in self.active:
            return f"ack: {code} is not an active recoverable fault of this table"
        now = self.loop.now()
        with self.store.batch(f"acknowledge {code}"):
            self.store.acknowledge_faults(now, code)
            self.store.add_event("fault", {"event": "acknowledged", "code": code, "tier": "recoverable", "by": by,
                                           "at_s": now})
        if self.store.failing:
            return "ack: the table database could not keep the acknowledge (E98)"
        del self.active[code]
        self.faults.bus.publish("controller.fault_acknowledged", code=code, by=by)
        return None

    def history(self, after_id: int = 0) -> list[dict]:
        """The fault history from the database, then what it could not take (``written`` False)."""
        try:
            rows = self.store.faults(after_id=after_id)
        except TableError as exc:
            log.error("fault history unreadable: %s", exc)
            rows = []
        if self.store.path == ":memory:":
            rows = [{**row, "written": False} for row in rows]      # (no database on the card: kept in memory)
        return rows + list(self.unwritten)

    # -- E62 follow-ups -----------------------------------------------------------------
    def _short_again(self, fault: Fault) -> None:
        """The same sides short by the same count after the players resumed: not a lost tile but,
        most likely, a side that does not count what it gets."""
        short = fault.detail.get("missing_per_side")
        self._e62_repeats = self._e62_repeats + 1 if short is not None and short == self._last_short else 0
        self._last_short = short
        if self._e62_repeats >= 2 and short:
            sides = ", ".join(str(s) for s in sorted(short))
            self.check_hint = (f"side {sides} short by the same count again: check that side's tile counter "
                               f"(tile_in) and feed ramp")
            log.warning("%s %s", FaultCode.E62.value, self.check_hint)
            self.faults.bus.publish("tiles.short_again", sides=sorted(short), times=self._e62_repeats + 1)

    def _say_what_is_missing(self) -> None:
        """E62: name the tiles to look for, from the tags read so far."""
        found = self.host.missing_faces()
        if found is None:
            return
        missing, unread = found
        faces = [code(k) for k in missing]
        if len(faces) > 8:
            return                          # not a few lost tiles: the set itself is short or elsewhere
        self.missing_tiles = faces
        log.warning("%s look for: %s%s", FaultCode.E62.value, " ".join(faces) or "(unknown)",
                    f" ({unread} tiles counted but not read: it may be one of those)" if unread else "")
        self.faults.bus.publish("tiles.missing", faces=faces, unread=unread)

    def tiles_uncounted(self, hint: str) -> None:
        """More tiles wait in a feed track than its counter counted: what to check if E62 comes back."""
        self.check_hint = hint

