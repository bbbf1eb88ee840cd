"""Subscriptions on the technician's socket: a snapshot, then only changed fields, capped, bounded.

The server runs against a simulated game on virtual time, driven by this
thread while the clients read in theirs.  A subscriber's merged patches are
the controller's status; every field a patch names has changed; patches are
at least ``tick_s`` apart; twenty subscribers cost the loop one status
request per tick; a subscriber that reads nothing is dropped with the
reason while the other clients are served; ``mjtable diag`` subscribes too.
"""

from __future__ import annotations

import io
import json
import socket
import threading
import time
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any, Callable

import pytest

from firmware.cli.main import main
from firmware.diagnostics.commands import DiagCommands
from firmware.diagnostics.socket.protocol import ask, subscribe
from firmware.diagnostics.socket.server import DiagSocketServer
from firmware.diagnostics.socket.protocol import BadRequest
from firmware.diagnostics.socket.subscriptions import Feed, changed, parse_subscribe
from hal.runtime import HOST_CLOCK
from sim.table_run import SimRun

WAIT_S = 30.0


class Served:
    def __init__(self, tmp_path: Path, **limits: Any) -> None:
        self.run = SimRun(hands=3, play=True)
        self.path = tmp_path / "diag.sock"
        self.status_requests = 0

        def post(fn: Callable[..., Any], *args: Any) -> None:
            if args and isinstance(args[0], dict) and args[0].get("cmd") == "status":
                self.status_requests += 1
            self.run.fw_loop.post(fn, *args)
        self.server = DiagSocketServer(self.path, post, DiagCommands(self.run.session).handle, group=None,
                                       clock=HOST_CLOCK, **limits)
        self.server.start()

    def drive(self, clients: list[threading.Thread], step_s: float = 0.02) -> None:
        """Run the simulated table while the client threads run (bounded by a wall-clock limit)."""
        for client in clients:
            client.start()
        deadline = time.monotonic() + WAIT_S
        while any(c.is_alive() for c in clients):
            assert time.monotonic() < deadline, "the clients did not finish"
            self.run.loop.run_for(step_s)
            clients[0].join(timeout=0.001)

    def close(self) -> None:
        self.server.stop()
        self.run.close()


@pytest.fixture
def served(tmp_path):
    table = Served(tmp_path)
    yield table
    table.close()


def _collect(path: Path, lines: int, out: list, **kw: Any) -> threading.Thread:
    def read() -> None:
        for message in subscribe(path, **kw):
            out.append((time.monotonic(), message))
            if len(out) >= lines:
                return
    return threading.Thread(target=read)


