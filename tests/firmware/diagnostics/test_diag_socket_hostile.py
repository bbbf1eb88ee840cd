"""The technician's socket against careless and hostile clients.

Whatever a client sends (bytes that are not UTF-8, JSON nested past any
reason, a request line of megabytes, fields of the wrong type, thousands of
idle connections), the server answers it with ``{"ok": false, "error": ...}``
or refuses it, keeps accepting, and the next technician's ``state`` is
answered.  A client that goes away stops the test it started.  (What lies at
the socket's path: test_diag_socket_path.py.)

The server runs with a simulated controller on virtual time; nothing here
sleeps: every wait is a bounded socket timeout or a thread handing over.
"""

from __future__ import annotations

import json
import os
import queue
import resource
import selectors
import socket
import struct
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

from firmware.diagnostics.commands import DiagCommands
from firmware.diagnostics.socket.protocol import MAX_LINE_BYTES, ask
from firmware.diagnostics.socket.server import DiagSocketServer
from hal.runtime import HOST_CLOCK
from sim.table_run import SimRun

WAIT_S = 20.0           # the longest any client here waits for the server (it never needs that long)


@dataclass
class Served:
    run: SimRun
    path: Path
    server: DiagSocketServer | None = None
    requests: "queue.SimpleQueue[dict[str, Any]]" = field(default_factory=queue.SimpleQueue)

    def serve(self, **limits: Any) -> DiagSocketServer:
        """Serve the simulated controller; every request handed to the loop is also put on ``requests``."""
        def post(fn: Callable[..., Any], *args: Any) -> None:
            self.run.fw_loop.post(fn, *args)
            if args and isinstance(args[0], dict):
                self.requests.put(args[0])
        self.server = DiagSocketServer(self.path, post, DiagCommands(self.run.session).handle, group=None,
                                       clock=HOST_CLOCK, **limits)
        self.server.start()
        return self.server

    def while_running(self, client: Callable[[], Any]) -> Any:
        """Run ``client`` in a thread while this one drives the simulated loop."""
        results: list[Any] = []
        errors: list[BaseException] = []

        def target() -> None:
            try:
                results.append(client())
            except BaseException as exc:  # noqa: BLE001 - handed to the test
                errors.append(exc)
        thread = threading.Thread(target=target)
        thread.start()
        while thread.is_alive():
            self.run.loop.run_for(0.05)
            thread.join(timeout=0.001)
        if errors:
            raise errors[0]
        return results[0]

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.while_running(lambda: ask(self.path, request, timeout_s=WAIT_S))

    def handed_over(self, cmd: str) -> dict[str, Any]:
        """The next request with this ``cmd`` that the server handed to the loop (waits for it)."""
        while True:
            request = self.requests.get(timeout=WAIT_S)
            if request.get("cmd") == cmd:
                return request


@pytest.fixture
def table(tmp_path):
    run = SimRun(hands=0, service=True)
    run.loop.run_for(2.0)
    served = Served(run, tmp_path / "diag.sock")
    yield served
    if served.server is not None:
        served.server.stop()
    run.close()


def _connect(path: Path, sock: socket.socket | None = None) -> socket.socket:
    """A connection as ``ask`` makes it: a blocking connect waits (bounded) while the server's queue of
    connections to accept is full, where a connect with a timeout would fail at once."""
    sock = sock or socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", int(WAIT_S), 0))
    sock.connect(str(path))
    sock.settimeout(WAIT_S)
    return sock


def _lines(sock: socket.socket, count: int) -> list[dict[str, Any]]:
    """The next ``count`` reply lines (fewer if the server closes first)."""
    data = b""
    while data.count(b"\n") < count:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
    return [json.loads(line) for line in data.split(b"\n")[:count] if line]


