"""``mjtable sim`` as the simulator's CLI design fixes it: options, report, exit codes, pacing."""

import json
import sqlite3

import pytest

from firmware.cli.main import main
from sim.pacer import Pacer
from sim.virtual_loop import VirtualLoop
from sim.world_state import read_world_rows

REPORT_FIELDS = {"version", "seed", "rules", "table", "hands_requested", "hands_played", "hands_won", "hands_drawn",
                 "wins", "chips", "chips_conserved", "cycle", "rfid", "faults", "final_state", "simulated_s",
                 "wall_s", "speedup"}


def _report(tmp_path, *argv, code=0):
    path = tmp_path / "r.json"
    assert main(["sim", *argv, "--report", str(path)]) == code
    return json.loads(path.read_text())


def test_report_has_every_field_of_the_design(tmp_path, capsys):
    data = _report(tmp_path, "--hands", "4", "--seed", "5")
    assert REPORT_FIELDS <= set(data)
    assert set(data["chips"]) == {"side0", "side1", "side2", "side3"} and sum(data["chips"].values()) == 2000
    assert set(data["cycle"]) == {"sets_stacked", "stack_s", "wait_for_ready_s"}
    assert set(data["cycle"]["stack_s"]) == {"mean", "p95", "max"}
    assert set(data["cycle"]["wait_for_ready_s"]) == {"mean", "max"}
    assert {"frames_ok", "crc_errors", "resyncs", "reconnects", "tiles_read", "sets_verified",
            "sets_rejected"} <= set(data["rfid"])
    assert data["hands_won"] + data["hands_drawn"] == data["hands_played"] == 4
    for win in data["wins"]:
        assert sum(win["payments"].values()) == 0 and win["fans"] and win["total"] >= 8
    out = capsys.readouterr().out
    assert "hands: 4 of 4 played" in out and "stacking:" in out and "reader:" in out and "chips:" in out


def test_same_seed_same_report_apart_from_wall_time(tmp_path):
    def strip(d):
        return {k: v for k, v in d.items() if k not in ("wall_s", "speedup")}
    a = _report(tmp_path, "--hands", "3", "--seed", "9", "--rules", "competition")
    b = _report(tmp_path, "--hands", "3", "--seed", "9", "--rules", "competition")
    assert strip(a) == strip(b)


def test_faults_are_reported_with_their_acknowledge(tmp_path, capsys):
    data = _report(tmp_path, "--hands", "3", "--inject", "jam:lift1@hand2", "--auto-ack-s", "30")
    jam = [f for f in data["faults"] if f["code"] == "E22"]
    assert jam and jam[0]["tier"] == "latched" and jam[0]["acknowledged_at_s"] - jam[0]["at_s"] == pytest.approx(30,
                                                                                                               abs=2)
    assert data["hands_played"] == 3
    out = capsys.readouterr().out
    assert "fault E22 (needs a technician)" in out and "hint:" in out and "acknowledged at" in out


def test_an_unacknowledged_latched_fault_fails_the_run(tmp_path, capsys):
    data = _report(tmp_path, "--hands", "3", "--inject", "jam:lift1@hand2", "--auto-ack-s", "none", code=1)
    assert data["final_state"] == "latched"


