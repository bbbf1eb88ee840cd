"""What the table does when a fault is found: latch, hold or go on; software errors and storage failures.

Every part that finds a fault reports it through the table's
:class:`~firmware.faults.FaultReporter`, which calls :meth:`FaultPolicy.handle`
directly (no subscriber that could be skipped).  The tier comes from the
one table in :mod:`firmware.faults` (a wall verification fault E82 latches
in competition mode).  The order is fixed: memory, outputs and lamps first
(every output safe, every movement refused, the state changed or queued),
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
from typing import TYPE_CHECKING, Any

from firmware.controller.states import TableState
from firmware.faults import Fault, FaultCode, FaultTier, TableError
from firmware.tiles.tile import code

if TYPE_CHECKING:
    from firmware.controller.controller import Controller

log = logging.getLogger(__name__)

S = TableState
RECENT_FAULTS = 32          # kept in memory for diagnostics even when the database cannot be read


class FaultPolicy:
    def __init__(self, controller: "Controller") -> None:
        self.c = controller
        self.recent: deque[Fault] = deque(maxlen=RECENT_FAULTS)
        self.unwritten: deque[dict] = deque(maxlen=RECENT_FAULTS)     # faults the database could not take
        self.storage_error: str | None = None   # the last write failure, until a write succeeds again
        self._handling_error = False
        self._failures_since = 0
        self._handling: Fault | None = None      # the fault being handled (a storage failure then follows it)
        self._e62_repeats = 0
        self.active: dict[str, Fault] = {}      # recoverable faults raised and not acknowledged, by code
        self._last_short: dict | None = None

    # -- deciding ---------------------------------------------------------------------
    def tier(self, fault: Fault) -> FaultTier:
        if fault.code is FaultCode.E82 and self.c.cfg.reader.rejects_any_defect:
            return FaultTier.LATCHED
        return fault.tier

    def handle(self, fault: Fault) -> None:
        """A fault was found: stop what must stop, show it, then persist it."""
        c = self.c
        state_then = c.state
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
                with c.store.batch(f"fault {fault.code.value}"):        # (the row and its event: one transaction)
                    row = c.store.add_fault(fault.code.value, tier.value, fault.at_s, state_then, fault.source,
                                            fault.detail)
                    c.store.add_event("fault", {"event": "raised", "id": row, "code": fault.code.value,
                                                "tier": tier.value, "text": fault.code.text, "hint": fault.code.hint,
                                                "source": fault.source, "state": state_then, "at_s": fault.at_s,
                                                "detail": fault.detail})
            if c.store.failing:
                # kept in memory for diagnostics and reports: the history in the database cannot have it
                self.unwritten.append({"code": fault.code.value, "tier": tier.value, "at_s": fault.at_s,
                                       "state": state_then, "source": fault.source, "detail": fault.detail,
                                       "acknowledged_at_s": None, "written": False})
        finally:
            self._handling = outer

    def _latch(self, fault: Fault, state_then: str) -> None:
        c = self.c
        if c.state == S.LATCHED.value or c.pending_stop == "latch":
            log.info("%s while latched for %s", fault.code.value, c.fault.code.value if c.fault else "?")
            c.safety.shut_down(c.fault or fault)
            return
        c.fault = fault
        c.latched_from = state_then
        c.safety.shut_down(fault)           # every output safe, every movement refused until the acknowledge
        c.stop_motion()
        c.service_test_stopped(fault)
        c.lamps.blink(fault.code.number)
        c.pending_stop = "latch"
        c.latch()

    def _hold(self, fault: Fault) -> None:
        c = self.c
        if c.state == S.SERVICE.value:
            # an interlock (or a stuck key) during a service test: stop it, answer it, stay in service mode
            c.table.safe_stop_all()
            c.stop_motion()
            c.service_test_stopped(fault)
            c.lamps.blink(fault.code.number)    # until the next test starts with nothing in the way
            return
        if c.state == S.LATCHED.value or c.pending_stop == "latch":
            return                          # already stopped; the acknowledge re-checks the interlocks
        c.fault = fault
        c.safety.shut_down(fault)           # every output safe now, every movement refused until the release
        c.lamps.blink(fault.code.number)
        if c.state == S.HOLD.value or c.pending_stop == "hold":
            c.stop_motion()
            return                          # a new cause while held: the lamps show it
        if fault.code is FaultCode.E62:
            self._short_again(fault)
            self._say_what_is_missing()     # (from the wall read, before the stop abandons it)
        c.stop_motion()
        c.pending_stop = "hold"
        c.hold()

    # -- software errors and storage ---------------------------------------------------
    def software_error(self, exc: BaseException, where: Any = None) -> None:
        """An exception in the controller's code: every output safe now, E99 latched, the traceback logged."""
        c = self.c
        c.table.safe_stop_all()
        where_text = getattr(where, "__qualname__", None) or str(where or "controller")
        if self._handling_error:
            log.critical("controller software error while handling another: %r", exc,
                         exc_info=(type(exc), exc, exc.__traceback__))
            return
        self._handling_error = True
        fault = Fault(FaultCode.E99, c.loop.now(), "controller",
                      {"error": f"{type(exc).__name__}: {exc}"[:300], "where": where_text[:120], "state": c.state})
        try:
            log.error("%s controller software error in %s (state %s): %s", FaultCode.E99.value, where_text, c.state,
                      fault.detail["error"], exc_info=(type(exc), exc, exc.__traceback__))
            c.faults.report(fault)
        except Exception as again:  # noqa: BLE001 - the last line of defence must not fail open
            log.critical("could not latch E99 normally (%r): forcing the latched state", again,
                         exc_info=(type(again), again, again.__traceback__))
            self._force_latch(fault)
        finally:
            self._handling_error = False

    def _force_latch(self, fault: Fault) -> None:
        c = self.c
        for step in (c.table.safe_stop_all, lambda: c.safety.shut_down(fault),
                     lambda: c.machine.set_state(S.LATCHED.value), lambda: c.lamps.blink(fault.code.number)):
            try:
                step()
            except Exception:  # noqa: BLE001
                log.critical("forcing the latched state: a step failed", exc_info=True)
        c.fault = fault

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
        fault = Fault(FaultCode.E98, self.c.loop.now(), "store",
                      {"error": self.storage_error[:300], "writing": what, "file": str(self.c.store.path)})
        if self._handling is not None:
            # a write failed while a fault was being handled: that fault is latched or held in memory already,
            # E98 follows it
            self.c.loop.call_later(0.0, self.c.faults.report, fault)
        else:
            self.c.faults.report(fault)

    def storage_ok(self) -> None:
        self.storage_error = None
        self._failures_since = 0

    # -- acknowledges -------------------------------------------------------------------
    def acknowledged(self, by: str = "table") -> None:
        """The latched fault is acknowledged (the controller's ack path): the rows and the event, one batch."""
        c = self.c
        code = c.fault.code.value if c.fault is not None else None
        with c.store.batch("acknowledge"):
            c.store.acknowledge_faults(c.loop.now())
            c.store.add_event("fault", {"event": "acknowledged", "code": code, "tier": "latched", "by": by,
                                        "at_s": c.loop.now()})

    def acknowledge_recoverable(self, code: str, by: str) -> str | None:
        """A recoverable fault acknowledged from afar (the fleet's ``ack``): its rows and the event, one batch;
        why not (None: done).  Nothing moves: the table went on after it anyway."""
        c = self.c
        if code not in self.active:
            return f"ack: {code} is not an active recoverable fault of this table"
        with c.store.batch(f"acknowledge {code}"):
            c.store.acknowledge_faults(c.loop.now(), code)
            c.store.add_event("fault", {"event": "acknowledged", "code": code, "tier": "recoverable", "by": by,
                                        "at_s": c.loop.now()})
        if c.store.failing:
            return "ack: the table database could not keep the acknowledge (E98)"
        del self.active[code]
        c.bus.publish("controller.fault_acknowledged", code=code, by=by)
        return None

    def history(self, after_id: int = 0) -> list[dict]:
        """The fault history from the database, then what it could not take (``written`` False)."""
        try:
            rows = self.c.store.faults(after_id=after_id)
        except TableError as exc:
            log.error("fault history unreadable: %s", exc)
            rows = []
        if self.c.store.path == ":memory:":
            rows = [{**row, "written": False} for row in rows]      # (no database on the card: kept in memory)
        return rows + list(self.unwritten)

    # -- E62 follow-ups -----------------------------------------------------------------
    def _short_again(self, fault: Fault) -> None:
        """The same sides short by the same count after the players resumed: not a lost tile but,
        most likely, a side that does not count what it gets."""
        c = self.c
        short = fault.detail.get("missing_per_side")
        self._e62_repeats = self._e62_repeats + 1 if short is not None and short == self._last_short else 0
        self._last_short = short
        if self._e62_repeats >= 2 and short:
            sides = ", ".join(str(s) for s in sorted(short))
            c.check_hint = (f"side {sides} short by the same count again: check that side's tile counter "
                            f"(tile_in) and feed ramp")
            log.warning("%s %s", FaultCode.E62.value, c.check_hint)
            c.bus.publish("tiles.short_again", sides=sorted(short), times=self._e62_repeats + 1)

    def _say_what_is_missing(self) -> None:
        """E62: name the tiles to look for, from the tags read so far."""
        c = self.c
        found = c.stacker.missing_faces()
        if found is None:
            return
        missing, unread = found
        faces = [code(k) for k in missing]
        if len(faces) > 8:
            return                          # not a few lost tiles: the set itself is short or elsewhere
        c.missing_tiles = faces
        log.warning("%s look for: %s%s", FaultCode.E62.value, " ".join(faces) or "(unknown)",
                    f" ({unread} tiles counted but not read: it may be one of those)" if unread else "")
        c.bus.publish("tiles.missing", faces=faces, unread=unread)