def _closed(sock: socket.socket) -> bool:
    """The server closed this connection (end of file, or a reset for what it left unread)."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def _exchange(path: Path, payload: bytes, count: int = 1) -> list[dict[str, Any]]:
    with _connect(path) as sock:
        sock.sendall(payload)
        return _lines(sock, count)


# -- what a client sends ----------------------------------------------------------------------------------
BAD_LINES = [
    (b"\xff\xfe{}\n", "UTF-8"),
    (b"[" * 50_000 + b"\n", "bad request"),                  # nested past the parser's depth
    (b"[1, 2]\n", "a request is a JSON object"),
    (b"not json at all\n", "bad request"),
    (b"\n", "bad request"),
    (b'{"cmd": "state", "timeout_s": -5}\n', "timeout_s"),
    (b'{"cmd": "state", "timeout_s": 0}\n', "timeout_s"),
    (b'{"cmd": "state", "timeout_s": 1e-9}\n', "between 0.1 and"),
    (b'{"cmd": "state", "timeout_s": NaN}\n', "timeout_s"),
    (b'{"cmd": "jog", "lease_s": 0.01}\n', "lease_s between 0.2 and 10"),
    (b'{"cmd": "jog", "lease_s": "1"}\n', "lease_s"),
    (b'{"cmd": "state", "timeout_s": 1e400}\n', "timeout_s"),
    (b'{"cmd": "state", "timeout_s": 1e9}\n', "timeout_s"),
    (b'{"cmd": "state", "timeout_s": "60"}\n', "timeout_s"),
    (b'{"cmd": "state", "timeout_s": true}\n', "timeout_s"),
    (b'{"cmd": "jog", "lease_s": 1' + b"0" * 400 + b'}\n', "lease_s between 0.2 and 10"),     # too large for a float
    (b'{"cmd": "subscribe", "tick_s": 1' + b"0" * 400 + b'}\n', "tick_s between"),
    (b'{"cmd": "state", "timeout_s": -1' + b"0" * 400 + b'}\n', "timeout_s between"),
]


def test_every_bad_line_is_answered_and_the_connection_goes_on(table):
    table.serve()
    with _connect(table.path) as sock:
        sock.sendall(b"".join(line for line, _ in BAD_LINES))       # pipelined: one answer per line, in order
        answers = _lines(sock, len(BAD_LINES))
        assert len(answers) == len(BAD_LINES)
        for (line, words), answer in zip(BAD_LINES, answers):
            assert answer["ok"] is False and words in answer["error"], (line[:40], answer)
        sock.sendall(b'{"cmd": "state"}\n')                          # the same connection still works
        assert table.while_running(lambda: _lines(sock, 1))[0]["state"] == "service"


BAD_FIELDS = [
    ({"cmd": 5}, "unknown command"),
    ({"cmd": ["state"]}, "unknown command"),
    ({"cmd": "jog", "mechanism": "turntable", "seconds": "5"}, "seconds"),
    ({"cmd": "jog", "mechanism": "turntable", "seconds": float("inf")}, "seconds"),
    ({"cmd": "jog", "mechanism": ["stacker0"]}, "mechanism"),
    ({"cmd": "burn-in", "cycles": "many"}, "cycles"),
    ({"cmd": "burn-in", "cycles": True}, "cycles"),
    ({"cmd": "learn", "runs": 2.5}, "runs"),
    ({"cmd": "watch", "seconds": float("nan")}, "seconds"),
    ({"cmd": "test", "name": {"a": 1}}, "unknown test"),
]


def test_request_fields_of_the_wrong_type_are_answered(table):
    table.serve()
    for request, words in BAD_FIELDS:
        answer = table.ask(request)
        assert answer["ok"] is False and words in answer["error"], (request, answer)
    assert table.run.controller.service_test.current is None and table.run.controller.table.motors_safe()
    assert table.ask({"cmd": "state"})["ok"]


@pytest.mark.parametrize("payload", [b"[" * 100_000, b"x" * (4 << 20), b'{"cmd": "' + b"a" * 70_000 + b'"}\n'])
def test_a_line_longer_than_the_bound_is_refused_and_the_connection_closed(table, payload):
    """A megabyte line without a newline is not buffered: past 64 KiB the server answers and hangs up."""
    table.serve()
    with _connect(table.path) as sock:
        try:
            sock.sendall(payload)
            sent_all = True
        except (BrokenPipeError, ConnectionResetError):
            sent_all = False                         # the server stopped reading long before the end
        answer = _lines(sock, 1)
        assert answer and not answer[0]["ok"] and f"longer than {MAX_LINE_BYTES} bytes" in answer[0]["error"]
        assert _closed(sock)
    if len(payload) > 1 << 20:
        assert not sent_all
    assert table.ask({"cmd": "state"})["ok"]


# -- connections -----------------------------------------------------------------------------------------
def _room_for(files: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < files:
        if hard != resource.RLIM_INFINITY and hard < files:
            pytest.skip(f"this machine allows {hard} open files, the test needs {files}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (files, hard))


def test_two_thousand_connections_are_capped_and_the_server_keeps_serving(table):
    clients = 2000
    _room_for(clients + 512)
    server = table.serve(max_connections=32)
    socks: list[socket.socket] = []
    try:
        for _ in range(clients):
            socks.append(_connect(table.path))
        # the first 32 are served (and idle); every other one is told why and closed
        with selectors.DefaultSelector() as sel:
            for sock in socks:
                sel.register(sock, selectors.EVENT_READ)
            refused: set[socket.socket] = set()
            while len(refused) < clients - 32:
                events = sel.select(timeout=WAIT_S)
                assert events, f"only {len(refused)} refusals"
                for key, _ in events:
                    sel.unregister(key.fileobj)
                    refused.add(key.fileobj)
        served = [s for s in socks if s not in refused]
        assert len(served) == 32 and served == socks[:32]
        for sock in list(refused)[:50]:
            answer = _lines(sock, 1)[0]
            assert not answer["ok"] and "too many connections" in answer["error"]
            assert _closed(sock)
        assert server.connections == 32 and server.serving
        # the held ones still work; once they are gone, a newcomer is served
        served[0].sendall(b'{"cmd": "state"}\n')
        assert table.while_running(lambda: _lines(served[0], 1))[0]["state"] == "service"
    finally:
        for sock in socks:
            sock.close()
    assert server.wait_connections(0, WAIT_S)
    assert table.ask({"cmd": "state"})["ok"]


def test_out_of_file_descriptors_the_server_refuses_and_keeps_accepting(table):
    """``accept`` failing with EMFILE does not end the accept loop: the clients are told, and once
    descriptors are free again the next one is served."""
    server = table.serve()
    socks = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(3)]   # their descriptors first
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lowest_free = os.open(os.devnull, os.O_RDONLY)
    os.close(lowest_free)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (lowest_free, hard))          # no new descriptor anywhere
        answers = []
        for sock in socks:
            answers += _lines(_connect(table.path, sock), 1)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        for sock in socks:
            sock.close()
    assert [a["ok"] for a in answers] == [False] * 3
    assert all("file descriptors" in a["error"] for a in answers)
    assert server.serving
    answer = table.ask({"cmd": "state"})
    assert answer["ok"], answer


def test_an_idle_connection_is_closed_but_a_waiting_request_is_not(table):
    table.serve(idle_timeout_s=0.2)
    with _connect(table.path) as idle:
        answer = _lines(idle, 1)[0]                  # nothing sent: after 0.2 s the server says so and hangs up
        assert not answer["ok"] and "idle" in answer["error"]
        assert _closed(idle)
    with _connect(table.path) as waiting:            # the loop is not driven: the controller cannot answer
        waiting.sendall(b'{"cmd": "state", "timeout_s": 0.5}\n')
        answer = _lines(waiting, 1)[0]               # answered at its own timeout, not closed as idle
        assert not answer["ok"] and "did not answer within 0.5 s" in answer["error"]
    assert table.ask({"cmd": "state"})["ok"]


def _handed_over_now(table: Served, cmd: str) -> int:
    """How many requests with this ``cmd`` the server has handed to the loop since the last count."""
    count = 0
    while not table.requests.empty():
        count += table.requests.get_nowait().get("cmd") == cmd
    return count


def test_requests_with_tiny_timeouts_cannot_fill_the_loops_queue(table):
    """A client that times out and asks again, and again: a connection takes its next request only once the
    loop has run the last one, and all clients together have at most ``max_queued`` waiting on the loop."""
    table.serve(max_queued=4)
    hog = _connect(table.path)                       # the loop is not driven: nothing posted is run
    hog.sendall(b'{"cmd": "state", "timeout_s": 0.1}\n' + b'{"cmd": "state", "timeout_s": 20}\n' * 2)
    answer = _lines(hog, 1)[0]
    assert not answer["ok"] and "did not answer within 0.1 s" in answer["error"]
    assert "not subscribed" in _exchange(table.path, b'{"cmd": "unsubscribe"}\n')[0]["error"]   # (caught up)
    assert _handed_over_now(table, "state") == 1     # its next line waits: the first is still on the loop's queue

    others = [_connect(table.path) for _ in range(5)]
    for sock in others:
        sock.sendall(b'{"cmd": "state", "timeout_s": 0.1}\n')
    answers = [_lines(sock, 1)[0] for sock in others]
    busy = [a for a in answers if "busy" in a.get("error", "")]
    assert len(busy) == 2 and "4 requests wait for the controller's loop" in busy[0]["error"]
    assert sum("did not answer within 0.1 s" in a.get("error", "") for a in answers) == 3
    assert _handed_over_now(table, "state") == 3     # 1 + 3: the cap

    rest = table.while_running(lambda: _lines(hog, 2))   # the loop runs what waits: the hog's next lines go on
    assert [a["ok"] for a in rest] == [True, True]
    for sock in [hog, *others]:
        sock.close()
    assert table.ask({"cmd": "state"})["ok"]


# -- stopping a test ----------------------------------------------------------------------------------------
def test_a_client_that_goes_away_stops_its_test(table):
    """Ctrl-C on ``diag burn-in``: the connection closes before the answer, the burn-in stops,
    every motor is safe and the next test is not refused "still moving"."""
    table.serve()
    c = table.run.controller
    sock = _connect(table.path)
    sock.sendall(b'{"cmd": "burn-in", "cycles": 500, "timeout_s": 3600}\n')
    table.handed_over("burn-in")
    table.run.loop.run_for(5.0)                      # the burn-in is under way
    assert c.service_test.current is not None and c.table.moving()
    sock.close()
    gone = table.handed_over("stop")
    assert gone["client_gone"] is True
    table.run.loop.run_for(0.0)                      # the loop takes the stop
    assert c.service_test.current is None and c.table.motors_safe() and not c.table.moving()
    runs = [m.runs for m in c.table.mechanisms()]
    table.run.loop.run_for(60.0)
    assert [m.runs for m in c.table.mechanisms()] == runs          # nothing of it moves any more
    assert table.ask({"cmd": "jog", "mechanism": "wall_lift0"})["ok"]


def test_a_held_jog_whose_client_stalls_is_stopped_by_its_lease(table):
    """The web page's process frozen with its connection open: keep-alives (any byte) renew a held request's
    lease; when they stop, the server stops the client's test as if it had gone, and says so."""
    table.serve()
    c = table.run.controller
    sock = _connect(table.path)
    sock.sendall(b'{"cmd": "jog", "mechanism": "turntable", "hold": true, "lease_s": 0.3, "timeout_s": 600}\n')
    table.handed_over("jog")
    table.run.loop.run_for(1.0)
    assert c.table.moving()                          # the disk turns while the button is held
    for _ in range(8):                               # 0.8 s of keep-alives: longer than the lease, no stop
        sock.sendall(b"\n")
        with pytest.raises(queue.Empty):
            table.requests.get(timeout=0.1)
    gone = table.handed_over("stop")                 # then nothing: the lease runs out
    assert gone["client_gone"] is True
    answer = _lines(sock, 1)[0]
    assert not answer["ok"] and "sent nothing for 0.3 s" in answer["error"]
    table.run.loop.run_for(0.5)
    assert not c.table.moving() and c.table.motors_safe()
    sock.close()
    assert table.ask({"cmd": "state"})["ok"]


