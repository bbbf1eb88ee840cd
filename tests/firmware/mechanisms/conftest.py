"""The mechanisms' tests: a simulated table on virtual time, isolated per test."""

from __future__ import annotations

import pytest

from sim.harness import SimTable


@pytest.fixture
def sim():
    table = SimTable(seed=1)
    yield table
    table.close()
