"""Each mechanism driven through the HAL on the simulated table, at exact virtual times."""

import pytest

from firmware.faults import FaultCode
from firmware.mechanisms.center_lift import LiftStop
from tests.firmware.conftest import make_sim


def _run(sim, start, timeout_s=60.0):
    results = []
    start(results.append)
    sim.loop.run_until(lambda: bool(results), timeout_s)
    return results[0]


def test_center_lift_rises_and_lowers_in_its_travel_time(sim):
    lift = sim.table.center_lift
    assert lift.position is LiftStop.DOWN
    up = _run(sim, lambda done: lift.move_to(LiftStop.UP, done))
    assert up.ok and up.elapsed_s == pytest.approx(1.5)
    assert lift.position is LiftStop.UP and sim.world.center.position == pytest.approx(1.0)
    down = _run(sim, lambda done: lift.move_to(LiftStop.DOWN, done))
    assert down.ok and down.elapsed_s == pytest.approx(1.5)
    assert sim.loop.now() == pytest.approx(3.0)
    assert sim.table.motors_safe()


def test_center_lift_already_there_completes_at_once(sim):
    result = _run(sim, lambda done: sim.table.center_lift.move_to(LiftStop.DOWN, done))
    assert result.ok and result.elapsed_s == 0


@pytest.mark.parametrize("stop,code", [(LiftStop.UP, FaultCode.E10)])
def test_center_lift_jam_faults_at_three_times_nominal(stop, code):
    sim = make_sim("jam:center@0.5s")
    result = _run(sim, lambda done: sim.table.center_lift.move_to(stop, done))
    assert not result.ok and result.fault.code is code
    assert result.elapsed_s == pytest.approx(4.5)  # 3 x 1.5 s
    assert sim.table.motors_safe() and not any(sim.world.motors_running().values())


def test_center_lift_jam_going_down_is_e11():
    sim = make_sim()
    _run(sim, lambda done: sim.table.center_lift.move_to(LiftStop.UP, done))
    sim.world.center.jam()
    result = _run(sim, lambda done: sim.table.center_lift.move_to(LiftStop.DOWN, done))
    assert result.fault.code is FaultCode.E11
    assert sim.table.motors_safe()


def test_center_lift_both_sensors_active_is_e12():
    sim = make_sim("stuck-on:center_up")
    result = _run(sim, lambda done: sim.table.center_lift.move_to(LiftStop.UP, done))
    assert result.fault.code is FaultCode.E12
    assert sim.table.motors_safe()


@pytest.mark.parametrize("side", range(4))
def test_wall_lift_turn_completes_at_nominal_time(sim, side):
    result = _run(sim, lambda done: sim.table.lifts[side].turn(done))
    assert result.ok and result.elapsed_s == pytest.approx(3.0)
    assert sim.world.lifts[side].turns == 1 and sim.table.lifts[side].at_home


@pytest.mark.parametrize("spec,code", [
    ("jam:lift1@1s", FaultCode.E22),
    ("stuck-off:lift_home1@0.5s", FaultCode.E22),
    ("stuck-on:lift_home1", FaultCode.E22),
])
def test_wall_lift_faults(spec, code):
    sim = make_sim(spec)
    result = _run(sim, lambda done: sim.table.lifts[1].turn(done))
    assert not result.ok and result.fault.code is code
    assert sim.table.motors_safe() and not any(sim.world.motors_running().values())


def test_jammed_wall_lift_stops_at_three_times_nominal():
    sim = make_sim("jam:lift3@1s")
    result = _run(sim, lambda done: sim.table.lifts[3].turn(done))
    assert result.elapsed_s == pytest.approx(9.0)


def test_stacker_cam_turn_takes_its_nominal_time(sim):
    result = _run(sim, lambda done: sim.table.heads[0].cam.turn(done))
    assert result.ok and result.elapsed_s == pytest.approx(1.4)


def test_slow_movement_warns_past_twice_nominal(sim):
    lift = sim.table.lifts[0]
    lift.nominal.restore([1.2] * 5)  # learned: 1.2 s, but the cam takes 3.0 s
    result = _run(sim, lambda done: lift.turn(done))
    assert result.ok and result.warned and lift.warnings == 1
    assert [e.topic for e in sim.events].count("move.warn") == 1


def test_learned_time_follows_the_runs(sim):
    lift = sim.table.lifts[2]
    for _ in range(3):
        _run(sim, lambda done: lift.turn(done))
    assert lift.nominal.value_s == pytest.approx(3.0)
    assert lift.nominal.fault_after_s == pytest.approx(9.0)


