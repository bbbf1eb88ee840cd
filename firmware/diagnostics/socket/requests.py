"""The requests of the technician's socket: each line admitted or refused, posted to the loop, answered or given up."""

from __future__ import annotations

import logging
import queue
from typing import TYPE_CHECKING, Any, Callable

from firmware.diagnostics.socket.feed import FEED
from firmware.diagnostics.socket.peers import refusal
from firmware.diagnostics.socket.protocol import BadRequest, lease_s, parse_request, reply_timeout_s
from firmware.diagnostics.socket.subscriptions import Feed
from firmware.ports.clock import Clock
from firmware.refusals import answer_of, part, worded_answer

if TYPE_CHECKING:
    from firmware.diagnostics.socket.server import _Connection

log = logging.getLogger(__name__)

_RAN = object()                      # on the answer queue: the loop has run this request (its answer may follow)

Reply = Callable[[dict[str, Any]], None]


class RequestServing:
    """The part of :class:`firmware.diagnostics.socket.server.DiagSocketServer` that takes a connection's
    requests one at a time (its serving thread only, but for the handler and reply posted to the loop): a line
    admitted (a request, its user's to send, room on the loop's queue) or answered with an error; posted with the
    connection's number; its answer written back, or the request given up (its deadline, its lease run out, its
    client gone), which posts a stop for what it started."""

    _conns: dict[int, _Connection]
    _clock: Clock
    _feed: Feed
    _post: Callable[..., None]
    _handle: Callable[[dict[str, Any], Reply], None]
    _answers: queue.SimpleQueue[tuple[int, int, Any]]
    _queued: set[int]
    _requests: int
    max_queued: int
    max_line_bytes: int
    _send: Callable[[_Connection, Any], None]
    _finish: Callable[[_Connection], None]
    _wake: Callable[[], None]
    _subscription_request: Callable[[_Connection, dict[str, Any]], bool]

    def _next_request(self, conn: _Connection) -> None:
        """Take the next whole line as a request, one at a time, each once the last answer is written."""
        while (conn.waiting is None and conn.queued is None and not conn.outbox and not conn.closing
               and conn.number in self._conns):
            end = conn.inbox.find(b"\n", 0, self.max_line_bytes + 1)
            if end < 0:
                if len(conn.inbox) > self.max_line_bytes:
                    self._send(conn, worded_answer("request line longer than %(most)s bytes; closing",
                                                     most=self.max_line_bytes))
                    self._finish(conn)
                return
            line = bytes(conn.inbox[:end])
            del conn.inbox[:end + 1]
            self._request(conn, line)

    def _request(self, conn: _Connection, line: bytes) -> None:
        try:
            request = parse_request(line)
            timeout_s = reply_timeout_s(request)
            lease = lease_s(request)
        except BadRequest as exc:
            self._send(conn, worded_answer("bad request: %(why)s", why=part(exc)))
            return
        refused = refusal(conn.allowed, request)
        if refused is not None:
            self._send(conn, answer_of(refused))
            return
        if self._subscription_request(conn, request):
            return
        if len(self._queued) >= self.max_queued:
            self._send(conn, worded_answer("busy: %(count)s requests wait for the controller's loop; try again later",
                                           count=len(self._queued)))
            return
        request.pop("client_gone", None)
        request["client"] = conn.number
        self._requests += 1
        number = self._requests
        conn.waiting = conn.queued = number
        conn.timeout_s, conn.deadline = timeout_s, self._clock.monotonic_s() + timeout_s
        conn.lease_s, conn.lease_until = lease, self._clock.monotonic_s() + (lease or 0.0)
        self._queued.add(number)
        try:
            self._post(self._counted(conn.number, number), request, self._replier(conn.number, number))
        except Exception as exc:  # noqa: BLE001 - answered, never raised into the accept loop
            log.exception("diag socket: posting a request failed")
            conn.waiting = conn.queued = None
            self._queued.discard(number)
            self._send(conn, worded_answer("the controller cannot take requests: %(why)s", why=part(exc)))

    def _counted(self, number: int, request: int) -> Callable[[dict[str, Any], Reply], None]:
        """The handler posted to the loop: tells this server the request is run (off the queue), then runs it."""
        def run(body: dict[str, Any], reply: Reply) -> None:
            self._answers.put((number, request, _RAN))
            self._wake()
            self._handle(body, reply)
        return run

    def _replier(self, number: int, request: int) -> Reply:
        """The reply function handed to the loop: called on the loop's thread, at most once counts."""
        def reply(answer: dict[str, Any]) -> None:
            self._answers.put((number, request, answer))
            self._wake()
        return reply

    def _deliver_answers(self) -> None:
        while True:
            try:
                number, request, answer = self._answers.get_nowait()
            except queue.Empty:
                return
            if number == FEED:
                self._feed.answered(answer if isinstance(answer, dict) else {}, self._clock.monotonic_s())
                continue
            conn = self._conns.get(number)
            if answer is _RAN:
                self._queued.discard(request)
                if conn is not None and conn.queued == request:
                    conn.queued = None
                    self._next_request(conn)
                continue
            if conn is None or conn.waiting != request:
                continue                               # its client went away, or was told it timed out
            conn.waiting = None
            self._send(conn, answer)
            self._next_request(conn)

    def _check_request(self, conn: _Connection, now: float) -> None:
        """The request under way given up when its lease has run out or its deadline has passed."""
        if conn.lease_s is not None and now >= conn.lease_until:
            log.warning("diag socket: client %d sent nothing for %g s during its held request: stopping "
                        "its test", conn.number, conn.lease_s)
            self._give_up(conn)
            self._send(conn, worded_answer("stopped: the client sent nothing for %(lease)s s (its lease)",
                                           lease=f"{conn.lease_s:g}"))
            self._next_request(conn)
        elif now >= conn.deadline:
            log.info("diag socket: client %d: no answer within %g s", conn.number, conn.timeout_s)
            self._give_up(conn)
            self._send(conn, worded_answer("the controller did not answer within %(timeout)s s",
                                           timeout=f"{conn.timeout_s:g}"))
            self._next_request(conn)

    def _give_up(self, conn: _Connection) -> None:
        """The request under way will not be answered to this client: stop what it started."""
        if conn.waiting is None:
            return
        conn.waiting = None
        log.info("diag socket: client %d left before its answer; stopping its test", conn.number)
        try:
            self._post(self._handle, {"cmd": "stop", "client": conn.number, "client_gone": True}, _ignore)
        except Exception:  # noqa: BLE001
            log.exception("diag socket: posting the stop failed")


def _ignore(answer: dict[str, Any]) -> None:
    """The answer to a stop posted for a client that is gone: nobody to tell."""
