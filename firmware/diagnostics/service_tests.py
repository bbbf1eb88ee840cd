"""Service tests that move motors: group tests, jogging one mechanism, learning nominal times, burn-in.

Every test drives the same mechanism objects as the cycle, so a jam in a
test stops the motor and raises the same fault code (with the same hint) as
it would in a game.  Tests run one step after another on the loop and stop
at the first failed step; the reply lists every step that ran.  The caller
(:class:`firmware.diagnostics.commands.DiagCommands`) has already checked
that the table is in service mode with no interlock present; an interlock
or a fault during the test stops it and answers it through the controller
(:meth:`firmware.controller.controller.Controller.begin_service_test`).
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from firmware.diagnostics.service_limits import (BURN_IN_CYCLES, BURN_IN_CYCLES_MAX, DISK_JOG_MAX_S,  # noqa: F401
                                                  DISK_JOG_S, GROUP_TESTS, LEARN_RUNS, LEARN_RUNS_MAX)
from firmware.mechanisms.center_lift import LiftStop
from firmware.diagnostics.request_fields import Reply

log = logging.getLogger(__name__)

Step = Callable[[Reply], None]



def move_dict(result) -> dict[str, Any]:
    """One movement's result as a technician reads it: the fault code with its hint."""
    answer: dict[str, Any] = {"mechanism": result.mechanism, "ok": result.ok,
                              "elapsed_s": round(result.elapsed_s, 3),
                              "fault": result.fault.code.value if result.fault else None}
    if result.fault:
        answer["hint"] = result.fault.code.hint
    return answer


WEAR_RATIO = 1.3       # a learned time this much over the design time is worth a technician's look


def slower_than_design(mechanisms) -> dict[str, str]:
    """Mechanisms whose learned time has drifted well past the table model's design time: the
    warnings stop once the nominal time has learned the slowness, this does not."""
    out = {}
    for m in mechanisms:
        design_s, learned_s = m.nominal.initial_s, m.nominal.value_s
        if design_s > 0 and learned_s / design_s >= WEAR_RATIO:
            out[m.name] = f"{learned_s:.2f} s learned, {design_s:.2f} s designed ({learned_s / design_s:.1f}x)"
    return out


def run_steps(steps: list[Step], done: Callable[[list[dict[str, Any]]], None]) -> None:
    """Run ``steps`` one after another; stop after the first whose answer is not ok."""
    answers: list[dict[str, Any]] = []

    def next_step(index: int) -> None:
        if index == len(steps):
            done(answers)
            return

        def finished(answer: dict[str, Any]) -> None:
            answers.append(answer)
            if answer.get("ok"):
                next_step(index + 1)
            else:
                done(answers)
        steps[index](finished)
    next_step(0)


