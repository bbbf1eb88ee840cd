"""The web page's service mode in a real browser (Debian's Chromium, Playwright) against ``mjtable sim --web
--service`` at real time: hold a jog button and let go (the motor stops), drop the connection mid-hold (the motor
stops within the dead-man time), the fault card and the state diagram, and with the lid open the buttons greyed
and a hold refused by the controller.  The motors are watched through the table's own socket, not the page.
"""

from __future__ import annotations

import time
from typing import Any, Iterator

import pytest

from tests.support.browser_table import WAIT_MS, SimTable, log_in, shoot

pytestmark = [pytest.mark.browser, pytest.mark.alone]            # (Chromium and a timed page: nothing beside it)


@pytest.fixture(scope="module")
def service(tmp_path_factory, browser_type_launch_args) -> Iterator[SimTable]:
    table = SimTable(tmp_path_factory.mktemp("service"), "--service", "--speed", "1")
    yield table
    table.stop()


def _hold(page: Any, name: str) -> None:
    button = page.locator(f"button.hold[data-name='{name}']")
    from playwright.sync_api import expect
    expect(button).to_be_enabled(timeout=WAIT_MS)
    box = button.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()


def test_hold_a_jog_button_and_let_go_the_motor_stops(service, page, tmp_path):
    from playwright.sync_api import expect

    log_in(page, service.url, "tech")
    page.goto(service.url + "/service")
    expect(page.locator("#service-note")).to_contain_text("Service mode", timeout=WAIT_MS)
    _hold(page, "turntable")
    service.until("table", lambda t: "turntable" in t["moving"], within_s=10)
    expect(page.locator("#sensors [data-sensor='center_down']")).to_have_text("Centre down · on")
    shoot(page, tmp_path, "service")
    page.mouse.up()
    table, _ = service.until("table", lambda t: "turntable" not in t["moving"], within_s=5)
    assert table["motors_safe"]
    expect(page.locator("#hold-answer")).to_contain_text("Turntable", timeout=WAIT_MS)
    _hold(page, "stacker0")                               # a cam turn held to its end: done by itself
    expect(page.locator("#hold-answer")).to_contain_text("Stacking head 1 ok", timeout=WAIT_MS)
    page.mouse.up()


def test_a_connection_dropped_mid_hold_stops_the_motor_within_the_dead_man_time(service, page, context,
                                                                               record_property):
    from playwright.sync_api import expect

    log_in(page, service.url, "tech")
    page.goto(service.url + "/service")
    expect(page.locator("#service-note")).to_contain_text("Service mode", timeout=WAIT_MS)
    _hold(page, "turntable")
    service.until("table", lambda t: "turntable" in t["moving"], within_s=10)
    context.set_offline(True)                             # the phone's Wi-Fi goes: no keep-alive, no release
    table, stopped_after_s = service.until("table", lambda t: "turntable" not in t["moving"], within_s=10)
    assert table["motors_safe"]
    record_property("stopped_after_s", round(stopped_after_s, 3))
    print(f"the turntable stopped {stopped_after_s:.2f} s after the connection dropped")
    assert stopped_after_s < 0.5 + 1.5, f"stopped {stopped_after_s:.2f} s after the connection dropped"
    context.set_offline(False)
    page.mouse.up()


def test_the_fault_card_and_the_state_diagram(service, page, tmp_path):
    from playwright.sync_api import expect

    log_in(page, service.url, "staff")
    page.goto(service.url + "/card")
    expect(page.locator("#state-service.current")).to_have_count(1, timeout=WAIT_MS)
    expect(page.locator("table.history")).to_contain_text("E98")
    page.set_viewport_size({"width": 960, "height": 1000})
    shoot(page, tmp_path, "card", full_page=False)


def test_with_the_lid_open_the_buttons_are_refused(tmp_path_factory, browser_type_launch_args, page):
    """The page says why and greys the buttons; a hold asked for anyway is refused by the controller itself."""
    from playwright.sync_api import expect

    table = SimTable(tmp_path_factory.mktemp("lid"), "--service", "--speed", "1", "--inject", "lid-open@1s=600s")
    try:
        log_in(page, table.url, "tech")
        page.goto(table.url + "/service")
        expect(page.locator("#service-note")).to_contain_text("The service lid is open", timeout=WAIT_MS)
        expect(page.locator("button.hold[data-name='turntable']")).to_be_disabled()
        started = page.request.post(table.url + "/api/hold", headers={"origin": table.url},
                                    data={"kind": "jog", "name": "turntable"}).json()
        assert started["ok"]
        answer = {"running": True}
        deadline = time.monotonic() + 10
        while answer.get("running"):
            assert time.monotonic() < deadline
            answer = page.request.post(f"{table.url}/api/hold/{started['hold']}/alive",
                                       headers={"origin": table.url}).json()
        # (the controller's refusal is a code; the page words it in the request's language: zh-CN by default)
        assert answer["answer"]["error"].startswith("被拒绝：电机可能运行时维修盖打开（E04）；关上维修盖")
        assert answer["answer"]["refusal"] == "interlock" and answer["answer"]["params"] == {"fault": "E04"}
        assert "turntable" not in table.status("table")["moving"]
    finally:
        table.stop()
