"""The technician's local socket: JSON lines over a Unix stream socket, answered on the loop.

The service opens it (``/run/mjtable/diag.sock``); the file is mode 0660 and,
when the group exists, owned by the technicians' group, so only root and
that group may connect.  Each connection sends one JSON request per line;
a thread reads it, posts it to the controller's loop and writes the reply
back when the loop has answered (or a timeout error).
"""

from __future__ import annotations

import grp
import json
import logging
import os
import queue
import socket
import threading
from pathlib import Path
from typing import Any, Callable

log = logging.getLogger(__name__)

REPLY_TIMEOUT_S = 60.0
MAX_REPLY_TIMEOUT_S = 4 * 3600.0     # a long burn-in


class DiagSocketServer:
    def __init__(self, path: str | Path, post: Callable[..., None],
                 handle: Callable[[dict[str, Any], Callable[[dict[str, Any]], None]], None],
                 group: str | None = "mjtable-tech", mode: int = 0o660) -> None:
        self.path = Path(path)
        self._post = post
        self._handle = handle
        self.group, self.mode = group, mode
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def start(self) -> None:
        if self.path.exists():
            self.path.unlink()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Bound, restricted and listening under a temporary name, then renamed into place: a client
        # never finds the path before it accepts connections, nor while anyone may connect.
        staging = self.path.with_name(self.path.name + ".new")
        if staging.exists():
            staging.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(staging))
        os.chmod(staging, self.mode)
        if self.group:
            try:
                os.chown(staging, -1, grp.getgrnam(self.group).gr_gid)
            except (KeyError, PermissionError):
                log.info("diag socket: group %s not set (missing, or not allowed)", self.group)
        sock.listen(4)
        os.rename(staging, self.path)
        sock.settimeout(0.2)
        self._sock = sock
        self._thread = threading.Thread(target=self._serve, name="diag-socket", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._sock is not None:
            self._sock.close()
        if self.path.exists():
            self.path.unlink()

    def _serve(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            threading.Thread(target=self._client, args=(conn,), daemon=True).start()

    def _client(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rw", encoding="utf-8") as stream:
            for line in stream:
                try:
                    request = json.loads(line)
                    if not isinstance(request, dict):
                        raise ValueError("a request is a JSON object")
                except ValueError as exc:
                    answer: dict[str, Any] = {"ok": False, "error": f"bad request: {exc}"}
                else:
                    answers: queue.Queue = queue.Queue()
                    self._post(self._handle, request, answers.put)
                    try:
                        answer = answers.get(timeout=_reply_timeout_s(request))
                    except queue.Empty:
                        answer = {"ok": False, "error": "the controller did not answer"}
                stream.write(json.dumps(answer, default=str, ensure_ascii=False) + "\n")
                stream.flush()


def _reply_timeout_s(request: dict[str, Any]) -> float:
    """How long the server waits for the loop: the request's ``timeout_s`` (long tests), capped."""
    try:
        return min(float(request.get("timeout_s", REPLY_TIMEOUT_S)), MAX_REPLY_TIMEOUT_S)
    except (TypeError, ValueError):
        return REPLY_TIMEOUT_S


def ask(path: str | Path, request: dict[str, Any], timeout_s: float = REPLY_TIMEOUT_S) -> dict[str, Any]:
    """One request to a running controller's diag socket; the server waits as long as the client."""
    request = {**request, "timeout_s": timeout_s}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s + 5.0)
        try:
            sock.connect(str(path))
        except FileNotFoundError:
            raise ConnectionError(f"no controller is listening on {path} (is the service running?)") from None
        except PermissionError:
            raise ConnectionError(f"{path}: permission denied (root or the technicians' group only)") from None
        with sock.makefile("rw", encoding="utf-8") as stream:
            stream.write(json.dumps(request) + "\n")
            stream.flush()
            line = stream.readline()
    if not line:
        raise ConnectionError(f"{path}: the controller closed the connection")
    return json.loads(line)
