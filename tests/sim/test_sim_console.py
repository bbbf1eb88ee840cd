"""``mjtable sim``'s console: a software error's traceback off the console, the service-mode bar's unit,
and a simulated parlour with faults (``--fleet`` with ``--inject`` and ``--report``)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path


from firmware.cli.main import main

ROOT = Path(__file__).resolve().parents[2]

# A subscriber of the controller's bus that raises once: the simulated players' deal handler (the controller latches
# E99 for any exception in a subscriber; this does not rely on a bug of the controller's own)
BROKEN_SUBSCRIBER = textwrap.dedent("""
    import sys
    from sim.game_runner import GameRunner
    from firmware.cli.main import main

    real = GameRunner.on_deal
    raised = []

    def on_deal(self, event):
        if not raised:
            raised.append(1)
            raise RuntimeError("injected by the test: a subscriber fails")
        return real(self, event)

    GameRunner.on_deal = on_deal
    sys.exit(main(sys.argv[1:]))
""")


def _sim_with_a_broken_subscriber(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", BROKEN_SUBSCRIBER, "sim", "--hands", "1", "--seed", "1", *argv],
                          capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)


def test_a_software_error_is_one_e99_line_with_its_hint_and_its_traceback_in_a_file(tmp_path):
    """E99 printed a raw traceback on the console, and its line twice (the fault policy's, then the fault's own).
    Now the console has the fault's line with its hint once, saying where the traceback is; the file has it."""
    done = _sim_with_a_broken_subscriber(tmp_path)
    err = done.stderr.replace("\r", "\n")
    assert "Traceback" not in err and not [line for line in err.splitlines() if line.startswith("  File ")], err
    e99 = [line for line in err.splitlines() if line.startswith(("ERROR", "CRITICAL")) and "E99" in line]
    assert len(e99) == 1, e99
    files = sorted(tmp_path.glob("mjtable-sim-*-tracebacks.log"))
    assert len(files) == 1
    assert e99[0].startswith("ERROR firmware.faults: E99 controller software error") and "hint: A bug" in e99[0]
    assert e99[0].endswith(f"(the traceback: {files[0]}; mjtable sim -vv prints it here)")
    kept = files[0].read_text()
    assert "Traceback (most recent call last)" in kept and "RuntimeError: injected by the test" in kept
    assert kept.startswith("ERROR firmware.controller.fault_policy: E99 controller software error in")
    assert f"1 traceback of the run is in {files[0]}" in err
    assert "fault E99 (needs a technician)" in done.stdout        # (the summary, its tier in words)


def test_at_vv_the_console_is_the_log_tracebacks_and_all(tmp_path):
    done = _sim_with_a_broken_subscriber(tmp_path, "-vv")
    err = done.stderr
    assert "Traceback (most recent call last)" in err and "RuntimeError: injected by the test" in err
    assert not list(tmp_path.glob("mjtable-sim-*-tracebacks.log"))


def test_the_service_mode_bar_counts_simulated_seconds_not_hands(capsys, monkeypatch):
    """The bar read "0hand" in service mode, where no hand is played."""
    import logging

    monkeypatch.setattr(logging.getLogger(), "handlers", [])      # (main's own console, as on a terminal)
    assert main(["sim", "--service", "--speed", "50", "--until-s", "5"]) == 0
    err = capsys.readouterr().err.replace("\r", "\n")
    assert "0hand" not in err and "hand/s" not in err, err
    assert "service mode: 100%" in err and "5/5 simulated s" in err
    assert main(["sim", "--hands", "1", "--seed", "1"]) == 0
    err = capsys.readouterr().err.replace("\r", "\n")
    assert re.search(r"1/1 \[.*(hand/s|s/hand)", err), err              # (a game counts its hands, as before)