def test_the_web_pages_user_may_send_only_what_the_page_needs(table, monkeypatch):
    """The kernel names the user of each connection: the web service's user is refused what moves money or
    runs for hours (a web process taken over is not a technician at a terminal)."""
    import firmware.diagnostics.socket.server as diag_socket
    from firmware.web.control import COMMANDS_USED

    table.serve(limited={os.getuid(): COMMANDS_USED})
    assert table.ask({"cmd": "state"})["ok"]
    for request in ({"cmd": "penalty", "side": 1, "kind": "early_draw"}, {"cmd": "burn-in", "cycles": 500},
                    {"cmd": "learn"}, {"cmd": "counters", "reset": True}, {"cmd": "drawn"}):
        answer = table.ask(request)
        may = "is not for this client (it may: ack, bundle, faults, game, jog, log, players, session, state"
        assert not answer["ok"] and may in answer["error"], answer
    assert _handed_over_now(table, "penalty") == 0 and _handed_over_now(table, "burn-in") == 0
    table.server.stop()
    monkeypatch.setattr(diag_socket, "peer_uid", lambda sock: None)      # a peer the kernel cannot name
    table.serve(limited={12345: COMMANDS_USED})
    assert "is not for this client" in table.ask({"cmd": "state"})["error"]


def test_every_command_the_web_page_sends_is_one_its_user_may():
    import re

    sent = {m for path in Path("firmware/web").glob("*.py")
            for m in re.findall(r'"cmd": "([a-z_-]+)"', path.read_text(encoding="utf-8"))}
    from firmware.web.control import COMMANDS_USED
    assert {"ack", "stop", "jog", "test", "subscribe"} <= sent and sent <= COMMANDS_USED


