"""What ``mjtable sim`` reports (a jam's own fault only, the verbose levels, ``--quiet``), the seat pads
of the simulated table under ``diag --sim``, and the ignored world files."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from firmware.faults import Fault, FaultCode
from sim.faults import parse_fault
from sim.table_run import SimRun


def _codes(run: SimRun) -> list[str]:
    return [f.code.value for f in run.record.faults]


def test_a_stop_right_after_a_tile_was_counted_leaves_no_tile_unread():
    """A fault stops the cycle the instant a tile is counted, while its TAG is still on the reader's line: the
    wall session listens until the board has sent it, so the resumed cycle's walls are complete (no E83)."""
    run = SimRun(rules="mcr", hands=1, play=False, hand_s=5.0, seed=3)
    head = run.world.heads[3]
    stopped: list[float] = []

    def tile(side: int, _tile) -> None:
        if not stopped and head.tiles_entered == 4:
            stopped.append(run.loop.now())
            run.loop.call_later(0.0, lambda: run.table.faults.report(
                Fault(FaultCode.E33, run.loop.now(), "stacker2", {"reason": "test: stopped as a tile was counted"})))
    head.on_tile.append(tile)
    verified: list[list[str]] = []
    run.bus.subscribe("wall.verified", lambda e: verified.append(e.data["problems"]))
    try:
        assert run.run(timeout_s=1500.0)
    finally:
        run.close()
    assert stopped and "E33" in _codes(run)
    assert verified and all(p == [] for p in verified), verified
    assert "E83" not in _codes(run)


def test_a_jammed_stacker_reports_its_jam_only():
    """``mjtable sim --seed 13 --inject jam:stacker2@stacking1`` reported an E83 (side 3, counted but not read)
    besides the E33, with no tag event lost: the jam stopped the cycle as side 3 counted a tile."""
    run = SimRun(rules="mcr", hands=1, play=False, hand_s=5.0, seed=13, faults=[parse_fault("jam:stacker2@stacking1")])
    try:
        assert run.run(timeout_s=1500.0)
    finally:
        run.close()
    assert _codes(run) == ["E33"]
    assert run.table.reader.counters.events_lost == 0


def _record(winners: list[int], drawn: bool = False, fans: list | None = None, note: str = ""):
    from firmware.game.scoreboard import ScoredHand

    items = [{"name": n, "key": "", "en": "", "points": p, "count": c} for n, p, c in fans or []]
    return ScoredHand(3, 0, winners, drawn, [], items, note)


_WIN = {"winner_side": 1, "winner_seat": "S", "self_drawn": False, "total": 12, "fans": [{"name": "平和"}]}


@pytest.mark.parametrize("wins, recorded, words", [
    ([], _record([2], note="false win by side 2: under 8 fans"), "false win by side 2: under 8 fans"),
    ([], _record([], note="false win by side 2: under 8 fans"), "false win by side 2: under 8 fans"),   # diag judge
    ([], _record([2]), "false win by side 2"),                  # a winner, no fan, not drawn: never "won"
    ([], _record([]), "false win"),                             # not drawn, nobody won: never "drawn"
    ([], _record([], drawn=True), "drawn"),
    ([], _record([], drawn=True, note="黄庄: the dealer pays each"), "drawn (黄庄: the dealer pays each)"),
    ([_WIN], _record([1, 3], fans=[["平和", 2, 1]], note="false win by side 3: no fan"),
     "side 1 (S) wins 12: 平和; false win by side 3: no fan"),  # several winners, one of them false
    ([_WIN], _record([1], fans=[["平和", 2, 1]]), "side 1 (S) wins 12: 平和"),
    ([], _record([1], fans=[["平和", 2, 1]]), "won (see the scoreboard)"),     # (its win no longer in the report)
    ([], None, "not scored"),
])
def test_every_hand_is_told_as_what_it_was(wins, recorded, words):
    from sim.report import hand_outcome

    assert hand_outcome(wins, recorded).startswith(words)
    if words != "drawn" and not words.startswith("drawn ("):
        assert "drawn" not in hand_outcome(wins, recorded)


def test_verbose_lists_a_false_win_as_a_false_win():
    """A hand whose declared win the referee refused: ``sim -v`` says so on the hand's line, as the count does."""
    from sim.report import build_report, summary_lines

    run = SimRun(rules="mcr", hands=2, play=True, seed=2)
    game = run.game
    careful = game.may_win
    refused: list[int] = []

    def careless(side, tile, discarder, kong_win=False):
        """A player who declares a winning shape without counting the fans, once."""
        if refused or game.play is None:
            return careful(side, tile, discarder, kong_win)
        w = game.play.win_for(side, tile, discarder is None, kong_win)
        if w.win_tile in game.referee._waits_of(w.hand, len(w.melds)) and not careful(side, tile, discarder,
                                                                                       kong_win):
            refused.append(game.hand_no)
            return True
        return careful(side, tile, discarder, kong_win)
    game.may_win = careless
    for player in game.players:
        player.may_win = careless
    try:
        assert run.run(timeout_s=2000.0)
        report = build_report(run, "mcr", 2, 1.0)
        results = {r.hand: r for r in run.session.scoreboard.hands()}
        lines = summary_lines(report, run.store.hands(), verbose=True, results=results)
    finally:
        run.close()
    assert refused and report["false_wins"] == 1
    line = next(x for x in lines if x.startswith(f"  hand {refused[0]:2d}:"))
    assert "false win by side" in line and "drawn" not in line, line
    assert "1 false win" in next(x for x in lines if x.startswith("hands:"))


