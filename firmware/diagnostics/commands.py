"""What a technician may ask of the running controller, as JSON requests and replies.

Read-only requests (``state``, ``status``, ``faults``, ``counters``, ``sensors``,
``reader``) are always answered (``status``: the components of
:mod:`firmware.game.status`, which the socket's subscriptions send); ``state`` names how each set's walls
below or on the table were checked (``verified`` or ``counted``, counted
only) and, while a set is not enrolled, how to enrol it (``enrol``).  ``ack`` acknowledges a latched fault
(refused, with the reason, while an interlock is still there).  Service
tests move motors, so they are refused unless the table is in service mode
(both lift keys at power-on) and no interlock is present (the safety
supervisor checks the levels); each runs on the loop through the same
mechanism objects as the cycle (so a jam in a test raises the same fault
code) and replies when it is done, or at once with the reason when an
interlock or a fault stops it (the table stays in service mode).

``stop`` stops the service test that is running, whoever started it: every
motor to safe, the test answered ``stopped_by: technician``, and a learn
that was cut short keeps the times learned before.  The diag socket sends
``{"cmd": "stop", "client_gone": true}`` when the connection that started a
test closes before its answer (Ctrl-C on the client): that stops only the
test of that connection (``client``, the socket's number for it).  Outside
service mode nothing is touched (the game's motors are the controller's).

A jog with ``"hold": true`` is hold-to-run (the web page's jog buttons): the
disk runs until it is stopped (at most ``seconds``, default the longest a test
may run it), and a stop takes its end timer back, so the button may be held
again at once; a cam, lift, the centre or the dice move to their stop as
always, unless stopped first.

Request fields are checked before anything moves: a field of the wrong type
is answered with the reason like any refusal.
"""

from __future__ import annotations

import logging
import math
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from firmware.controller.states import SetLocation, TableState
from firmware.faults import FaultCode
from firmware.game.staff import StaffError
from firmware.i18n import reworded, worded
from firmware.refusals import Reason, Refusal, answer_of, worded_answer
from firmware.diagnostics import log_ring
from firmware.diagnostics.edge_log import EdgeLog
from firmware.diagnostics.hand_facts_told import drawn, void
from firmware.diagnostics.judge import hand, judge_from_pad, kong, penalty
from firmware.diagnostics.reader_answers import ask_reader
from firmware.diagnostics.service_tests import (BURN_IN_CYCLES, DISK_JOG_MAX_S, DISK_JOG_S, GROUP_TESTS,
                                                LEARN_RUNS, ServiceTests, slower_than_design)

if TYPE_CHECKING:
    from firmware.game.session import TableSession
    from firmware.game.staff import Staff

log = logging.getLogger(__name__)

Reply = Callable[[dict[str, Any]], None]
WATCH_MAX_S = 600.0
LOG_WAIT_MAX_S = 60.0       # a log request waits at most this long for a new line (following live)
LOG_LOOK_S = 0.5
COMMANDS = ("state, status, faults, counters, sensors, watch, reader, judge, penalty, kong, void, drawn, hand, ack, "
            "session, players, game, log, bundle, test, warnings, "
            "jog, learn, burn-in, stop")


def _by(request: dict) -> str:
    """Who asked (the web page names its user, the fleet its issuer; else the technician's socket)."""
    by = request.get("by")
    return by[:64] if isinstance(by, str) and by.isprintable() and by else "technician"


