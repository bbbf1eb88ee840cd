"""The web service's run-time pieces that touch the host: its clock, its tick, and uvicorn serving the app.

The page's code (``firmware/web``) never reads the clock or sleeps: it is
handed :func:`monotonic_s` to read and a ticker that calls its ``tick(now_s)``
every ``TICK_S`` (:func:`ticker`), here, on the service's asyncio loop.
:func:`serve` runs the app with plain uvicorn (h11, asyncio: no C
extensions, so the same wheels serve on a Pi), over TLS when a certificate
and key are given, with uvicorn's own access log off (the page logs what
matters: logins, acknowledges, service tests) and a bounded number of
connections, each of which must begin its first request within
``HEADER_TIMEOUT_S`` (uvicorn times a connection only after a response: a
hundred silent connections from anyone on the Wi-Fi would otherwise fill
the bound and lock the technician out of the page).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

from firmware.faults import TableError

log = logging.getLogger(__name__)

TICK_S = 0.1                 # the dead-man timer's resolution and the patches' pace
MAX_CONNECTIONS = 100        # browsers, their event streams and requests together
HEADER_TIMEOUT_S = 5.0       # a new connection's first request must have begun by then (after TLS's handshake)
Tick = Callable[[float], Awaitable[None]]


def monotonic_s() -> float:
    return time.monotonic()


def ticker(tick_s: float = TICK_S) -> Callable[[Tick], Callable[[], None]]:
    """``start(tick)``: call ``tick(now_s)`` every ``tick_s`` on the running loop; returns the stop."""
    def start(tick: Tick) -> Callable[[], None]:
        async def run() -> None:
            while True:
                await asyncio.sleep(tick_s)
                try:
                    await tick(time.monotonic())
                except Exception:  # noqa: BLE001 - the tick must go on (the dead-man timer is in it)
                    log.exception("web tick failed")
        task = asyncio.ensure_future(run())
        return task.cancel
    return start


def first_request_timeout(timeout_s: float = HEADER_TIMEOUT_S) -> type:
    """uvicorn's h11 protocol, closing a connection whose first request has not begun within ``timeout_s``."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class FirstRequestTimeout(H11Protocol):
        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._no_request_timer = self.loop.call_later(timeout_s, self._no_request)

        def _no_request(self) -> None:
            if self.cycle is None and not self.transport.is_closing():
                log.info("web: %s sent no request within %g s: closed", self.client, timeout_s)
                self.transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            timer = getattr(self, "_no_request_timer", None)
            if timer is not None:
                timer.cancel()
            super().connection_lost(exc)
    return FirstRequestTimeout


def serve(app: Any, host: str, port: int, cert: Path | None = None, key: Path | None = None,
          on_listening: Callable[[], None] | None = None) -> None:
    """Serve ``app`` on ``host:port`` until SIGINT or SIGTERM (uvicorn handles both).  The socket is bound
    here first, so that an address in use is a clear error (TableError) before anything is served."""
    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        sock = socket.create_server((host, port), family=family, backlog=128)
    except OSError as exc:
        raise TableError(f"--port {port}: cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    config = uvicorn.Config(app, host=host, port=port, loop="asyncio", http=first_request_timeout(), lifespan="on",
                            ssl_certfile=str(cert) if cert else None, ssl_keyfile=str(key) if key else None,
                            access_log=False, server_header=False, proxy_headers=False, log_config=None,
                            log_level="warning", limit_concurrency=MAX_CONNECTIONS, timeout_graceful_shutdown=2,
                            timeout_keep_alive=20)
    server = uvicorn.Server(config)
    if on_listening is not None:
        on_listening()              # (connections wait in the socket's queue until the server accepts them)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(server.serve(sockets=[sock]))
    finally:
        sock.close()
