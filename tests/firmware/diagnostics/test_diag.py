"""Technician diagnostics: the commands, over the local socket, against the simulated table."""

import json
import os
import stat
import threading

import pytest

from firmware.cli.main import main
from firmware.diagnostics.commands import DiagCommands
from firmware.diagnostics.socket.protocol import ask
from firmware.diagnostics.socket.server import DiagSocketServer
from hal.runtime import HOST_CLOCK
from sim.faults import parse_fault
from sim.table_run import SimRun


def _serve(run, tmp_path):
    path = tmp_path / "diag.sock"
    server = DiagSocketServer(path, run.fw_loop.post, DiagCommands(run.session).handle, group=None,
                              clock=HOST_CLOCK)
    server.start()
    return server, path


def _ask_while_running(run, path, request, timeout_s=120.0):
    """The client blocks in a thread while this thread drives the simulated loop."""
    answers = []
    thread = threading.Thread(target=lambda: answers.append(ask(path, request, timeout_s=10)))
    thread.start()
    while thread.is_alive():
        run.loop.run_for(0.05)
        thread.join(timeout=0.001)
    return answers[0]


def test_service_tests_over_the_socket_in_service_mode(tmp_path):
    run = SimRun(hands=0, service=True)
    run.loop.run_for(2.0)
    server, path = _serve(run, tmp_path)
    try:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o660
        answer = _ask_while_running(run, path, {"cmd": "test", "name": "lifts"})
        assert answer["ok"] and [m["mechanism"] for m in answer["moves"]] == [f"wall_lift{s}" for s in range(4)]
        center = _ask_while_running(run, path, {"cmd": "test", "name": "center"})
        assert center["ok"] and len(center["moves"]) == 2
        sensors = _ask_while_running(run, path, {"cmd": "sensors"})
        assert sensors["sensors"]["center_down"] is True
    finally:
        server.stop()
        run.close()


def test_motor_moves_are_refused_outside_service_mode(tmp_path):
    run = SimRun(hands=0)
    run.loop.run_for(2.0)
    server, path = _serve(run, tmp_path)
    try:
        runs_before = [h.cam.runs for h in run.controller.table.heads]
        answer = _ask_while_running(run, path, {"cmd": "test", "name": "stackers"})
        assert not answer["ok"] and "service mode" in answer["error"]
        assert [h.cam.runs for h in run.controller.table.heads] == runs_before
        bad = _ask_while_running(run, path, {"cmd": "reboot"})
        assert not bad["ok"] and "unknown command" in bad["error"]
    finally:
        server.stop()
        run.close()


def test_a_jam_in_a_service_test_is_its_fault_code(tmp_path):
    run = SimRun(hands=0, service=True, faults=[parse_fault("jam:stacker2")])
    run.loop.run_for(2.0)
    answers = []
    DiagCommands(run.session).handle({"cmd": "test", "name": "stackers"}, answers.append)
    run.run_until(lambda: bool(answers), 30)
    moves = {m["mechanism"]: m for m in answers[0]["moves"]}
    assert not answers[0]["ok"] and moves["stacker2"]["fault"] == "E33"
    assert all(m["fault"] is None for name, m in moves.items() if name != "stacker2")
    run.close()


def test_faults_and_ack_over_the_socket(tmp_path):
    run = SimRun(hands=3, faults=[parse_fault("jam:lift1@hand2")], auto_ack_s=None)
    run.run_until(lambda: run.state is not None and run.state.value == "latched", 3000)
    run.world.repair()
    server, path = _serve(run, tmp_path)
    try:
        faults = _ask_while_running(run, path, {"cmd": "faults"})
        assert faults["faults"][0]["code"] == "E22" and faults["faults"][0]["hint"]
        ack = _ask_while_running(run, path, {"cmd": "ack"})
        assert ack["ok"]
        again = _ask_while_running(run, path, {"cmd": "ack"})
        assert not again["ok"] and "nothing to acknowledge" in again["error"]
    finally:
        server.stop()
        run.close()