def _versions() -> dict:
    """The firmware's and its main libraries' versions, the Python and the system."""
    import platform
    from importlib import metadata

    import firmware

    out = {"mjtable": firmware.__version__, "python": platform.python_version(), "system": platform.platform()}
    for package in ("starlette", "uvicorn", "pydantic", "paho-mqtt", "transitions", "gpiozero", "pyserial",
                    "cryptography"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = None
    return out


class BadField(ValueError):
    """A request field of the wrong type: answered with the reason, nothing moves."""


@dataclass
class _Running:
    """A service test started here: its name and the connection that asked for it."""

    name: str
    client: Any


# the tests running now (a controller has one at a time), by the controller's ServiceTest object;
# and, per controller, until when a stopped disk run's end timer is still pending on the loop
_RUNNING: "weakref.WeakKeyDictionary[Any, _Running]" = weakref.WeakKeyDictionary()
_DISK_BUSY_UNTIL: "weakref.WeakKeyDictionary[Any, float]" = weakref.WeakKeyDictionary()


class DiagCommands:
    """The requests of one controller; ``fleet`` (the table's fleet link's ``status``, when it has one) is
    answered in ``counters`` too."""

    def __init__(self, session: "TableSession", fleet: Callable[[], dict[str, Any]] | None = None) -> None:
        self.session = session
        self.controller = session.controller
        self.fleet = fleet
        self.tests = ServiceTests(self.controller)
        EdgeLog.of(session.table)                   # from now on every input change is recorded

    def handle(self, request: dict[str, Any], reply: Reply) -> None:
        cmd = request.get("cmd")
        cmd = cmd.replace("-", "_") if isinstance(cmd, str) else cmd
        handler = getattr(self, f"_cmd_{cmd}", None) if isinstance(cmd, str) else None
        if handler is None:
            reply(worded_answer("unknown command %(cmd)s; commands: %(all)s", cmd=repr(cmd)[:60], all=COMMANDS))
            return
        try:
            handler(request, reply)
        except BadField as exc:
            reply(answer_of(exc))
        except Exception as exc:  # noqa: BLE001 - a bad request must not take the controller down
            log.exception("diag command %r failed", cmd)
            reply(answer_of(exc))

    # -- read-only ------------------------------------------------------------------
    def _cmd_state(self, request: dict, reply: Reply) -> None:
        c, session = self.controller, self.session
        b = c.book
        walls = {s: b.wall_mode(s) for s in sorted(b.sets_at(SetLocation.STACKED) + b.sets_at(SetLocation.TABLE))}
        enrol = session.registry.enrol_hint()
        reply({"ok": True, "state": c.state, "book": b.to_dict(), "chips": session.scoreboard.chips,
               "walls": walls, **({"enrol": enrol} if enrol else {}),
               "fault": c.fault.code.value if c.fault else None,
               "interlocks": [f"{f.detail['interlock']} ({f.code.value})" for f in c.table.safety.active()],
               "stuck_keys": sorted(c.table.panel.stuck),
               **({"round": session.rounds.status()} if session.rounds is not None else {}),
               **({"look_for": c.policy.missing_tiles, "check": c.policy.check_hint}
                  if c.fault and c.fault.code.value == "E62" else {})})

    def _cmd_status(self, request: dict, reply: Reply) -> None:
        """The status components (:mod:`firmware.game.status`), all or the ``components`` named."""
        components = request.get("components")
        if components is not None and not (isinstance(components, list)
                                           and all(isinstance(n, str) for n in components)):
            raise worded(BadField, "components: a list of component names, not %(got)s", got=f"{components!r:.60}")
        try:
            status = self.session.get_status(components)
        except ValueError as exc:
            raise reworded(BadField, exc) from None
        reply({"ok": True, "status": status, "at_s": round(self.controller.table.loop.now(), 3)})

    def _cmd_faults(self, request: dict, reply: Reply) -> None:
        rows = self.controller.policy.history()
        for row in rows:
            code = FaultCode(row["code"])
            row["text"], row["hint"] = code.text, code.hint
        reply({"ok": True, "faults": rows})

    # -- staff: names, games, the table session (开台) -------------------------------------------------------
    def _staff(self, reply: Reply) -> "Staff | None":
        staff = self.session.staff
        if staff is None:
            reply(Refusal(Reason.NO_DESK).answer())
        return staff

    def _cmd_session(self, request: dict, reply: Reply) -> None:
        """``{"action": "open", "minutes": N}``, ``{"action": "close"}`` or ``{"action": "status"}`` (default)."""
        staff = self._staff(reply)
        if staff is None:
            return
        action, by = request.get("action", "status"), _by(request)
        try:
            if action == "open":
                answer = staff.open(request.get("minutes"), by)
            elif action == "close":
                answer = staff.close(by)
            elif action == "status":
                answer = staff.status()
            else:
                raise worded(BadField, "session: action is open, close or status")
        except StaffError as exc:
            reply(exc.refusal.answer())
            return
        reply({"ok": True, "session": answer, **({"sessions": staff.sessions(10)} if action == "status" else {})})

    def _cmd_players(self, request: dict, reply: Reply) -> None:
        """The names at the seats: ``{"players": {"E": ..., "S": ..., "W": ..., "N": ...}}`` sets them, ``null``
        clears them, no field reads them."""
        staff = self._staff(reply)
        if staff is None:
            return
        if "players" not in request:
            reply({"ok": True, "players": staff.players})
            return
        try:
            reply({"ok": True, "players": staff.set_players(request["players"], _by(request))})
        except StaffError as exc:
            reply(exc.refusal.answer())

    def _cmd_game(self, request: dict, reply: Reply) -> None:
        """``{"action": "start", "rules": NAME?, "chips": N?}`` or ``{"action": "end"}`` (between hands)."""
        staff = self._staff(reply)
        if staff is None:
            return
        action, rules, chips = request.get("action"), request.get("rules"), request.get("chips")
        if rules is not None and not isinstance(rules, str):
            raise worded(BadField, "game: rules is a rule set's name")
        try:
            if action == "start":
                answer = staff.start_game(rules, chips, _by(request))
            elif action == "end":
                answer = staff.end_game(_by(request))
            else:
                raise worded(BadField, "game: action is start or end")
        except StaffError as exc:
            reply(exc.refusal.answer())
            return
        reply({"ok": True, "game": answer})

    # -- technicians: the log and the support bundle ----------------------------------------------------------
    def _cmd_log(self, request: dict, reply: Reply) -> None:
        """The service's recent log (:mod:`firmware.diagnostics.log_ring`): ``level``, ``text``, ``after``,
        ``limit``."""
        ring = log_ring.ring()
        if ring is None:
            reply(worded_answer("this process keeps no log for the page (the journal has it: journalctl -u mjtable)"))
            return
        wait_s = request.get("wait_s", 0)
        if isinstance(wait_s, bool) or not isinstance(wait_s, (int, float)) or not 0 <= wait_s <= LOG_WAIT_MAX_S:
            raise worded(BadField, "log: wait_s is 0 to %(most)s seconds", most=f"{LOG_WAIT_MAX_S:g}")

        def look() -> dict:
            try:
                return ring.lines(request.get("level", "INFO"), request.get("text", ""), request.get("after", 0),
                                  request.get("limit", log_ring.MAX_LINES))
            except ValueError as exc:
                raise worded(BadField, "log: %(problem)s", problem=exc) from None

        answer = look()
        if answer["lines"] or not wait_s:
            reply({"ok": True, **answer})
            return
        loop = self.controller.table.loop
        deadline = loop.now() + wait_s

        def again() -> None:                # (following live: answered when new lines come, or at the deadline)
            found = look()
            if found["lines"] or loop.now() >= deadline:
                reply({"ok": True, **found})
            else:
                loop.call_later(LOG_LOOK_S, again)
        loop.call_later(LOG_LOOK_S, again)

    def _cmd_bundle(self, request: dict, reply: Reply) -> None:
        """What a support ticket's archive holds, from this table (:mod:`firmware.support_bundle` redacts it and
        writes it; ``integrity``: check the database here too, for a caller that cannot open it)."""
        from firmware.support_bundle import integrity_check, redact

        c, session = self.controller, self.session
        cfg = c.table.cfg
        files: dict[str, str] = {}
        if cfg.source is not None:
            try:
                files[Path(str(cfg.source)).name] = Path(str(cfg.source)).read_text(encoding="utf-8")[:200_000]
            except OSError as exc:
                files[Path(str(cfg.source)).name] = f"(not readable: {exc})"
        ring = log_ring.ring()
        staff = session.staff
        answer = {"ok": True, "versions": _versions(), "database": str(session.store.path),
                  "config": redact({"table": cfg.model_dump(mode="json"), "rules": session.rules.name}),
                  "config_files": files, "faults": self._fault_rows(),
                  "log": ring.lines("DEBUG", "", 0, log_ring.MAX_LINES)["lines"] if ring is not None else [],
                  "sessions": staff.sessions(50) if staff is not None else [], "status": session.get_status()}
        if request.get("integrity") and session.store.path != ":memory:":
            answer["integrity"] = integrity_check(session.store.path)
        reply(answer)

    def _fault_rows(self) -> list[dict]:
        rows = self.controller.policy.history()[-500:]
        for row in rows:
            code = FaultCode(row["code"])
            row["text"], row["hint"] = code.text, code.hint
        return rows

    def _cmd_counters(self, request: dict, reply: Reply) -> None:
        """The counters; ``reset``: start the reader's line counters and the slow-move counts from zero
        (runs and learned times are kept: they are the mechanism's history)."""
        table = self.controller.table
        if request.get("reset"):
            table.reader.reset_counters()
            for m in table.mechanisms():
                m.warnings = 0
        reply({"ok": True, "reader": table.reader.counters_dict(),
               "mechanisms": {m.name: {"runs": m.runs, "warnings": m.warnings, "nominal_s": round(m.nominal.value_s, 3),
                                      "design_s": round(m.nominal.initial_s, 3)} for m in table.mechanisms()},
               "slower_than_design": slower_than_design(table.mechanisms()),
               "tiles_counted": [h.counted for h in table.heads],
               **({"fleet": self.fleet()} if self.fleet is not None else {})})

    def _cmd_warnings(self, request: dict, reply: Reply) -> None:
        """Shuffle-bias and wear warnings with their evidence; ``reset``: ``fairness``, ``maintenance`` or a part
        (head0..3, lift0..3) starts gathering evidence again (after the table was checked or the part repaired)."""
        watch = self.controller.watch
        what = request.get("reset")
        if what is not None:
            if not isinstance(what, str):
                raise worded(BadField, "reset: fairness, maintenance or a part, not %(got)s", got=f"{what!r:.40}")
            try:
                watch.reset(what)
            except ValueError as exc:
                reply({"ok": False, "error": str(exc)})
                return
        reply({"ok": True, **watch.evidence()})

    def _cmd_sensors(self, request: dict, reply: Reply) -> None:
        reply({"ok": True, "sensors": self._snapshot()})

    def _cmd_watch(self, request: dict, reply: Reply) -> None:
        """Every input change over the next ``seconds``, then the inputs as they are."""
        seconds = _seconds(request, "seconds", 10.0)
        if not 0 < seconds <= WATCH_MAX_S:
            reply(worded_answer("seconds: watch between 0 and %(max)s s", max=format(WATCH_MAX_S, "g")))
            return
        loop = self.controller.table.loop
        log, start_s = EdgeLog.of(self.controller.table), loop.now()
        loop.call_later(seconds, lambda: reply(
            {"ok": True, "watched_s": seconds, "changes": log.since(start_s), "sensors": self._snapshot()}))

    def _snapshot(self) -> dict[str, bool]:
        return {name: bool(sensor.active) for name, sensor in self.controller.table.inputs().items()}

    def _cmd_reader(self, request: dict, reply: Reply) -> None:
        """The tile reader through the controller's own driver (the service owns the serial port)."""
        ask_reader(self.session.table.reader, self.session.registry, self.session.table.loop.now, request, reply)

    def _cmd_judge(self, request: dict, reply: Reply) -> None:
        """Check a declared win from the winner's seat pad (optionally record it for the hand)."""
        judge_from_pad(self.session, request, reply)

    def _cmd_penalty(self, request: dict, reply: Reply) -> None:
        """A referee's penalty on the hand in play (paid now, kept on the scoreboard)."""
        penalty(self.session, request, reply)

    def _cmd_kong(self, request: dict, reply: Reply) -> None:
        """A kong on the hand in play, when it is made (its money paid now)."""
        kong(self.session, request, reply)

    def _cmd_void(self, request: dict, reply: Reply) -> None:
        """A side's void suit (四川's 定缺) on the hand in play."""
        void(self.session, request, reply)

    def _cmd_drawn(self, request: dict, reply: Reply) -> None:
        """The wall's end with no win (黄庄): its money, and the hand's result."""
        drawn(self.session, request, reply)

    def _cmd_hand(self, request: dict, reply: Reply) -> None:
        """A hand's record and money (the hand in play, or a recorded one)."""
        hand(self.session, request, reply)

    def _cmd_ack(self, request: dict, reply: Reply) -> None:
        c = self.controller
        refused = c.ack()
        if isinstance(refused, Refusal):
            reply(refused.answer())
        else:
            reply({"ok": False, "error": refused} if refused else {"ok": True, "state": c.state})

    # -- service tests ------------------------------------------------------------------
    def _cmd_test(self, request: dict, reply: Reply) -> None:
        name = request.get("name")
        if not isinstance(name, str) or name not in GROUP_TESTS:
            reply(worded_answer("unknown test %(name)s; tests: %(tests)s", name=repr(name)[:60],
                                tests=", ".join(GROUP_TESTS)))
        elif self._may_move(reply, disk=name == "disk"):
            self.tests.group(name, self._begin(request, reply, f"test {name}", DISK_JOG_S if name == "disk" else None))

    def _cmd_jog(self, request: dict, reply: Reply) -> None:
        mechanism = request.get("mechanism")
        if not isinstance(mechanism, str):
            raise worded(BadField, "mechanism: a mechanism's name, not %(got)s", got=f"{mechanism!r:.60}")
        seconds = _seconds(request, "seconds", None)
        to = request.get("to")
        if to is not None and not isinstance(to, str):
            raise worded(BadField, "to: up or down, not %(got)s", got=f"{to!r:.60}")
        hold = request.get("hold", False)
        if not isinstance(hold, bool):
            raise worded(BadField, "hold: true or false, not %(got)s", got=f"{hold!r:.60}")
        disk = mechanism == self.controller.table.turntable.name
        if disk and hold and seconds is None:
            seconds = DISK_JOG_MAX_S
        if self._may_move(reply, disk=disk):
            timer: list = []
            self.tests.jog(mechanism, self._begin(request, reply, f"jog {mechanism}",
                                                  (DISK_JOG_S if seconds is None else seconds) if disk else None,
                                                  held=timer if disk and hold else None),
                           seconds=seconds, to=to)
            if self.tests.disk_timer is not None:
                timer.append(self.tests.disk_timer)

    def _cmd_learn(self, request: dict, reply: Reply) -> None:
        runs = _whole(request, "runs", LEARN_RUNS)
        if not self._may_move(reply):
            return
        mechanisms = self.controller.table.mechanisms()
        before = {m.name: list(m.nominal.samples) for m in mechanisms}

        def answered(answer: dict[str, Any]) -> None:
            if "stopped_by" in answer:          # cut short: the times learned before stay
                for m in mechanisms:
                    m.nominal.restore(before[m.name])
            reply(answer)
        self.tests.learn(self._begin(request, answered, "learn"), runs)

    def _cmd_burn_in(self, request: dict, reply: Reply) -> None:
        cycles = _whole(request, "cycles", BURN_IN_CYCLES)
        if self._may_move(reply, disk=True):
            self.tests.burn_in(self._begin(request, reply, "burn-in", DISK_JOG_S), cycles)

    def _begin(self, request: dict, reply: Reply, name: str, disk_s: float | None = None,
               held: list | None = None) -> Reply:
        """The test's answer through the controller (so that a fault or a stop can answer it), remembered
        as running.  ``disk_s``: the test runs the disk that long at a time.

        ``held``: a hold-to-run disk jog (``"hold": true``, the web page's jog button), whose end timer is
        put in this list once the disk runs; a stop takes that timer back, so the disk may run again at
        once (the button held again), and nothing of the old run is left to stop a new one.

        A disk run's end is a timer on the loop that a stop cannot take back; were the disk started again
        before it falls due, it would stop that run (and let a stopped burn-in go on).  So after a test
        that ran the disk is stopped, the disk is refused until then: from the test's start for a jog or
        the disk test (they run it at once), else at most one disk run from the stop."""
        c = self.controller
        started_s, disk_runs = c.table.loop.now(), c.table.turntable.runs

        def answered(answer: dict[str, Any]) -> None:
            if "stopped_by" in answer and held:
                for timer in held:
                    timer.cancel()
            elif "stopped_by" in answer and disk_s is not None and c.table.turntable.runs != disk_runs:
                at_once = name.startswith("jog") or name == "test disk"
                _DISK_BUSY_UNTIL[c] = (started_s if at_once else c.table.loop.now()) + disk_s
            reply(answer)
        answer = c.begin_service_test(answered)
        _RUNNING[c.service_test.current] = _Running(name, request.get("client"))
        return answer

    # -- stopping --------------------------------------------------------------------------------------
    def _cmd_stop(self, request: dict, reply: Reply) -> None:
        """Stop the running service test or jog: every motor to safe, the test answered (see the module)."""
        c = self.controller
        test = c.service_test.current
        running = _RUNNING.get(test) if test is not None else None
        if request.get("client_gone"):
            if running is None or running.client is None or running.client != request.get("client"):
                reply({"ok": True, "note": "that client's test was not running"})
                return
            who = "because its client went away before the answer"
        else:
            who = "by the technician (mjtable diag stop)"
        if test is None:
            if c.state == TableState.SERVICE.value:
                c.table.safe_stop_all()                 # (nothing should move; make sure of it)
            reply({"ok": True, "note": "no service test was running"})
            return
        c.stop_motion()
        name = running.name if running is not None else "a service test"
        log.info("service test %s stopped: %s", name, who)
        test.answer({"ok": False, "stopped_by": "technician" if not request.get("client_gone") else "client gone",
                     "reason": who, "error": f"stopped {who}"})
        reply({"ok": True, "stopped": name, "motors": "safe"})

    def _may_move(self, reply: Reply, disk: bool = False) -> bool:
        """Motors move only in service mode with no interlock present, and one test at a time."""
        c = self.controller
        if c.state != TableState.SERVICE.value:
            reply(Refusal(Reason.NEEDS_SERVICE, state=c.state).answer())
            return False
        cause = c.table.safety.check("service test")
        if cause is not None:
            reply(Refusal(Reason.INTERLOCK, fault=cause.code.value).answer(fault=cause.code.value))
            return False
        busy = [m.name for m in c.table.mechanisms() if m.busy] + (["turntable"] if c.table.turntable.running else [])
        if busy or c.service_test.current is not None:
            reply(Refusal(Reason.STILL_MOVING, moving=busy).answer())
            return False
        wait_s = _DISK_BUSY_UNTIL.get(c, 0.0) - c.table.loop.now()
        if disk and wait_s > 0:
            reply(Refusal(Reason.DISK_TIMED, s=f"{wait_s:.1f}").answer())
            return False
        return True


def _seconds(request: dict, key: str, default: float | None) -> Any:
    """A request's number of seconds: finite, or the default when it is not there."""
    value = request.get(key)
    if value is None:
        return default
    try:
        seconds = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan
    except OverflowError:
        seconds = math.nan
    if not math.isfinite(seconds):
        raise worded(BadField, "%(key)s: a number of seconds, not %(got)s", key=key, got=f"{value!r:.60}")
    return seconds


def _whole(request: dict, key: str, default: int) -> int:
    """A request's count: a whole number, or the default when it is not there (the test checks the range)."""
    value = request.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        if not (isinstance(value, float) and value.is_integer()):
            raise worded(BadField, "%(key)s: a whole number, not %(got)s", key=key, got=f"{value!r:.60}")
        value = int(value)
    return value
