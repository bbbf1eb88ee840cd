"""Fixtures of every test: gpiozero's global pin factory left alone; the tournament databases (SQLite and
PostgreSQL), used by tests/parlour and tests/end_to_end; under pytest-xdist, a test marked ``alone`` runs with no
other beside it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from pathlib import Path
from typing import Iterator

import pytest
from gpiozero import Device

_LOCKS: dict[str, int] = {}


def _lock_fd(name: str) -> int:
    """This process's descriptor of the run's lock file ``name`` (one per run of pytest-xdist, by its run id)."""
    if name not in _LOCKS:
        path = Path(tempfile.gettempdir()) / f"mjtable-tests-{os.environ['PYTEST_XDIST_TESTRUNUID']}.{name}"
        _LOCKS[name] = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    return _LOCKS[name]


@contextlib.contextmanager
def _turn(alone: bool) -> Iterator[None]:
    """A test's turn among the workers: a test marked ``alone`` holds the run's lock exclusively, the others share
    it; the turnstile, held while a test waits for the lock, lets no shared test overtake an exclusive one that
    waits.  One process (no pytest-xdist): nothing to wait for."""
    if "PYTEST_XDIST_TESTRUNUID" not in os.environ:
        yield
        return
    turnstile, lock = _lock_fd("turnstile"), _lock_fd("lock")
    fcntl.flock(turnstile, fcntl.LOCK_EX)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
    finally:
        fcntl.flock(turnstile, fcntl.LOCK_UN)
    try:
        yield
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Under pytest-xdist (``make test`` runs two workers), a test with real-time bounds that a busy neighbour
    could break (``@pytest.mark.alone``) runs while no other test does."""
    with _turn(item.get_closest_marker("alone") is not None):
        yield


@pytest.fixture(autouse=True)
def _isolate_gpiozero_global_factory():
    """Every device gets pin_factory= explicitly; make sure no test leaks a global one."""
    saved = Device.pin_factory
    yield
    assert Device.pin_factory is saved, "a test set gpiozero's global pin factory"


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server for the run (see tests/support/postgres_server.py)."""
    from tests.support.postgres_server import Databases, server_url
    url, cluster = server_url()
    yield Databases(url)
    if cluster is not None:
        cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def tourney_db(request, tmp_path):
    """A tournament database URL: a SQLite file, then a fresh PostgreSQL database (the same tests on both)."""
    if request.param == "sqlite":
        yield str(tmp_path / "tourney.db")
        return
    databases = request.getfixturevalue("postgres_server")
    url = databases.create()
    yield url
    databases.drop(url)


# The command line speaks the environment's language: the tests read its English unless one says otherwise
# (tests/firmware/cli/test_cli_languages.py sets the environment it means)
os.environ["LANGUAGE"] = "en"
