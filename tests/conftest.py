"""Fixtures of every test: gpiozero's global pin factory left alone; the tournament databases (SQLite and
PostgreSQL), used by tests/parlour and tests/end_to_end."""

from __future__ import annotations

import os

import pytest
from gpiozero import Device


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
