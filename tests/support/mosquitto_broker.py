"""A real Mosquitto for the fleet tests: its own process, a free loopback port, a configuration in the test's folder.

Tests that need a broker use the ``broker`` fixture (plain, anonymous) or
build a :class:`Mosquitto` with the configuration ``mjtable fleet
broker-config`` writes (TLS, client certificates, passwords, ACL).  Without
the ``mosquitto`` binary they are skipped on a developer's machine and fail
under CI (``CI=true``: ``.ci/run`` installs the Debian package).  Nothing
sleeps: start-up polls the port against a deadline, and waiting between
polls is the process's own ``wait`` (which also notices a broker that
exited with a configuration error).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

START_TIMEOUT_S = 10.0


def mosquitto_binary() -> str:
    """The broker's binary; skip (fail under CI) when it is not installed."""
    found = shutil.which("mosquitto") or next((p for p in ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto")
                                               if os.access(p, os.X_OK)), None)
    if found:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("mosquitto is not installed (CI=true: .ci/run installs the Debian package 'mosquitto')")
    pytest.skip("mosquitto is not installed (apt-get install mosquitto)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Mosquitto:
    """One broker process on ``127.0.0.1:port`` with the configuration text ``conf`` (written to ``folder``)."""

    def __init__(self, folder: Path, conf: str, port: int, extra_ports: tuple[int, ...] = ()) -> None:
        self.binary = mosquitto_binary()
        self.folder = folder
        self.port = port
        self.ports = (port, *extra_ports)
        self.conf_path = folder / "mosquitto-test.conf"
        run_as = "user root\n" if os.geteuid() == 0 else ""      # (as root it would switch to 'mosquitto')
        self.conf_path.write_text(run_as + conf, encoding="utf-8")
        self.log_path = folder / "mosquitto.log"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> "Mosquitto":
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen([self.binary, "-c", str(self.conf_path)], stdout=log, stderr=log,
                                     stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        waiting = list(self.ports)
        while waiting:
            try:
                with socket.create_connection(("127.0.0.1", waiting[0]), timeout=0.2):
                    waiting.pop(0)
                    continue
            except OSError:
                pass
            try:
                self.proc.wait(timeout=0.02)                  # (the wait between polls; returns if it exited)
                raise RuntimeError(f"mosquitto exited ({self.proc.returncode}): {self.log()[-2000:]}")
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"mosquitto did not listen on {waiting[0]} within {START_TIMEOUT_S} s: "
                                   f"{self.log()[-2000:]}")
        return self

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop the broker (SIGTERM: it saves its persistence file; SIGKILL: a crash)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""


def plain_conf(port: int, folder: Path) -> str:
    """Anonymous MQTT on a loopback port, retained messages kept across a restart."""
    (folder / "data").mkdir(exist_ok=True)
    return (f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence true\n"
            f"persistence_location {folder / 'data'}/\nautosave_interval 1\n")


@pytest.fixture
def broker(tmp_path: Path):
    folder = tmp_path / "broker"
    folder.mkdir()
    port = free_port()
    b = Mosquitto(folder, plain_conf(port, folder), port).start()
    yield b
    b.stop()