@pytest.mark.parametrize("argv, words", [
    (["--speed", "0"], "--speed must be a positive number (1 = real time"),
    (["--inject", "power-cut"], "a power cut needs a time or an event"),
    (["--speed", "fast"], "'max' or a factor"),
    (["--inject", "melt:stacker1"], "unknown fault kind 'melt'"),
    (["--rules", "riichi"], "unknown rule set"),
    (["--auto-ack-s", "-3"], "seconds from 0 to 604800 or 'none', not '-3'"),
    (["--hands", "0"], "--hands: 0: from 1 to 1000000"),
])
def test_bad_arguments_exit_2_with_one_line(argv, words, capsys):
    try:
        code = main(["sim", *argv])
    except SystemExit as exc:          # argparse's own refusals
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_quiet_prints_only_the_last_line_and_verbose_every_hand(tmp_path, capsys):
    assert main(["sim", "--hands", "2", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.out.count("\n") == 1 and captured.out.startswith("final state") and "hand/s" not in captured.err
    assert main(["sim", "--hands", "2", "-v"]) == 0
    out = capsys.readouterr().out
    assert "hand  1: set A" in out and "hand  2: set" in out


def test_progress_bar_counts_the_hands(capsys):
    assert main(["sim", "--hands", "2"]) == 0
    assert "2/2" in capsys.readouterr().err


class FakeClock:
    """Wall time that only moves when the pacer sleeps: the test never sleeps."""

    def __init__(self):
        self.t = 100.0
        self.slept = []

    def __call__(self):
        return self.t

    def sleep(self, s):
        self.slept.append(s)
        self.t += s


def test_pacer_holds_the_virtual_loop_to_a_factor_of_real_time():
    loop = VirtualLoop()
    clock = FakeClock()
    fired = []
    for t in (1.0, 5.0, 9.0):
        loop.call_at(t, lambda t=t: fired.append((t, clock())))
    ticks = []
    pacer = Pacer(loop, speed=2.0, on_tick=lambda: ticks.append(pacer.shown_now_s), clock=clock, sleep=clock.sleep)
    assert pacer.run_until(lambda: len(fired) == 3, 60)
    # at twice real time an event at simulated t happens t/2 wall seconds after the start
    assert [round(wall - 100.0, 6) for _, wall in fired] == [0.5, 2.5, 4.5]
    assert max(clock.slept) <= 0.2 + 1e-9 and ticks == sorted(ticks) and ticks[-1] <= 9.0


def test_pacer_at_max_speed_never_sleeps_and_stops_at_the_timeout():
    loop = VirtualLoop()
    clock = FakeClock()
    loop.call_at(1000.0, lambda: None)
    pacer = Pacer(loop, speed=None, clock=clock, sleep=clock.sleep)
    assert not pacer.run_until(lambda: False, 100.0)
    assert clock.slept == [] and loop.now() == pytest.approx(100.0)


def test_a_run_on_an_existing_database_resumes_the_table(tmp_path, capsys):
    """--state keeps the controller's database and, in it, where every simulated tile is."""
    state = tmp_path / "table.db"
    first = _report(tmp_path, "--hands", "2", "--state", str(state))
    assert read_world_rows(state) is not None and not (tmp_path / "table.db.world.json").exists()
    second = _report(tmp_path, "--hands", "2", "--state", str(state))
    assert second["resumed_after_hand"] == 2 and second["hands_played"] == 2
    assert second["faults"] == [] and second["chips_conserved"]
    moved = {k: second["chips"][k] - first["chips"][k] for k in first["chips"]}
    assert sum(moved.values()) == 0
    assert "resumed from the table database after hand 2" in capsys.readouterr().out

    from firmware.store.table_store import TableStore
    store = TableStore(state)
    assert [h["hand"] for h in store.hands()] == [1, 2, 3, 4]
    store.close()


def test_a_request_posted_while_the_pacer_waits_is_answered_at_once():
    """The diag socket posts from its own thread: the pacer stops waiting for the next event and the
    request runs at the current simulated time, not when the next timer is due."""
    loop = VirtualLoop()
    clock = FakeClock()
    answered = []
    loop.call_at(100.0, lambda: None)               # the next event is far away

    def sleep(s):
        clock.sleep(s)
        if len(clock.slept) == 3:                   # a while into the wait, a request arrives
            loop.post(lambda: answered.append(loop.now()))
    pacer = Pacer(loop, speed=1.0, clock=clock, sleep=sleep)
    assert pacer.run_until(lambda: bool(answered), 200)
    assert answered == [0.0] and sum(clock.slept) == pytest.approx(0.6)


def test_a_saved_table_of_another_tile_set_is_refused(tmp_path, capsys):
    state = tmp_path / "table.db"
    assert main(["sim", "--hands", "1", "--state", str(state), "--quiet"]) == 0
    assert main(["sim", "--hands", "1", "--state", str(state), "--quiet", "--rules", "jinzhou"]) == 2
    assert "the saved table plays mcr; run it with --rules mcr" in capsys.readouterr().err


def test_verbose_levels(capsys):
    import logging

    root_before = logging.getLogger().level
    assert main(["sim", "--hands", "1", "-v"]) == 0
    err = capsys.readouterr().err
    assert "transitions.core" not in err and "INFO" not in err          # -v: every hand, no log
    assert logging.getLogger("transitions").level == logging.WARNING
    logging.getLogger().setLevel(root_before)


def test_ctrl_c_while_watching_still_prints_the_summary(monkeypatch, capsys):
    from sim import pacer

    def interrupted(self, done, timeout_s):
        self.loop.run_for(200.0)
        raise KeyboardInterrupt
    monkeypatch.setattr(pacer.Pacer, "run_until", interrupted)
    assert main(["sim", "--hands", "4"]) == 1
    captured = capsys.readouterr()
    assert "stopped by Ctrl-C" in captured.err and "hands: " in captured.out


def _one_line_exit_2(capsys, argv, words):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err, err


def test_a_saved_table_that_cannot_be_resumed_is_refused_before_anything_is_played(tmp_path, capsys):
    state = tmp_path / "t.db"
    _one_line_exit_2(capsys, ["sim", "--hands", "1", "--state", str(tmp_path / "no" / "t.db")], "does not exist")
    state.write_text("not a database")
    _one_line_exit_2(capsys, ["sim", "--hands", "1", "--state", str(state)], "not a table database")
    assert state.read_text() == "not a database"                    # refused, not moved or overwritten
    state.unlink()
    assert main(["sim", "--hands", "1", "--state", str(state), "--quiet"]) == 0
    capsys.readouterr()
    saved = json.dumps(read_world_rows(state))
    with sqlite3.connect(state) as db:
        db.execute("DELETE FROM sim_world")                 # the simulated tiles gone
    _one_line_exit_2(capsys, ["sim", "--hands", "1", "--state", str(state)], "keeps no simulated table")
    world = tmp_path / "t.db.world.json"                   # an older release's world file beside it
    world.write_text(saved.replace('"tile_set": 144', '"tile_set": 136'))
    _one_line_exit_2(capsys, ["sim", "--hands", "1", "--state", str(state)], "136-tile sets")
    data = json.loads(saved)
    data["walls"] = [[], [], [], []]
    world.write_text(json.dumps(data))
    _one_line_exit_2(capsys, ["sim", "--hands", "1", "--state", str(state)], "do not match the table database")
    world.write_text(saved)
    _one_line_exit_2(capsys, ["sim", "--hands", "1", "--state", str(state), "--rules", "jinzhou"], "--rules mcr")
    assert main(["sim", "--hands", "1", "--state", str(state), "--quiet"]) == 0     # the older file read, once
    assert not world.exists() and read_world_rows(state) is not None
    capsys.readouterr()
    with sqlite3.connect(state) as db:
        db.execute("UPDATE sim_world SET places = x'0100' WHERE id = 1")
    _one_line_exit_2(capsys, ["sim", "--hands", "1", "--state", str(state)], "damaged")
    _one_line_exit_2(capsys, ["sim", "--hands", "1", "--report", str(tmp_path / "no" / "r.json")], "--report")
    _one_line_exit_2(capsys, ["sim", "--hands", "1", "--report", str(tmp_path)], "a folder")


def _resumed_runs(tmp_path, runs, seed):
    """Runs on one saved table, one after another, each with a power cut at a random instant."""
    import random

    rng = random.Random(seed)
    rules = rng.choice(["mcr", "competition", "liaoning", "jinzhou"])
    state = tmp_path / "table.db"
    for i in range(runs):
        argv = ["sim", "--quiet", "--state", str(state), "--rules", rules, "--seed", str(rng.randrange(1000)),
                "--hands", str(rng.choice([1, 2])), "--inject", f"power-cut@{rng.uniform(5, 400):.1f}s"]
        assert main(argv) == 0, (i, argv)


def test_resumed_runs_with_power_cuts_all_complete(tmp_path, capsys):
    _resumed_runs(tmp_path, 6, seed=3)


@pytest.mark.slow
def test_two_hundred_resumed_runs_with_power_cuts_all_complete(tmp_path, capsys):
    for table in range(20):
        folder = tmp_path / f"t{table}"
        folder.mkdir()
        _resumed_runs(folder, 10, seed=table)


@pytest.mark.parametrize("spec", ["power-cut@stacking1", "power-cut@stacking2", "power-cut@hand1",
                                  "power-cut@hand2", "power-cut@hand3=10s", "power-cut@95s"])
def test_a_power_cut_at_every_kind_of_instant_completes_the_game(tmp_path, spec):
    """The event forms once cut the power from inside the controller's own step (a closed database, then a
    TypeError); the cut now falls right after that step."""
    data = _report(tmp_path, "--hands", "3", "--inject", spec, "--quiet")
    assert data["power_cuts"] == 1 and data["hands_played"] == 3 and data["chips_conserved"]
    assert not [f for f in data["faults"] if f["code"] in ("E98", "E99")]


def test_a_resumed_run_reports_its_own_hands_and_faults(tmp_path, capsys):
    state = tmp_path / "t.db"
    first = _report(tmp_path, "--hands", "2", "--state", str(state), "--inject", "jam:lift1@hand1", "--quiet")
    assert [f["code"] for f in first["faults"]] == ["E22"]
    capsys.readouterr()
    second = _report(tmp_path, "--hands", "1", "--state", str(state), "-v")
    assert second["faults"] == []
    out = capsys.readouterr().out
    listed = [line for line in out.splitlines() if line.lstrip().startswith("hand ")]
    assert len(listed) == 1 and listed[0].lstrip().startswith("hand  3:")


@pytest.mark.parametrize("at", ["0.5s", "1s", "3s"])
def test_a_power_cut_right_after_resuming_still_completes(tmp_path, capsys, at):
    """The key that ends the hand left on the table went while the power was off: the players press again."""
    state = tmp_path / "t.db"
    assert main(["sim", "--hands", "2", "--state", str(state), "--quiet"]) == 0
    assert main(["sim", "--hands", "1", "--state", str(state), "--quiet", "--inject", f"power-cut@{at}"]) == 0


def test_no_technician_means_nobody_frees_a_stuck_lid(capsys):
    assert main(["sim", "--hands", "1", "--inject", "stuck-on:lid", "--auto-ack-s", "none", "--quiet"]) == 1
    assert "did not complete (the table is: Held)" in capsys.readouterr().err
