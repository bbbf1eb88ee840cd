"""The web service's client of the controller's local socket (asyncio): ask, start a held action, subscribe.

Every request opens its own connection, as ``mjtable diag`` does, so that an
action that runs (a jog, a service test) keeps its connection until the
controller answers: closing it is the controller's signal that the client is
gone (it stops that test, see :mod:`firmware.diagnostics.socket.server`).  The server answers
every request within the request's ``timeout_s`` itself, so nothing here
keeps time.  Failures are answers (``{"ok": false, "error": ...}``), never
exceptions into a page.  :class:`Control` is what the app needs; tests give
it a fake.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any, AsyncIterator, Protocol

log = logging.getLogger(__name__)

WEB_USER = "mjtable-web"        # the web service's own user (its unit's User=)
# What the web service asks the controller, and all its user may ask (the socket refuses it anything else)
COMMANDS_USED = frozenset({"subscribe", "unsubscribe", "status", "state", "ack", "stop", "jog", "test",
                           "session", "players", "game", "log", "faults", "bundle"})
ASK_TIMEOUT_S = 30.0
HELD_TIMEOUT_S = 600.0          # a held action's own limit at the server (the dead-man stops it long before)
MAX_LINE_BYTES = 1024 * 1024
SUBSCRIBE_TICK_S = 0.25


class Held(Protocol):
    """An action under way on its own connection."""

    answer: "asyncio.Future[dict[str, Any]]"

    def close(self) -> None:
        """Let go of the connection (the controller stops the action if it has not answered)."""

    def renew(self) -> None:
        """Renew the request's lease (``lease_s``): one byte on its connection."""


class Control(Protocol):
    async def ask(self, request: dict[str, Any], timeout_s: float = ASK_TIMEOUT_S) -> dict[str, Any]: ...

    async def begin(self, request: dict[str, Any], timeout_s: float = HELD_TIMEOUT_S) -> Held: ...

    def subscribe(self, tick_s: float = SUBSCRIBE_TICK_S) -> AsyncIterator[dict[str, Any]]: ...


class _SocketHeld:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, where: str) -> None:
        self._writer = writer
        self.answer: asyncio.Future[dict[str, Any]] = asyncio.ensure_future(_read_answer(reader, where))

    def close(self) -> None:
        if not self._writer.is_closing():
            self._writer.close()
        if not self.answer.done():
            self.answer.cancel()

    def renew(self) -> None:
        if not self._writer.is_closing() and not self.answer.done():
            self._writer.write(b"\n")


class SocketControl:
    """The controller's socket at ``path`` (``/run/mjtable/diag.sock`` on a table)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            return await asyncio.open_unix_connection(str(self.path), limit=MAX_LINE_BYTES)
        except FileNotFoundError:
            raise ConnectionError(f"no controller is listening on {self.path} (is the service running?)") from None
        except PermissionError:
            raise ConnectionError(f"{self.path}: permission denied (the web user needs the technicians' "
                                  f"group)") from None
        except OSError as exc:
            raise ConnectionError(f"{self.path}: {exc.strerror or exc}") from None

    async def begin(self, request: dict[str, Any], timeout_s: float = HELD_TIMEOUT_S) -> Held:
        reader, writer = await self._open()
        writer.write(json.dumps({**request, "timeout_s": timeout_s}).encode() + b"\n")
        await writer.drain()
        return _SocketHeld(reader, writer, str(self.path))

    async def ask(self, request: dict[str, Any], timeout_s: float = ASK_TIMEOUT_S) -> dict[str, Any]:
        try:
            held = await self.begin(request, timeout_s)
        except (ConnectionError, OSError) as exc:
            return {"ok": False, "error": str(exc)}
        try:
            return await held.answer
        finally:
            held.close()

    async def subscribe(self, tick_s: float = SUBSCRIBE_TICK_S) -> AsyncIterator[dict[str, Any]]:
        """The controller's status stream; ends (ConnectionError) when the connection does."""
        reader, writer = await self._open()
        try:
            writer.write(json.dumps({"cmd": "subscribe", "tick_s": tick_s}).encode() + b"\n")
            await writer.drain()
            while True:
                line = await reader.readline()
                if not line:
                    raise ConnectionError("the controller closed the connection")
                yield json.loads(line)
        finally:
            writer.close()


async def _read_answer(reader: asyncio.StreamReader, where: str) -> dict[str, Any]:
    try:
        line = await reader.readline()
    except (OSError, ValueError) as exc:
        return {"ok": False, "error": f"{where}: {exc}"}
    if not line:
        return {"ok": False, "error": f"{where}: the controller closed the connection"}
    try:
        answer = json.loads(line)
    except ValueError:
        return {"ok": False, "error": f"{where}: an answer that is not JSON"}
    return answer if isinstance(answer, dict) else {"ok": False, "error": f"{where}: an answer that is not an object"}
