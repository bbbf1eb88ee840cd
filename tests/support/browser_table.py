"""A simulated table with its web page for the browser tests: ``mjtable sim --web`` in a process group of its
own, watched through its own diagnostics socket; logging in and keeping screenshots (``MJTABLE_SCREENSHOTS``).
The browser is Debian's Chromium (tests/end_to_end/conftest.py hands it to pytest-playwright)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from firmware.diagnostics.socket.protocol import ask
from tests.support.web_fakes import PASSWORDS, users_file

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
START_S = 90.0
WAIT_MS = 60_000


class SimTable:
    """``mjtable sim --web PORT ...`` in its own process group (its page is a child of it)."""

    def __init__(self, folder: Path, *options: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.socket = folder / "diag.sock"
        self.url = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "firmware.cli.main", "sim", "--web", str(self.port), "--web-users",
                   str(users_file(folder)), "--diag-socket", str(self.socket), "--quiet", *options]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.lines: list[str] = []
        ready = threading.Event()

        def read() -> None:
            assert self.process.stderr is not None
            for line in self.process.stderr:
                self.lines.append(line.rstrip())
                if line.startswith("web page:"):
                    ready.set()
            ready.set()
        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(START_S) or self.process.poll() is not None:
            self.stop()
            pytest.fail("mjtable sim --web did not start: " + " / ".join(self.lines[-5:]))

    def status(self, component: str) -> dict[str, Any]:
        answer = ask(self.socket, {"cmd": "status", "components": [component]}, timeout_s=10)
        assert answer["ok"], answer
        return answer["status"][component]

    def until(self, component: str, check: Any, within_s: float = 60.0) -> tuple[dict[str, Any], float]:
        """Poll the table's own socket until ``check(component)``; the status and how long it took."""
        start = time.monotonic()
        while True:
            status = self.status(component)
            if check(status):
                return status, time.monotonic() - start
            assert time.monotonic() - start < within_s, f"{component} never got there: {status}"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)          # Ctrl-C: the run and its page end
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def log_in(page: Any, url: str, name: str) -> None:
    page.goto(url + "/login")
    page.fill("input[name=user]", name)
    page.fill("input[name=password]", PASSWORDS[name][0])
    page.click("form.login button[type=submit]")
    page.wait_for_url(url + "/")


def shoot(page: Any, tmp_path: Path, name: str, full_page: bool = True) -> None:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    keep = os.environ.get("MJTABLE_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, Path(keep) / path.name)
