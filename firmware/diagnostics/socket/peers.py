"""Who is on the other end of a diagnostics-socket connection, and what that client may ask.

The socket's mode lets root and the technicians' group connect; the web
page's service is in that group (it needs the status, acknowledgement and
the held service buttons) but must not be able to do everything a
technician at a terminal can: a web process taken over should not move
money (penalties, recorded wins), relearn the nominal times or start a
four-hour burn-in.  The kernel says which user opened a connection
(``SO_PEERCRED``); the server looks that user up in its ``limited`` map and
refuses any other command to it.
"""

from __future__ import annotations

import logging
import pwd
import socket
import struct
from typing import Any, Mapping

from firmware.i18n import worded_text

log = logging.getLogger(__name__)

_UCRED = struct.Struct("3i")          # pid, uid, gid (Linux)


def peer_uid(sock: socket.socket) -> int | None:
    """The user id of the process that opened this Unix-socket connection (None: the system cannot say)."""
    try:
        _pid, uid, _gid = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size))
    except (AttributeError, OSError, struct.error):
        return None
    return uid


def limits_for_users(limits: Mapping[str, frozenset[str]]) -> dict[int, frozenset[str]]:
    """``{user name: commands}`` as ``{uid: commands}``, for the users that exist on this system."""
    out: dict[int, frozenset[str]] = {}
    for name, commands in limits.items():
        try:
            out[pwd.getpwnam(name).pw_uid] = frozenset(commands)
        except KeyError:
            log.info("diag socket: no user %s here; nothing to limit", name)
    return out


def refusal(allowed: frozenset[str] | None, request: dict[str, Any]) -> str | None:
    """Why this client may not make ``request`` (None: it may)."""
    if allowed is None:
        return None
    cmd = request.get("cmd")
    if isinstance(cmd, str) and cmd.replace("-", "_") in allowed:
        return None
    return worded_text("%(cmd)s is not for this client (it may: %(allowed)s)", cmd=f"{cmd!r:.40}",
                       allowed=", ".join(sorted(allowed)))
