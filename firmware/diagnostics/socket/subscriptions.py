"""Subscriptions on the technician's socket: a snapshot of the status, then only the fields that changed.

A client sends ``{"cmd": "subscribe", "tick_s": 0.25, "components": [...]}``
(both optional) and from then on its connection is a stream of JSON lines:

* ``{"ok": true, "snapshot": {COMPONENT: {FIELD: VALUE}}, "at_s": T, "tick_s": S}`` once, first;
* ``{"patch": {COMPONENT: {FIELD: VALUE}}, "at_s": T}``: only the fields that changed since the
  last line this client was sent, at most one every ``tick_s`` (0.2 s at the least, 0.25 s when not
  given), so every change between two patches is coalesced into the next;
* ``{"heartbeat": true, "at_s": T, "status_age_s": A}`` after ``HEARTBEAT_S`` without a line:
  ``status_age_s`` is how long ago the controller's loop last answered (it grows when the loop is stuck);
* ``{"ok": false, "dropped": WHY, "error": WHY}`` last, when the server gives the client up.

``{"cmd": "unsubscribe"}`` ends the stream (answered ``{"ok": true, "unsubscribed": true}``); a
subscribed connection takes no other request.  ``at_s`` is the controller's own time.

The status is asked of the controller's loop once per tick for every
subscriber together (the ``status`` request of
:mod:`firmware.diagnostics.commands`), never more than one request at a time:
twenty subscribers cost the loop what one does.  Each subscriber is sent its
own difference from what it was last sent.  A subscriber's buffer holds at
most the one line the kernel has not taken yet: while it is not written, no
new line is made (the changes wait, coalesced, for the next patch), and a
client that has not taken a line for ``stalled_s`` is dropped with the reason.
This module decides; :mod:`firmware.diagnostics.socket.server` reads, writes and keeps time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from firmware.diagnostics.socket.protocol import BadRequest, seconds_field

MIN_TICK_S = 0.2          # at most five lines a second per subscriber
DEFAULT_TICK_S = 0.25
MAX_TICK_S = 60.0
HEARTBEAT_S = 5.0         # a line at least this often, so that a client knows the server is there
STALLED_S = 10.0          # a subscriber that takes no line for this long is dropped
STATUS_TIMEOUT_S = 5.0    # a status the loop has not answered by then is asked again
MAX_COMPONENTS = 32

Status = dict[str, dict[str, Any]]


def parse_subscribe(request: dict[str, Any]) -> tuple[float, tuple[str, ...] | None]:
    """A subscribe request's ``tick_s`` and ``components`` (None: all); :class:`BadRequest` otherwise."""
    tick = seconds_field(request.get("tick_s", DEFAULT_TICK_S), "tick_s", MIN_TICK_S, MAX_TICK_S)
    components = request.get("components")
    if components is None:
        return tick, None
    if not (isinstance(components, list) and 0 < len(components) <= MAX_COMPONENTS
            and all(isinstance(c, str) for c in components)):
        raise BadRequest("components: a list of status component names")
    return tick, tuple(components)


def changed(before: Status | None, now: Status) -> Status:
    """The fields of ``now`` that differ from ``before``: a whole component where it is new."""
    if before is None:
        return {name: dict(fields) for name, fields in now.items()}
    patch: Status = {}
    for name, fields in now.items():
        old = before.get(name)
        if old is None:
            patch[name] = dict(fields)
            continue
        diff = {key: value for key, value in fields.items() if key not in old or old[key] != value}
        if diff:
            patch[name] = diff
    return patch


@dataclass
class Subscriber:
    """One subscribed connection: what it asked for and what it was sent."""

    number: int
    tick_s: float
    components: tuple[str, ...] | None
    sent: Status | None = None                    # the state as this client knows it (None: no snapshot yet)
    next_due_s: float = 0.0
    last_line_s: float = 0.0
    stalled_since_s: float | None = None          # a line has waited unwritten since then
    refused: bool = False                         # it named a component the status does not have

    def view(self, status: Status) -> Status:
        if self.components is None:
            return status
        return {name: status[name] for name in self.components if name in status}