@pytest.mark.parametrize("argv, code, words", [
    (["diag", "--sim", "test", "dice"], 1, "FAILED: motor tests need service mode"),
    (["diag", "--sim", "--service", "test", "dice", "--json"], 0, '"test": "dice"'),
    (["diag", "--sim", "counters", "--json"], 0, '"reader"'),
    (["diag", "--sim", "--service", "jog", "turntable", "--seconds", "4"], 0,
     "turntable    ok   ran 4 s, 1 revolution"),
    (["diag", "--sim", "--service", "jog", "center_lift", "--to", "up"], 0, "to: up"),
    (["diag", "--sim", "--service", "jog", "stacker9"], 1, "no mechanism 'stacker9'"),
    (["diag", "--sim", "--service", "--inject", "jam:stacker2", "test", "stackers"], 1,
     "stacker2     FAIL 0.47 s  E33"),
    (["diag", "--sim", "--service", "--inject", "wear:lift1=2.5", "burn-in", "--cycles", "2"], 0,
     "wall_lift1: 7.50 s learned, 3.00 s designed (2.5x)"),
    (["diag", "--sim", "--service", "--inject", "wear:center=2", "learn", "--runs", "3"], 0,
     "center_lift: {\"before\": 1.5, \"after\": 3.0}"),
    (["diag", "--sim", "faults"], 0, "faults: 0"),
])
def test_diag_cli_against_the_simulator(argv, code, words, capsys):
    assert main(argv) == code
    assert words in capsys.readouterr().out


def test_out_of_range_counts_are_refused_before_the_table_is_touched(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["diag", "--sim", "--service", "learn", "--runs", "30"])
    assert exit_.value.code == 2 and "--runs: 30: from 1 to 9" in capsys.readouterr().err


def test_diag_cli_without_a_running_service(tmp_path, capsys):
    assert main(["diag", "state", "--socket", str(tmp_path / "none.sock")]) == 2
    assert "is the service running" in capsys.readouterr().err


def test_diag_direct_drives_the_table_from_this_process(tmp_path, capsys):
    """No service: the tool builds the controller on the table's pins itself, in service mode."""
    assert main(["install", "--config-only", "--root", str(tmp_path)]) == 0    # the table's own configuration
    direct = ["diag", "--direct", "--config-dir", str(tmp_path / "etc/mjtable"), "--pin-factory", "mock",
              "--state", str(tmp_path / "t.db")]
    assert main([*direct, "state"]) == 0
    assert "state: Service mode" in capsys.readouterr().out              # (the state in words)
    assert main([*direct, "sensors"]) == 0
    assert "center_down" in capsys.readouterr().out


def test_a_long_test_waits_as_long_as_the_client_asks(tmp_path):
    """A burn-in takes minutes: the server waits for the loop as long as the client does."""
    run = SimRun(hands=0, service=True)
    run.loop.run_for(2.0)
    server, path = _serve(run, tmp_path)
    try:
        answer = _ask_while_running(run, path, {"cmd": "burn-in", "cycles": 2})
        assert answer["ok"] and answer["cycles_done"] == 2 and answer["ran_s"] > 20
        busy = []
        commands = DiagCommands(run.session)
        commands.handle({"cmd": "jog", "mechanism": "wall_lift0"}, busy.append)
        commands.handle({"cmd": "jog", "mechanism": "wall_lift0"}, busy.append)
        assert not busy[0]["ok"] and "still moving: wall_lift0" in busy[0]["error"]
    finally:
        server.stop()
        run.close()


@pytest.mark.slow          # real time
def test_run_opens_the_diag_socket(tmp_path, monkeypatch):
    """``mjtable run`` serves the socket while the controller runs on the real-time loop."""
    import firmware.diagnostics.socket.server

    opened = threading.Event()
    start = firmware.diagnostics.socket.server.DiagSocketServer.start

    def start_and_tell(self):
        start(self)
        opened.set()
    monkeypatch.setattr(firmware.diagnostics.socket.server.DiagSocketServer, "start", start_and_tell)
    result = {}

    def client():
        if opened.wait(timeout=10):
            result["answer"] = ask(tmp_path / "d.sock", {"cmd": "state"}, timeout_s=5)

    thread = threading.Thread(target=client)
    thread.start()
    assert main(["run", "--sim", "--seconds", "1.0", "--state", str(tmp_path / "t.db"),
                 "--diag-socket", str(tmp_path / "d.sock")]) == 0
    thread.join(timeout=5)
    assert result["answer"]["ok"] and result["answer"]["state"]
    assert json.dumps(result)


