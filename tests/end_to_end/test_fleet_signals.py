"""``mjtable sim --fleet N --await-assignments`` ends on SIGINT or SIGTERM, with ``--speed`` too.

The cause of the fleet that did not stop: between slices at ``--speed X``
(and while every table waits) the driver waited for the links' clock in
``SimpleQueue.get(timeout=0.02)``; CPython's get, interrupted by a signal
whose handler outlasts the time left (a loaded machine: the handler waits for
the interpreter's lock), goes on waiting with a negative timeout, that is
for ever, and every later signal does the same: only kill -9 ended it.  The
links' clock now waits on an event (a lock's wait takes an expired timeout
as a timeout).  Here: the clock itself with such a handler, in a child
process (it would hang), and the command in a subprocess, SIGTERM'd and
SIGINT'd with and without ``--speed``, with and without a round played: it
exits 0 within seconds with its summary.  Nothing sleeps: the test waits on
the process (with a timeout) and on the broker's messages (against a
deadline).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from firmware.fleet.assignment_auth import sign_assignment
from firmware.fleet.command_auth import hmac_key
from firmware.fleet.topics import TableTopics
from tests.support.fleet_rig import SITE, RawClient, Watcher, wait_for
from tests.support.mosquitto_broker import broker  # noqa: F401 (the fixture)

ROOT = Path(__file__).resolve().parents[2]
SECRET = bytes(range(32))
EXIT_WITHIN_S = 20.0          # (a loaded machine: the drain and the close take a second or two)

_SLOW_HANDLER = """
import signal, time
from sim.link_clock import LinkClock
clock = LinkClock()
heard = []
def handler(*_):
    start = time.monotonic()
    while time.monotonic() < start + 0.05:      # a handler that outlasts the wait's 0.02 s (the GIL, a busy box)
        pass
    heard.append(1)
signal.signal(signal.SIGALRM, handler)
signal.setitimer(signal.ITIMER_REAL, 0.2, 0.2)
while len(heard) < 5:
    clock.wait(0.02)
print("stopped")
"""


def test_the_links_clock_wait_returns_after_a_signal_whose_handler_outlasts_it():
    child = subprocess.run([sys.executable, "-c", _SLOW_HANDLER], cwd=ROOT, capture_output=True, text=True,
                           timeout=30, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert child.returncode == 0 and child.stdout.strip() == "stopped", child.stderr


def _assignment(table: str, hands: int, event: str) -> bytes:
    data = {"id": f"{event}/1/{table}", "event": event, "round": 1, "rules": "mcr", "hands": hands,
            "seats": {"E": "An", "S": "Bo", "W": "Chen", "N": "Dong"}, "ends_at": None}
    return sign_assignment(hmac_key(SECRET), site=SITE, table=table, assignment=data, issued_at=time.time(),
                           expires_at=time.time() + 3600)


def _ended(watcher: Watcher, table: str) -> bool:
    """The round's game ended (its hands played) on ``table``, as the consumer heard it."""
    def seen() -> bool:
        return any(e["kind"] == "game" and e["table"] == table and e["data"].get("event") == "ended"
                   and e["data"].get("reason") == "hands_done" for e in watcher.consumer.events)
    return watcher.lt.call(seen)


@pytest.mark.parametrize("speed, round_played, sig", [
    (None, False, signal.SIGTERM), ("20", False, signal.SIGTERM), ("20", False, signal.SIGINT),
    (None, True, signal.SIGTERM), ("200", True, signal.SIGTERM), ("200", True, signal.SIGINT)])
def test_a_fleet_awaiting_rounds_stops_on_a_signal_with_its_summary(broker, tmp_path, speed,  # noqa: F811
                                                                     round_played, sig):
    event = f"cup-{speed or 'max'}-{sig.name}"        # (its own round: no earlier test's retained one)
    key = tmp_path / "cmd.key"
    key.write_text(f"hmac-sha256:{SECRET.hex()}\n")
    argv = [sys.executable, "-m", "firmware.cli.main", "sim", "--fleet", "2", "--broker", broker.url, "--site", SITE,
            "--await-assignments", "--command-key", str(key), "--quiet", *(["--speed", speed] if speed else [])]
    watcher = Watcher(broker.url)
    hall = RawClient(broker.url, "hall")
    fleet = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        wait_for(lambda: all(watcher.view(t) is not None and watcher.view(t).online for t in ("t001", "t002")),
                 60, "both tables online")
        if round_played:
            assert hall.connect() == (True, "Success")
            assert hall.publish(TableTopics(SITE, "t001").assign, _assignment("t001", 1, event), retain=True)[0]
            wait_for(lambda: _ended(watcher, "t001"), 120, "the round played")
        fleet.send_signal(sig)
        out, err = fleet.communicate(timeout=EXIT_WITHIN_S)
        if round_played:
            assert hall.publish(TableTopics(SITE, "t001").assign, b"", retain=True)[0]     # (withdrawn)
    finally:
        if fleet.poll() is None:
            fleet.kill()
            fleet.communicate()
        hall.close()
        watcher.close()
    assert fleet.returncode == 0, err[-2000:]
    assert f"stopped by {sig.name}: the tables wait for no more rounds" in err
    assert "fleet: 2 tables" in out and "outbox depth 0" in out
    hands = [line.split()[1] for line in out.splitlines() if line.startswith("t00")]
    # (the summary counts a hand when the players see its result, a simulated second after the referee wrote it
    # and the round's end went out: at --speed 200 the signal may come in between)
    assert hands[1] == "0" and hands[0] in (("0", "1") if round_played else ("0",))
