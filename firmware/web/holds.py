"""Hold-to-run for the service page's buttons: a jog or a test runs only while the browser keeps saying so.

Pressing a button starts the action on its own control connection
(:meth:`Holds.start`); while the button is held the page sends a keep-alive
every ``KEEPALIVE_S``, each renewing a dead-man deadline ``deadman_s``
ahead.  Letting go (:meth:`Holds.release`), or keep-alives that stop
arriving (a phone dropped, its Wi-Fi gone, the page closed: :meth:`Holds.sweep`
finds the deadline passed), stops the action: ``stop`` is sent over the
socket and the action's connection is closed, which the controller also
takes as "the client is gone" and stops that test itself.  Each keep-alive
also renews the action's lease at the controller (``LEASE_S``): should this
process stall with the connection open, the controller stops the action
itself.  An action that
ends by itself (a cam turn done, a refusal: not in service mode, the lid
open) answers on its connection and the next keep-alive carries the answer.

One hold at a time for the whole table (the controller runs one test at a
time), owned by the session that started it.  The interlocks are the
controller's: nothing here decides whether a motor may move.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from firmware.i18n import N_
from firmware.web.control import Control, Held
from firmware.web.i18n import english, phrase, said

log = logging.getLogger(__name__)

DEADMAN_S = 0.5              # no keep-alive for this long: the action is stopped
KEEPALIVE_S = 0.15           # how often the page renews a held button (told to it with each start)
LEASE_S = 1.0                # the controller stops the action itself when this process renews it no longer
FINISHED_KEPT = 32


@dataclass
class Hold:
    id: str
    session: str
    user: str
    what: str
    deadline_s: float
    held: Held
    answer: dict[str, Any] | None = None
    stopping: dict[str, Any] | None = None     # why it is being stopped (a phrase: worded where it is shown)
    tasks: list[asyncio.Future] = field(default_factory=list)


class Holds:
    def __init__(self, control: Control, deadman_s: float = DEADMAN_S) -> None:
        self.control, self.deadman_s = control, deadman_s
        self.current: Hold | None = None
        self.starting: str | None = None          # who is starting one (the slot is taken before the first await)
        self.finished: OrderedDict[str, dict[str, Any]] = OrderedDict()

    @property
    def running(self) -> bool:
        return self.current is not None and self.current.answer is None

    async def start(self, session: str, user: str, request: dict[str, Any], now_s: float) -> dict[str, Any]:
        """Start a held action (a ``jog`` or ``test`` request for the controller).  Two presses at once (two
        fingers, two tabs, two technicians): the second is refused before anything is sent, so no action can
        start that no hold watches."""
        if self.running:
            assert self.current is not None
            return said(N_("%(what)s is held by %(user)s: wait for it to end"), what=self.current.what,
                        user=self.current.user)
        if self.starting is not None:
            return said(N_("%(user)s is starting a held action: wait for it to end"), user=self.starting)
        what = f"{request['cmd']} {request.get('mechanism') or request.get('name')}"
        self.starting = user
        try:
            held = await self.control.begin({**request, "lease_s": LEASE_S})
        except (ConnectionError, OSError) as exc:
            return {"ok": False, "error": str(exc)}
        finally:
            self.starting = None
        hold = Hold(secrets.token_urlsafe(12), session, user, what, now_s + self.deadman_s, held)
        self.current = hold
        held.answer.add_done_callback(lambda done: self._answered(hold, done))
        log.info("%s started by %s (held)", what, user)
        return {"ok": True, "hold": hold.id, "what": what, "deadman_s": self.deadman_s, "keepalive_s": KEEPALIVE_S}

    def _answered(self, hold: Hold, done: "asyncio.Future[dict[str, Any]]") -> None:
        if done.cancelled():
            answer = said(N_("stopped: %(why)s"), why=hold.stopping or phrase(N_("let go")))
        else:
            answer = dict(done.result())
            if hold.stopping and not answer.get("ok"):
                answer.update(said(N_("stopped: %(why)s"), why=hold.stopping))
        hold.answer = answer
        hold.held.close()
        self.finished[hold.id] = answer
        while len(self.finished) > FINISHED_KEPT:
            self.finished.popitem(last=False)
        log.info("%s ended: %s", hold.what, answer.get("error") or "done")

    def _own(self, hold_id: str, session: str) -> Hold | dict[str, Any]:
        hold = self.current if self.current is not None and self.current.id == hold_id else None
        if hold is None:
            if hold_id in self.finished:
                return {"ok": True, "running": False, "answer": self.finished[hold_id]}
            return said(N_("no such hold (it ended long ago, or never started)"))
        if hold.session != session:
            return said(N_("this hold belongs to another session"))
        if hold.answer is not None:
            return {"ok": True, "running": False, "answer": hold.answer}
        return hold

    def keepalive(self, hold_id: str, session: str, now_s: float) -> dict[str, Any]:
        """The button is still held: the deadline moves on; or the action's answer, when it has ended."""
        hold = self._own(hold_id, session)
        if isinstance(hold, dict):
            return hold
        if hold.stopping is None:
            hold.deadline_s = now_s + self.deadman_s
            hold.held.renew()
        return {"ok": True, "running": True}

    def release(self, hold_id: str, session: str) -> dict[str, Any]:
        """The button was let go: stop the action now."""
        hold = self._own(hold_id, session)
        if isinstance(hold, dict):
            return hold
        self._stop(hold, phrase(N_("let go by %(user)s"), user=hold.user))
        return {"ok": True, "running": False, "stopping": True}

    async def sweep(self, now_s: float) -> None:
        """Stop a held action whose keep-alives stopped arriving (the dead-man timer)."""
        hold = self.current
        if hold is not None and hold.answer is None and hold.stopping is None and now_s >= hold.deadline_s:
            self._stop(hold, phrase(N_("no keep-alive for %(s)s s (the page or its connection went away)"),
                                    s=f"{self.deadman_s:g}"))

    def _stop(self, hold: Hold, why: dict[str, Any]) -> None:
        if hold.stopping is not None or hold.answer is not None:
            return
        hold.stopping = why
        log.warning("%s: stopping, %s", hold.what, english(why))

        async def stop() -> None:
            try:
                answer = await self.control.ask({"cmd": "stop"}, timeout_s=5.0)
                if not answer.get("ok"):
                    log.error("%s: stop refused: %s", hold.what, answer.get("error"))
            finally:
                if hold.answer is None:
                    hold.held.close()           # (the controller stops a test whose client is gone, too)
        hold.tasks.append(asyncio.ensure_future(stop()))
