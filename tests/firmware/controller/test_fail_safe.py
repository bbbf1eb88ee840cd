"""Fail safe: an exception anywhere latches E99 with every output safe; a failing database is E98, not silence."""

import logging

import pytest

from firmware.controller import jobs
from firmware.controller.controller import Controller
from firmware.controller.states import TableState
from firmware.faults import FaultCode
from firmware.mechanisms.stacking_head import StackingHead
from sim.faults import parse_fault
from sim.table_run import SimRun

S = TableState


def _once(original, error):
    """``original``, except that its first call raises ``error``."""
    calls = []

    def wrapped(*args, **kwargs):
        if not calls:
            calls.append(1)
            raise error
        return original(*args, **kwargs)
    return wrapped


def _ack(run):
    for key in ("key_lift0", "key_lift1"):
        run.world.keys[key].set(True)
    run.loop.run_for(0.3)
    for key in ("key_lift0", "key_lift1"):
        run.world.keys[key].set(False)


def _latched_e99(run, caplog, error_name):
    """E99 latched with every motor off on the next tick, its traceback in the log; then the acknowledge
    re-homes and the game goes on to the end."""
    run.run_until(lambda: run.state is S.LATCHED, 3000)
    latched_at = run.loop.now()
    assert run.controller.fault.code is FaultCode.E99
    assert [f.code for f in run.faults()] == [FaultCode.E99]            # never a hardware code
    run.loop.run_until(lambda: run.loop.now() > latched_at, 1.0)
    assert not any(run.world.motors_running().values())
    logged = [r for r in caplog.records if "E99" in r.getMessage() and r.exc_info]
    assert logged and logged[0].exc_info[0].__name__ == error_name
    run.loop.run_for(5.0)
    _ack(run)
    run.run_until(lambda: run.state not in (S.LATCHED, S.HOMING), 60)
    assert run.run(timeout_s=4000), f"no recovery after the acknowledge (state {run.state})"
    assert run.store.faults()[0]["code"] == "E99" and run.store.faults()[0]["acknowledged_at_s"] is not None


def test_an_exception_in_a_loop_callback_latches_e99_not_a_sensor_fault(monkeypatch, caplog):
    """The issue's case: a KeyError in a stacking head's cam callback once went on with corrupted counts
    and blamed a good feed-full sensor (E51) 7.5 s later."""
    monkeypatch.setattr(StackingHead, "_turned", _once(StackingHead._turned, KeyError("side")))
    run = SimRun(hands=2, auto_ack_s=None)
    _latched_e99(run, caplog, "KeyError")
    run.close()


def test_an_exception_in_a_state_callback_latches_e99(monkeypatch, caplog):
    monkeypatch.setattr(Controller, "on_enter_raising", _once(Controller.on_enter_raising, ValueError("bad")))
    run = SimRun(hands=2, auto_ack_s=None)
    _latched_e99(run, caplog, "ValueError")       # (a ValueError once became E03 "configuration invalid")
    run.close()


def test_an_exception_in_a_job_latches_e99(monkeypatch, caplog):
    monkeypatch.setattr(jobs.Job, "_part_done", _once(jobs.Job._part_done, ZeroDivisionError("parts")))
    run = SimRun(hands=2, auto_ack_s=None)
    _latched_e99(run, caplog, "ZeroDivisionError")
    run.close()


def test_an_exception_in_an_event_subscriber_latches_e99(caplog):
    """A subscriber is not swallowed: a failing observer stops the table as visibly as any other bug."""
    run = SimRun(hands=2, auto_ack_s=None)
    fail = _once(lambda event: None, RuntimeError("observer"))
    run.bus.subscribe("deal", fail)
    _latched_e99(run, caplog, "RuntimeError")
    run.close()


def test_an_exception_while_handling_e99_still_leaves_the_table_latched_and_safe(monkeypatch, caplog):
    """The last line of defence: the fault policy itself fails, the table is forced into the latched state."""
    from firmware.controller.fault_policy import FaultPolicy

    monkeypatch.setattr(StackingHead, "_turned", _once(StackingHead._turned, KeyError("side")))
    monkeypatch.setattr(FaultPolicy, "handle", _once(FaultPolicy.handle, RuntimeError("policy")))
    run = SimRun(hands=2, auto_ack_s=None)
    run.run_until(lambda: run.state is S.LATCHED, 3000)
    run.loop.run_for(0.5)
    assert not any(run.world.motors_running().values())
    assert run.controller.fault.code is FaultCode.E99
    assert not run.safety.may_move("stacker0")
    run.close()


