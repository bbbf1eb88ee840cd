"""The live table for every open page: one subscription to the controller, fanned out as Server-Sent Events.

The web service subscribes once (:func:`follow`), whatever the number of
browsers; the :class:`Hub` keeps the latest status and gives each browser
its own :class:`Stream`:

* ``snapshot`` when the page connects (and again after the controller's
  connection came back): the whole status, plus ``link`` (is the controller
  answering) and ``at_s`` (the controller's time);
* ``patch``: the fields changed since this browser's last line, coalesced,
  at most one every ``patch_interval_s`` (a browser that reads slowly gets
  fewer, larger patches: a stream holds one pending patch, never a queue);
* ``heartbeat`` after ``heartbeat_s`` without a line, so a page can tell a
  quiet table from a dead connection (a phone that wakes reconnects and gets
  a fresh snapshot).

At most ``MAX_STREAMS`` (64) streams are open, ``MAX_STREAMS_PER_SESSION``
(4) per login, and staff's together leave ``STREAMS_KEPT_FOR_TECHNICIANS``
(8) free: however many pages staff open, a technician's page still gets
its stream.

The hub also remembers the last ``deals_kept`` deals it saw (the four
starting hands, when the reader knew them) for the hand pages.  Time comes
from the caller (``now_s``) and :meth:`Hub.tick`, driven by the service.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict, deque
from typing import Any, Callable

from firmware.game.status import live_line
from firmware.i18n import N_
from firmware.web.control import Control
from firmware.web.i18n import said
from firmware.web.users import Role

log = logging.getLogger(__name__)

PATCH_INTERVAL_S = 0.5
HEARTBEAT_S = 15.0
MAX_STREAMS = 64
MAX_STREAMS_PER_SESSION = 4         # one login's tabs and phones (one login cannot hold every stream)
STREAMS_KEPT_FOR_TECHNICIANS = 8    # staff's pages together never take these (two technicians' logins' worth)
DEALS_KEPT = 64
RETRY_S = (0.5, 1.0, 2.0, 5.0)          # reconnecting to the controller: after these, then every last one
STALE_S = 12.0                          # the controller's loop silent this long: "not answering"
MAX_LINES = 8                           # lines a stream holds unsent before it is given up


def sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


def merge(into: dict[str, Any], patch: dict[str, dict[str, Any]]) -> None:
    """Merge a patch (component -> changed fields) into a status or a pending patch."""
    for name, fields in patch.items():
        into.setdefault(name, {}).update(fields)


class Stream:
    """One browser's events: lines to write and at most one coalesced patch waiting for its turn."""

    def __init__(self, now_s: float, owner: str | None = None, role: Role | None = None) -> None:
        self.owner = owner                  # the session it is for
        self.role = role                    # and that session's role
        self.lines: deque[str] = deque()
        self.pending: dict[str, dict[str, Any]] = {}
        self.last_s = now_s
        self.given_up = False
        self.wake = asyncio.Event()

    def put(self, line: str, now_s: float) -> None:
        if len(self.lines) >= MAX_LINES:
            self.given_up = True            # its connection does not take what it is sent: end it
        else:
            self.lines.append(line)
        self.last_s = now_s
        self.wake.set()

    async def take(self) -> list[str]:
        """The lines to write now (waits for some)."""
        await self.wake.wait()
        self.wake.clear()
        out = list(self.lines)
        self.lines.clear()
        return out


LINK_WHY = ("connecting", "stale", "refused", "ended", "lost", "unexpected")


def link_down(why: str, reason: str, detail: str | None = None) -> dict[str, Any]:
    """The link as a page gets it when the controller is not answering: ``why`` (one of :data:`LINK_WHY`, which the
    page words in its language, ``detail`` in it: the seconds, or the controller's or the system's own words),
    ``reason`` (the same in English, for the log and a script)."""
    if why not in LINK_WHY:
        raise ValueError(f"link: why is one of {LINK_WHY}, not {why!r}")
    return {"up": False, "reason": reason, "why": why, "detail": detail}


