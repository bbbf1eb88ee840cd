"""What every route of the web page shares: the settings, the hub, the holds, sessions, the throttle, the clock.

:class:`WebState` is made once per app (for its lifetime) by
:func:`firmware.web.app.create_app`; the pages and the API take it from the
request.  :func:`may_act` is the one rule for who may move a motor or
acknowledge: a technician's session.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from firmware.web.control import Control
from firmware.web.guards import HostRules
from firmware.web.holds import DEADMAN_S, Holds
from firmware.web.hub import HEARTBEAT_S, PATCH_INTERVAL_S, Hub
from firmware.web.player import HandsCache
from firmware.web.records import TableRecords
from firmware.web.sessions import LoginThrottle, Session, Sessions
from firmware.web.users import Role, Users

log = logging.getLogger(__name__)

COOKIE = "mjtable_session"
LOGINS_AT_ONCE = 2                 # Argon2 verifications running together (each takes 19 MiB and a core)


@dataclass
class WebSettings:
    users: Users
    hosts: HostRules = field(default_factory=HostRules)
    tls: bool = False
    table_name: str = "mjtable"
    simulated: bool = False
    deadman_s: float = DEADMAN_S
    patch_interval_s: float = PATCH_INTERVAL_S
    heartbeat_s: float = HEARTBEAT_S


class WebState:
    """What every route shares: the hub, the holds, sessions, throttle, the records, the clock."""

    def __init__(self, settings: WebSettings, control: Control, records: TableRecords,
                 now_s: Callable[[], float]) -> None:
        self.settings, self.control, self.records, self.now_s = settings, control, records, now_s
        self.hub = Hub(now_s, settings.patch_interval_s, settings.heartbeat_s)
        self.holds = Holds(control, settings.deadman_s)
        self.sessions = Sessions()
        self.throttle = LoginThrottle()
        self.logins = asyncio.Semaphore(LOGINS_AT_ONCE)
        self.player_hands = HandsCache()

    async def tick(self, now_s: float) -> None:
        """The dead-man sweep first, each part on its own: a failing hub never keeps a held jog running."""
        try:
            await self.holds.sweep(now_s)
        except Exception:  # noqa: BLE001 - logged; the hub's tick still runs
            log.exception("web: the holds' dead-man sweep failed")
        try:
            await self.hub.tick(now_s)
        except Exception:  # noqa: BLE001 - logged; the next tick tries again
            log.exception("web: the event hub's tick failed")

    def session(self, request: Any) -> Session | None:
        return self.sessions.get(request.cookies.get(COOKIE), self.now_s())

    def cookie(self, token: str) -> dict[str, Any]:
        return {"key": COOKIE, "value": token, "httponly": True, "samesite": "strict", "secure": self.settings.tls,
                "path": "/", "max_age": int(self.sessions.max_age_s)}


def may_act(session: Session | None) -> bool:
    return session is not None and session.role is Role.TECHNICIAN
