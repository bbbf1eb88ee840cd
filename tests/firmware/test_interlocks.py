"""Interlocks that hold: levels checked before every movement, at power-on, on release and on acknowledge."""

from firmware.controller.states import TableState
from firmware.diagnostics.commands import DiagCommands
from firmware.faults import FaultCode
from sim.faults import parse_fault
from sim.table_run import SimRun

S = TableState


def _ask(run, request, timeout_s=120.0):
    answers = []
    DiagCommands(run.session).handle(request, answers.append)
    run.run_until(lambda: bool(answers), timeout_s)
    return answers[0]


def test_a_lid_opening_during_a_service_test_stops_it_answers_it_and_stays_in_service_mode():
    """The issue's case: burn-in running, the lid opens at 15 s for 20 s.  Once the client waited for its
    timeout and the table had left service mode for stacking."""
    run = SimRun(hands=0, service=True, faults=[parse_fault("lid-open@15s=20s")])
    run.loop.run_for(2.0)
    answers = []
    DiagCommands(run.session).handle({"cmd": "burn-in", "cycles": 10}, answers.append)
    run.run_until(lambda: bool(answers), 60)
    answer = answers[0]
    assert not answer["ok"] and answer["stopped_by"] == "E04" and "lid" in answer["reason"]
    assert 15.0 <= run.loop.now() <= 15.1
    assert run.state is S.SERVICE and not any(run.world.motors_running().values())
    refused = _ask(run, {"cmd": "test", "name": "stackers"})         # the lid is still open
    assert not refused["ok"] and "lid" in refused["error"] and refused["fault"] == "E04"
    run.run_until(lambda: run.loop.now() > 36.0, 40)
    again = _ask(run, {"cmd": "test", "name": "stackers"})
    assert again["ok"] and run.state is S.SERVICE
    assert run.interlocks.finish()["lid"] == 0.0
    run.close()


def test_a_hold_is_released_only_when_its_cause_is_gone_and_the_lamps_say_which_remains():
    run = SimRun(hands=2, auto_ack_s=None)
    run.run_until(lambda: run.state is S.STACKING and any(run.world.motors_running().values()), 200)
    run.players.away = True                             # nobody else touches the table
    run.world.keys["key_reset"].set(True)               # held down
    run.loop.run_for(0.1)
    assert run.state is S.HOLD and not any(run.world.motors_running().values())
    run.world.lid.set(True)                             # and the lid opened meanwhile
    run.world.press("key_lift0")
    run.loop.run_for(1.0)
    assert run.state is S.HOLD and run.controller.lamps.blinking == 2            # the reset key remains
    run.world.keys["key_reset"].set(False)
    run.loop.run_for(1.0)
    run.world.press("key_lift0")
    run.loop.run_for(1.0)
    assert run.state is S.HOLD and run.controller.lamps.blinking == 4            # now the lid
    assert run.controller.fault.code is FaultCode.E04
    run.world.lid.set(False)
    run.loop.run_for(1.0)
    assert run.state is S.HOLD                          # closing the lid restarts nothing by itself
    run.world.press("key_lift0")
    run.run_until(lambda: run.state is S.STACKING, 30)
    assert run.interlocks.finish() == {"lid": 0.0, "supply": 0.0, "reset_key": 0.0, "stuck_key": 0.0}
    run.close()


def test_an_acknowledge_is_refused_while_the_supply_is_low():
    run = SimRun(hands=1, faults=[parse_fault("stuck-off:supply_ok")], auto_ack_s=None)
    assert run.state is S.LATCHED and run.controller.fault.code is FaultCode.E01
    answer = _ask(run, {"cmd": "ack"})
    assert not answer["ok"] and "supply" in answer["error"] and run.state is S.LATCHED
    run.world.supply_ok.stick(None)
    run.loop.run_for(0.5)
    assert _ask(run, {"cmd": "ack"})["ok"]
    run.run_until(lambda: run.state is S.IDLE or run.state is S.CENTER_UP, 30)
    run.close()


def test_an_open_lid_at_power_on_moves_nothing_until_closed_and_resumed():
    run = SimRun(hands=1, faults=[parse_fault("stuck-on:lid")], auto_ack_s=None)
    run.players.away = True
    assert run.state is S.HOLD and run.controller.fault.code is FaultCode.E04
    run.loop.run_for(30.0)
    assert run.state is S.HOLD
    run.world.lid.stick(None)
    run.world.press("key_lift0")
    run.run_until(lambda: run.state is not S.HOLD, 5)
    assert run.interlocks.finish()["lid"] == 0.0
    run.close()


def test_a_stuck_lift_key_is_ignored_it_never_makes_a_chord():
    """key_lift0 stuck: pressing key_lift1 while stacking is one key (nothing), not both (pause)."""
    run = SimRun(hands=1, sets=("A",))
    run.run_until(lambda: run.state is S.STACKING, 200)
    run.players.away = True
    run.world.keys["key_lift0"].stick(True)
    run.run_until(lambda: run.state is S.HOLD, 25)
    assert run.controller.fault.code is FaultCode.E05 and run.controller.fault.detail["key"] == "key_lift0"
    assert run.table.panel.stuck == {"key_lift0"}
    run.world.press("key_lift1")                        # the other key: refused, the stuck key remains
    run.loop.run_for(1.0)
    assert run.state is S.HOLD
    run.world.keys["key_lift0"].stick(None)
    run.loop.run_for(0.5)
    assert run.table.panel.stuck == set()
    run.world.press("key_lift1")
    run.run_until(lambda: run.state is S.STACKING, 30)
    run.close()


def test_the_disk_index_is_counted_over_every_run_not_per_start():
    """Back-pressure stops and restarts the disk; a dead index sensor still latches E60 once the running
    time without a pulse adds up (58 s of running with no pulse once went unnoticed)."""
    from tests.firmware.conftest import make_sim

    sim = make_sim("stuck-off:disk_index")
    disk = sim.table.turntable
    for _ in range(12):                                 # 12 runs of 0.8 s: each shorter than the 6 s allowance
        assert disk.start()
        sim.loop.run_for(0.8)
        disk.stop()
        sim.loop.run_for(0.5)
    assert [f.code for f in sim.faults()] == [FaultCode.E60]
    assert sim.faults()[0].detail["ran_without_pulse_s"] >= 6.0


def test_a_healthy_disk_pulses_across_short_runs():
    from tests.firmware.conftest import make_sim

    sim = make_sim()
    disk = sim.table.turntable
    for _ in range(40):
        assert disk.start()
        sim.loop.run_for(0.7)
        disk.stop()
        sim.loop.run_for(0.3)
    assert sim.faults() == [] and disk.revolutions >= 13        # 28 s of turning, one pulse per 2 s