def test_limits_are_for_the_users_that_exist(caplog):
    from firmware.diagnostics.socket.peers import limits_for_users

    caplog.set_level("INFO", logger="firmware.diagnostics.socket.peers")
    assert limits_for_users({"root": frozenset({"state"}), "no-such-user-here": frozenset({"state"})}) == \
        {0: frozenset({"state"})}
    assert "no user no-such-user-here" in caplog.text


def test_diag_stop_stops_another_clients_test(table):
    table.serve()
    c = table.run.controller
    burn_in: list[dict[str, Any]] = []
    client = threading.Thread(target=lambda: burn_in.append(ask(table.path, {"cmd": "burn-in", "cycles": 500},
                                                                 timeout_s=3600)))
    client.start()
    table.handed_over("burn-in")
    table.run.loop.run_for(5.0)
    assert c.service_test.current is not None
    stopped = table.ask({"cmd": "stop"})
    assert stopped["ok"] and stopped["stopped"] == "burn-in"
    client.join(timeout=WAIT_S)
    assert not burn_in[0]["ok"] and burn_in[0]["stopped_by"] == "technician"
    assert "stopped" in burn_in[0]["error"] and c.table.motors_safe()
    assert table.ask({"cmd": "stop"}) == {"ok": True, "note": "no service test was running"}
    assert table.ask({"cmd": "test", "name": "lifts"})["ok"]


