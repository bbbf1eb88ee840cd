"""The web page's application: the Starlette app, its routes and what runs for its lifetime.

:func:`create_app` wires the parts: the :class:`~firmware.web.guards.Guards`
(Host, Origin, headers) around every route, the pages
(:mod:`firmware.web.pages`) and the API with its event stream
(:mod:`firmware.web.api`), the static files (styles, the one script, the
tiles, the icon; ``/favicon.ico`` too) and, for its lifetime, the subscription to the controller
(:func:`firmware.web.hub.follow`) and the service's tick; what the routes
share is :class:`firmware.web.state.WebState`.  Time is injected:
``now_s`` is read for sessions, throttling and the dead-man timer, and
``start_ticker(tick)`` (the service's, :mod:`firmware.web.runtime`) calls
:meth:`WebState.tick` a few times a second; a test drives both by hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from importlib import resources
from typing import Any, AsyncIterator, Awaitable, Callable

from firmware.web.control import Control
from firmware.web.guards import Guards
from firmware.web.hub import follow
from firmware.web.records import TableRecords
from firmware.web.state import WebSettings, WebState

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 16 * 1024
Tick = Callable[[float], Awaitable[None]]


def static_folder() -> Any:
    return resources.files("firmware.web") / "static"


async def favicon(request: Any) -> Any:
    """``/favicon.ico``, which every browser asks for whatever the page links (the pages link the SVG)."""
    from starlette.responses import FileResponse

    return FileResponse(str(static_folder() / "favicon.ico"), media_type="image/x-icon")


def create_app(settings: WebSettings, control: Control, records: TableRecords, now_s: Callable[[], float],
               start_ticker: Callable[[Tick], Callable[[], None]]) -> Any:
    """The Starlette application of the table's web page."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from firmware.web import api, pages          # (the routes)

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

    routes = [*pages.routes(), *api.routes(), Route("/favicon.ico", favicon),
              Mount("/static", StaticFiles(directory=str(static_folder())), name="static")]
    return Starlette(routes=routes, lifespan=lifespan, max_body_size=MAX_BODY_BYTES,
                     middleware=[Middleware(Guards, hosts=settings.hosts, tls=settings.tls)])
