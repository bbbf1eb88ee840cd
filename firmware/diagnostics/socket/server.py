"""The technician's local socket: JSON lines over a Unix stream socket, answered on the loop.

The service opens it (``/run/mjtable/diag.sock``); the file is mode 0660 and,
when the group exists, owned by the technicians' group, so only root and
that group may connect.  Each connection sends one JSON request per line
and gets one JSON line back per request, in order; the request is posted to
the controller's loop and its answer written back when the loop has
answered (or an error at the request's ``timeout_s``): :mod:`firmware.diagnostics.socket.requests`
takes the requests (admitted or refused, posted, answered or given up); this
server accepts, reads, writes, closes and keeps time (on the ``clock`` it is
given: the host's monotonic seconds).

One thread serves every connection (a selector), within fixed limits, so
that no client, careless or hostile, can take the controller down:

* at most ``max_connections`` at once (32); one more is answered
  ``{"ok": false, "error": "too many connections ..."}`` and closed;
* a request line is at most ``max_line_bytes`` (64 KiB): a longer one is
  answered with an error and the connection closed (nothing longer is kept);
* a connection that sends nothing for ``idle_timeout_s`` (60 s) while no
  request of its own is under way is told so and closed;
* at most ``max_queued`` requests (64) of all clients together wait on the
  loop (posted, not yet run): one more is answered ``{"ok": false, "error":
  "busy ..."}``; a connection whose request timed out takes its next one
  only once the loop has run that request, so a client that asks again and
  again with short timeouts cannot fill the loop's queue;
* every line that is not a request (not UTF-8, not JSON, nested too deep,
  not an object, a ``timeout_s`` that is not a number of seconds within
  0.1 s..4 h) is answered with ``{"ok": false, "error": ...}``;
* running out of file descriptors does not end the accept loop: the client
  is told, the server backs off briefly and goes on accepting.

A connection that closes while its request is under way (the technician
pressed Ctrl-C, or the request timed out) posts ``{"cmd": "stop",
"client_gone": true}`` for it: a service test it started stops like a
hold-to-run button let go.  A held request may carry a lease
(``"lease_s"``): while it is under way, every byte the client sends renews
it (and is otherwise ignored), and a lease that runs out stops the test the
same way: a client that stalls without closing (the web page's process
frozen) cannot keep a motor running.  Requests carry ``"client"``, the connection's
number, set by the server (whatever the client sent), so that the stop
touches only that client's test.

A user named in ``limited`` (the web page's) may send only the commands
given for it (:mod:`firmware.diagnostics.socket.peers`).

A connection may subscribe to the controller's status instead: a snapshot,
then only the changed fields on a capped tick, one status request on the
loop for every subscriber together, and a subscriber that stops reading is
dropped (:mod:`firmware.diagnostics.socket.subscriptions` decides; this server keeps time).

At start the path is replaced only if it holds a stale socket (one nobody
answers on): a live socket, a file, a folder or a link there is an error
naming the path, and nothing is removed (:mod:`firmware.diagnostics.socket.path`).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import queue
import selectors
import socket
import threading
from pathlib import Path
from typing import Any, Callable

from firmware.diagnostics.socket.feed import FeedServing
from firmware.diagnostics.socket.path import DiagSocketError, listening_socket, remove_own_socket
from firmware.diagnostics.socket.peers import peer_uid
from firmware.diagnostics.socket.protocol import MAX_LINE_BYTES
from firmware.diagnostics.socket.requests import Reply, RequestServing
from firmware.diagnostics.socket.subscriptions import HEARTBEAT_S, STALLED_S, Feed
from firmware.ports.clock import Clock
from firmware.refusals import worded_answer

__all__ = ["DiagSocketError", "DiagSocketServer"]

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 32
MAX_QUEUED = 64                      # client requests posted to the loop and not yet run, all clients together
IDLE_TIMEOUT_S = 60.0
BACKLOG = 64
ACCEPT_BACKOFF_S = 0.1               # out of descriptors with nothing to spare: try again after this
_RECV_BYTES = 64 * 1024
_OUT_OF_FILES = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
SUBSCRIBER_SNDBUF_BYTES = 64 * 1024  # what the kernel holds for a subscriber that does not read (then: stalled)


class _Connection:
    __slots__ = ("sock", "number", "inbox", "outbox", "waiting", "queued", "deadline", "timeout_s",
                 "last_active", "closing", "lease_s", "lease_until", "allowed")

    def __init__(self, sock: socket.socket, number: int, now: float) -> None:
        self.sock = sock
        self.number = number
        self.inbox = bytearray()
        self.outbox = bytearray()
        self.waiting: int | None = None          # the request under way (its number), None: none
        self.queued: int | None = None           # its request the loop has not run yet (even if timed out)
        self.deadline = 0.0                      # when the request under way is given up
        self.timeout_s = 0.0
        self.last_active = now
        self.closing = False                     # close once the outbox is written
        self.lease_s: float | None = None        # the request under way is held: renewed by any byte sent
        self.lease_until = 0.0
        self.allowed: frozenset[str] | None = None    # the commands its user may send (None: any)


class DiagSocketServer(RequestServing, FeedServing):
    def __init__(self, path: str | Path, post: Callable[..., None],
                 handle: Callable[[dict[str, Any], Reply], None],
                 group: str | None = "mjtable-tech", mode: int = 0o660, *, clock: Clock,
                 max_connections: int = MAX_CONNECTIONS, max_queued: int = MAX_QUEUED,
                 idle_timeout_s: float = IDLE_TIMEOUT_S,
                 max_line_bytes: int = MAX_LINE_BYTES, stalled_s: float = STALLED_S,
                 heartbeat_s: float = HEARTBEAT_S, subscriber_sndbuf_bytes: int = SUBSCRIBER_SNDBUF_BYTES,
                 limited: dict[int, frozenset[str]] | None = None) -> None:
        self.path = Path(path)
        self._post = post
        self._handle = handle
        self._clock = clock                         # the host's: the server's timeouts, leases and ticks
        self.group, self.mode = group, mode
        self.max_connections = max_connections
        self.max_queued = max_queued
        self.idle_timeout_s = idle_timeout_s
        self.max_line_bytes = max_line_bytes
        self.subscriber_sndbuf_bytes = subscriber_sndbuf_bytes
        self.limited = dict(limited or {})          # uid -> the commands that user's connections may send
        self._feed = Feed(stalled_s=stalled_s, heartbeat_s=heartbeat_s)
        self._sock: socket.socket | None = None
        self._inode: tuple[int, int] | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._selector: selectors.BaseSelector | None = None
        self._wake_r: socket.socket | None = None
        self._wake_w: socket.socket | None = None
        self._wake_lock = threading.Lock()
        self._answers: queue.SimpleQueue[tuple[int, int, Any]] = queue.SimpleQueue()
        self._conns: dict[int, _Connection] = {}
        self._numbers = 0
        self._requests = 0
        self._queued: set[int] = set()             # the client requests posted to the loop and not run yet
        self._reserve: int | None = None         # a descriptor kept to refuse a client when there are none left
        self._accept_paused_until: float | None = None
        self._short_of_files = False               # (logged once until a client is accepted again)
        self._count_changed = threading.Condition()

    # -- opening and closing -----------------------------------------------------------------------
    def start(self) -> None:
        sock, self._inode = listening_socket(self.path, self.mode, self.group, BACKLOG)
        sock.setblocking(False)
        self._sock = sock
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(sock, selectors.EVENT_READ, "listen")
        self._selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._reserve = _spare_descriptor()
        self._thread = threading.Thread(target=self._serve, name="diag-socket", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for conn in list(self._conns.values()):
            self._close(conn)
        if self._selector is not None:
            self._selector.close()
        if self._sock is not None:
            self._sock.close()
        with self._wake_lock:
            for end in (self._wake_r, self._wake_w):
                if end is not None:
                    end.close()
            self._wake_r = self._wake_w = None
        if self._reserve is not None:
            os.close(self._reserve)
            self._reserve = None
        remove_own_socket(self.path, self._inode)

    # -- what a caller may look at -----------------------------------------------------------------
    @property
    def serving(self) -> bool:
        """The accept loop runs."""
        return self._thread is not None and self._thread.is_alive() and not self._stop.is_set()

    @property
    def connections(self) -> int:
        return len(self._conns)

    @property
    def subscribers(self) -> int:
        return len(self._feed.subscribers)

    def wait_subscribers(self, count: int, timeout_s: float) -> bool:
        """Wait until exactly ``count`` connections are subscribed (a test's way to see a drop)."""
        with self._count_changed:
            return self._count_changed.wait_for(lambda: len(self._feed.subscribers) == count, timeout=timeout_s)

    def wait_connections(self, count: int, timeout_s: float) -> bool:
        """Wait until exactly ``count`` connections are open (a test's way to know the server caught up)."""
        with self._count_changed:
            return self._count_changed.wait_for(lambda: len(self._conns) == count, timeout=timeout_s)

    # -- the serving thread ------------------------------------------------------------------------
    def _serve(self) -> None:
        assert self._selector is not None
        while not self._stop.is_set():
            try:
                events = self._selector.select(self._next_timeout())
                for key, mask in events:
                    if key.data == "listen":
                        self._accept()
                    elif key.data == "wake":
                        self._drain_wake()
                    else:
                        self._ready(key.data, mask)
                self._deliver_answers()
                self._feed_tick()
                self._check_times()
            except Exception:  # noqa: BLE001 - the accept loop must not end: log it and go on
                log.exception("diag socket: unexpected error; serving on")
                self._stop.wait(ACCEPT_BACKOFF_S)      # (a repeating error does not spin)

    def _next_timeout(self) -> float | None:
        now = self._clock.monotonic_s()
        times = [self._accept_paused_until] if self._accept_paused_until is not None else []
        for conn in self._conns.values():
            times.append(conn.deadline if conn.waiting is not None else conn.last_active + self.idle_timeout_s)
            if conn.waiting is not None and conn.lease_s is not None:
                times.append(conn.lease_until)
        feed_s = self._feed.next_time(now)
        if feed_s is not None:
            times.append(feed_s)
        return max(0.0, min(times) - now) if times else None

    def _accept(self) -> None:
        assert self._sock is not None
        for _ in range(BACKLOG):                     # what is waiting now, then the other connections' turn
            try:
                sock, _ = self._sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in _OUT_OF_FILES:
                    if not self._refuse_without_descriptors(exc):
                        return
                    continue
                if exc.errno in (errno.ECONNABORTED, errno.EPROTO):
                    continue
                log.warning("diag socket: accept failed (%s); trying again shortly", exc)
                self._pause_accept()
                return
            if len(self._conns) >= self.max_connections:
                _refuse(sock, worded_answer("too many connections (%(count)s open); try again later",
                                            count=self.max_connections))
                continue
            self._short_of_files = False
            self._numbers += 1
            sock.setblocking(False)
            conn = _Connection(sock, self._numbers, self._clock.monotonic_s())
            if self.limited:                         # (a peer the kernel cannot name may do nothing)
                uid = peer_uid(sock)
                conn.allowed = self.limited.get(uid) if uid is not None else frozenset()
            assert self._selector is not None
            self._selector.register(sock, selectors.EVENT_READ, conn)
            self._conns[conn.number] = conn
            self._count_changed_notify()

    def _refuse_without_descriptors(self, exc: OSError) -> bool:
        """No descriptor for a new client: give up the spare one to tell it so; False when that fails
        too (then accepting pauses a moment rather than spinning on the waiting connection)."""
        if not self._short_of_files:
            log.warning("diag socket: out of file descriptors (%s); refusing clients until some are free",
                        exc.strerror)
            self._short_of_files = True
        if self._reserve is not None:
            os.close(self._reserve)
            self._reserve = None
            try:
                assert self._sock is not None
                sock, _ = self._sock.accept()
            except OSError:
                pass
            else:
                _refuse(sock, worded_answer("the controller is out of file descriptors; try again later"))
                self._reserve = _spare_descriptor()
                return self._reserve is not None
            self._reserve = _spare_descriptor()
        self._pause_accept()
        return False

    def _pause_accept(self) -> None:
        assert self._selector is not None and self._sock is not None
        if self._accept_paused_until is None:
            self._selector.unregister(self._sock)
        self._accept_paused_until = self._clock.monotonic_s() + ACCEPT_BACKOFF_S

    def _check_times(self) -> None:
        now = self._clock.monotonic_s()
        if self._accept_paused_until is not None and now >= self._accept_paused_until:
            self._accept_paused_until = None
            if self._reserve is None:
                self._reserve = _spare_descriptor()
            assert self._selector is not None and self._sock is not None
            self._selector.register(self._sock, selectors.EVENT_READ, "listen")
        for conn in list(self._conns.values()):
            if conn.waiting is not None:
                self._check_request(conn, now)
            elif now - conn.last_active >= self.idle_timeout_s:
                if conn.closing or conn.outbox:        # it does not read what it was sent
                    self._close(conn)
                else:
                    self._send(conn, worded_answer("idle for %(idle)s s: closing", idle=f"{self.idle_timeout_s:g}"))
                    self._finish(conn)

    # -- one connection ------------------------------------------------------------------------------
    def _ready(self, conn: _Connection, mask: int) -> None:
        if conn.number not in self._conns:
            return
        if mask & selectors.EVENT_WRITE:
            self._flush(conn)
            self._next_request(conn)
        if mask & selectors.EVENT_READ and conn.number in self._conns and not conn.closing:
            try:
                data = conn.sock.recv(_RECV_BYTES)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data = b""
            if not data:                               # the client went away
                self._give_up(conn)
                self._close(conn)
                return
            conn.last_active = self._clock.monotonic_s()
            if conn.waiting is not None and conn.lease_s is not None:
                conn.lease_until = conn.last_active + conn.lease_s      # a keep-alive: renewed, nothing kept
                return
            conn.inbox += data
            if len(conn.inbox) > 2 * self.max_line_bytes:     # lines sent ahead of the answers: bounded too
                self._give_up(conn)
                self._send(conn, worded_answer("too much sent before the answer; closing"))
                self._finish(conn)
                return
            self._next_request(conn)

    def _send(self, conn: _Connection, answer: Any) -> None:
        try:
            text = json.dumps(answer, default=str, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            text = json.dumps(worded_answer("the answer could not be written: %(why)s", why=str(exc)))
        conn.outbox += text.encode("utf-8", "replace") + b"\n"
        conn.last_active = self._clock.monotonic_s()
        self._flush(conn)

    def _flush(self, conn: _Connection) -> None:
        if conn.number not in self._conns:
            return
        while conn.outbox:
            try:
                sent = conn.sock.send(conn.outbox)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:                            # the client is gone: what it started stops
                self._give_up(conn)
                self._close(conn)
                return
            del conn.outbox[:sent]
            conn.last_active = self._clock.monotonic_s()
        assert self._selector is not None
        events = (0 if conn.closing else selectors.EVENT_READ) | (selectors.EVENT_WRITE if conn.outbox else 0)
        if conn.closing and not conn.outbox:
            self._close(conn)
        else:
            self._selector.modify(conn.sock, events, conn)

    def _finish(self, conn: _Connection) -> None:
        """Close once what is to be written is written (or now, if it is)."""
        conn.closing = True
        self._flush(conn)

    def _close(self, conn: _Connection) -> None:
        if self._conns.pop(conn.number, None) is None:
            return
        self._feed.remove(conn.number)
        try:
            assert self._selector is not None
            self._selector.unregister(conn.sock)
        except (KeyError, ValueError, OSError):
            pass
        conn.sock.close()
        self._count_changed_notify()

    def _count_changed_notify(self) -> None:
        with self._count_changed:
            self._count_changed.notify_all()

    def _wake(self) -> None:
        with self._wake_lock:
            if self._wake_w is not None:
                try:
                    self._wake_w.send(b"\0")
                except OSError:                        # full: it is awake already
                    pass

    def _drain_wake(self) -> None:
        assert self._wake_r is not None
        try:
            while self._wake_r.recv(4096):
                pass
        except (BlockingIOError, InterruptedError):
            pass


def _refuse(sock: socket.socket, answer: dict[str, Any]) -> None:
    """One error line to a client the server will not serve (a worded answer), then the connection closed."""
    try:
        sock.setblocking(False)
        sock.send(json.dumps(answer).encode() + b"\n")
    except OSError:
        pass
    finally:
        sock.close()


def _spare_descriptor() -> int | None:
    try:
        return os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