def test_a_stopped_learn_keeps_the_learned_times(table):
    table.serve()
    c = table.run.controller
    before = {m.name: list(m.nominal.samples) for m in c.table.mechanisms()}
    learning: list[dict[str, Any]] = []
    DiagCommands(table.run.session).handle({"cmd": "learn", "runs": 9}, learning.append)
    table.run.loop.run_for(20.0)
    assert c.service_test.current is not None
    assert table.ask({"cmd": "stop"})["stopped"] == "learn"
    assert learning and learning[0]["stopped_by"] == "technician"
    assert {m.name: list(m.nominal.samples) for m in c.table.mechanisms()} == before


def test_after_a_stopped_disk_run_the_disk_waits_for_its_old_timer(table):
    """A stopped ``jog turntable --seconds 30`` still has its end timed on the loop: a new disk run
    is refused until then (that timer would stop it), other mechanisms are not."""
    table.serve()
    c = table.run.controller
    jog: list[dict[str, Any]] = []
    DiagCommands(table.run.session).handle({"cmd": "jog", "mechanism": "turntable", "seconds": 30}, jog.append)
    table.run.loop.run_for(5.0)
    assert c.table.turntable.running
    assert table.ask({"cmd": "stop"})["stopped"] == "jog turntable"
    assert not c.table.turntable.running
    again = table.ask({"cmd": "jog", "mechanism": "turntable", "seconds": 5})
    assert not again["ok"] and "the stopped disk run" in again["error"]
    assert table.ask({"cmd": "jog", "mechanism": "stacker0"})["ok"]
    table.run.loop.run_for(30.0)
    assert table.ask({"cmd": "jog", "mechanism": "turntable", "seconds": 5})["ok"]
