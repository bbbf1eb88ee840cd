"""The safety matrix: each interlock input x each controller state x {already active at entry, changing during}.

One case drives the simulated table into a state (injecting what that state
needs: a foreign tile for REJECTED, a missing tile for HOLD, a jam for
LATCHED, both lift keys for PAUSED, service mode), makes the interlock
input active either just before the state is entered (from the state
machine's ``before_state_change``, so the state's own entry code already
sees the level) or a moment after, holds it for ``HOLD_S`` and lets go.
The outcome: the motor seconds the independent
:class:`sim.interlock_watch.InterlockWatch` measured under the active
interlock (must be 0: every motor stops within the tick), every refused
movement and every fault raised while it was active, the code the lamps
blinked, and whether the game then completed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from firmware.controller.states import TableState
from firmware.faults import FaultCode
from sim.faults import parse_fault
from sim.table_run import SimRun

S = TableState
HOLD_S = 45.0               # longer than the panel's key_stuck_s (20 s), so a held key becomes a stuck key
DURING_S = 0.2              # "changing during": this long after the state was entered (or at once, if shorter)
BOOT_STATES = (S.BOOT, S.HOMING, S.IDLE)   # entered during power-on: "at entry" means at power-on


@dataclass(frozen=True)
class Input:
    name: str               # lid, supply, reset, or a key held down (key_dice1, ...)
    sensor: str
    level: bool             # the level that makes the interlock active
    code: FaultCode

    def __str__(self) -> str:
        return self.name


INPUTS = {
    "lid": Input("lid", "lid", True, FaultCode.E04),
    "supply": Input("supply", "supply_ok", False, FaultCode.E01),
    "reset": Input("reset", "key_reset", True, FaultCode.E02),
    **{key: Input(key, key, True, FaultCode.E05)
       for key in ("key_lift0", "key_lift1", "key_dice0", "key_dice1", "key_dice2", "key_dice3")},
}

# what a state needs to be reached in a short game
ARRANGE: dict[TableState, list[str]] = {
    S.REJECTED: ["foreign-tile"],
    S.HOLD: ["missing-tile=5m"],
    S.LATCHED: ["jam:lift1@hand1"],
}
# keys pressed (key, at simulated s): a reset in the middle of the first stacking leaves cams off home, so the
# homing after the release moves (the homing at power-on has nothing to do)
PRESS: dict[TableState, list[tuple[str, float]]] = {
    S.HOMING: [("key_reset", 30.0)],
}


@dataclass
class Outcome:
    reached: bool = False
    activated_s: float | None = None
    motor_s: dict[str, float] = field(default_factory=dict)
    worst: dict = field(default_factory=dict)
    codes: list[str] = field(default_factory=list)          # faults raised while an input was active
    refused: list[str] = field(default_factory=list)        # codes of movements refused meanwhile
    blinked: set[int] = field(default_factory=set)
    released_s: dict[str, float] = field(default_factory=dict)   # when each input let go (or was freed)
    completed: bool = False
    service_answer: dict | None = None
    end_state: str | None = None


def run_case(inputs: tuple[Input, ...], state: TableState, mode: str, seed: int = 1) -> Outcome:
    out = Outcome()
    at_power_on = mode == "entry" and state in (*BOOT_STATES, S.SERVICE)
    specs = list(ARRANGE.get(state, []))
    if at_power_on:
        specs += [f"{'stuck-on' if i.level else 'stuck-off'}:{i.sensor}={HOLD_S:g}s" for i in inputs]
    service = state is S.SERVICE
    run = SimRun(hands=0 if service else 2, seed=seed, faults=[parse_fault(s) for s in specs], service=service)
    world = run.world
    active_until = [0.0]

    def activate() -> None:
        if out.activated_s is not None:
            return
        out.activated_s = world.loop.now()
        for i in inputs:
            world.io.sensors[i.sensor].stick(i.level)
            world.loop.call_later(HOLD_S, world.io.sensors[i.sensor].stick, None)
        active_until[0] = out.activated_s + HOLD_S

    def observe(event) -> None:
        now = event.at_s
        if out.activated_s is None or now > active_until[0]:
            return
        if event.topic == "fault":
            out.codes.append(event.data["fault"].code.value)
        elif event.topic == "move.refused":
            out.refused.append(event.data["code"])

    run.bus.subscribe("", observe)

    def released(after: bool) -> None:
        if after and out.activated_s is not None:
            for i in inputs:
                if world.io.sensors[i.sensor].stuck is None and i.name not in out.released_s:
                    out.released_s[i.name] = world.loop.now() - out.activated_s
    world.io.observe(frozenset(i.sensor for i in inputs), released)
    if at_power_on:
        out.reached, out.activated_s, active_until[0] = True, 0.0, HOLD_S
        out.codes += [f.code.value for f in run.faults()]
    elif service and mode == "during":
        out.reached = True
        run.loop.call_at(3.0, activate)         # while the technician's burn-in runs (it starts at 2 s)
    elif mode == "entry":
        def before(event) -> None:
            if event.transition is not None and event.transition.dest == state.value and out.activated_s is None:
                out.reached = True
                activate()
        run.controller.machine.before_state_change.append(before)
    else:
        def entered(event) -> None:
            if event.data["state"] == state.value and out.activated_s is None:
                out.reached = True
                run.loop.call_later(DURING_S if _lasts(run, state) else 0.0, activate)
        run.bus.subscribe("controller.state", entered)
    for key, at_s in PRESS.get(state, []) if not at_power_on else []:
        run.loop.call_at(at_s, world.press, key, 0.3)
    if state is S.PAUSED:
        _pause_once(run)
    if service:
        _service_test(run, out)

    def lamps() -> None:
        if run.controller is not None and run.controller.lamps.blinking is not None:
            out.blinked.add(run.controller.lamps.blinking)
        if run.loop.now() < 3000:
            run.loop.call_later(0.5, lamps)
    run.loop.call_later(0.0, lamps)
    if service:
        run.run_until(lambda: run.loop.now() > HOLD_S + 60, HOLD_S + 120)
        out.completed = run.state is S.SERVICE
    else:
        out.completed = run.run(timeout_s=3000)
    out.motor_s = run.interlocks.finish()
    out.worst = {k: v for k, v in run.interlocks.worst.items() if v}
    out.end_state = run.state.value if run.state else None
    run.close()
    return out


def _lasts(run: SimRun, state: TableState) -> bool:
    """States the table passes through in an instant (deciding) cannot be changed "during" later on."""
    return state not in (S.IDLE, S.BOOT)


def _pause_once(run: SimRun) -> None:
    """Both lift keys during the first stacking cycle (补牌), then one key resumes."""
    done = [False]

    def chord() -> None:
        for key in ("key_lift0", "key_lift1"):
            run.world.keys[key].set(True)
            run.loop.call_later(0.3, run.world.keys[key].set, False)
        run.loop.call_later(8.0, run.world.press, "key_lift1")

    def watch(event) -> None:
        if event.data["state"] == "stacking" and not done[0]:
            done[0] = True
            run.loop.call_later(5.0, chord)
    run.bus.subscribe("controller.state", watch)


def _service_test(run: SimRun, out: Outcome) -> None:
    """In service mode a technician runs a burn-in, so that motors are moving when the input changes."""
    from firmware.diagnostics.commands import DiagCommands

    def ask() -> None:
        if run.controller is not None:
            DiagCommands(run.session).handle({"cmd": "burn-in", "cycles": 20},
                                                lambda answer: setattr(out, "service_answer", answer))
    run.loop.call_later(2.0, ask)