def test_a_simulated_table_serves_the_socket_across_a_power_cut(tmp_path):
    """``mjtable sim --diag-socket``: the answer comes from whichever controller is powered now."""
    run = SimRun(hands=0, service=True)
    run.loop.run_for(2.0)
    path = tmp_path / "sim.sock"
    server = run.serve_diag(path)
    try:
        assert _ask_while_running(run, path, {"cmd": "state"})["state"] == "service"
        run.power_cut(off_s=30.0)
        off = _ask_while_running(run, path, {"cmd": "state"})
        assert not off["ok"] and "switched off" in off["error"]
        run.loop.run_for(40.0)
        assert _ask_while_running(run, path, {"cmd": "state"})["ok"]
    finally:
        server.stop()
        run.close()


def test_sim_service_mode_runs_until_told_and_the_socket_option_goes_before_the_tool(tmp_path, capsys):
    assert main(["sim", "--service", "--until-s", "30", "--quiet"]) == 0
    assert "final state Service mode" in capsys.readouterr().out
    assert main(["sim", "--until-s", "30"]) == 2
    assert main(["diag", "--socket", str(tmp_path / "none.sock"), "state"]) == 2
    assert f"no controller is listening on {tmp_path / 'none.sock'}" in capsys.readouterr().err


def test_reader_tools_go_through_the_running_service(tmp_path, capsys):
    """While the service runs it owns the serial port: the reader tools ask it over the socket."""
    run = SimRun(hands=0, faults=[parse_fault("antenna:6")])
    run.loop.run_for(5.0)
    path = tmp_path / "svc.sock"
    server = run.serve_diag(path)
    codes = []
    try:
        for tool in (["reader", "ping"], ["reader", "antennas"], ["reader", "inventory", "--antenna", "2"]):
            thread = threading.Thread(target=lambda t=tool: codes.append(main(["diag", "--socket", str(path), *t])))
            thread.start()
            while thread.is_alive():
                run.loop.run_for(0.05)
                thread.join(timeout=0.001)
    finally:
        server.stop()
        run.close()
    out = capsys.readouterr().out
    assert codes == [0, 1, 0]
    assert "reader of the running table: protocol 1" in out
    assert "antenna 6 (seat pad of side 2): FAULT (E81)" in out and "antenna 0 (head of side 0): ok" in out
    assert "antenna 2 (head of side 2):" in out


def test_reader_requests_answer_bad_actions():
    run = SimRun(hands=0)
    run.loop.run_for(3.0)
    answers = []
    commands = DiagCommands(run.session)
    commands.handle({"cmd": "reader", "action": "reboot"}, answers.append)
    commands.handle({"cmd": "reader", "action": "inventory", "antenna": 12}, answers.append)
    commands.handle({"cmd": "reader", "action": "counters"}, answers.append)
    assert "unknown reader action" in answers[0]["error"] and "antenna 0..7" in answers[1]["error"]
    assert answers[2]["ok"] and answers[2]["counters"]["heartbeats"] >= 1
    run.close()


def test_watching_the_inputs_records_every_change_with_its_time():
    """``sensors --watch``: a wall-lift turn shows its home switch leaving and coming back."""
    run = SimRun(hands=0, service=True)
    run.loop.run_for(2.0)
    commands = DiagCommands(run.session)
    watched, moved = [], []
    commands.handle({"cmd": "watch", "seconds": 10}, watched.append)
    run.loop.run_for(1.0)
    commands.handle({"cmd": "jog", "mechanism": "wall_lift1"}, moved.append)
    run.run_until(lambda: bool(watched), 20)
    changes = [(c["input"], c["active"]) for c in watched[0]["changes"]]
    assert changes == [("lift_home1", False), ("lift_home1", True)]
    first, back = watched[0]["changes"]
    assert back["after_s"] - first["after_s"] == pytest.approx(moved[0]["elapsed_s"], abs=0.5)
    assert watched[0]["sensors"]["lift_home1"] is True
    bad = []
    commands.handle({"cmd": "watch", "seconds": 0}, bad.append)
    assert not bad[0]["ok"]
    run.close()