class ServiceTests:
    def __init__(self, controller) -> None:
        self.controller = controller
        self.table = controller.table
        self.disk_timer = None          # the end of the last disk run started here (a hold-to-run jog takes it back)

    # -- one mechanism ----------------------------------------------------------------------------
    def mechanism_names(self) -> list[str]:
        return [m.name for m in self.table.mechanisms()]

    def jog(self, name: str, reply: Reply, seconds: float | None = None, to: str | None = None) -> None:
        """One movement of one mechanism: a cam turn, a wall-lift turn, the centre to a stop,
        the disk for ``seconds``, a dice throw."""
        t = self.table
        if name == t.turntable.name:
            self._run_disk(reply, DISK_JOG_S if seconds is None else seconds)
        elif name == t.center_lift.name:
            if to is None:
                stop = LiftStop.DOWN if t.center_lift.position is LiftStop.UP else LiftStop.UP
            elif to in ("up", "down"):
                stop = LiftStop(to)
            else:
                reply({"ok": False, "error": f"--to must be up or down, not {to!r}"})
                return
            t.center_lift.move_to(stop, lambda r: reply({**move_dict(r), "to": stop.value}))
        elif name == t.dice.name:
            t.dice.throw(lambda r, faces: reply({**move_dict(r), "faces": list(faces) if faces else None}))
        else:
            by_name = {h.cam.name: h.cam for h in t.heads} | {lift.name: lift for lift in t.lifts}
            if name not in by_name:
                reply({"ok": False, "error": f"no mechanism {name!r}; mechanisms: {', '.join(self.mechanism_names())}"})
                return
            by_name[name].turn(lambda r: reply(move_dict(r)))

    def _run_disk(self, reply: Reply, seconds: float) -> None:
        """Run the disk and magnet ring for a while, counting index pulses (E60 if there are none)."""
        if not 0 < seconds <= DISK_JOG_MAX_S:
            reply({"ok": False, "error": f"the disk runs between 0 and {DISK_JOG_MAX_S:g} s in a test"})
            return
        disk = self.table.turntable
        start_revs = disk.revolutions
        if not disk.start():
            return                  # refused: the interlock's report stopped the test and answered it

        def stop() -> None:
            stopped_by_fault = not disk.running
            disk.stop()
            answer: dict[str, Any] = {"mechanism": disk.name, "ok": not stopped_by_fault, "ran_s": seconds,
                                      "revolutions": disk.revolutions - start_revs}
            fault = self.controller.fault
            if stopped_by_fault and fault is not None:
                answer.update(fault=fault.code.value, hint=fault.code.hint)
            reply(answer)
        self.disk_timer = self.table.loop.call_later(seconds, stop)

    # -- groups ------------------------------------------------------------------------------------
    def group(self, name: str, reply: Reply) -> None:
        t = self.table
        if name == "disk":
            self._run_disk(lambda a: reply({"ok": a["ok"], "test": name, "moves": [a]}), DISK_JOG_S)
        elif name == "stackers":
            self._together([h.cam for h in t.heads], name, reply)
        elif name == "lifts":
            self._together(list(t.lifts), name, reply)
        elif name == "center":
            steps = [lambda r, to=to: self.jog(t.center_lift.name, r, to=to) for to in ("up", "down")]
            run_steps(steps, lambda moves: reply({"ok": all(m["ok"] for m in moves), "test": name, "moves": moves}))
        elif name == "dice":
            self.jog(t.dice.name, lambda a: reply({"ok": a["ok"], "test": name, "moves": [a]}))
        else:
            reply({"ok": False, "error": f"unknown test {name!r}; tests: {', '.join(GROUP_TESTS)}"})

    def _together(self, mechanisms: list, name: str, reply: Reply) -> None:
        """Turn every mechanism at once; reply when all are in, or at the first fault.

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
            moves = [move_dict(results[m.name]) if m.name in results else
                     {"mechanism": m.name, "ok": False, "elapsed_s": None, "fault": None, "aborted": True}
                     for m in mechanisms]
            reply({"ok": all(m["ok"] for m in moves), "test": name, "moves": moves})
        for mechanism in mechanisms:
            mechanism.turn(done)

    # -- learning and burn-in ----------------------------------------------------------------------
    def learn(self, reply: Reply, runs: int = LEARN_RUNS) -> None:
        """Forget the learned times of every cam, wall lift and the centre lift and learn them anew.

        Each mechanism runs ``runs`` times (the centre alternates up and down);
        the new nominal time is the median.  After a failed run every
        mechanism keeps what it had learned before.
        """
        if not 1 <= runs <= LEARN_RUNS_MAX:
            reply({"ok": False, "error": f"learn runs between 1 and {LEARN_RUNS_MAX} times"})
            return
        t = self.table
        mechanisms = [*(h.cam for h in t.heads), *t.lifts, t.center_lift]
        before = {m.name: list(m.nominal.samples) for m in mechanisms}
        before_s = {m.name: m.nominal.value_s for m in mechanisms}
        for m in mechanisms:
            m.nominal.clear()
        steps: list[Step] = []
        # the centre must start from a stop so that every learning move is a whole one
        steps.append(lambda r: self.jog(t.center_lift.name, r, to="down"))
        for m in mechanisms:
            if m is t.center_lift:
                steps += [lambda r, to=to: self.jog(t.center_lift.name, r, to=to)
                          for _ in range(runs) for to in ("up", "down")]
            else:
                steps += [lambda r, name=m.name: self.jog(name, r) for _ in range(runs)]

        def finished(moves: list[dict[str, Any]]) -> None:
            ok = all(m["ok"] for m in moves) and len(moves) == len(steps)
            if not ok:
                for m in mechanisms:
                    m.nominal.restore(before[m.name])
            else:
                self.controller.save_nominal()
            reply({"ok": ok, "test": "learn", "runs": runs,
                   "nominal_s": {m.name: {"before": round(before_s[m.name], 3), "after": round(m.nominal.value_s, 3)}
                                 for m in mechanisms},
                   "failed": [m for m in moves if not m["ok"]]})
        run_steps(steps, finished)

    def burn_in(self, reply: Reply, cycles: int = BURN_IN_CYCLES) -> None:
        """Repeat stackers, lifts, centre up/down and the disk ``cycles`` times; stop at the first fault.

        Slow movements are counted (the warnings of each mechanism) so a worn
        belt shows up before it jams.
        """
        if not 1 <= cycles <= BURN_IN_CYCLES_MAX:
            reply({"ok": False, "error": f"burn-in runs between 1 and {BURN_IN_CYCLES_MAX} cycles"})
            return
        mechanisms = self.table.mechanisms()
        warnings_before = {m.name: m.warnings for m in mechanisms}
        started_s = self.table.loop.now()
        steps: list[Step] = [lambda r, name=name: self.group(name, r)
                             for _ in range(cycles) for name in ("stackers", "lifts", "center", "disk")]

        def finished(results: list[dict[str, Any]]) -> None:
            ok = all(r["ok"] for r in results) and len(results) == len(steps)
            reply({"ok": ok, "test": "burn-in", "cycles_requested": cycles, "cycles_done": len(results) // 4
                   if ok else (len(results) - 1) // 4, "ran_s": round(self.table.loop.now() - started_s, 1),
                   "slow_moves": {m.name: m.warnings - warnings_before[m.name] for m in mechanisms
                                  if m.warnings > warnings_before[m.name]},
                   "slower_than_design": slower_than_design(mechanisms),
                   "failed": [r for r in results if not r["ok"]]})
        run_steps(steps, finished)
