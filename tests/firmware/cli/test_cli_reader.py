"""CLI: ``mjtable sim`` with the reader, ``mjtable diag`` reader tools and enrollment, ``reader-sim`` on a pty."""

import pytest
import json
import threading
import time

from firmware.cli.main import main
from firmware.loop import RealTimeLoop
from sim.reader_pty import PtyReader
from sim.tileset import generated_set


def test_sim_reports_the_wall_check_and_the_reader(tmp_path, capsys):
    report = tmp_path / "r.json"
    assert main(["sim", "--one-cycle", "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert "wall: verified, every tile present exactly once" in out and "reader: 144 tags" in out
    data = json.loads(report.read_text())
    assert data["wall"]["may_rise"] and data["rfid"]["tiles_read"] == 144 and data["rfid"]["sets_verified"] == 1


def test_sim_names_a_foreign_tile(tmp_path, capsys):
    report = tmp_path / "r.json"
    assert main(["sim", "--one-cycle", "--inject", "foreign-tile", "--report", str(report)]) == 0
    data = json.loads(report.read_text())
    assert not data["wall"]["may_rise"] and data["rfid"]["sets_rejected"] == 1
    assert any(p.startswith("foreign: ") and "of set B in set A at side" in p for p in data["wall"]["problems"])
    assert "E82" in [f["code"] for f in data["faults"]]


def test_diag_reader_ping_and_antennas_on_the_simulator(capsys):
    assert main(["diag", "--sim", "reader", "ping"]) == 0
    assert "8 antennas, serial 4D4A0001" in capsys.readouterr().out
    assert main(["diag", "--sim", "--inject", "antenna:3", "reader", "antennas"]) == 1
    out = capsys.readouterr().out
    assert "antenna 3 (head of side 3): FAULT (E81)" in out and "antenna 2 (head of side 2): ok" in out


def test_diag_inventory_names_registered_tiles(capsys):
    assert main(["diag", "--sim", "reader", "inventory", "--antenna", "6"]) == 0
    assert "0 tiles" in capsys.readouterr().out


def test_enroll_on_the_simulator_writes_the_registry(tmp_path, capsys):
    out = tmp_path / "b.csv"
    assert main(["diag", "--sim", "enroll", "--set", "B", "--antenna", "1", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "1m x4, 2m x4" in text and "144/144 8f" in text
    lines = out.read_text().splitlines()
    assert lines[0] == "uid,set,tile" and len(lines) == 145
    assert lines[1] == f"{generated_set('B')[0][0].hex()},B,1m"
    assert main(["diag", "--sim", "enroll", "--set", "B", "--antenna", "1", "--out", str(out)]) == 2
    assert "exists; add --force" in capsys.readouterr().err


@pytest.mark.slow          # real time
def test_a_board_that_is_not_there_is_e80_in_one_line(capsys):
    assert main(["diag", "--port", "/dev/nonexistent-reader", "--link-timeout-s", "0.3", "reader", "ping"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("mjtable: E80 reader on /dev/nonexistent-reader not answering")


@pytest.mark.slow          # real time
def test_diag_talks_to_the_board_over_a_pseudo_terminal(capsys):
    loop = RealTimeLoop(time.monotonic)
    server = PtyReader(loop)
    server.pads[4] = [uid for uid, _ in generated_set("A")[:3]]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        assert main(["diag", "--port", server.path, "reader", "ping"]) == 0
        assert f"reader on {server.path}: protocol 1" in capsys.readouterr().out
        assert main(["diag", "--port", server.path, "reader", "inventory", "--antenna", "4"]) == 0
        out = capsys.readouterr().out
        assert "3 tiles" in out and "1m (set A)" in out
    finally:
        loop.stop()
        thread.join(timeout=2)
        server.close()


def test_diag_counters_show_line_quality(capsys):
    assert main(["diag", "--sim", "--inject", "rfid-noise=0.02", "--seed", "3", "reader", "counters",
                 "--seconds", "20"]) == 0
    rows = dict(line.split() for line in capsys.readouterr().out.strip().splitlines())
    assert int(rows["heartbeats"]) >= 10 and int(rows["crc_errors"]) > 0 and int(rows["resyncs"]) > 0


@pytest.mark.slow          # real time
def test_reader_sim_command_serves_and_stops(capsys):
    assert main(["reader-sim", "--seconds", "0.2"]) == 0
    assert "simulated reader board on /dev/pts/" in capsys.readouterr().out
