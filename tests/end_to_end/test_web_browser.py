"""The web page in a real browser (Debian's Chromium, driven by Playwright) against a real ``mjtable sim --web``.

Two simulated tables run on loopback in processes of their own, each with
its web page as ``mjtable sim --web`` starts it: a 锦州 game at 50x real time
with a jam injected at the fourth stacking (nobody at the table acknowledges
it), (the table in service mode: test_web_service_browser.py).  In the browser:
log in, watch a hand end and the scoreboard update without a reload, every page on a phone
420 px wide with nothing wider than the screen or clipped (a hand's page with
each payer's share of the doublings), see the jam appear with
its hint, be refused as staff and acknowledge as a technician, hold a jog
button and let go (the motor stops), drop the connection mid-hold (the
motor stops within the dead-man time), a cross-origin POST refused, and with
the lid open the buttons greyed and a hold refused by the controller.  The
motors are watched through the table's own socket, not through the page.
Screenshots of each page go to the test's temporary folder, and to
``MJTABLE_SCREENSHOTS`` when set (``make screenshots`` keeps one per page in
``docs/web/`` for the README).

Without /usr/bin/chromium the tests skip, unless ``CI=true``: then they fail
(``.ci/run`` installs Debian's ``chromium`` and ``fonts-noto-cjk``).
"""

from __future__ import annotations

import socket
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from firmware.diagnostics.socket.protocol import ask
from tests.support.browser_table import WAIT_MS, SimTable, log_in, shoot

pytestmark = [pytest.mark.browser, pytest.mark.alone]            # (Chromium and a timed page: nothing beside it)


@pytest.fixture(scope="module")
def game(tmp_path_factory, browser_type_launch_args) -> Iterator[SimTable]:
    table = SimTable(tmp_path_factory.mktemp("game"), "--speed", "50", "--hands", "50", "--seed", "1",
                     "--rules", "jinzhou", "--inject", "jam:stacker2@stacking4", "--auto-ack-s", "100000")
    yield table
    table.stop()


def test_log_in_and_watch_a_hand_end_on_the_scoreboard(game, page, tmp_path):
    from playwright.sync_api import expect

    page.goto(game.url + "/table")
    expect(page).to_have_url(game.url + "/login?next=/table")
    log_in(page, game.url, "tech")
    page.goto(game.url + "/table")
    expect(page.locator(".live-line")).to_contain_text("hand", timeout=WAIT_MS)
    expect(page.locator("[data-field='table.state']")).not_to_have_text("Idle", timeout=WAIT_MS)
    expect(page.locator("#deal-hands img").first).to_be_visible(timeout=WAIT_MS)   # the starting hands, drawn
    shoot(page, tmp_path, "table")
    page.goto(game.url + "/scoreboard")
    rows = page.locator("#hand-rows tr[data-hand]")
    before = rows.count()
    expect(rows).to_have_count(before + 1, timeout=WAIT_MS)       # a hand ends: its row arrives, no reload
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1
    shoot(page, tmp_path, "scoreboard")
    page.click("#hand-rows tr[data-hand='1'] a")
    expect(page.locator("h2")).to_contain_text("Hand 1")


def test_a_player_checks_a_hand_s_walls_in_this_browser(game, page, tmp_path):
    """/verify, no login: the SHA-256 of hand 1's reveal computed by the page's script (Web Crypto) matches the
    commitment, and the page's replay of the deal and the draws matches the hand's record; one tile changed in the
    reveal, or another commitment, does not (test_web_verify_browser: the replay's failures)."""
    from playwright.sync_api import expect

    game.until("book", lambda b: b["hand"] >= 2, within_s=120)          # hand 1 is over: its walls revealed
    page.goto(game.url + "/verify?hand=1")
    commitment = page.input_value("textarea[name=commitment]")
    reveal = page.input_value("textarea[name=reveal]")
    assert len(commitment) == 64 and reveal.startswith("mjtable-walls/1\nset ")
    page.click("form#verify button[type=submit]")
    expect(page.locator("#verify-ok")).to_be_visible()
    assert page.text_content("output[name=computed]") == commitment and page.locator("#verify-bad").is_hidden()
    expect(page.locator("#verify-replay[data-ok=true]")).to_contain_text("give exactly this hand's starting hands")
    shoot(page, tmp_path, "verify")
    side = reveal.split("\n")[3]
    tiles = side.split(" ", 2)[2].split(",")
    tiles[0] = "E" if tiles[0] != "E" else "S"
    page.fill("textarea[name=reveal]", reveal.replace(side, "side 0 " + ",".join(tiles)))
    page.click("form#verify button[type=submit]")
    expect(page.locator("#verify-bad")).to_be_visible()
    assert page.locator("#verify-ok").is_hidden() and page.text_content("output[name=computed]") != commitment
    page.fill("textarea[name=reveal]", reveal + "\n")                 # (a pasted final newline is not the reveal's)
    page.fill("textarea[name=commitment]", commitment.upper())
    page.click("form#verify button[type=submit]")
    expect(page.locator("#verify-ok")).to_be_visible()


