"""The technician's socket protocol: a request line, its limits, and the client that asks a running controller.

A request is one JSON object on one line (at most ``MAX_LINE_BYTES``), with
``cmd`` and optionally ``timeout_s``, how long the server waits for the
controller's answer (a long burn-in: up to ``MAX_REPLY_TIMEOUT_S``).  The
answer is one JSON line.  :mod:`firmware.diagnostics.socket.server` serves it; :func:`ask` is
the client of ``mjtable diag``, :func:`subscribe` its client of the status
stream (:mod:`firmware.diagnostics.socket.subscriptions`: a snapshot, then the changed fields).
"""

from __future__ import annotations

import json
import math
import socket
import struct
from pathlib import Path
from typing import Any, Iterator

from firmware.i18n import worded

REPLY_TIMEOUT_S = 60.0
MAX_REPLY_TIMEOUT_S = 4 * 3600.0     # a long burn-in
MIN_REPLY_TIMEOUT_S = 0.1            # (a shorter one only makes requests pile up on the loop)
MAX_LINE_BYTES = 64 * 1024
CONNECT_TIMEOUT_S = 10.0             # a client waits this long for the server to accept


class BadRequest(ValueError):
    """A line that is not a request the server can pass on."""


def parse_request(line: bytes) -> dict[str, Any]:
    """A request line as a JSON object; :class:`BadRequest` with the reason for anything else."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise worded(BadRequest, "not UTF-8 text (%(reason)s at byte %(byte)s)", reason=exc.reason,
                     byte=exc.start) from None
    try:
        request = json.loads(text)
    except RecursionError:
        raise worded(BadRequest, "JSON nested too deep") from None
    except ValueError as exc:
        raise worded(BadRequest, "not JSON (%(detail)s)", detail=str(exc)) from None
    if not isinstance(request, dict):
        raise worded(BadRequest, "a request is a JSON object")
    return request


def seconds_field(value: Any, field: str, least_s: float, most_s: float) -> float:
    """A request field's ``value`` as seconds within ``least_s``..``most_s``; :class:`BadRequest` for anything
    else: not a number, a boolean, not finite, or an integer too large for a float (JSON's integers have no
    bound: ``float()`` of one raises OverflowError, which must not reach the serving thread)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise worded(BadRequest, "%(field)s is a number of seconds, not %(got)s", field=field, got=f"{value!r:.40}")
    try:
        seconds = float(value)
    except OverflowError:
        seconds = math.inf
    if not (math.isfinite(seconds) and least_s <= seconds <= most_s):
        raise worded(BadRequest, "%(field)s between %(least)s and %(most)s s, not %(got)s", field=field,
                     least=f"{least_s:g}", most=f"{most_s:g}", got=f"{value!r:.40}")
    return seconds


def reply_timeout_s(request: dict[str, Any]) -> float:
    """How long the server waits for the loop: the request's ``timeout_s`` (long tests), within 0.1 s..4 h."""
    return seconds_field(request.get("timeout_s", REPLY_TIMEOUT_S), "timeout_s", MIN_REPLY_TIMEOUT_S,
                         MAX_REPLY_TIMEOUT_S)


MIN_LEASE_S, MAX_LEASE_S = 0.2, 10.0


def lease_s(request: dict[str, Any]) -> float | None:
    """A held request's lease (``lease_s``: the client keeps its test going by sending a byte at least this
    often; None: no lease), within 0.2..10 s."""
    value = request.get("lease_s")
    return None if value is None else seconds_field(value, "lease_s", MIN_LEASE_S, MAX_LEASE_S)


def ask(path: str | Path, request: dict[str, Any], timeout_s: float = REPLY_TIMEOUT_S) -> dict[str, Any]:
    """One request to a running controller's diag socket; the server waits as long as the client."""
    if not (isinstance(timeout_s, (int, float)) and math.isfinite(timeout_s)
            and MIN_REPLY_TIMEOUT_S <= timeout_s <= MAX_REPLY_TIMEOUT_S):
        raise ValueError(f"a timeout between {MIN_REPLY_TIMEOUT_S:g} and {MAX_REPLY_TIMEOUT_S:g} s, "
                         f"not {timeout_s!r}")
    request = {**request, "timeout_s": timeout_s}
    with _connect(path) as sock:
        sock.settimeout(timeout_s + 5.0)
        with sock.makefile("rwb") as stream:
            stream.write(json.dumps(request).encode() + b"\n")
            stream.flush()
            line = stream.readline()
    if not line:
        raise ConnectionError(f"{path}: the controller closed the connection")
    return json.loads(line)


def subscribe(path: str | Path, components: list[str] | None = None, tick_s: float | None = None,
              silence_s: float = 30.0) -> Iterator[dict[str, Any]]:
    """Subscribe to a running controller's status: yields the snapshot answer, then every patch and
    heartbeat line as it comes, until the server ends the stream (or says nothing for ``silence_s``:
    ``TimeoutError``; the server sends a heartbeat every few seconds)."""
    request: dict[str, Any] = {"cmd": "subscribe"}
    if components is not None:
        request["components"] = components
    if tick_s is not None:
        request["tick_s"] = tick_s
    with _connect(path) as sock:
        sock.settimeout(silence_s)
        with sock.makefile("rwb") as stream:
            stream.write(json.dumps(request).encode() + b"\n")
            stream.flush()
            for line in stream:
                yield json.loads(line)


def _connect(path: str | Path) -> socket.socket:
    """A connected socket to the controller, or a ConnectionError that says why not."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    # a blocking connect waits while the server's queue of connections to accept is full (one with a
    # timeout fails at once then); SO_SNDTIMEO bounds that wait
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", int(CONNECT_TIMEOUT_S), 0))
    try:
        sock.connect(str(path))
    except BaseException as exc:
        sock.close()
        if isinstance(exc, FileNotFoundError):
            raise ConnectionError(f"no controller is listening on {path} (is the service running?)") from None
        if isinstance(exc, ConnectionRefusedError):
            raise ConnectionError(f"no controller is listening on {path} (a socket left behind: is the "
                                  f"service running?)") from None
        if isinstance(exc, PermissionError):
            raise ConnectionError(f"{path}: permission denied (root or the technicians' group only)") from None
        if isinstance(exc, (BlockingIOError, TimeoutError)):
            raise ConnectionError(f"{path}: the controller accepts no connection (too many clients?)") from None
        raise
    return sock
