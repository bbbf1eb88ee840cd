"""The faults page's warnings (shuffle bias, parts wearing) as a fragment the page fetches again whenever its
event stream brings a change of the ``warnings`` component (``static/mjtable.js``; in a browser:
``tests/end_to_end/test_web_warnings_browser.py``)."""

import pytest

from tests.support.sealed_run import sealed_game
from tests.support.web_fakes import STATUS, WebTable

BIASED = {"fairness": [{"chart": "wall:same_suit", "seat": None, "pattern": "same_suit", "hand": 10, "hands": 10,
                        "statistic": 16.5, "threshold": 16.0, "observed_mean": 41.4, "fair_mean": 31.22}],
          "maintenance": []}


@pytest.fixture(scope="module")
def table_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("warnings") / "table.db"
    sealed_game(db, hands=1)
    return db


def test_the_warnings_fragment_follows_the_controller_s_patches(tmp_path, table_db):
    with WebTable(tmp_path, table_db) as web:
        web.push({"ok": True, "snapshot": {**STATUS, "warnings": {"fairness": [], "maintenance": []}}, "at_s": 1.0,
                  "tick_s": 0.25})
        assert web.client.get("/faults/warnings", follow_redirects=False).status_code == 303     # (staff only)
        web.login("staff")
        page = web.client.get("/faults").text
        assert 'id="warning-list"' in page and "The shuffle looks biased" not in page
        before = web.client.get("/faults/warnings").text
        assert "<html" not in before and "none" in before and "The shuffle looks biased" not in before
        web.push({"patch": {"warnings": BIASED}, "at_s": 2.0})
        after = web.client.get("/faults/warnings").text
        assert "The shuffle looks biased" in after and "consecutive" not in after
        assert "Neighbouring tiles in the walls were of one suit 41.4 times a wall over 10 hands" in after
        web.push({"patch": {"warnings": {"fairness": []}}, "at_s": 3.0})           # (reset: mjtable diag warnings)
        assert "The shuffle looks biased" not in web.client.get("/faults/warnings").text
