"""The safety matrix: no motor runs while an interlock is active, in any state, already active or changing.

Every interlock input (lid, supply, reset key, each panel key held until it
is stuck) x every state of the controller x {active at entry, changing
during}, and combinations of two, on the simulated table.  The full cross
product runs under ``pytest -m slow``; the default run takes a sample that
covers every input and every state.
"""

import itertools
import random

import pytest

from firmware.controller.states import TableState
from tests.support.safety_matrix import INPUTS, run_case

S = TableState
MODES = ("entry", "during")
INSTANT = (S.BOOT, S.IDLE)          # passed through in an instant: only "already active at entry"


def _cases():
    for name, state, mode in itertools.product(INPUTS, TableState, MODES):
        if mode == "during" and state in INSTANT:
            continue
        if state is S.SERVICE and name in ("key_lift0", "key_lift1"):
            continue                # (both lift keys are the service-mode gesture itself)
        yield (name,), state, mode


def _pairs():
    for a, b in itertools.combinations(("lid", "supply", "reset", "key_dice2"), 2):
        for state in (S.STACKING, S.RAISING, S.IN_PLAY, S.HOLD, S.CENTER_UP, S.DICE):
            for mode in MODES:
                yield (a, b), state, mode


ALL = list(_cases())
PAIRS = list(_pairs())


def _sample():
    """Every input and every state at least once, both modes, and a few pairs (deterministic)."""
    rng = random.Random(20261201)
    chosen, seen_inputs, seen_states = [], set(), set()
    for case in rng.sample(ALL, len(ALL)):
        names, state, _ = case
        if names[0] not in seen_inputs or state not in seen_states:
            chosen.append(case)
            seen_inputs.add(names[0])
            seen_states.add(state)
    return chosen + rng.sample(PAIRS, 4)


def _ids(case):
    names, state, mode = case
    return f"{'+'.join(names)}-{state.value}-{mode}"


def _check(case):
    names, state, mode = case
    inputs = tuple(INPUTS[n] for n in names)
    out = run_case(inputs, state, mode)
    assert out.reached, f"the table never entered {state.value}"
    assert not any(out.motor_s.values()), f"motors ran under an active interlock: {out.motor_s} {out.worst}"
    for i in inputs:
        if i.name == "lid":
            # an open lid on a table at rest stops nothing; a movement refused meanwhile raised the most serious
            # interlock present (E04, or another input of the pair)
            assert not out.refused or {j.code.value for j in inputs} & set(out.codes), (out.refused, out.codes)
        elif i.code.value not in out.codes:
            # a held key is stuck only after key_stuck_s: freed earlier (by the technician), it was never stuck
            held_s = out.released_s.get(i.name, float("inf"))
            assert i.name.startswith("key_") and held_s < 20.0, \
                f"{i.code.value} not raised while {i} was active ({held_s:g} s): {out.codes}"
    if state is S.SERVICE:
        assert out.completed, f"service mode left: {out.end_state}"
        assert out.service_answer is not None and not out.service_answer["ok"], out.service_answer
    else:
        shown = {int(c[1:]) for c in out.codes if c in {i.code.value for i in inputs}}
        if shown and state is not S.LATCHED:
            assert shown & out.blinked, f"the lamps never showed {shown}: {out.blinked}"
        assert out.completed, f"the game did not complete after the interlock cleared (state {out.end_state})"


@pytest.mark.parametrize("case", _sample(), ids=_ids)
def test_safety_matrix_sample(case):
    _check(case)


@pytest.mark.slow
@pytest.mark.parametrize("case", ALL + PAIRS, ids=_ids)
def test_safety_matrix_full(case):
    _check(case)


def test_the_watch_sees_motor_time_when_the_interlocks_are_bypassed(monkeypatch):
    """The matrix's measure can fail: with the permit and the edges short-circuited the lid case shows motor
    time under the interlock."""
    from firmware.safety import SafetySupervisor

    monkeypatch.setattr(SafetySupervisor, "refusal", lambda self, mechanism: None)
    monkeypatch.setattr(SafetySupervisor, "check", lambda self, when: None)
    monkeypatch.setattr(SafetySupervisor, "_lid_edge", lambda self, open_: None)
    out = run_case((INPUTS["lid"],), S.STACKING, "during")
    assert out.motor_s["lid"] > 1.0