def _lay(run, side, text):
    from firmware.tiles.tile import parse
    from sim.tileset import SimTile

    free = {}
    for entry in run.world.registry.sets["A"]:
        free.setdefault(entry.kind, []).append(entry)
    run.world.lay_on_pad(side, [SimTile(e.uid, "A", e.kind) for e in (free[k].pop() for k in parse(text))])


def test_judge_reads_the_winners_pad_and_records_the_verdict():
    """The real table's referee: the pad's tags, the rule set's engine, the scoreboard."""
    run = SimRun(hands=1, hand_s=3000.0)
    run.run_until(lambda: run.state is not None and run.state.value == "in_play", 600)
    dealer = run.controller.book.dealer
    winner, discarder = (dealer + 2) % 4, dealer
    _lay(run, winner, "123m456p789s123sEE1f")
    answers = []
    DiagCommands(run.session).handle({"cmd": "judge", "side": winner, "tile": "E", "discarder": discarder,
                                         "record": True}, answers.append)
    run.run_until(lambda: bool(answers), 10)
    a = answers[0]
    assert a["ok"] and a["legal"] and a["recorded"] and "花龙" in [f["name"] for f in a["fans"]]
    assert sum(a["payments"].values()) == 0 and a["payments"][f"side{winner}"] > 0
    assert a["payments"][f"side{discarder}"] < min(a["payments"][f"side{s}"] for s in range(4) if s != discarder)
    history = run.session.scoreboard.hands()
    assert history[-1].winners == [winner] and history[-1].by_side == [a["payments"][f"side{s}"] for s in range(4)]
    assert {m["reason"] for m in a["money"]} == {"win"} and history[-1].record
    run.close()


@pytest.mark.parametrize("request_, words", [
    ({"side": 1, "tile": "5m"}, "the pad reads no tiles: the player lays the whole hand"),   # nothing laid
    ({"side": 7, "tile": "5m"}, "side 0..3"),
    ({"side": 1, "tile": "5x"}, "winning tile"),
    ({"side": 1, "tile": "5m", "discarder": 1}, "another side"),
])
def test_judge_refuses_what_it_cannot_judge(request_, words):
    run = SimRun(hands=0)
    run.loop.run_for(3.0)
    answers = []
    DiagCommands(run.session).handle({"cmd": "judge", **request_}, answers.append)
    run.run_until(lambda: bool(answers), 10)
    assert not answers[0]["ok"] and words in answers[0]["error"]
    run.close()


def test_judge_on_the_simulated_table_from_the_cli(capsys):
    assert main(["diag", "--sim", "judge", "--side", "2", "--tile", "E", "--discarder", "0",
                 "--lay", "123m456p789s123sEE"]) == 0
    out = capsys.readouterr().out
    assert "legal: True" in out and "  花龙 8" in out
    assert main(["diag", "--sim", "judge", "--side", "2", "--tile", "E", "--lay", "123m456p789s123sE5m"]) == 0
    assert "legal: False" in capsys.readouterr().out
    assert main(["diag", "--sim", "judge", "--side", "2", "--tile", "9m", "--lay", "123m456p789s123sEE"]) == 1
    assert "the winning tile 9m is not on the pad" in capsys.readouterr().out


def test_judge_takes_the_exposed_sets_the_referee_names(capsys):
    """The pad reads exposed sets with the rest; named, they are melds (no 门前清, 清一色 still)."""
    argv = ["diag", "--sim", "judge", "--side", "1", "--tile", "5m", "--discarder", "0",
            "--lay", "123m456m789m111m55m"]
    assert main(argv) == 0
    concealed = capsys.readouterr().out
    assert main(argv + ["--melds", "c123m c456m"]) == 0
    melded = capsys.readouterr().out
    assert "清一色" in concealed and "清一色" in melded
    assert "门前清" in concealed and "门前清" not in melded
    assert main(argv + ["--melds", "p9s"]) == 1
    assert "not on the pad" in capsys.readouterr().out


