"""Tile faults injected with ``@WHEN`` (``--inject foreign-tile@hand2``): applied when their time comes.

The sets are out of their boxes by then, so the fault is applied to the next
tiles people put in through the centre: a tile of that face under a chair, an
extra tile, a tile of no registry, or (``foreign-tile``) a spare copy of a tile
of the other set, which the players put aside when the table names it (its
own set keeps its tile).  Before the instant the walls are clean.
"""

from __future__ import annotations

import pytest

from firmware.events import Event
from sim.faults import parse_fault
from sim.table_run import SimRun


def _run(spec: str, seed: int = 1) -> tuple[SimRun, list[tuple[float, str, int]]]:
    seen: list[tuple[float, str, int]] = []           # (time, fault code, hands dealt then)
    run: SimRun | None = None

    def watch(event: Event) -> None:
        if event.topic == "fault" and run is not None:
            seen.append((run.loop.now(), event.data["fault"].code.value, run.players.hands_started))

    run = SimRun(hands=4, seed=seed, play=True, faults=[parse_fault(spec)], observers=[watch])
    assert run.run(), f"{spec}: the run did not complete"
    return run, seen


@pytest.mark.parametrize("spec, code", [("foreign-tile@hand2", "E82"), ("unknown-tile@hand2", "E82"),
                                        ("extra-tile@hand2=E", "E82"), ("missing-tile@hand2=5m", "E62")])
def test_a_tile_fault_at_an_instant_strikes_after_it_and_not_before(spec, code):
    run, seen = _run(spec)
    assert seen, f"{spec}: never applied"
    first = seen[0]
    assert first[1] == code and first[2] >= 2, (spec, seen)     # nothing before hand 2 was dealt
    assert run.session.scoreboard.rows.chips(run.session.scoreboard.game) is not None
    run.close()


def test_a_foreign_tile_at_an_instant_is_a_spare_copy_the_players_put_aside():
    run, seen = _run("foreign-tile@hand2")
    world = run.world
    assert [t.set_id for t in world.set_aside] == ["spare"]
    for set_id in world.physical.sets:            # each set still has every one of its own tiles, once
        uids = [t.uid for t in world.wall_tiles() + list(world.turntable.hopper)
                + [t for g in world.grooves() for s in g for t in s] + [t for h in world.heads for t in h.track]
                if t.set_id == set_id]
        assert len(uids) == len(set(uids))
    run.close()
