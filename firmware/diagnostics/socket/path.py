"""Where the technician's socket lives: opening it at a path without ever replacing what another owns.

At start the path is replaced only if it holds a stale socket (one nobody
answers on, left by a service that stopped without removing it): a live
socket, a file, a folder or a link there is a :class:`DiagSocketError`
naming the path, and nothing is removed.  The new socket is bound,
restricted (mode, group) and listening under a temporary name first, then
linked into place, so a client never finds the path before it accepts
connections nor while anyone may connect; at stop only the server's own
socket is removed, not one another server put there since.
"""

from __future__ import annotations

import grp
import logging
import os
import socket
import stat
from pathlib import Path

from firmware.faults import TableError

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 1.0                # is anyone answering on an existing socket file


class DiagSocketError(TableError, OSError):
    """The socket cannot be opened at its path (the message names the path and why)."""


def listening_socket(path: Path, mode: int, group: str | None, backlog: int) -> tuple[socket.socket, tuple[int, int]]:
    """A Unix stream socket listening at ``path`` (mode ``mode``, group ``group`` where allowed) and the
    (device, inode) it has there."""
    staging = path.with_name(path.name + ".new")
    for where in (path, staging):
        clear_stale_socket(where)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DiagSocketError(f"{path}: cannot make its folder {path.parent}: {exc.strerror or exc}") from None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    bound = False
    try:
        try:
            sock.bind(str(staging))
        except OSError as exc:
            raise DiagSocketError(f"{staging}: cannot open the diag socket there: {exc.strerror or exc}") from None
        bound = True
        os.chmod(staging, mode)
        if group:
            try:
                os.chown(staging, -1, grp.getgrnam(group).gr_gid)
            except (KeyError, PermissionError):
                log.info("diag socket: group %s not set (missing, or not allowed)", group)
        sock.listen(backlog)
        _move_into_place(staging, path)
    except BaseException:
        sock.close()
        if bound and staging.is_socket():
            staging.unlink()
        raise
    info = os.stat(path)
    return sock, (info.st_dev, info.st_ino)


def remove_own_socket(path: Path, inode: tuple[int, int] | None) -> None:
    """Remove ``path`` if it is still the socket this server made (``inode``)."""
    try:
        info = os.lstat(path)
        if inode == (info.st_dev, info.st_ino):
            path.unlink()
    except FileNotFoundError:
        pass


def clear_stale_socket(path: Path) -> None:
    """Make room at ``path``: nothing there, or a socket nobody answers on (removed).  Anything else is
    a :class:`DiagSocketError` naming the path, and stays as it is."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise DiagSocketError(f"{path}: cannot look at it: {exc.strerror or exc}") from None
    if not stat.S_ISSOCK(info.st_mode):
        kind = ("a folder" if stat.S_ISDIR(info.st_mode) else "a symbolic link" if stat.S_ISLNK(info.st_mode)
                else "a regular file" if stat.S_ISREG(info.st_mode) else "a special file")
        raise DiagSocketError(f"{path} is {kind}, not a socket: not replacing it (move it away, or choose "
                              f"another --diag-socket PATH)")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(PROBE_TIMEOUT_S)
        try:
            probe.connect(str(path))
        except ConnectionRefusedError:
            pass                                   # stale: left by a service that stopped without removing it
        except OSError as exc:
            raise DiagSocketError(f"{path}: cannot tell whether a service answers on this socket "
                                  f"({exc.strerror or exc}): not replacing it") from None
        else:
            raise DiagSocketError(f"{path}: another service is answering on this socket: not replacing it "
                                  f"(stop it, or choose another --diag-socket PATH)")
    again = os.lstat(path)
    if (again.st_dev, again.st_ino) == (info.st_dev, info.st_ino):
        path.unlink()
        log.info("diag socket: removed the stale socket %s", path)


def _move_into_place(staging: Path, path: Path) -> None:
    """The listening socket under its real name, without replacing anything that appeared there since
    it was checked (a hard link fails when the name is taken); where links are not possible, a rename."""
    try:
        os.link(staging, path)
    except FileExistsError:
        raise DiagSocketError(f"{path}: something appeared there while the diag socket was opened: "
                              f"not replacing it") from None
    except OSError:
        os.rename(staging, path)
        return
    staging.unlink()
