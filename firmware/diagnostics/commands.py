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
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from firmware.controller.states import SetLocation, TableState
from firmware.faults import FaultCode
from firmware.i18n import reworded, worded
from firmware.refusals import Reason, Refusal, answer_of, worded_answer
from firmware.diagnostics import staff_requests, support_requests
from firmware.diagnostics.edge_log import EdgeLog
from firmware.diagnostics.hand_facts_told import drawn, void
from firmware.diagnostics.judge import hand, judge_from_pad, kong, penalty
from firmware.diagnostics.reader_answers import ask_reader
from firmware.diagnostics.request_fields import BadField, Reply, seconds_of, whole_of
from firmware.diagnostics.service_tests import (BURN_IN_CYCLES, DISK_JOG_MAX_S, DISK_JOG_S, GROUP_TESTS,
                                                LEARN_RUNS, ServiceTests, slower_than_design)

if TYPE_CHECKING:
    from firmware.game.session import TableSession

log = logging.getLogger(__name__)

WATCH_MAX_S = 600.0
COMMANDS = ("state, status, faults, counters, sensors, watch, reader, judge, penalty, kong, void, drawn, hand, ack, "
            "session, players, game, log, bundle, test, warnings, "
            "jog, learn, burn-in, stop")


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
    def _cmd_session(self, request: dict, reply: Reply) -> None:
        staff_requests.session_request(self.session, request, reply)

    def _cmd_players(self, request: dict, reply: Reply) -> None:
        staff_requests.players_request(self.session, request, reply)

    def _cmd_game(self, request: dict, reply: Reply) -> None:
        staff_requests.game_request(self.session, request, reply)

    # -- technicians: the log and the support bundle ----------------------------------------------------------
    def _cmd_log(self, request: dict, reply: Reply) -> None:
        support_requests.log_request(self.controller.table.loop, request, reply)

    def _cmd_bundle(self, request: dict, reply: Reply) -> None:
        support_requests.bundle_request(self.session, self._fault_rows(), request, reply)

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
        seconds = seconds_of(request, "seconds", 10.0)
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
        seconds = seconds_of(request, "seconds", None)
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
        runs = whole_of(request, "runs", LEARN_RUNS)
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
        cycles = whole_of(request, "cycles", BURN_IN_CYCLES)
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