def test_meld_names():
    from firmware.game.pad import parse_melds

    actions = parse_melds("c123p, p5m@3 k7s@2 a9p K9s", side=1)
    assert [a.text() for a in actions] == ["1 chow 123p from 0", "1 pung 5m from 3", "1 kong 7s from 2",
                                           "1 pung 9p from 0", "1 added_kong 9p", "1 concealed_kong 9s"]
    for bad in ("c124p", "p5m@1", "K9s@2", "p5m@7", "x5m"):
        with pytest.raises(ValueError, match="meld"):
            parse_melds(bad, side=1)


def test_counters_reset_after_a_repair():
    run = SimRun(hands=0, faults=[parse_fault("rfid-noise=0.05")])
    run.loop.run_for(20.0)
    commands = DiagCommands(run.session)
    before, after = [], []
    commands.handle({"cmd": "counters"}, before.append)
    assert before[0]["reader"]["crc_errors"] + before[0]["reader"]["resyncs"] > 0
    runs = {name: m["runs"] for name, m in before[0]["mechanisms"].items()}
    commands.handle({"cmd": "counters", "reset": True}, after.append)
    assert after[0]["reader"]["crc_errors"] == 0 and after[0]["reader"]["frames_ok"] == 0
    assert {name: m["runs"] for name, m in after[0]["mechanisms"].items()} == runs      # history is kept
    run.close()


@pytest.mark.parametrize("argv", [
    ["diag", "--sim", "--json", "state"],                   # before the tool
    ["diag", "--json", "--sim", "state"],
    ["diag", "--sim", "state", "--json"],                   # after it, as before
])
def test_json_goes_before_or_after_the_tool(argv, capsys):
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True


def test_without_json_the_answer_is_text(capsys):
    assert main(["diag", "--sim", "state"]) == 0
    assert capsys.readouterr().out.startswith("state: ")


