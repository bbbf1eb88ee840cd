"""The faults page's warnings update live, in a real browser (Debian's Chromium, Playwright), against a real
``mjtable sim --web`` whose magnet ring clumps the suits (``--shuffle-bias clump=0.1``): the page is opened while
the table has no warning, and the shuffle-bias warning appears when the table raises it, without a reload (the
event stream's ``warnings`` patch; ``tests/firmware/web/test_web_warnings.py`` for the fragment).

Without /usr/bin/chromium the tests skip, unless ``CI=true``: then they fail.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from tests.support.browser_table import SimTable, log_in

pytestmark = [pytest.mark.browser, pytest.mark.alone]            # (Chromium and a timed page: nothing beside it)
WAIT_MS = 120_000           # the clumping ring is warned at hand 11: about 13 s at 300x real time (40 s at 100x)


@pytest.fixture(scope="module")
def biased(tmp_path_factory, browser_type_launch_args) -> Iterator[SimTable]:
    table = SimTable(tmp_path_factory.mktemp("biased"), "--speed", "300", "--hands", "40",
                     "--shuffle-bias", "clump=0.1")
    yield table
    table.stop()


def test_a_shuffle_bias_warning_appears_on_the_open_faults_page(biased, page):
    from playwright.sync_api import expect

    log_in(page, biased.url, "staff")
    page.goto(biased.url + "/faults")
    warnings = page.locator("#warning-list")
    assert biased.status("warnings")["fairness"] == [], "the bias was warned before the page was open"
    expect(warnings).to_contain_text("none")
    expect(warnings).to_contain_text("The shuffle looks biased", timeout=WAIT_MS)
    expect(warnings).to_contain_text("Neighbouring tiles in the walls were of one suit")
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1          # no reload
    assert biased.status("warnings")["fairness"][0]["pattern"] == "same_suit"
