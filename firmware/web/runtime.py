"""The web service's run-time pieces: its tick, and uvicorn serving the app.

The page's code never reads the clock or sleeps: it is handed the host
clock's ``monotonic_s`` to read (a :class:`~firmware.ports.clock.Clock`, by
``mjtable web``) and a ticker that calls its ``tick(now_s)`` every
``TICK_S`` (:func:`ticker`, on the same clock), on the service's asyncio
loop (its ``asyncio.sleep`` is the event loop's timer).
:func:`serve` runs the app with plain uvicorn (h11, asyncio: no C
extensions, so the same wheels serve on a Pi), over TLS when a certificate
and key are given, with uvicorn's own access log off (the page logs what
matters: logins, acknowledges, service tests) and its connections bounded
per client address and in all, each of which must begin its first request
within ``HEADER_TIMEOUT_S`` (:mod:`firmware.web.connections`: a hundred silent
connections from one phone on the Wi-Fi would otherwise fill uvicorn's bound
and lock the technician out of the page).  uvicorn's own bound
(``limit_concurrency``: a 503 for any request once that many connections or
requests are under way, whoever holds them) stays, above those, as the last
resort.  :func:`make_server` builds the server on a socket bound by
:func:`listen`; :func:`serve` runs it until SIGINT or SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from pathlib import Path
from typing import Any, Awaitable, Callable

from firmware.faults import TableError
from firmware.ports.clock import Clock
from firmware.web.connections import HEADER_TIMEOUT_S, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS, bounded_protocol

__all__ = ["HEADER_TIMEOUT_S", "MAX_CONNECTIONS", "MAX_CONNECTIONS_PER_ADDRESS", "TICK_S", "listen", "make_server",
           "serve", "ticker"]

log = logging.getLogger(__name__)

TICK_S = 0.1                 # the dead-man timer's resolution and the patches' pace
BACKLOG = 128
UVICORN_LIMIT = 2 * MAX_CONNECTIONS     # uvicorn's own 503 (connections being refused, requests of closed ones)
Tick = Callable[[float], Awaitable[None]]


def ticker(clock: Clock, tick_s: float = TICK_S) -> Callable[[Tick], Callable[[], None]]:
    """``start(tick)``: call ``tick(now_s)`` (``clock``'s monotonic seconds) every ``tick_s`` on the running loop;
    returns the stop."""
    def start(tick: Tick) -> Callable[[], None]:
        async def run() -> None:
            while True:
                await asyncio.sleep(tick_s)
                try:
                    await tick(clock.monotonic_s())
                except Exception:  # noqa: BLE001 - the tick must go on (the dead-man timer is in it)
                    log.exception("web tick failed")
        task = asyncio.ensure_future(run())
        return task.cancel
    return start


def listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound here first so that an address in use is a clear error (TableError)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # TCP named (socket.create_server leaves the protocol 0): asyncio turns Nagle's algorithm off only on a
    # connection whose socket says TCP; without it each answer on a kept-alive connection waited for the
    # phone's delayed acknowledgement (40 ms)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise TableError(f"--port {port}: cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    return sock


def make_server(app: Any, sock: socket.socket, cert: Path | None = None, key: Path | None = None) -> Any:
    """The uvicorn server of ``app`` on ``sock`` (run it with ``server.serve(sockets=[sock])``), with the
    connections bounded (:func:`firmware.web.connections.bounded_protocol`, one book per server)."""
    import uvicorn

    host, port = sock.getsockname()[:2]
    config = uvicorn.Config(app, host=host, port=port, loop="asyncio", http=bounded_protocol(), lifespan="on",
                            ssl_certfile=str(cert) if cert else None, ssl_keyfile=str(key) if key else None,
                            access_log=False, server_header=False, proxy_headers=False, log_config=None,
                            log_level="warning", limit_concurrency=UVICORN_LIMIT, timeout_graceful_shutdown=2,
                            timeout_keep_alive=20)
    return uvicorn.Server(config)


def serve(app: Any, host: str, port: int, cert: Path | None = None, key: Path | None = None,
          on_listening: Callable[[], None] | None = None) -> None:
    """Serve ``app`` on ``host:port`` until SIGINT or SIGTERM (uvicorn handles both)."""
    sock = listen(host, port)
    server = make_server(app, sock, cert, key)
    if on_listening is not None:
        on_listening()              # (connections wait in the socket's queue until the server accepts them)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(server.serve(sockets=[sock]))
    finally:
        sock.close()