def test_judge_record_outside_a_hand_says_why_and_fails(capsys):
    argv = ["diag", "--sim", "judge", "--side", "2", "--tile", "E", "--discarder", "0",
            "--lay", "123m456p789s123sEE", "--record"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "legal: True" in out and "not recorded: no hand in play" in out
    assert main([*argv, "--json"]) == 1
    assert "not recorded: no hand in play" in json.loads(capsys.readouterr().out)["error"]


def test_diag_stop_with_nothing_running(capsys):
    assert main(["diag", "--sim", "--service", "stop"]) == 0
    assert "no service test was running" in capsys.readouterr().out


def test_an_interrupted_local_test_is_stopped():
    """Ctrl-C (or no answer in time) while ``--direct``/``--sim`` waits: the test stops, motors safe."""
    from firmware.cli.diag_ask import answer_in_process as _answer

    run = SimRun(hands=0, service=True)
    run.loop.run_for(2.0)

    def interrupted(done, timeout_s):
        run.loop.run_for(5.0)
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        _answer(run.session, interrupted, {"cmd": "burn-in", "cycles": 50}, 3600.0)
    assert run.controller.service_test.current is None and run.controller.table.motors_safe()
    assert not run.controller.table.moving()
    run.close()


def test_judge_with_every_side_s_sets_and_the_way_of_winning(capsys):
    """The referee names who opened and fed what: the northeastern payers' shares follow (锦州 一家炮)."""
    argv = ["diag", "--sim", "--rules", "jinzhou", "--json", "judge", "--side", "0", "--tile", "6p", "--discarder", "2",
            "--melds", "c123m@3", "--lay", "123m45p6p789s555s99m"]
    assert main(argv) == 1                      # who was closed is not guessed (as mjtable score)
    refused = json.loads(capsys.readouterr().out)
    assert not refused["ok"] and "--open none" in refused["error"] and "jinzhou" in refused["error"]
    assert main([*argv, "--open", "none"]) == 0
    closed = json.loads(capsys.readouterr().out)
    assert main([*argv, "--open"]) == 0         # (--open alone: nobody had opened)
    assert json.loads(capsys.readouterr().out)["breakdown"] == closed["breakdown"]
    assert main([*argv, "--open", "1,2,3"]) == 0
    opened = json.loads(capsys.readouterr().out)
    shares = lambda a: {b["payer"]: b["amount"] for b in a["breakdown"]}     # noqa: E731
    assert shares(closed) == {1: 4, 2: 8, 3: 4} and closed["payments"]["side2"] == -16
    assert shares(opened) == {1: 2, 2: 4, 3: 2} and opened["payments"]["side2"] == -8
    assert main([*argv, "--open", "1,2,3", "--kong-discard"]) == 0
    assert "kong_discard" in [f["key"] for f in json.loads(capsys.readouterr().out)["fans"]]
    # a kong another side made is paid too (明杠 2 from each)
    assert main([*argv, "--open", "2,3", "--seat-melds", "1=k9p@3"]) == 0
    money = json.loads(capsys.readouterr().out)["money"]
    assert sorted(m["reason"] for m in money) == ["melded_kong", "melded_kong", "melded_kong", "win"]
    with pytest.raises(SystemExit) as exit_:
        main(["diag", "--sim", "judge", "--side", "0", "--tile", "6p", "--seat-melds", "5=p1m"])
    assert exit_.value.code == 2 and "SIDE=SETS" in capsys.readouterr().err


def test_judge_a_hand_record_file_and_the_hand_tool(tmp_path, capsys):
    record = {"rules": "competition", "chips": [100, 100, 100, 100],
              "actions": ["1 kong 5m from 3", "0 pung E from 3", "0 win N from 2 hand 123345678mN flowers 2"]}
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    assert main(["diag", "--sim", "--rules", "competition", "--json", "judge", "--hand-record", str(path)]) == 0
    a = json.loads(capsys.readouterr().out)
    assert a["legal"] and a["payments"] == {"side0": 56, "side1": 12, "side2": -56, "side3": -12}
    assert main(["diag", "--sim", "judge", "--hand-record", str(path)]) == 1          # an MCR table
    assert "this table plays mcr" in capsys.readouterr().out
    path.write_text(json.dumps(dict(record, actions=["0 win N from 0 hand N"])), encoding="utf-8")
    assert main(["diag", "--sim", "--rules", "competition", "judge", "--hand-record", str(path)]) == 1
    assert "own discard" in capsys.readouterr().out
    assert main(["diag", "--sim", "hand"]) == 1
    assert "no hand is recorded" in capsys.readouterr().out


@pytest.mark.parametrize("request_, words", [
    ({"cmd": "penalty", "side": "1", "kind": "early_draw"}, "side 0..3"),
    ({"cmd": "penalty", "side": 1, "kind": 7}, "has no penalties"),
    ({"cmd": "penalty", "side": 1, "kind": "early_draw", "to": 5}, "side 0..3"),
    ({"cmd": "judge", "side": 1, "tile": "5m", "seat_melds": ["p5m"]}, "seat_melds"),
    ({"cmd": "judge", "side": 1, "tile": "5m", "seat_melds": {"1": "p5m"}}, "another side"),
    ({"cmd": "judge", "side": 1, "tile": "5m", "open": "2"}, "'open'"),
    ({"cmd": "judge", "side": 1, "tile": "5m", "flags": ["robbed"]}, "'flags'"),
    ({"cmd": "judge", "side": 1, "tile": "5m", "liable": 9}, "'liable'"),
    ({"cmd": "judge", "side": 1, "tile": "1f"}, "flower"),
    ({"cmd": "judge", "hand_record": "0 win 5m"}, "JSON object"),
    ({"cmd": "judge", "hand_record": {"rules": "mcr", "actions": ["0 win"]}}, "winning tile"),
    ({"cmd": "judge", "hand_record": {"rules": "mcr", "actions": []}, "record": True}, "judged, not recorded"),
    ({"cmd": "hand", "hand": "3"}, "hand number"),
    ({"cmd": "hand", "hand": 99}, "no recorded result"),
])
def test_careless_referee_requests_are_answered_with_the_reason(request_, words):
    run = SimRun(hands=0)
    run.loop.run_for(3.0)
    answers: list[dict] = []
    DiagCommands(run.session).handle(request_, answers.append)
    run.run_until(lambda: bool(answers), 10)
    run.close()
    assert not answers[0]["ok"] and words in answers[0]["error"], answers[0]
