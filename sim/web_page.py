"""The web page of a simulated table (``mjtable sim --web PORT``): the real ``mjtable web`` in its own process.

As on a table, the page is a process of its own that talks to the
controller only through its socket and reads the table database read-only:
the simulated run opens its technician's socket, and this starts ``mjtable
web`` against it on a loopback address (plain HTTP: nothing leaves the
machine).  Unless a users file is given (``--web-users``, made with
``mjtable web passwd``), two users are made for the run with new random
passwords, a technician ``tech`` and a staff member ``staff``, and printed.
The page stops with the run.
"""

from __future__ import annotations

import logging
import secrets
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from firmware.faults import TableError

log = logging.getLogger(__name__)

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 5.0


class SimWebPage:
    def __init__(self, port: int, socket_path: Path, state_path: Path, users: Path | None = None,
                 host: str = "127.0.0.1") -> None:
        self.port, self.socket_path, self.state_path, self.host = port, socket_path, state_path, host
        self._tmp: tempfile.TemporaryDirectory | None = None
        self.logins: list[tuple[str, str, str]] = []       # (name, password, role) made for this run
        if users is None:
            from firmware.web.users import Role, Users

            self._tmp = tempfile.TemporaryDirectory(prefix="mjtable-web-")
            users = Path(self._tmp.name) / "users.json"
            made = Users.load(users)
            for name, role in (("tech", Role.TECHNICIAN), ("staff", Role.STAFF)):
                password = secrets.token_urlsafe(9)
                made.set_password(name, password, role)
                self.logins.append((name, password, role.value))
        self.users = users
        self.url = f"http://{host}:{port}/"
        self._process: subprocess.Popen | None = None
        self._lines: list[str] = []

    def start(self) -> None:
        """Start the page and wait until it listens; TableError with its words when it cannot."""
        command = [sys.executable, "-m", "firmware.cli.main", "web", "--socket", str(self.socket_path),
                   "--state", str(self.state_path), "--users", str(self.users), "--host", self.host,
                   "--port", str(self.port), "--simulated", "--table-name", "mjtable sim"]
        self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE, text=True)
        listening = threading.Event()

        def forward() -> None:
            assert self._process is not None and self._process.stderr is not None
            for line in self._process.stderr:
                self._lines.append(line.rstrip())
                if line.startswith("web page:"):
                    listening.set()
                else:
                    print(line.rstrip(), file=sys.stderr)
            listening.set()
        threading.Thread(target=forward, name="web-page-log", daemon=True).start()
        listening.wait(START_TIMEOUT_S)
        if self._process.poll() is not None or not any(line.startswith("web page:") for line in self._lines):
            self.stop()
            last = next((line for line in reversed(self._lines) if line.strip()), "no word from it")
            raise TableError(f"--web {self.port}: the web page did not start ({last.removeprefix('mjtable: ')})")

    def describe(self) -> str:
        logins = "; ".join(f"{name} / {password} ({role})" for name, password, role in self.logins)
        return f"web page: {self.url}" + (f"  log in as {logins}" if logins else f"  (users: {self.users})")

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
