"""Walls that verification rejects (E82) rise without being dealt; the players fix them and they are restacked."""

from firmware.controller.states import SetLocation
from firmware.controller.states import TableState as S
from sim.faults import parse_fault
from sim.table_run import SimRun


def _deals_of_rejected_sets(run):
    """(set id, hand) of every deal made while that set's walls were rejected."""
    rejected, bad = set(), []
    for e in run.events:
        if e.topic == "walls.rejected":
            rejected.add(e.data["set_id"])
        elif e.topic == "controller.set_ready" and e.data["may_rise"]:
            rejected.discard(e.data["set_id"])
        elif e.topic == "deal" and e.data["set_id"] in rejected:
            bad.append((e.data["set_id"], e.data["hand"]))
    return bad


def test_a_foreign_tile_rejects_the_walls_which_are_fixed_and_restacked():
    run = SimRun(hands=3, faults=[parse_fault("foreign-tile")], play=True)
    assert run.run(timeout_s=4000)
    rejected = [e for e in run.events if e.topic == "walls.rejected"]
    assert rejected and any("foreign" in p and "side" in p and "stack" in p for p in rejected[0].data["problems"])
    assert _deals_of_rejected_sets(run) == []
    assert [h["hand"] for h in run.store.hands()] == [1, 2, 3]
    # every tile is back in its own set: nothing stray on the table
    for side in run.world.walls:
        for stack in side:
            for tile in stack:
                assert run.world.registry.lookup(tile.uid) is not None
    assert run.session.scoreboard.conserved()
    run.close()


def test_rejected_walls_survive_a_power_cut():
    run = SimRun(hands=2, faults=[parse_fault("unknown-tile")], cut_in_states={"rejected"}, play=True)
    assert run.run(timeout_s=4000)
    assert run.cut_states == ["rejected"]
    states_after_cut = [e.data["state"] for e in run.events
                        if e.topic == "controller.state" and e.at_s > next(x.at_s for x in run.events
                                                                          if x.topic == "power.cut")]
    assert "rejected" in states_after_cut[:4]            # homing, idle, rejected: the walls are still not dealt
    assert _deals_of_rejected_sets(run) == []
    run.close()


def test_the_lift_key_waits_for_the_set_below_before_opening():
    run = SimRun(hands=2, faults=[parse_fault("foreign-tile")], play=True)
    run.run_until(lambda: run.state is S.REJECTED and run.controller.stacker.cycle is not None, 2000)
    run.world.press("key_lift0")
    run.loop.run_for(1.0)
    assert run.state is S.REJECTED                        # a set is still stacking underneath
    run.run_until(lambda: run.state is not S.REJECTED, 200)
    assert run.controller.book.sets_at(SetLocation.STACKING) == [] and run.state in (S.CENTER_UP, S.HOLD)
    run.close()