class Hub:
    def __init__(self, now_s: Callable[[], float], patch_interval_s: float = PATCH_INTERVAL_S,
                 heartbeat_s: float = HEARTBEAT_S, max_streams: int = MAX_STREAMS,
                 deals_kept: int = DEALS_KEPT, kept_for_technicians: int = STREAMS_KEPT_FOR_TECHNICIANS) -> None:
        if not 0 <= kept_for_technicians < max_streams:
            raise ValueError(f"streams kept for technicians: 0 to {max_streams - 1}, not {kept_for_technicians}")
        self.now_s = now_s
        self.patch_interval_s, self.heartbeat_s = patch_interval_s, heartbeat_s
        self.max_streams, self.deals_kept = max_streams, deals_kept
        self.kept_for_technicians = kept_for_technicians
        self.status: dict[str, dict[str, Any]] | None = None
        self.at_s: float | None = None
        self.link: dict[str, Any] = link_down("connecting", "connecting to the controller")
        self.streams: set[Stream] = set()
        self.deals: OrderedDict[int, dict[str, Any]] = OrderedDict()
        self.failures = 0
        self.retry_at_s: float | None = None
        self.retry = asyncio.Event()

    # -- what the controller says ---------------------------------------------------------------
    def view(self) -> dict[str, Any]:
        """The status as a page gets it: every component, ``live`` (the live line of ``mjtable sim --speed``),
        ``link`` and ``at_s``."""
        return {**(self.status or {}), "live": {"line": self._live_line()}, "link": dict(self.link),
                "at_s": self.at_s}

    def _live_line(self) -> str | None:
        try:
            return live_line(self.status) if self.status else None
        except (KeyError, TypeError):
            return None

    def line(self, line: dict[str, Any]) -> None:
        """One line of the controller's subscription."""
        now = self.now_s()
        if "snapshot" in line:
            self.status = {name: dict(fields) for name, fields in line["snapshot"].items()}
            self.at_s = line.get("at_s")
            self.link = {"up": True, "reason": None, "why": None, "detail": None}
            self.failures = 0
            self._remember_deal()
            for stream in self.streams:
                stream.pending.clear()
                stream.put(sse("snapshot", self.view()), now)
        elif "patch" in line and self.status is not None:
            before = self._live_line()
            merge(self.status, line["patch"])
            self.at_s = line.get("at_s", self.at_s)
            if "deal" in line["patch"]:
                self._remember_deal()
            after = self._live_line()
            live = {"live": {"line": after}} if after != before else {}
            self._to_every_stream({**line["patch"], **live, "at_s": self.at_s})
        elif line.get("heartbeat"):
            age = line.get("status_age_s")
            up = age is None or age < STALE_S
            link = {"up": True, "reason": None, "why": None, "detail": None} if up else \
                link_down("stale", f"the controller has not answered for {age:g} s", f"{age:g}")
            if link != self.link:
                self.link = link
                self._to_every_stream({"link": dict(self.link)})
        elif line.get("ok") is False:           # (dropped: the connection ends next, and follow() retries)
            error = str(line.get("error") or "")
            self.link = link_down("refused", error or "the controller refused", error or None)
            self._to_every_stream({"link": dict(self.link)})

    def lost(self, why: str, reason: str, detail: str | None = None) -> None:
        """The subscription ended (``why``: a key of :data:`LINK_WHY`): say so on every page and try again after a
        while."""
        now = self.now_s()
        log.log(logging.WARNING if reason != self.link.get("reason") else logging.DEBUG, "controller link: %s", reason)
        self.link = link_down(why, reason, detail)
        self._to_every_stream({"link": dict(self.link)})
        self.retry_at_s = now + RETRY_S[min(self.failures, len(RETRY_S) - 1)]
        self.failures += 1
        self.retry.clear()

    def _to_every_stream(self, patch: dict[str, Any]) -> None:
        for stream in self.streams:
            for name, value in patch.items():
                if isinstance(value, dict) and isinstance(stream.pending.get(name), dict):
                    stream.pending[name].update(value)
                else:
                    stream.pending[name] = dict(value) if isinstance(value, dict) else value

    def _remember_deal(self) -> None:
        deal = (self.status or {}).get("deal") or {}
        if deal.get("hand") is not None:
            self.deals[int(deal["hand"])] = dict(deal)
            self.deals.move_to_end(int(deal["hand"]))
            while len(self.deals) > self.deals_kept:
                self.deals.popitem(last=False)

    # -- the browsers ------------------------------------------------------------------------------
    def refusal(self, owner: str | None = None, role: Role | None = None) -> dict[str, Any] | None:
        """Why session ``owner`` of ``role`` may not open one more stream now (None: it may): the page's refusal
        (:func:`firmware.web.i18n.said`, worded in the request's language)."""
        if len(self.streams) >= self.max_streams:
            return said(N_("too many pages are open on this table (at most %(n)s): close one"), n=self.max_streams)
        if owner is not None and sum(s.owner == owner for s in self.streams) >= MAX_STREAMS_PER_SESSION:
            return said(N_("this login has %(n)s pages open already (at most): close one"), n=MAX_STREAMS_PER_SESSION)
        if role is not Role.TECHNICIAN:
            staff = sum(s.role is not Role.TECHNICIAN for s in self.streams)
            if staff >= self.max_streams - self.kept_for_technicians:
                return said(N_("staff have %(n)s pages open (at most: the other %(kept)s are kept for technicians): "
                               "close one"), n=staff, kept=self.kept_for_technicians)
        return None

    def open(self, owner: str | None = None, role: Role | None = None) -> Stream | None:
        """A new page's stream for session ``owner`` of ``role``, its snapshot first; None when too many are
        open (:meth:`refusal` says why): on the table, for that session, or for staff (some streams are kept
        for technicians, whatever staff open)."""
        if self.refusal(owner, role) is not None:
            return None
        now = self.now_s()
        stream = Stream(now, owner, role)
        stream.put(f"retry: 2000\n\n{sse('snapshot', self.view())}", now)
        self.streams.add(stream)
        return stream

    def close(self, stream: Stream) -> None:
        self.streams.discard(stream)

    async def tick(self, now_s: float) -> None:
        """Send what is due: each stream's patch at its interval, heartbeats; wake the reconnect when due."""
        for stream in list(self.streams):
            if stream.given_up:
                self.close(stream)
                stream.wake.set()
            elif stream.pending and now_s - stream.last_s >= self.patch_interval_s:
                patch, stream.pending = stream.pending, {}
                stream.put(sse("patch", patch), now_s)
            elif now_s - stream.last_s >= self.heartbeat_s:
                stream.put(sse("heartbeat", {"at_s": self.at_s, "link": self.link}), now_s)
        if self.retry_at_s is not None and now_s >= self.retry_at_s:
            self.retry_at_s = None
            self.retry.set()


async def follow(control: Control, hub: Hub) -> None:
    """Keep the hub subscribed to the controller: read its lines; when the link ends, wait, subscribe again."""
    while True:
        try:
            async for line in control.subscribe():
                hub.line(line)
        except (ConnectionError, OSError, ValueError) as exc:
            detail = str(exc) or type(exc).__name__
            hub.lost("lost", detail, detail)
        except Exception as exc:  # noqa: BLE001 - never end silently: the page would say "up" forever
            log.exception("controller link: unexpected error; reconnecting")
            detail = str(exc) or type(exc).__name__
            hub.lost("unexpected", f"unexpected error: {detail}", detail)
        else:
            hub.lost("ended", "the controller ended the subscription")
        await hub.retry.wait()
