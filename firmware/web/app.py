"""The web page's application: settings, shared state, the session rules, and the Starlette app itself.

:func:`create_app` wires the parts: the :class:`~firmware.web.guards.Guards`
(Host, Origin, headers) around every route, the pages
(:mod:`firmware.web.pages`) and the API with its event stream
(:mod:`firmware.web.api`), the static files (styles, the one script, the
tiles) and, for its lifetime, the subscription to the controller
(:func:`firmware.web.hub.follow`) and the service's tick.  Time is injected:
``now_s`` is read for sessions, throttling and the dead-man timer, and
``start_ticker(tick)`` (the service's, :mod:`hal.web_runtime`) calls
:meth:`WebState.tick` a few times a second; a test drives both by hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, AsyncIterator, Awaitable, Callable

from firmware.web.control import Control
from firmware.web.guards import Guards, HostRules
from firmware.web.holds import DEADMAN_S, Holds
from firmware.web.hub import HEARTBEAT_S, PATCH_INTERVAL_S, Hub, follow
from firmware.web.records import TableRecords
from firmware.web.sessions import LoginThrottle, Session, Sessions
from firmware.web.users import Role, Users

log = logging.getLogger(__name__)

COOKIE = "mjtable_session"
MAX_BODY_BYTES = 16 * 1024
LOGINS_AT_ONCE = 2                 # Argon2 verifications running together (each takes 19 MiB and a core)
Tick = Callable[[float], Awaitable[None]]


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


def static_folder() -> Any:
    return resources.files("firmware.web") / "static"


def create_app(settings: WebSettings, control: Control, records: TableRecords, now_s: Callable[[], float],
               start_ticker: Callable[[Tick], Callable[[], None]]) -> Any:
    """The Starlette application of the table's web page."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    from firmware.web import api, pages

    holder: dict[str, WebState] = {}

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        state = WebState(settings, control, records, now_s)
        holder["state"] = app.state.web = state
        following = asyncio.ensure_future(follow(control, state.hub))
        stop_ticker = start_ticker(state.tick)
        try:
            yield
        finally:
            stop_ticker()
            following.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await following
            records.close()

    routes = [*pages.routes(), *api.routes(), Mount("/static", StaticFiles(directory=str(static_folder())),
                                                    name="static")]
    return Starlette(routes=routes, lifespan=lifespan, max_body_size=MAX_BODY_BYTES,
                     middleware=[Middleware(Guards, hosts=settings.hosts, tls=settings.tls)])