def _sim(*argv: str) -> subprocess.CompletedProcess:
    """``mjtable sim`` in its own process (its logging set up as on the command line)."""
    return subprocess.run([sys.executable, "-m", "firmware.cli.main", "sim", "--hands", "1", *argv],
                          capture_output=True, text=True, timeout=300, cwd=Path(__file__).parents[2])


def test_vv_logs_the_controllers_state_changes_and_vvvv_the_state_machine_library():
    vv = _sim("-vv")
    assert vv.returncode == 0, vv.stderr
    states = re.findall(r"INFO firmware\.controller: state (\w+)", vv.stderr)
    assert states[:3] == ["homing", "idle", "center_up"] and "in_play" in states
    assert "hand 1 dealt: dealer side 0" in vv.stderr
    assert "transitions" not in vv.stderr and "DEBUG" not in vv.stderr
    vvv = _sim("-vvv")
    assert "DEBUG firmware" in vvv.stderr and "transitions" not in vvv.stderr
    assert re.search(r"INFO firmware\.controller: state in_play", vvv.stderr)
    vvvv = _sim("-vvvv")
    assert "transitions.core" in vvvv.stderr


def test_quiet_keeps_the_hand_count_on_its_one_line(capsys):
    from firmware.cli.main import main

    assert main(["sim", "--hands", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("final state")
    assert re.search(r"; hands: 2 of 2 played, \d+ won, \d+ drawn(, \d+ false wins?)?; \d+ simulated s in", out), out


def _inventory(run: SimRun, antenna: int) -> list[bytes]:
    from firmware.reader.messages import InventoryPart

    replies: list = []
    run.table.reader.inventory(antenna, replies.append)
    run.run_until(lambda: bool(replies), 10)
    assert replies[0].ok
    return [uid for frame in replies[0].frames for uid in InventoryPart.unpack(frame.payload).uids]


def test_a_hand_laid_on_a_seat_pad_is_in_the_pads_inventory_until_the_table_is_cleared():
    """The simulated board answers an inventory of a seat pad's antenna with the tiles lying on that pad: a
    player's hand, laid from the table top, until the players push the table into the centre (the tiles go in
    with the walls: the set stays whole and the next cycle verifies it)."""
    from firmware.diagnostics.commands import DiagCommands
    from firmware.diagnostics.reader_answers import reader_text

    run = SimRun(hands=2, hand_s=120.0)
    try:
        run.run_until(lambda: run.state is not None and run.state.value == "in_play", 600)
        kinds = sorted(t.kind for t in run.world.wall_tiles()[:14])
        assert _inventory(run, 6) == []                                 # nothing on side 2's pad yet
        assert run.players.lay_hand(2, kinds)
        laid = [t.uid for t in run.world.pads[2]]
        assert len(laid) == 14 and sorted(_inventory(run, 6)) == sorted(laid)
        assert _inventory(run, 4) == []                                 # the other pads hold nothing
        answers: list[dict] = []
        DiagCommands(run.session).handle({"cmd": "reader", "action": "inventory", "antenna": 6}, answers.append)
        run.run_until(lambda: bool(answers), 10)
        assert "antenna 6 (seat pad of side 2): 14 tiles" in "\n".join(reader_text(answers[0], "simulated reader"))
        assert not run.players.lay_hand(1, [kinds[0]] * 5)              # no face has five tiles: nothing laid
        assert run.world.pads[1] == []
        verified: list[list[str]] = []
        run.bus.subscribe("wall.verified", lambda e: verified.append(e.data["problems"]))
        assert run.run(timeout_s=1500.0)
        assert all(pad == [] for pad in run.world.pads)                # pushed into the centre with the walls
        assert verified and all(p == [] for p in verified), verified
        assert not [f for f in run.record.faults if f.code.value in ("E62", "E82", "E83")]
    finally:
        run.close()


def test_world_files_are_ignored_by_git():
    ignored = (Path(__file__).parents[2] / ".gitignore").read_text().split()
    assert "*.world.json" in ignored


def test_an_action_the_referee_refuses_stops_the_players_and_fails_the_run(monkeypatch, tmp_path, capsys, caplog):
    """The simulated players and the table's referee disagreeing (a bug of one of them): the refused action is said
    once, the players stop there instead of sending it again for ever, the report names it and the run fails."""
    import json
    import logging

    from firmware.cli.main import main
    from firmware.game.hand_in_play import HandInPlay
    from firmware.rules.hand_record import BadRecord

    take = HandInPlay.take
    refused: list[tuple[int, int]] = []

    def referee_with_a_bug(self, hand, action, seq=None):
        if hand == 1 and seq == 7:
            refused.append((hand, seq))
            try:
                raise BadRecord("a rule this referee has wrong")
            except BadRecord as exc:
                from firmware.i18n import text_of
                return text_of(exc)
        return take(self, hand, action, seq)
    monkeypatch.setattr(HandInPlay, "take", referee_with_a_bug)
    report_file = tmp_path / "report.json"
    with caplog.at_level(logging.ERROR, logger="sim.game_runner"):
        code = main(["sim", "--hands", "2", "--seed", "1", "--report", str(report_file)])
    err = capsys.readouterr().err
    report = json.loads(report_file.read_text())
    assert code == 1
    assert refused == [(1, 7)]                                       # sent once: never again
    assert report["refused_actions"] == 1 and report["refusal"]["hand"] == 1 and report["refusal"]["seq"] == 7
    assert "a rule this referee has wrong" in report["refusal"]["why"]
    assert "BUG: the table's referee refused hand 1's action 7" in err
    assert len([r for r in caplog.records if "the referee refused" in r.getMessage()]) == 1
    assert report["hands_played"] == 0