def test_a_snapshot_then_only_changed_fields_that_add_up_to_the_status(served):
    got: list[tuple[float, dict]] = []
    served.drive([_collect(served.path, 25, got, tick_s=0.2)])
    first = got[0][1]
    assert first["ok"] and first["tick_s"] == 0.2
    state = {name: dict(fields) for name, fields in first["snapshot"].items()}
    assert set(state) == {"table", "book", "stacking", "reader", "faults", "chips", "sensors", "deal", "round",
                          "session", "warnings"}
    patches = [m for _, m in got[1:] if "patch" in m]
    assert len(patches) >= 10
    for patch in patches:
        for name, fields in patch["patch"].items():
            assert fields and all(state[name].get(k) != v for k, v in fields.items()), "a field sent unchanged"
            state[name].update(fields)
    times = [t for t, m in got[1:] if "patch" in m]
    # capped: never faster than tick_s.  The times are the client's, on arrival: a patch held up on a loaded machine
    # arrives close to the next one (one short gap, and a long one before it), so the median gap is what is checked
    # (a server sending at every loop step would give gaps of 0.02 s throughout)
    gaps = sorted(b - a for a, b in zip(times, times[1:]))
    assert gaps[len(gaps) // 2] >= 0.2 * 0.9, gaps
    assert {name: set(fields) for name, fields in state.items()} == \
        {name: set(fields) for name, fields in first["snapshot"].items()}


def test_merged_patches_are_the_latest_status_and_changes_between_ticks_are_coalesced():
    feed = Feed(heartbeat_s=5.0)
    feed.add(7, 0.25, None, now_s=0.0)
    assert feed.should_ask(0.0)
    feed.asked(0.0)
    assert not feed.should_ask(0.1)                            # one request under way at a time
    feed.answered({"ok": True, "status": {"book": {"hand": 1, "dealer": 0}}, "at_s": 10.0}, 0.05)
    (number, snapshot), = feed.lines(0.05, set())[0]
    assert number == 7 and snapshot["snapshot"] == {"book": {"hand": 1, "dealer": 0}}
    feed.answered({"ok": True, "status": {"book": {"hand": 2, "dealer": 0}}, "at_s": 11.0}, 0.1)
    assert feed.lines(0.1, set()) == ([], [])                  # not due yet: the change waits
    feed.answered({"ok": True, "status": {"book": {"hand": 3, "dealer": 1}}, "at_s": 12.0}, 0.2)
    assert feed.lines(0.3, {7}) == ([], [])                    # its last line not written yet: nothing new
    lines, _ = feed.lines(0.35, set())
    assert lines == [(7, {"patch": {"book": {"hand": 3, "dealer": 1}}, "at_s": 12.0})]
    assert feed.lines(5.4, set())[0][0][1]["heartbeat"]        # nothing changed for heartbeat_s
    assert feed.lines(6.0, {7}) == ([], [])
    assert feed.lines(6.0 + feed.stalled_s, {7}) == ([], [7])  # stalled that long: dropped


def test_twenty_subscribers_cost_the_loop_one_status_request_per_tick(served):
    outs: list[list] = [[] for _ in range(20)]
    clients = [_collect(served.path, 8, out, tick_s=0.25, components=["book", "stacking"]) for out in outs]
    started = time.monotonic()
    served.drive(clients)
    elapsed_s = time.monotonic() - started
    assert all(out[0][1]["ok"] and set(out[0][1]["snapshot"]) == {"book", "stacking"} for out in outs)
    ticks = elapsed_s / 0.25
    # one per tick for all twenty (a loaded machine may fit a few more ticks in), not twenty per tick
    assert served.status_requests <= 2 * ticks + 5 < 20 * ticks
    assert all(set(m.get("patch", {})) <= {"book", "stacking"} for out in outs for _, m in out)


def test_a_subscriber_that_reads_nothing_is_dropped_and_the_others_served(tmp_path):
    table = Served(tmp_path, stalled_s=0.3, heartbeat_s=0.2, subscriber_sndbuf_bytes=4096)
    try:
        sleeper = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sleeper.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sleeper.connect(str(table.path))
        sleeper.sendall(b'{"cmd": "subscribe", "tick_s": 0.2}\n')
        assert table.server.wait_subscribers(1, WAIT_S)
        dropped = threading.Thread(target=lambda: table.server.wait_subscribers(0, WAIT_S))
        table.drive([dropped], step_s=0.5)
        assert table.server.subscribers == 0
        answers: list[dict] = []
        table.drive([threading.Thread(target=lambda: answers.append(ask(table.path, {"cmd": "state"}, 10)))])
        assert answers[0]["ok"]
        sleeper.settimeout(WAIT_S)
        with sleeper.makefile("rb") as stream:
            lines = [json.loads(line) for line in stream]        # everything queued, then the server closes
        assert lines[0]["ok"] and "snapshot" in lines[0]
        assert lines[-1]["ok"] is False and "too slow" in lines[-1]["dropped"]
    finally:
        table.close()


def test_bad_subscriptions_and_requests_on_a_subscribed_connection(served):
    with pytest.raises(BadRequest, match="tick_s between"):
        parse_subscribe({"tick_s": 0.01})
    with pytest.raises(BadRequest, match="components"):
        parse_subscribe({"components": "book"})
    assert changed({"a": {"x": 1, "y": 2}}, {"a": {"x": 1, "y": 3}, "b": {"z": 0}}) == {"a": {"y": 3}, "b": {"z": 0}}
    replies: list[dict] = []

    def client() -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(str(served.path))
            sock.settimeout(WAIT_S)
            stream = sock.makefile("rwb")
            for request in ({"cmd": "subscribe", "tick_s": 0.001}, {"cmd": "unsubscribe"},
                            {"cmd": "subscribe", "components": ["nope"]},
                            {"cmd": "subscribe", "components": ["chips"], "tick_s": 5}, {"cmd": "state"},
                            {"cmd": "unsubscribe"}):
                stream.write(json.dumps(request).encode() + b"\n")
                stream.flush()
                replies.append(json.loads(stream.readline()))
    served.drive([threading.Thread(target=client)])
    assert "tick_s between" in replies[0]["error"]
    assert replies[1] == {"ok": False, "error": "not subscribed"}
    assert "no status component 'nope'" in replies[2]["error"]
    assert replies[3]["ok"] and set(replies[3]["snapshot"]) == {"chips"}
    assert "takes only unsubscribe" in replies[4]["error"]
    assert replies[5] == {"ok": True, "unsubscribed": True}


def test_mjtable_diag_status_once_and_followed(served):
    outputs: list[str] = []

    def run(*argv: str) -> None:
        buffer = io.StringIO()
        with redirect_stdout(buffer):
            code = main(["diag", "--socket", str(served.path), *argv])
        outputs.append(f"{code}\n{buffer.getvalue()}")
    served.drive([threading.Thread(target=run, args=("status",))])
    served.drive([threading.Thread(target=run, args=("status", "--follow", "--lines", "3", "--component", "book"))])
    once, followed = outputs
    assert once.startswith("0\n") and "book:" in once and "chips:" in once and "  hand: " in once
    assert followed.startswith("0\n") and "snapshot at" in followed and "chips:" not in followed
