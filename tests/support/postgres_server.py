"""A real PostgreSQL for the tournament tests: the machine's server, or one started for the run; a database per test.

``MJTABLE_TEST_PG`` names a server (default ``postgresql://postgres@127.0.0.1:5432/postgres``, the local one
with trust authentication).  When nothing answers there and Debian's server binaries are installed, a
throw-away cluster is started in a temporary folder on a free port (as the ``postgres`` user when the tests
run as root).  Without either the tests skip on a developer's machine and fail under CI (``CI=true``).  Each
test gets a database of its own, dropped afterwards.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

DEFAULT = "postgresql://postgres@127.0.0.1:5432/postgres"
START_TIMEOUT_S = 30.0


def _answers(url: str) -> bool:
    import psycopg
    try:
        with psycopg.connect(url, connect_timeout=3):
            return True
    except psycopg.OperationalError:
        return False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OwnCluster:
    """A cluster in a temporary folder, started with Debian's binaries and stopped at the end of the run."""

    def __init__(self) -> None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not found:
            raise FileNotFoundError("no PostgreSQL server binaries (apt-get install postgresql)")
        self.bin = Path(found[-1]).parent
        self.folder = Path(tempfile.mkdtemp(prefix="mjtable-pg-"))
        self.port = _free_port()
        self.user = None
        if os.geteuid() == 0:
            self.user = "postgres"
            info = pwd.getpwnam(self.user)
            os.chown(self.folder, info.pw_uid, info.pw_gid)
        self._run([str(self.bin / "initdb"), "-D", str(self.folder / "data"), "-A", "trust", "-U", "postgres"])
        self.proc = subprocess.Popen(self._as([str(self.bin / "postgres"), "-D", str(self.folder / "data"),
                                               "-p", str(self.port), "-k", str(self.folder), "-h", "127.0.0.1"]),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _answers(self.url):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the PostgreSQL started for the tests did not come up")
            try:
                self.proc.wait(0.2)
            except subprocess.TimeoutExpired:
                pass

    def _as(self, argv: list[str]) -> list[str]:
        return ["runuser", "-u", self.user, "--", *argv] if self.user else argv

    def _run(self, argv: list[str]) -> None:
        subprocess.run(self._as(argv), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


def server_url() -> tuple[str, OwnCluster | None]:
    """A server's URL (and the cluster started for it, if any); skip or fail (CI=true) when there is none."""
    url = os.environ.get("MJTABLE_TEST_PG", DEFAULT)
    try:
        if _answers(url):
            return url, None
        cluster = OwnCluster()
        return cluster.url, cluster
    except (ImportError, OSError, RuntimeError, subprocess.CalledProcessError, KeyError) as exc:
        why = f"no PostgreSQL at {url} and none could be started ({exc})"
        if os.environ.get("CI") == "true":
            pytest.fail(why + " (CI=true)")
        pytest.skip(why)


class Databases:
    """Fresh databases on one server, each dropped when the test ends."""

    def __init__(self, url: str) -> None:
        self.url = url

    def create(self) -> str:
        import psycopg
        name = "mjt_test_" + secrets.token_hex(6)
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url.rsplit("/", 1)[0] + "/" + name

    def drop(self, url: str) -> None:
        import psycopg
        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