# What sticks out on a phone's screen: the page wider than the viewport, an element reaching past its right
# edge or past its parent's (a table wider than its card), or one that clips its content (scrolls it sideways).
# A drawing that pans in a box of its own, which says so (``.scroll-x``: the state diagram), is the one exception.
OVERFLOW = """() => {
  const width = document.documentElement.clientWidth, out = [];
  const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className && e.className.baseVal ===
    undefined ? "." + e.className.trim().replace(/ +/g, ".") : "") + " '" + e.textContent.trim().slice(0, 40) + "'";
  if (document.documentElement.scrollWidth > width) out.push("the page is " + document.documentElement.scrollWidth +
                                                               " px wide");
  for (const e of document.querySelectorAll("body *")) {
    if (e.closest(".scroll-x")) continue;
    const box = e.getBoundingClientRect();
    if (box.width && box.right > width + 0.5) out.push(name(e) + " reaches " + Math.round(box.right) + " px");
    const parent = e.parentElement;
    if (box.width && parent !== document.body && box.right > parent.getBoundingClientRect().right + 0.5)
      out.push(name(e) + " sticks out of " + name(parent));
    if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== "visible")
      out.push(name(e) + " clips its " + e.scrollWidth + " px to " + e.clientWidth);
  }
  return out;
}"""


def test_every_page_fits_a_phone_420_px_wide(game, page, tmp_path):
    from playwright.sync_api import expect

    assert page.viewport_size["width"] == 420
    page.goto(game.url + "/login")
    assert page.evaluate(OVERFLOW) == []
    log_in(page, game.url, "tech")
    live = page.locator(".live-line")
    page.goto(game.url + "/table")
    expect(live).to_contain_text("chips", timeout=WAIT_MS)
    page.goto(game.url + "/scoreboard")
    expect(page.locator("#hand-rows tr[data-hand='1']")).to_have_count(1, timeout=WAIT_MS)
    for path in ("/", "/table", "/faults", "/scoreboard", "/hand/1", "/verify?hand=1", "/service", "/card"):
        page.goto(game.url + path)
        if path == "/table":
            expect(live).to_contain_text("chips", timeout=WAIT_MS)      # the whole line, chips and all, wrapped
            assert live.evaluate("e => e.scrollWidth <= e.clientWidth")
        if path == "/scoreboard":                                        # 锦州's items are doublings (+N)
            expect(page.locator("table.hands th").nth(2)).to_have_text("Doublings")
        if path == "/hand/1":                                            # 锦州: each payer's share, explained
            expect(page.locator(".shares li")).to_have_count(3)
            expect(page.locator(".shares")).to_contain_text("= 1 × 2")
            shoot(page, tmp_path, "hand")
        if path == "/card":
            expect(page.locator(".scroll-hint")).to_be_visible()         # (the diagram pans, and says so)
        assert page.evaluate(OVERFLOW) == [], path


# What a reader must never see on a page: an identifier of the code (in_play, stacker_home1, a reader counter's
# key) or a side by the controller's number ("side 0"); scanned in the text the page shows (innerText, the SVG's too)
IDENTIFIERS = r"""() => {
  // (the technician's log is shown verbatim, as the service wrote it: it is not the page's own words)
  let text = document.body.innerText + " " + [...document.querySelectorAll("svg text")].map((t) => t.textContent)
    .join(" ");
  for (const verbatim of document.querySelectorAll("[data-verbatim]")) text = text.replace(verbatim.innerText, " ");
  return [...text.matchAll(/\b[a-z]+_[a-z0-9_]+\b|\bside \d\b/g)].map((m) => m[0]);
}"""
SIZES = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
LANGUAGES = {"zh": "zh-CN", "en": "en-US"}
STAFF_PAGES = ("/table", "/faults", "/scoreboard", "/hand/1", "/service", "/card")