def test_a_jam_latches_although_every_write_to_the_database_fails(caplog):
    """Faults latch in memory first: the SD card refuses every write from the first stacking on, a stacking
    cam jams; E33 is latched and the table is safe, and E98 says why nothing was written."""
    run = SimRun(hands=2, faults=[parse_fault("jam:stacker2@stacking2"), parse_fault("disk-fail@stacking2")],
                 auto_ack_s=None)
    run.run_until(lambda: run.state is S.LATCHED, 3000)
    codes = [f.code for f in run.faults()]
    assert FaultCode.E98 in codes
    assert not any(run.world.motors_running().values())
    assert run.world.storage.failed_writes > 0
    run.loop.run_for(10.0)
    assert run.state is S.LATCHED and not any(run.world.motors_running().values())
    run.close()


def test_the_jam_is_latched_and_shown_when_its_own_write_fails():
    """The card dies at the very instant the jam is found: writing the fault fails, yet E33 is latched and
    shown, every motor is off, and E98 is reported after it."""
    run = SimRun(hands=2, faults=[parse_fault("jam:stacker2@stacking2")], auto_ack_s=None)
    handler = run.table.faults._handler

    def card_dies_with_the_jam(fault):
        if fault.code is FaultCode.E33:
            run.world.storage.failing = True
        handler(fault)
    run.table.faults.attach(card_dies_with_the_jam)
    run.run_until(lambda: run.state is S.LATCHED, 3000)
    assert run.controller.fault.code is FaultCode.E33
    run.loop.run_for(0.1)
    assert [f.code for f in run.faults()][-2:] == [FaultCode.E33, FaultCode.E98]
    assert not any(run.world.motors_running().values()) and run.controller.lamps.blinking == 33
    run.close()


@pytest.mark.parametrize("where", ["deal", "hand result"])
def test_a_failing_write_latches_e98_with_the_sqlite_error(where):
    run = SimRun(hands=3, play=True, auto_ack_s=None)
    topic = "deal" if where == "deal" else "hand.over"
    run.bus.subscribe(topic, lambda e: setattr(run.world.storage, "failing", True))
    run.run_until(lambda: run.state is S.LATCHED, 3000)
    e98 = [f for f in run.faults() if f.code is FaultCode.E98]
    assert e98 and "disk I/O error" in e98[0].detail["error"] and e98[0].detail["file"]
    assert not any(run.world.motors_running().values())
    run.close()


def test_after_the_card_is_replaced_the_acknowledge_carries_on():
    run = SimRun(hands=2, faults=[parse_fault("disk-fail@hand1")], auto_ack_s=30.0)
    assert run.run(timeout_s=4000)
    assert FaultCode.E98 in [f.code for f in run.faults()]
    run.close()


def test_a_latched_fault_ignores_stray_timers(caplog):
    """After a latch every movement is refused until the acknowledge (a callback left behind cannot start a
    motor)."""
    run = SimRun(hands=2, faults=[parse_fault("jam:lift1@hand1")], auto_ack_s=None)
    run.run_until(lambda: run.state is S.LATCHED, 3000)
    done = []
    run.table.lifts[0].turn(done.append)
    run.table.turntable.start()
    run.loop.run_for(0.1)
    assert done and done[0].refused and not any(run.world.motors_running().values())
    caplog.set_level(logging.WARNING)
    run.close()


def test_a_card_that_fails_at_power_on_latches_e98_and_no_acknowledge_plays_on_from_memory():
    """The SD card refuses writes from the start: nothing is moved aside (the file is fine), the table runs
    latched from memory, and the acknowledge is refused: scores that a power cut would lose are never played."""
    run = SimRun(hands=2, faults=[parse_fault("disk-fail")], auto_ack_s=None)
    assert run.state is S.LATCHED and run.controller.fault.code is FaultCode.E98
    assert run.store.path == ":memory:" and not list(run.state_path.parent.glob("*.bad*"))
    run.world.storage.failing = False
    from firmware.diagnostics.commands import DiagCommands
    answers = []
    DiagCommands(run.session).handle({"cmd": "ack"}, answers.append)
    assert not answers[0]["ok"] and "restart the table" in answers[0]["error"]
    DiagCommands(run.session).handle({"cmd": "faults"}, answers.append)
    assert [f["code"] for f in answers[1]["faults"]] == ["E98"] and answers[1]["faults"][0]["written"] is False
    run.close()


def test_a_resumed_table_on_a_failing_card_latches_without_a_software_error(tmp_path):
    state = tmp_path / "t.db"
    SimRun(hands=1, state_path=state).close()
    run = SimRun(hands=1, state_path=state, faults=[parse_fault("disk-fail")], auto_ack_s=None)
    run.loop.run_for(30.0)
    assert run.state is S.LATCHED and [f.code for f in run.faults()] == [FaultCode.E98]
    run.close()


def test_faults_the_database_could_not_take_are_still_reported(tmp_path, capsys):
    import json

    from firmware.cli.main import main

    report = tmp_path / "r.json"
    assert main(["sim", "--hands", "1", "--inject", "disk-fail@hand1", "--auto-ack-s", "none", "--quiet",
                 "--report", str(report)]) == 1
    faults = json.loads(report.read_text())["faults"]
    assert [f["code"] for f in faults] == ["E98"] and faults[0]["written"] is False
