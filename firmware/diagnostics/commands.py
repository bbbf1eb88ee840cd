"""What a technician may ask of the running controller, as JSON requests and replies.

Read-only requests (``state``, ``faults``, ``counters``, ``sensors``,
``reader``) are always answered; ``state`` names how each set's walls
below or on the table were checked (``verified`` or ``counted``, counted
only) and, while a set is not enrolled, how to enrol it (``enrol``).  ``ack`` acknowledges a latched fault
(refused, with the reason, while an interlock is still there).  Service
tests move motors, so they are refused unless the table is in service mode
(both lift keys at power-on) and no interlock is present (the safety
supervisor checks the levels); each runs on the loop through the same
mechanism objects as the cycle (so a jam in a test raises the same fault
code) and replies when it is done, or at once with the reason when an
interlock or a fault stops it (the table stays in service mode).
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from firmware.controller.states import SetLocation, TableState
from firmware.faults import FaultCode
from firmware.diagnostics.edge_log import EdgeLog, table_inputs
from firmware.diagnostics.judge import judge_from_pad
from firmware.diagnostics.reader_answers import ask_reader
from firmware.diagnostics.service_tests import (BURN_IN_CYCLES, GROUP_TESTS, LEARN_RUNS, ServiceTests,
                                                slower_than_design)

log = logging.getLogger(__name__)

Reply = Callable[[dict[str, Any]], None]
WATCH_MAX_S = 600.0


class DiagCommands:
    def __init__(self, controller) -> None:
        self.controller = controller
        self.tests = ServiceTests(controller)
        EdgeLog.of(controller.table)                # from now on every input change is recorded

    def handle(self, request: dict[str, Any], reply: Reply) -> None:
        cmd = request.get("cmd")
        cmd = cmd.replace("-", "_") if isinstance(cmd, str) else cmd
        handler = getattr(self, f"_cmd_{cmd}", None) if isinstance(cmd, str) else None
        if handler is None:
            reply({"ok": False, "error": f"unknown command {cmd!r}; commands: state, faults, counters, sensors, "
                                        f"watch, reader, judge, ack, test, jog, learn, burn-in"})
            return
        try:
            handler(request, reply)
        except Exception as exc:  # noqa: BLE001 - a bad request must not take the controller down
            log.exception("diag command %r failed", cmd)
            reply({"ok": False, "error": str(exc)})

    # -- read-only ------------------------------------------------------------------
    def _cmd_state(self, request: dict, reply: Reply) -> None:
        c = self.controller
        b = c.book
        walls = {s: b.wall_mode(s) for s in sorted(b.sets_at(SetLocation.STACKED) + b.sets_at(SetLocation.TABLE))}
        reply({"ok": True, "state": c.state, "book": b.to_dict(), "chips": c.scoreboard.chips,
               "walls": walls, **({"enrol": c.enrol_hint} if c.enrol_hint else {}),
               "fault": c.fault.code.value if c.fault else None,
               "interlocks": [f"{f.detail['interlock']} ({f.code.value})" for f in c.safety.active()],
               "stuck_keys": sorted(c.table.panel.stuck),
               **({"look_for": c.missing_tiles, "check": c.check_hint}
                  if c.fault and c.fault.code.value == "E62" else {})})

    def _cmd_faults(self, request: dict, reply: Reply) -> None:
        rows = self.controller.policy.history()
        for row in rows:
            code = FaultCode(row["code"])
            row["text"], row["hint"] = code.text, code.hint
        reply({"ok": True, "faults": rows})

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
               "tiles_counted": [h.counted for h in table.heads]})

    def _cmd_sensors(self, request: dict, reply: Reply) -> None:
        reply({"ok": True, "sensors": self._snapshot()})

    def _cmd_watch(self, request: dict, reply: Reply) -> None:
        """Every input change over the next ``seconds``, then the inputs as they are."""
        seconds = float(request.get("seconds", 10.0))
        if not 0 < seconds <= WATCH_MAX_S:
            reply({"ok": False, "error": f"watch between 0 and {WATCH_MAX_S:g} s"})
            return
        log, start_s = EdgeLog.of(self.controller.table), self.controller.loop.now()
        self.controller.loop.call_later(seconds, lambda: reply(
            {"ok": True, "watched_s": seconds, "changes": log.since(start_s), "sensors": self._snapshot()}))

    def _snapshot(self) -> dict[str, bool]:
        return {name: bool(sensor.active) for name, sensor in table_inputs(self.controller.table).items()}

    def _cmd_reader(self, request: dict, reply: Reply) -> None:
        """The tile reader through the controller's own driver (the service owns the serial port)."""
        c = self.controller
        ask_reader(c.table.reader, c.registry, c.loop.now, request, reply)

    def _cmd_judge(self, request: dict, reply: Reply) -> None:
        """Check a declared win from the winner's seat pad (optionally record it for the hand)."""
        judge_from_pad(self.controller, request, reply)

    def _cmd_ack(self, request: dict, reply: Reply) -> None:
        c = self.controller
        refused = c.ack()
        reply({"ok": False, "error": refused} if refused else {"ok": True, "state": c.state})

    # -- service tests ------------------------------------------------------------------
    def _cmd_test(self, request: dict, reply: Reply) -> None:
        name = request.get("name")
        if name not in GROUP_TESTS:
            reply({"ok": False, "error": f"unknown test {name!r}; tests: {', '.join(GROUP_TESTS)}"})
        elif self._may_move(reply):
            self.tests.group(name, self.controller.begin_service_test(reply))

    def _cmd_jog(self, request: dict, reply: Reply) -> None:
        if self._may_move(reply):
            self.tests.jog(str(request.get("mechanism")), self.controller.begin_service_test(reply),
                           seconds=request.get("seconds"), to=request.get("to"))

    def _cmd_learn(self, request: dict, reply: Reply) -> None:
        if self._may_move(reply):
            self.tests.learn(self.controller.begin_service_test(reply), int(request.get("runs", LEARN_RUNS)))

    def _cmd_burn_in(self, request: dict, reply: Reply) -> None:
        if self._may_move(reply):
            self.tests.burn_in(self.controller.begin_service_test(reply), int(request.get("cycles", BURN_IN_CYCLES)))

    def _may_move(self, reply: Reply) -> bool:
        """Motors move only in service mode with no interlock present, and one test at a time."""
        c = self.controller
        if c.state != TableState.SERVICE.value:
            reply({"ok": False, "error": f"motor tests need service mode (both lift keys at power-on); "
                                         f"the table is {c.state}"})
            return False
        cause = c.safety.check("service test")
        if cause is not None:
            reply({"ok": False, "error": f"refused: {cause.detail['interlock']} ({cause.code.value}); "
                                         f"{cause.code.hint}", "fault": cause.code.value})
            return False
        busy = [m.name for m in c.table.mechanisms() if m.busy] + (["turntable"] if c.table.turntable.running else [])
        if busy or c.service_test is not None:
            reply({"ok": False, "error": f"still moving: {', '.join(busy) or 'a test'}; wait for the running test"})
            return False
        return True
