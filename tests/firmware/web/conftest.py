"""Fixtures of the web page's tests: a real table database of a played game."""

from __future__ import annotations

import pytest

from sim.table_run import SimRun


@pytest.fixture(scope="module")
def table_db(tmp_path_factory):
    """A table database with a game's hands and a jam in its fault history."""
    from sim.faults import parse_fault

    db = tmp_path_factory.mktemp("table") / "table.db"
    run = SimRun(hands=3, play=True, state_path=db, seed=3, faults=[parse_fault("jam:stacker1@stacking2")],
                 auto_ack_s=30.0)
    assert run.run(timeout_s=5000.0)
    run.close()
    return db
