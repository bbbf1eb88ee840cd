"""A stacking cycle interrupted at any instant: finished from where it stopped with every tile read, or stacked again.

The cases a fault campaign found: a hold before the heads had started (the
heads still held the last cycle's counts: a set never stacked was taken for
stacked and dealt, E99), a power cut just after a cycle started (tiles in the
feed tracks not counted: a false E62 for ever), a power cut later in a cycle
(the tags read before it lost: walls dealt with tiles nobody had read), a
reader that does not stream (walls stacked unread), a reader that keeps losing
tags (stacked again and again).  The whole class is the recovery matrix
(``tests/end_to_end/test_recovery_matrix.py``); these are its named cases.
"""

from __future__ import annotations

import pytest

from firmware.controller.background_stacking import track_order
from firmware.controller.states import TableState
from firmware.faults import FaultCode, FaultTier
from sim.faults import parse_fault
from sim.table_run import SimRun

S = TableState
U = [bytes([0xE0, 4, 0, 0, 0, 0, 0, n]) for n in range(10)]


def _run(specs: list[str], hands: int, seed: int, rules: str = "mcr", observers=()) -> SimRun:
    """A played game with faults; ``run.unknown_deals`` lists the hands dealt with a tile the table had not read
    (every boot's deals: the observer outlives power cuts)."""
    unknown: list[str] = []

    def deal(event) -> None:
        if event.topic == "deal" and any("?" in tiles for tiles in event.data["hands"].values()):
            unknown.append(f"hand {event.data['hand']}")
    run = SimRun(rules=rules, seed=seed, hands=hands, play=True, faults=[parse_fault(s) for s in specs],
                 observers=[deal, *observers])
    run.unknown_deals = unknown
    return run


def _codes(run: SimRun) -> list[str]:
    return [f.code.value for f in run.faults()]


def test_a_lid_opened_before_the_heads_started_stacking_keeps_the_set_on_the_disk():
    """The lid opens as the second set's cycle begins: the cycle is refused before any head moved.  The heads
    still held the first cycle's counts; taken for this cycle's they made an unstacked set 'stacked', dealt
    from nothing (E99) and mixed into the next (E82)."""
    run = _run(["lid-open@stacking2=60s"], hands=2, seed=1)
    assert run.run(timeout_s=4000)
    codes = _codes(run)
    assert "E04" in codes and "E99" not in codes and "E82" not in codes and "E83" not in codes
    assert run.session.scoreboard.conserved() and not run.unknown_deals
    run.close()


def test_a_brownout_as_a_cycle_begins_latches_and_the_game_goes_on_after_the_acknowledge():
    run = _run(["brownout@stacking3"], hands=4, seed=139, rules="jinzhou")
    assert run.run(timeout_s=6000)
    assert "E01" in _codes(run) and "E99" not in _codes(run) and not run.unknown_deals
    run.close()


def test_a_power_cut_just_after_a_cycle_began_finds_the_tiles_in_the_tracks():
    """No stack had been begun: the tiles already counted wait in the tracks; the restart's inventory finds
    them (else the cycle counts from nothing and the set 'runs out': E62 for ever)."""
    run = _run(["power-cut@60s"], hands=3, seed=2)
    assert run.run(timeout_s=4000)
    assert "E62" not in _codes(run) and "E99" not in _codes(run) and not run.unknown_deals
    assert run.boots == 2
    run.close()


@pytest.mark.parametrize("fraction", [0.3, 0.7])
def test_a_power_cut_mid_cycle_keeps_the_tags_read_before_it(fraction):
    """The tags read before the cut are in the progress rows; the tiles in the tracks take their places from
    them: the walls are complete without stacking the set again (where the track's order is certain)."""
    counted = []

    def watch(event) -> None:
        if event.topic == "stacking.tile":
            counted.append(event.at_s)
            if len(counted) == int(fraction * 144):
                run.loop.call_later(0.0, run.power_cut, 3.0)
    run = _run([], hands=1, seed=4, observers=[watch])
    assert run.run(timeout_s=3000)
    assert run.boots == 2 and not run.unknown_deals
    # at most the tiles that came to a track after its last row, if two or more (their order unknown), are not read
    e83 = [f for f in run.faults() if f.code is FaultCode.E83]
    unread = sum(int(p.split()[1]) for f in e83 for p in f.detail["problems"] if p.startswith("unread:"))
    assert unread <= 8 and run.record.walls_rejected == (1 if e83 else 0)
    run.close()


# -- the tiles in a feed track after a power cut ------------------------------------------------------------------
def test_the_tracks_order_is_what_was_written_then_a_lone_newcomer():
    assert track_order([U[1], U[2]], [U[2], U[1]]) == [U[1], U[2]]
    assert track_order([U[1], U[2]], [U[3], U[2], U[1]]) == [U[1], U[2], U[3]]       # one counted after the row
    assert track_order([U[1], None], [U[2], U[1]]) == [U[1], U[2]]                 # a TAG not in yet: the one left
    assert track_order([], [U[4]]) == [U[4]]


