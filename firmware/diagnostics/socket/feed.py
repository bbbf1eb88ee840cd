"""The subscription feed of the technician's socket: subscribe and unsubscribe, and each tick's lines."""

from __future__ import annotations

import logging
import socket
from typing import Any, Callable

from firmware.diagnostics.socket.protocol import BadRequest
from firmware.diagnostics.socket.subscriptions import Feed, parse_subscribe
from firmware.ports.clock import Clock

log = logging.getLogger(__name__)

FEED = 0                             # the number under which the subscriptions' status requests are answered


class FeedServing:
    """The part of :class:`firmware.diagnostics.socket.server.DiagSocketServer` that serves subscribers (its
    serving thread only)."""

    _clock: Clock
    _feed: Feed
    _conns: dict[int, Any]
    _post: Callable[..., None]
    _handle: Callable[..., None]
    _requests: int
    subscriber_sndbuf_bytes: int
    _send: Callable[[Any, Any], None]
    _finish: Callable[[Any], None]
    _count_changed_notify: Callable[[], None]
    _replier: Callable[[int, int], Callable[[dict[str, Any]], None]]

    def _subscription_request(self, conn: Any, request: dict[str, Any]) -> bool:
        """Subscribe and unsubscribe are the server's own; a subscribed connection takes nothing else.
        True when the request was handled here."""
        cmd = request.get("cmd")
        if conn.number in self._feed.subscribers:
            if cmd == "unsubscribe":
                self._feed.remove(conn.number)
                self._count_changed_notify()
                self._send(conn, {"ok": True, "unsubscribed": True})
            else:
                self._send(conn, {"ok": False, "error": "this connection is subscribed: it takes only "
                                                        "unsubscribe (open another connection for requests)"})
            return True
        if cmd == "unsubscribe":
            self._send(conn, {"ok": False, "error": "not subscribed"})
            return True
        if cmd != "subscribe":
            return False
        try:
            tick_s, components = parse_subscribe(request)
        except BadRequest as exc:
            self._send(conn, {"ok": False, "error": f"bad request: {exc}"})
            return True
        try:
            conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.subscriber_sndbuf_bytes)
        except OSError:
            pass
        self._feed.add(conn.number, tick_s, components, self._clock.monotonic_s())
        self._count_changed_notify()
        return True

    def _feed_tick(self) -> None:
        """Ask the loop for the status when a tick is due; write each subscriber its line; drop the stalled."""
        feed = self._feed
        if not feed.subscribers:
            return
        now = self._clock.monotonic_s()
        if feed.should_ask(now):
            feed.asked(now)
            self._requests += 1
            try:
                self._post(self._handle, {"cmd": "status", "client": FEED}, self._replier(FEED, self._requests))
            except Exception as exc:  # noqa: BLE001 - told to the subscribers in their heartbeats
                log.exception("diag socket: asking for the status failed")
                feed.answered({"ok": False, "error": f"the controller cannot take requests: {exc}"}, now)
        waiting = {n for n in feed.subscribers if n in self._conns and self._conns[n].outbox}
        lines, stalled = feed.lines(now, waiting)
        for number, line in lines:
            if number in self._conns:
                self._send(self._conns[number], line)
        for number in feed.refused():
            feed.remove(number)
            self._count_changed_notify()
        for number in stalled:
            feed.remove(number)
            self._count_changed_notify()
            conn = self._conns.get(number)
            if conn is not None:
                why = f"too slow: took no line for {feed.stalled_s:g} s; subscribe again"
                log.warning("diag socket: subscriber %d dropped: %s", number, why)
                self._send(conn, {"ok": False, "dropped": why, "error": f"dropped: {why}"})
                self._finish(conn)
