"""The fleet tests' rig: a link, its scripted adapter, outbox and table (tests/support/link_rig.py)."""

import pytest

from tests.support.link_rig import make_rig


@pytest.fixture
def rig():
    return make_rig()
