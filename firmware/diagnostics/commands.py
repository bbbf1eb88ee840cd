"""What a technician may ask of the running controller, as JSON requests and replies.

Read-only requests (``state``, ``faults``, ``counters``, ``sensors``) are
always answered.  ``ack`` acknowledges a latched fault.  Service tests move
motors, so they are refused unless the table is in service mode (both lift
keys at power-on) with the lid closed; each runs on the loop through the
same mechanism objects as the cycle (so a jam in a test raises the same
fault code) and replies when it is done.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from firmware.controller.states import TableState
from firmware.faults import FaultCode
from firmware.mechanisms.center_lift import LiftStop

log = logging.getLogger(__name__)

Reply = Callable[[dict[str, Any]], None]
TESTS = ("disk", "stackers", "lifts", "center", "dice")
DISK_JOG_S = 3.0


def move_dict(result) -> dict[str, Any]:
    """One movement's result as a technician reads it: the fault code with its hint."""
    answer: dict[str, Any] = {"mechanism": result.mechanism, "ok": result.ok,
                              "elapsed_s": round(result.elapsed_s, 3),
                              "fault": result.fault.code.value if result.fault else None}
    if result.fault:
        answer["hint"] = result.fault.code.hint
    return answer


class DiagCommands:
    def __init__(self, controller) -> None:
        self.controller = controller

    def handle(self, request: dict[str, Any], reply: Reply) -> None:
        cmd = request.get("cmd")
        handler = getattr(self, f"_cmd_{cmd}", None) if isinstance(cmd, str) else None
        if handler is None:
            reply({"ok": False, "error": f"unknown command {cmd!r}; commands: state, faults, counters, sensors, "
                                        f"ack, test"})
            return
        try:
            handler(request, reply)
        except Exception as exc:  # noqa: BLE001 - a bad request must not take the controller down
            log.exception("diag command %r failed", cmd)
            reply({"ok": False, "error": str(exc)})

    # -- read-only ------------------------------------------------------------------
    def _cmd_state(self, request: dict, reply: Reply) -> None:
        c = self.controller
        reply({"ok": True, "state": c.state, "book": c.book.to_dict(), "chips": c.scoreboard.chips,
               "fault": c.fault.code.value if c.fault else None})

    def _cmd_faults(self, request: dict, reply: Reply) -> None:
        rows = self.controller.store.faults()
        for row in rows:
            code = FaultCode(row["code"])
            row["text"], row["hint"] = code.text, code.hint
        reply({"ok": True, "faults": rows})

    def _cmd_counters(self, request: dict, reply: Reply) -> None:
        table = self.controller.table
        reply({"ok": True, "reader": table.reader.counters_dict(),
               "mechanisms": {m.name: {"runs": m.runs, "warnings": m.warnings, "nominal_s": round(m.nominal.value_s, 3)}
                              for m in table.mechanisms()},
               "tiles_counted": [h.counted for h in table.heads]})

    def _cmd_sensors(self, request: dict, reply: Reply) -> None:
        t = self.controller.table
        inputs = {"center_up": t.center_lift.up_sensor, "center_down": t.center_lift.down_sensor,
                  "supply_ok": t.supply_ok}
        inputs.update({f"stacker_home{h.side}": h.cam.home for h in t.heads})
        inputs.update({f"tile_in{h.side}": h.tile_in for h in t.heads})
        inputs.update({f"feed_full{h.side}": h.feed_full for h in t.heads})
        inputs.update({f"lift_home{i}": lift.home for i, lift in enumerate(t.lifts)})
        inputs.update(t.panel.keys)
        if t.lid is not None:
            inputs["lid"] = t.lid
        reply({"ok": True, "sensors": {name: bool(sensor.active) for name, sensor in inputs.items()}})

    def _cmd_ack(self, request: dict, reply: Reply) -> None:
        c = self.controller
        if c.state != TableState.LATCHED.value:
            reply({"ok": False, "error": f"nothing to acknowledge (state {c.state})"})
            return
        c.ack()
        reply({"ok": True, "state": c.state})

    # -- service tests ------------------------------------------------------------------
    def _cmd_test(self, request: dict, reply: Reply) -> None:
        c = self.controller
        name = request.get("name")
        if name not in TESTS:
            reply({"ok": False, "error": f"unknown test {name!r}; tests: {', '.join(TESTS)}"})
            return
        if c.state != TableState.SERVICE.value:
            reply({"ok": False, "error": f"motor tests need service mode (both lift keys at power-on); "
                                         f"the table is {c.state}"})
            return
        if c.table.lid is not None and c.table.lid.active:
            reply({"ok": False, "error": "close the service lid first (E04)"})
            return
        getattr(self, f"_test_{name}")(reply)

    def _collect(self, mechanisms: list, reply: Reply, name: str) -> Callable:
        """Gather one result per mechanism; reply when all are in, or at the first fault.

        A fault stops the table (the controller aborts every other movement
        without a report), so the reply lists the ones still moving then as
        aborted rather than waiting for results that will never come.
        """
        results: dict[str, Any] = {}
        replied = [False]

        def done(result) -> None:
            if replied[0]:
                return
            results[result.mechanism] = result
            if len(results) < len(mechanisms) and result.ok:
                return
            replied[0] = True
            moves = []
            for m in mechanisms:
                r = results.get(m.name)
                if r is None:
                    moves.append({"mechanism": m.name, "ok": False, "elapsed_s": None, "fault": None,
                                  "aborted": True})
                else:
                    moves.append(move_dict(r))
            reply({"ok": all(m["ok"] for m in moves), "test": name, "moves": moves})
        return done

    def _test_stackers(self, reply: Reply) -> None:
        cams = [head.cam for head in self.controller.table.heads]
        done = self._collect(cams, reply, "stackers")
        for cam in cams:
            cam.turn(done)

    def _test_lifts(self, reply: Reply) -> None:
        lifts = list(self.controller.table.lifts)
        done = self._collect(lifts, reply, "lifts")
        for lift in lifts:
            lift.turn(done)

    def _test_center(self, reply: Reply) -> None:
        """Centre up, then down again."""
        lift = self.controller.table.center_lift
        moves: list = []

        def report() -> None:
            reply({"ok": all(m.ok for m in moves), "test": "center",
                   "moves": [move_dict(m) for m in moves]})

        def down(result) -> None:
            moves.append(result)
            report()

        def up(result) -> None:
            moves.append(result)
            if result.ok:
                lift.move_to(LiftStop.DOWN, down)
            else:
                report()
        lift.move_to(LiftStop.UP, up)

    def _test_disk(self, reply: Reply) -> None:
        table = self.controller.table
        table.turntable.start()

        def stop() -> None:
            table.turntable.stop()
            reply({"ok": True, "test": "disk", "ran_s": DISK_JOG_S})
        table.loop.call_later(DISK_JOG_S, stop)

    def _test_dice(self, reply: Reply) -> None:
        def done(result, faces) -> None:
            reply({"ok": result.ok, "test": "dice", "faces": list(faces) if faces else None, **move_dict(result)})
        self.controller.table.dice.throw(done)
