"""Whole stacking cycles on the simulated table: tile flow, walls, determinism, faults."""

import pytest

from firmware.faults import FaultCode
from tests.firmware.conftest import make_sim


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


def _cycle_ratio(seed):
    sim = make_sim(seed=seed)
    result = sim.stack_set()
    assert result.ok
    return result.duration_s / (18 * sim.cfg.stacker.cam_turn_s)


def test_the_144_cycle_stays_near_its_cam_bound():
    """18 cam turns of 1.4 s are 25.2 s; the tiles steered to the sides that need them (issue 31) keep every
    head turning: seeds 1-10 within 10% of the bound, half of them within 5% (before: 1.05x-1.21x)."""
    ratios = sorted(_cycle_ratio(seed) for seed in range(1, 11))
    assert ratios[-1] <= 1.10, ratios
    assert ratios[4] <= 1.05, ratios


def test_gates_steer_tiles_but_never_all_close_on_a_counting_side():
    """While a side waits for the tiles of its next stack with its cam still, the gates of the sides that have
    enough stay closed; yet at every instant some side that still counts has its gate open (tiles-out and
    starvation supervision see the ring's tiles as before).  Checked as each instant of the run ends (within
    one, the firmware is still handling the edge that began it)."""
    sim = make_sim()
    heads, world = sim.table.heads, sim.world
    instants: dict[float, tuple[bool, bool]] = {}      # time -> (some counting gate open, steered)

    def look(after):
        if not after or sim._cycle is None or not sim._cycle.running:
            return
        counting = [h for h in heads if h.counting]
        opened = [h for h in counting if world.io.output_levels[f"gate{h.side}"]]
        waiting = [h for h in counting if h.idle and h.needs_tiles]
        instants[sim.loop.now()] = (bool(opened) or not counting, bool(waiting) and len(opened) < len(counting))
    world.io.observe(frozenset(f"gate{s}" for s in range(4)) | frozenset(f"tile_in{s}" for s in range(4)), look)
    result = sim.stack_set()
    assert result.ok and result.stacks == [18] * 4
    assert len(instants) > 100
    assert all(open_ for open_, _ in instants.values())
    assert any(steered for _, steered in instants.values())
    assert all(not h.gate_open for h in world.heads)


def test_a_starved_side_does_not_hold_the_others_back():
    sim = make_sim()
    sim.world.heads[1].accepts = lambda: False  # side 1's feed ramp blocked
    result = sim.stack_set()
    assert [f.code for f in result.reported] == [FaultCode.E42]
    done = [t for s, t in enumerate(result.side_done_s) if s != 1]
    assert all(t is not None and t < 18 * 1.4 * 1.15 for t in done), result.side_done_s


def test_a_table_model_may_turn_the_steering_off():
    """``[stacker] steer_tiles = false``: every counting side's gate stays open (a gate closes only at its side's
    target), the cycle as it was before the steering."""
    from firmware.config import default_table_path, load_table_config
    from sim.harness import SimTable

    cfg = load_table_config(default_table_path())
    cfg = cfg.model_copy(update={"stacker": cfg.stacker.model_copy(update={"steer_tiles": False})})
    sim = SimTable(cfg, seed=1)
    changes = []
    sim.world.io.observe(frozenset(f"gate{s}" for s in range(4)), lambda after: after and changes.append(1))
    result = sim.stack_set()
    assert result.ok and result.stacks == [18] * 4
    assert len(changes) == 8            # each gate opened once and closed once
    assert result.duration_s > _cycle_ratio(1) * 25.2