@dataclass
class Feed:
    """Every subscriber of one server, and the one status request it has under way."""

    stalled_s: float = STALLED_S
    heartbeat_s: float = HEARTBEAT_S
    subscribers: dict[int, Subscriber] = field(default_factory=dict)
    status: Status | None = None
    status_at_s: float | None = None              # the controller's time of the last status
    status_seen_s: float | None = None            # when it arrived (this server's clock)
    asked_s: float | None = None                  # a status request is under way since then
    next_ask_s: float = 0.0
    error: str | None = None                      # the last status request's refusal

    def add(self, number: int, tick_s: float, components: tuple[str, ...] | None, now_s: float) -> None:
        self.subscribers[number] = Subscriber(number, tick_s, components, last_line_s=now_s)
        self.next_ask_s = now_s                   # its snapshot as soon as the loop answers

    def remove(self, number: int) -> None:
        self.subscribers.pop(number, None)

    def refused(self) -> list[int]:
        """Subscribers told that a component they named does not exist (to be unsubscribed)."""
        return [n for n, sub in self.subscribers.items() if sub.refused]

    # -- asking the loop ---------------------------------------------------------------------------
    def should_ask(self, now_s: float) -> bool:
        """A status request is due: subscribers wait, and none is under way (or the last is overdue)."""
        if not self.subscribers or now_s < self.next_ask_s:
            return False
        return self.asked_s is None or now_s - self.asked_s >= STATUS_TIMEOUT_S

    def asked(self, now_s: float) -> None:
        self.asked_s = now_s
        self.next_ask_s = now_s + min(s.tick_s for s in self.subscribers.values())

    def answered(self, answer: dict[str, Any], now_s: float) -> None:
        self.asked_s = None
        if answer.get("ok") and isinstance(answer.get("status"), dict):
            self.status, self.status_at_s, self.status_seen_s = answer["status"], answer.get("at_s"), now_s
            self.error = None
        else:
            self.error = str(answer.get("error", "no status"))

    def next_time(self, now_s: float) -> float | None:
        """When this feed has something to do next (for the server's select timeout)."""
        if not self.subscribers:
            return None
        times = [self.next_ask_s if self.asked_s is None else self.asked_s + STATUS_TIMEOUT_S]
        for sub in self.subscribers.values():
            times.append(sub.last_line_s + self.heartbeat_s)
            if sub.stalled_since_s is not None:
                times.append(sub.stalled_since_s + self.stalled_s)
        return min(times)

    # -- what each subscriber is sent ----------------------------------------------------------------
    def lines(self, now_s: float, waiting: set[int]) -> tuple[list[tuple[int, dict[str, Any]]], list[int]]:
        """The lines to write now, and the subscribers to drop.  ``waiting``: subscribers whose last line
        the kernel has not taken yet (nothing new is made for them)."""
        out: list[tuple[int, dict[str, Any]]] = []
        drop: list[int] = []
        for sub in self.subscribers.values():
            if sub.refused:
                continue
            if sub.number in waiting:
                if sub.stalled_since_s is None:
                    sub.stalled_since_s = now_s
                elif now_s - sub.stalled_since_s >= self.stalled_s:
                    drop.append(sub.number)
                continue
            sub.stalled_since_s = None
            line = self._line_for(sub, now_s)
            if line is not None:
                sub.last_line_s = now_s
                out.append((sub.number, line))
        return out, drop

    def _line_for(self, sub: Subscriber, now_s: float) -> dict[str, Any] | None:
        if self.status is not None and sub.sent is None:
            unknown = [name for name in sub.components or () if name not in self.status]
            if unknown:
                sub.refused = True
                return {"ok": False, "error": f"no status component {unknown[0]!r}; components: "
                                              f"{', '.join(self.status)}"}
            view = sub.view(self.status)
            sub.sent, sub.next_due_s = view, now_s + sub.tick_s
            return {"ok": True, "snapshot": view, "at_s": self.status_at_s, "tick_s": sub.tick_s}
        if self.status is not None and now_s >= sub.next_due_s:
            view = sub.view(self.status)
            patch = changed(sub.sent, view)
            if patch:
                sub.sent, sub.next_due_s = view, now_s + sub.tick_s
                return {"patch": patch, "at_s": self.status_at_s}
        if now_s - sub.last_line_s >= self.heartbeat_s:
            age = None if self.status_seen_s is None else round(now_s - self.status_seen_s, 1)
            beat: dict[str, Any] = {"heartbeat": True, "at_s": self.status_at_s, "status_age_s": age}
            if self.error:
                beat["error"] = self.error
            return beat
        return None
