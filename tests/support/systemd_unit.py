"""The table's service unit run as systemd runs it, in a test root: the start guard, READY, the restarts.

:class:`UnitRunner` reads ``ROOT/etc/systemd/system/mjtable.service`` as
``mjtable install`` wrote it and carries out its start sequence again and
again: ``ExecStartPre`` (the start guard, as root), ``ExecStart`` with a
real ``NOTIFY_SOCKET`` (READY=1 read from it), ``ExecStartPost`` once READY
came; when the service exits, ``Restart=on-failure`` and
``RestartForceExitStatus=`` decide whether it is started again (at most
``StartLimitBurst`` times).  Paths under ``/etc/mjtable``, ``/opt/mjtable``
and the table database are pointed into the root; ``extra`` arguments are
added to ``ExecStart`` (``--sim``: there are no pins here).
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path


class UnitRunner:
    def __init__(self, root: Path, folder: Path, extra: list[str]) -> None:
        self.root = root
        self.folder = folder
        self.log_path = folder / "service.log"
        text = (root / "etc/systemd/system/mjtable.service").read_text()
        lines = dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))
        pre = shlex.split(lines["ExecStartPre"].lstrip("+"))
        post = shlex.split(lines["ExecStartPost"].lstrip("+"))
        start = shlex.split(lines["ExecStart"])
        self.restart_on_failure = lines.get("Restart") == "on-failure"
        self.force_restart = {int(c) for c in lines.get("RestartForceExitStatus", "").split()}
        self.success = {0} | {int(c) for c in lines.get("SuccessExitStatus", "").split()}
        self.burst = int(lines.get("StartLimitBurst", "5"))
        db = "/var/lib/mjtable/table.db"
        self.pre = [sys.executable, str(root) + pre[0], *pre[1:]]
        self.post = [sys.executable, str(root) + post[0], *post[1:]]
        self.start_cmd = [str(root) + start[0], *(str(root) + a if a in ("/etc/mjtable", db) else a
                                                  for a in start[1:]), *extra]
        self.exits: list[int] = []
        self.readies = 0
        self.gave_up = ""
        self.process: subprocess.Popen | None = None
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="unit", daemon=True)

    def start(self) -> "UnitRunner":
        self.thread.start()
        return self

    def _run(self) -> None:
        while not self.stopped.is_set():
            if len(self.exits) >= self.burst:
                self.gave_up = f"start limit: {len(self.exits)} starts"
                return
            guard = subprocess.run(self.pre, capture_output=True, text=True)
            if guard.returncode != 0:
                self.gave_up = f"the start guard failed: {guard.stderr.strip()}"
                return
            code = self._one_start()
            self.exits.append(code)
            if self.stopped.is_set():
                return
            if code in self.force_restart or (code not in self.success and self.restart_on_failure):
                continue
            return

    def _one_start(self) -> int:
        path = str(self.folder / "notify.sock")
        if os.path.exists(path):
            os.unlink(path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        listener.bind(path)
        listener.settimeout(0.2)
        try:
            env = dict(os.environ, NOTIFY_SOCKET=path)
            env.pop("PYTHONPATH", None)            # (the release's own modules, never the checkout's)
            with open(self.log_path, "a") as log:
                self.process = subprocess.Popen(self.start_cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                                cwd=self.folder)
            ready = False
            while True:                            # read as systemd does, while the service runs
                try:
                    message = listener.recv(4096)
                    if b"READY=1" in message and not ready:
                        ready = True
                        self.readies += 1
                        subprocess.run(self.post, capture_output=True, check=True)
                except (socket.timeout, BlockingIOError):
                    if self.process.poll() is not None:
                        break
            return self.process.wait(timeout=60)
        finally:
            listener.close()

    def stop(self) -> None:
        self.stopped.set()
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        self.thread.join(timeout=60)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
