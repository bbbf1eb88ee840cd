"""Whole stacking cycles on the simulated table: tile flow, walls, determinism, faults."""

import pytest

from firmware.faults import FaultCode
from tests.conftest import make_sim


@pytest.mark.parametrize("tile_set,stacks,last_stack_tiles", [
    (144, 18, 2), (136, 17, 2), (112, 14, 2), (108, 14, 1),
])
def test_full_cycle_puts_the_right_stacks_on_every_side(tile_set, stacks, last_stack_tiles):
    sim = make_sim(tile_set=tile_set)
    result = sim.stack_set()
    assert result.ok, result.fault
    assert result.stacks == [stacks] * 4
    assert result.tiles == [tile_set // 4] * 4
    for groove in sim.world.grooves():
        assert len(groove) == stacks
        assert all(len(stack) == 2 for stack in groove[:-1])
        assert len(groove[-1]) == last_stack_tiles
    assert sim.world.turntable.hopper == []
    placed = [tile for groove in sim.world.grooves() for stack in groove for tile in stack]
    assert sorted(t.uid for t in placed) == sorted(t.uid for t in sim.world.sets["A"])
    assert sim.table.motors_safe()


@pytest.mark.parametrize("seed", range(1, 13))
def test_a_144_set_stacks_in_18_to_35_seconds(seed):
    result = make_sim(seed=seed).stack_set()
    assert result.ok and 18.0 <= result.duration_s <= 35.0


def _trace(seed):
    sim = make_sim(seed=seed)
    sim.stack_set()
    order = [tile.uid for groove in sim.world.grooves() for stack in groove for tile in stack]
    times = [(e.topic, e.at_s) for e in sim.events]
    return order, times


def test_same_seed_same_wall_and_same_event_times():
    assert _trace(5) == _trace(5)
    assert _trace(5)[0] != _trace(6)[0]


def test_back_pressure_pauses_the_disk():
    sim = make_sim()
    result = sim.stack_set()
    assert result.pauses > 0
    assert sim.table.turntable.run_s_total < result.duration_s


@pytest.mark.parametrize("spec,code", [
    ("jam:stacker2@stacking1", FaultCode.E33),
    ("jam:stacker0@3s", FaultCode.E31),
    ("stall:disk@stacking1", FaultCode.E60),
    ("stall:disk@4s", FaultCode.E60),
    ("stuck-on:feed_full1", FaultCode.E52),
    ("stuck-off:stacker_home3@2s", FaultCode.E34),
    ("missing-tile=5m", FaultCode.E62),
    ("brownout@5s", FaultCode.E01),
    ("lid-open@5s=3s", FaultCode.E04),
])
def test_injected_fault_gives_its_code_and_stops_every_motor(spec, code):
    sim = make_sim(spec)
    result = sim.stack_set()
    assert not result.ok and result.fault.code is code
    assert sim.table.motors_safe()
    assert not any(sim.world.motors_running().values())
    assert all(not open_ for open_ in (h.gate_open for h in sim.world.heads))


def test_missing_tile_names_the_short_side():
    sim = make_sim("missing-tile=E", "missing-tile=5m")
    result = sim.stack_set()
    assert result.fault.code is FaultCode.E62 and result.fault.detail["missing"] == 2


def test_starved_side_is_reported_and_stacking_goes_on():
    sim = make_sim()
    sim.world.heads[1].accepts = lambda: False  # side 1's feed ramp blocked
    result = sim.stack_set()
    codes = [f.code for f in result.reported]
    assert FaultCode.E42 in codes
    assert result.fault.code is FaultCode.E62  # the blocked side never completes


def test_tile_over_the_target_is_e63():
    sim = make_sim()
    head = sim.table.heads[0]
    sim.world.load_set("A")
    results = []
    from firmware.stacking import StackingCycle
    cycle = StackingCycle(sim.table, 36, results.append)
    cycle.start()
    sim.loop.run_until(lambda: head.counted == 36, 60)
    sim.loop.run_for(0.05)
    sim.world.heads[0].receive(sim.world.sets["B"][0])  # a tile slips past the closed gate
    sim.loop.run_until(lambda: bool(results), 60)
    assert results[0].fault.code is FaultCode.E63