def test_places_not_certain_stay_unread():
    assert track_order([U[1]], [U[3], U[2], U[1]]) == [U[1], None, None]          # two newcomers: order unknown
    assert track_order([U[1], U[2]], [U[2], U[5]]) == [None, None]                 # what was written is not there
    assert track_order([U[1], U[2], U[3]], [U[1], U[2]]) == [None, None]           # more written than found
    assert track_order([], []) == []


def test_progress_rows_keep_the_uids_in_count_order(tmp_path):
    from firmware.store.table_store import TableStore

    store = TableStore(tmp_path / "t.db")
    store.save_side(7, 2, 2, 4, [U[0], U[1], None, U[3]])
    store.save_side(7, 0, 0, 1, [U[5]])
    assert store.sides(7) == [(0, 0, 1, [U[5]]), (2, 2, 4, [U[0], U[1], None, U[3]])]
    # a row written by schema 2 keeps no UIDs of its own: the stacked tiles' come from the older rows
    store._db.execute("UPDATE stack_progress SET uids = x'' WHERE side = 2")
    store._db.execute("INSERT INTO stack_uids (cycle, side, first, uids) VALUES (7, 2, 0, ?)", (U[8] + U[9],))
    assert store.sides(7)[1] == (2, 2, 4, [U[8], U[9]])
    store.close()


# -- a reader that does not stream, or loses tags -------------------------------------------------------------------
def test_stacking_waits_for_a_reader_that_does_not_stream_and_holds_with_e84():
    """An antenna dead before the cycle: the board refuses to stream, nothing moves, the table holds with E84
    after a while; the technician fixes the antenna and the set is stacked and read whole."""
    run = _run(["antenna:2"], hands=2, seed=3)
    moved_unread = []
    run.bus.subscribe("stacking.start", lambda e: moved_unread.append(set(run.world.reader.faulty)))
    assert run.run(timeout_s=6000)
    codes = _codes(run)
    assert "E81" in codes and "E84" in codes and "E83" not in codes
    assert not any(moved_unread), "a cycle started while the reader refused to stream"
    e84 = next(f for f in run.faults() if f.code is FaultCode.E84)
    assert e84.tier is FaultTier.HOLD and e84.detail["faulty_antennas"] == [2]
    assert not run.unknown_deals and run.session.scoreboard.conserved()
    run.close()


def test_a_reader_back_within_the_wait_needs_nobody():
    run = _run(["rfid-disconnect@1s=8s"], hands=1, seed=3)
    assert run.run(timeout_s=3000)
    assert "E80" in _codes(run) and "E84" not in _codes(run) and "E83" not in _codes(run)
    run.close()


def test_walls_with_tags_lost_are_stacked_again_and_a_second_in_a_row_latches():
    """Frames lost on the line: the first set not read whole is stacked again (E83, the players' job); the
    second in a row is the cable, not chance: E83 latches for a technician, who reseats it."""
    run = _run(["rfid-drop=0.05"], hands=2, seed=1)
    assert run.run(timeout_s=8000)
    rows = [row for row in run.controller.policy.history() if row["code"] == "E83"]
    assert [row["tier"] for row in rows[:2]] == ["recoverable", "latched"]
    assert rows[1]["acknowledged_at_s"] is not None                  # (the technician came)
    assert run.record.walls_rejected >= 2 and not run.unknown_deals and run.session.scoreboard.conserved()
    run.close()


def test_a_set_read_whole_ends_the_count_of_sets_not_read():
    run = SimRun(hands=1, seed=1, play=False)
    policy = run.controller.policy
    policy.unread_walls = 1
    assert run.run(timeout_s=3000)
    assert policy.unread_walls == 0
    run.close()


def test_a_reader_lost_in_mid_cycle_has_the_set_stacked_again():
    """The reader's cable comes loose while the heads stack: the tiles that passed meanwhile are not read, the
    walls rise but are not dealt (E83), the players push them back in and the set is stacked and read again."""
    counted = []

    def watch(event) -> None:
        if event.topic == "stacking.tile":
            counted.append(1)
            if len(counted) == 60:
                run.world.reader_line.unplug(5.0)
    run = _run([], hands=1, seed=2, observers=[watch])
    assert run.run(timeout_s=4000)
    assert "E80" in _codes(run) and "E83" in _codes(run) and "E99" not in _codes(run)
    assert run.record.walls_rejected == 1 and run.record.walls_verified >= 2 and not run.unknown_deals
    run.close()


def test_a_reader_down_before_the_cycle_loses_nothing():
    run = _run(["rfid-disconnect@stacking1=5s"], hands=1, seed=2)
    assert run.run(timeout_s=4000)
    assert "E80" in _codes(run) and "E83" not in _codes(run) and run.record.walls_rejected == 0
    run.close()