class Watched:
    """A browser context in one language and size, whose pages' console errors, page errors and 404s are kept."""

    def __init__(self, browser: Any, language: str, size: str, **options: Any) -> None:
        self.context = browser.new_context(viewport=SIZES[size], locale=LANGUAGES[language], **options)
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("console", lambda m: self.problems.append(f"console {m.type}: {m.text}")
                     if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("response", lambda r: self.problems.append(f"{r.status} {r.url}") if r.status == 404 else None)
        self.polls: list[int] = []                                  # the player's view's polls answered
        self.page.on("response", lambda r: self.polls.append(r.status) if "/view/live" in r.url else None)

    def close(self) -> None:
        self.context.close()


def _settled(page: Any, path: str, wait: bool = True) -> None:
    """Wait until the page's live parts are drawn (the event stream's snapshot, the player's view's first poll);
    ``wait=False``: only until they are shown (another page's wait, of the same start, covers it)."""
    from playwright.sync_api import expect

    ready = {"/": "#player-live .state-words", "/table": "#reader dt", "/service": "#sensors span",
             "/faults": "#fault-history tr", "/card": "#diagram .state.current"}
    if path in ready:
        expect(page.locator(ready[path]).first).to_be_visible(timeout=WAIT_MS)
    if wait:
        page.wait_for_timeout(300 if path != "/" else 2300)      # (a patch, a poll of the player's view)


def test_every_page_in_chinese_and_english_on_a_phone_and_a_desktop(game, browser, tmp_path):
    """Each page in zh-CN and en at 390 x 844 and 1280 x 800: no identifier in its text, no console error, no
    404; the player's view (no login) fits two of the phone's screens; on the phone nothing sticks out."""
    from playwright.sync_api import expect

    first = Watched(browser, "en", "phone")
    first.page.goto(game.url + "/login")
    log_in(first.page, game.url, "tech")
    first.page.goto(game.url + "/scoreboard")
    expect(first.page.locator("#hand-rows tr[data-hand='1']")).to_have_count(1, timeout=WAIT_MS)   # a hand ended
    first.close()
    every = {(language, size): Watched(browser, language, size) for language in LANGUAGES for size in SIZES}
    try:
        for watched in every.values():                             # the player's view: no login; the four
            watched.page.goto(game.url + "/")                      # browsers' polls come together
        for watched in every.values():
            _settled(watched.page, "/", wait=watched is next(iter(every.values())))
        for (language, size), watched in every.items():
            assert watched.polls and set(watched.polls) == {200}, (language, size, watched.polls)   # (polled)
            _every_page(game, watched, language, size, tmp_path)
    finally:
        for watched in every.values():
            watched.close()


def _every_page(game: Any, watched: Watched, language: str, size: str, tmp_path: Path) -> None:
    """One browser's pages; its player's view (``/``) is open and has polled."""
    from playwright.sync_api import expect

    page = watched.page
    assert page.evaluate("document.documentElement.lang") == LANGUAGES[language].replace("-US", "")
    assert page.evaluate(IDENTIFIERS) == [], (language, size, "/")
    height = page.evaluate("document.documentElement.scrollHeight")
    if size == "phone":
        assert height <= 2 * SIZES["phone"]["height"], f"the player's view is {height} px tall ({language})"
        assert page.evaluate(OVERFLOW) == [], (language, "/")
    expect(page.locator(".hand-line").first).to_be_visible()
    page.locator(".hand-line summary").first.click()               # a hand's details open in place
    expect(page.locator(".hand-line[open] .money tr")).to_have_count(4)
    shoot(page, tmp_path, f"player-{language}" + ("" if size == "phone" else "-desktop"))
    log_in(page, game.url, "tech")
    for path in STAFF_PAGES:
        page.goto(game.url + path)
        _settled(page, path)
        found = page.evaluate(IDENTIFIERS)
        assert found == [], (language, size, path, found)
        if size == "phone":
            assert page.evaluate(OVERFLOW) == [], (language, path)
            if (language == "zh" and path != "/card") or path in ("/table", "/scoreboard"):
                shoot(page, tmp_path, f"{path.strip('/').split('/')[0]}-{language}")
    assert watched.problems == [], (language, size, watched.problems)


def test_the_staff_block_and_a_controllers_refusal_on_the_chinese_page(game, browser):
    """On a zh-CN page the staff's block is Chinese, and what the controller refuses (closing a table no session
    opened: a code, worded by the page) is shown in Chinese."""
    from playwright.sync_api import expect

    watched = Watched(browser, "zh", "phone")
    page = watched.page
    try:
        log_in(page, game.url, "tech")
        page.goto(game.url + "/table")
        page.locator("#staff summary").click()
        expect(page.locator("#staff-session")).to_have_text("未开台：牌桌可自由使用。", timeout=WAIT_MS)
        page.locator("button[data-staff=close]").click()
        expect(page.locator("#staff-answer")).to_have_text("被拒绝：当前没有开台", timeout=WAIT_MS)
        assert "Close the table" not in page.content() and page.evaluate(IDENTIFIERS) == []
        refusal = "console error: Failed to load resource: the server responded with a status of 409 (Conflict)"
        assert [p for p in watched.problems if p != refusal] == []          # (the browser notes the refusal's 409)
    finally:
        watched.close()


def test_the_language_switch_and_the_dark_mode_are_remembered(game, browser, tmp_path):
    from playwright.sync_api import expect

    watched = Watched(browser, "en", "phone", color_scheme="dark")
    page = watched.page
    try:
        page.goto(game.url + "/")
        expect(page.locator("html")).to_have_attribute("lang", "en")
        dark = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert dark == "rgb(17, 22, 28)"                                       # the phone's dark setting, followed
        shoot(page, tmp_path, "player-dark")
        page.click("button[name=to][value=zh_CN]")                             # 中文
        expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
        expect(page.locator(".login-link")).to_contain_text("员工登录")
        page.click("#theme")                                                   # automatic -> dark -> light
        page.click("#theme")
        page.reload()
        expect(page.locator("html")).to_have_attribute("data-theme", "light")
        assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(243, 244, 246)"
        expect(page.locator("html")).to_have_attribute("lang", "zh-CN")         # (both kept in cookies)
        assert watched.problems == []
    finally:
        watched.close()


def test_an_injected_jam_appears_with_its_hint_staff_are_refused_a_technician_acknowledges(game, browser,
                                                                                          tmp_path):
    from playwright.sync_api import expect

    staff = browser.new_context(viewport={"width": 420, "height": 900})
    page = staff.new_page()
    log_in(page, game.url, "staff")
    page.goto(game.url + "/faults")
    active = page.locator("#active-faults")
    expect(active).to_contain_text("E33", timeout=WAIT_MS)
    expect(active).to_contain_text("Clear tiles jammed in the West side's stacking head")
    expect(active).to_contain_text("lamps East+South, then East+South")        # (0+1 then 0+1)
    assert page.locator("#ack").count() == 0 and "Acknowledging is for technicians" in page.content()
    refused = page.request.post(game.url + "/api/ack", headers={"origin": game.url, "accept-language": "en"})
    assert refused.status == 403 and "your role (staff) may not" in refused.json()["error"]
    refused = page.request.post(game.url + "/api/ack", headers={"origin": game.url, "accept-language": "zh-CN"})
    assert refused.status == 403 and refused.json()["error"] == "你的角色（员工）不能确认故障"
    assert game.status("table")["state"] == "latched"
    staff.close()

    tech = browser.new_context(viewport={"width": 420, "height": 900})
    page = tech.new_page()
    log_in(page, game.url, "tech")
    page.goto(game.url + "/faults")
    expect(page.locator("#fault-history")).to_contain_text("E33", timeout=WAIT_MS)
    expect(page.locator("#ack")).to_be_enabled(timeout=WAIT_MS)
    shoot(page, tmp_path, "faults")
    page.click("#ack")
    expect(page.locator("#ack-answer")).to_contain_text("acknowledged", timeout=WAIT_MS)
    history = ask(game.socket, {"cmd": "faults"}, timeout_s=10)["faults"]
    assert any(f["code"] == "E33" and f["acknowledged_at_s"] is not None for f in history)   # (it may jam again)
    tech.close()


def test_a_cross_origin_post_is_refused(game, page):
    log_in(page, game.url, "tech")
    for origin in ("http://evil.example", "null"):
        answer = page.request.post(game.url + "/api/stop", headers={"origin": origin})
        assert answer.status == 403 and "Cross-origin request refused" in answer.text()
    # a page of another origin posting to the table: the browser sends its own Origin, and it is refused
    page.goto("about:blank")
    status = page.evaluate("""url => fetch(url, {method: 'POST', credentials: 'include', mode: 'no-cors'})
                              .then(() => 'sent', () => 'failed')""", game.url + "/api/stop")
    assert status in ("sent", "failed")               # (no-cors: the page cannot read the answer either way)
    deadline = time.monotonic() + 10
    while not any("refused a cross-origin POST /api/stop from origin 'null'" in line for line in game.lines):
        assert time.monotonic() < deadline, "the browser's cross-origin POST was not refused"
        time.sleep(0.05)


def test_silent_connections_are_closed_and_the_page_serves_on(game):
    """More connections than the page takes, none of them sending a request (anyone on the Wi-Fi can open
    them): those past the address's share are refused at once (a 503, then closed), the others closed
    within the header timeout, and the page answers the next browser."""

    from firmware.web.runtime import HEADER_TIMEOUT_S, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS

    silent = [socket.create_connection(("127.0.0.1", game.port), timeout=HEADER_TIMEOUT_S + 5)
              for _ in range(MAX_CONNECTIONS + 20)]
    try:
        said = [b"".join(iter(lambda s=sock: s.recv(4096), b"")) for sock in silent]   # (a timeout: never closed)
        refused = [answer for answer in said if answer.startswith(b"HTTP/1.1 503 ")]
        assert len(refused) == len(silent) - MAX_CONNECTIONS_PER_ADDRESS
        assert said.count(b"") == MAX_CONNECTIONS_PER_ADDRESS                # (closed by the header timeout)
    finally:
        for sock in silent:
            sock.close()
    with urllib.request.urlopen(game.url + "/login", timeout=10) as answer:
        assert answer.status == 200