def test_physical_dice_spin_within_limits(sim):
    results = []
    sim.table.dice.throw(lambda result, faces: results.append((result, faces)))
    sim.loop.run_until(lambda: bool(results), 10)
    result, faces = results[0]
    assert result.ok and 1.5 <= result.elapsed_s <= 2.5 and faces is None
    assert sim.world.dice.spins == 1 and sim.world.dice.result is not None
    assert not sim.world.motors_running()["dice"]


def test_dice_without_sensor_pulses_is_e70(sim):
    sim.world.dice.jammed = True
    results = []
    sim.table.dice.throw(lambda result, faces: results.append(result))
    sim.loop.run_until(lambda: bool(results), 10)
    assert results[0].fault.code is FaultCode.E70
    assert results[0].elapsed_s == pytest.approx(0.5)
    assert sim.table.motors_safe()


def test_panel_key_is_debounced_on_the_loop_clock(sim):
    pressed = []
    sim.table.panel.on_key(lambda name, down: pressed.append((name, down, round(sim.loop.now(), 3))))
    sim.world.press("key_lift0", hold_s=0.5)
    sim.loop.run_for(1.0)
    assert pressed == [("key_lift0", True, 0.03), ("key_lift0", False, 0.53)]


def _clicks(sim) -> list:
    clicks = []
    sim.table.panel.on_click(lambda name, chord: clicks.append((name, sorted(chord), round(sim.loop.now(), 3))))
    return clicks


def test_a_key_acts_when_it_comes_up_again(sim):
    clicks = _clicks(sim)
    sim.world.press("key_lift0", hold_s=0.5)
    sim.loop.run_for(1.0)
    assert clicks == [("key_lift0", [], 0.53)]


def test_a_key_that_sticks_down_never_clicks(sim):
    """A lift key stuck in the middle of a hand must not end it: it is stuck before it comes up, and then its
    release means nothing."""
    clicks = _clicks(sim)
    sim.world.keys["key_lift0"].set(True)
    sim.loop.run_for(sim.cfg.panel.key_stuck_s + 5)
    assert "key_lift0" in sim.table.panel.stuck and clicks == []
    sim.world.keys["key_lift0"].set(False)
    sim.loop.run_for(1.0)
    assert clicks == [] and not sim.table.panel.stuck


def test_keys_down_together_click_once_as_a_chord(sim):
    clicks = _clicks(sim)
    for key in ("key_lift0", "key_lift1"):
        sim.world.keys[key].set(True)
    sim.loop.run_for(0.3)
    sim.world.keys["key_lift1"].set(False)
    sim.loop.run_for(0.2)
    sim.world.keys["key_lift0"].set(False)
    sim.loop.run_for(0.5)
    assert clicks == [("key_lift1", ["key_lift0"], 0.33)]


def test_a_stuck_key_makes_no_chord(sim):
    clicks = _clicks(sim)
    sim.world.keys["key_lift0"].set(True)
    sim.loop.run_for(sim.cfg.panel.key_stuck_s + 1)
    sim.world.press("key_lift1", hold_s=0.2)
    sim.loop.run_for(1.0)
    assert clicks == [("key_lift1", [], pytest.approx(sim.loop.now() - 1.0 + 0.23, abs=0.01))]


def test_keys_held_at_power_on_click_nothing_when_they_come_up():
    """Both lift keys held while the table is switched on are the service-mode gesture: letting them go later
    must not also mean 'leave service mode'."""
    import random

    from firmware.config import default_table_path, load_table_config
    from firmware.events import EventBus
    from firmware.table import Table
    from sim.backend import SimBackend
    from sim.virtual_loop import VirtualLoop
    from sim.world import TableWorld

    cfg = load_table_config(default_table_path())
    loop = VirtualLoop()
    world = TableWorld(cfg, loop, 1)
    world.keys["key_lift0"].set(True)              # down before the panel exists
    panel = Table(cfg, SimBackend(cfg, loop, world), loop, EventBus(loop.now), random.Random(1)).panel
    clicks = []
    panel.on_click(lambda name, chord: clicks.append(name))
    world.keys["key_lift0"].set(False)
    loop.run_for(1.0)
    assert clicks == [] and not panel.pressed["key_lift0"]


def test_buzzer_beeps_for_its_time(sim):
    sim.table.panel.beep(0.2)
    assert sim.world.lamps["buzzer"] is True
    sim.loop.run_for(0.3)
    assert sim.world.lamps["buzzer"] is False and sim.world.beeps == 1


def test_reset_key_stops_every_motor(sim):
    sim.table.turntable.start()
    sim.table.lifts[0].turn(lambda r: None)
    sim.world.press("key_reset")
    sim.loop.run_for(0.5)
    assert sim.table.motors_safe()
    assert FaultCode.E02 in [f.code for f in sim.faults()]
