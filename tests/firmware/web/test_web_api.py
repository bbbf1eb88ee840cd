"""The web page's HTTP rules and API with Starlette's test client, against a fake controller socket.

Host allow-list, Origin on every state-changing request, no default
password, Argon2id logins with throttling, server-side sessions in an
HttpOnly SameSite cookie (Secure over TLS), roles (staff look, technicians
act), the event stream (snapshot, coalesced patches, heartbeats) and the
link's reasons, the hold-to-run dead-man timer on a hand-driven clock, and
the pages reading the table database read-only (the hand pages are in
``test_web_record_pages.py``; the database, ``table_db``, in
``conftest.py``).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading

import pytest

from firmware.web.guards import HostRules, host_name
from firmware.web.records import read_only_connect
from firmware.web.sessions import IDLE_S
from tests.support.web_fakes import STATUS, WebTable, run_async

WAIT_S = 20.0           # the longest a test thread here waits for another (it never needs that long)

@pytest.fixture
def web(tmp_path, table_db):
    with WebTable(tmp_path, table_db) as table:
        table.push({"ok": True, "snapshot": STATUS, "at_s": 12.5, "tick_s": 0.25})
        yield table


def test_no_default_password_only_the_page_that_says_how(tmp_path, table_db):
    with WebTable(tmp_path, table_db, users=False) as table:
        for path in ("/", "/faults", "/login", "/service"):
            page = table.client.get(path, follow_redirects=False)
            assert page.status_code == 503 and "Set a password on the table" in page.text
            assert "mjtable web passwd" in page.text
        assert table.client.post("/login", data={"user": "tech", "password": "x"}).status_code == 503
        assert table.client.post("/api/ack").status_code == 503


def test_the_page_has_an_icon_and_every_page_links_it(web):
    """/favicon.ico was a 404 in every browser's console: it answers an ICO, before any login, cacheable; the pages
    link the SVG, which answers too."""
    icon = web.client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/")
    assert icon.content[:4] == b"\x00\x00\x01\x00" and len(icon.content) > 1000          # an ICO, one image
    assert "no-store" not in icon.headers.get("cache-control", "")
    svg = web.client.get("/static/favicon.svg")
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    login = web.client.get("/login")
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in login.text
    web.login("tech")
    for path in ("/", "/faults", "/scoreboard", "/service", "/card"):
        assert 'rel="icon"' in web.client.get(path).text, path


def test_host_allow_list_against_dns_rebinding(web):
    assert host_name("[::1]:8443") == "::1" and host_name("Table7.LOCAL:443") == "table7.local"
    rules = HostRules.of(["table7"])
    assert rules.allows("192.168.1.40:8443") and rules.allows("[fe80::1]") and rules.allows("localhost:8080")
    assert not rules.allows("evil.example") and not rules.allows(None) and not rules.allows("table7.evil.example")
    refused = web.client.get("/login", headers={"host": "attacker.example"})
    assert refused.status_code == 421 and "does not answer to that name" in refused.text
    assert web.client.get("/login", headers={"host": "10.0.0.7:8443"}).status_code == 200
    assert web.client.get("/login", headers={"host": "table7.local"}).status_code == 200


def test_every_state_changing_request_needs_our_origin(web):
    web.login("tech")
    for origin in (None, "http://evil.example", "https://testserver", "null"):
        headers = {"origin": origin} if origin else {}
        client = web.client
        if origin is None:
            client.headers.pop("origin", None)
        answer = client.post("/api/ack", headers=headers)
        assert answer.status_code == 403 and "Cross-origin request refused" in answer.text, origin
        client.headers["origin"] = "http://testserver"
    assert web.control.requests == []
    assert web.client.post("/api/ack").status_code == 200          # our own origin: it reaches the controller


def test_login_throttling_and_the_session_cookie(web):
    wrong = web.client.post("/login", data={"user": "tech", "password": "guess-0000"})
    assert wrong.status_code == 401 and "Wrong name or password" in wrong.text
    for _ in range(2):
        web.client.post("/login", data={"user": "tech", "password": "guess-0000"})
    throttled = web.login("tech")
    assert throttled.status_code == 429 and "try again in" in throttled.text
    web.clock.now += 1.5                                                 # the first delay is 1 s
    ok = web.login("tech")
    assert ok.status_code == 303 and ok.headers["location"] == "/"
    cookie = ok.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Secure" not in cookie
    page = web.client.get("/table")
    assert page.status_code == 200 and ">Playing<" in page.text and "tech · technician" in page.text
    unknown = web.client.post("/login", data={"user": "nobody", "password": "whatever-1234"})
    assert unknown.status_code == 401


def test_parallel_wrong_logins_are_not_all_verified(web):
    """Fifty wrong passwords posted at once: one is checked at a time per address and name, each counted
    before it is checked, so at most the free failures are verified; the rest are refused (429)."""
    import httpx

    from firmware.web.sessions import FREE_FAILURES

    users, verified, release = web.state.settings.users, [], threading.Event()
    plain = users.verify

    def counting_verify(name, password):
        verified.append(name)
        release.wait(WAIT_S)                         # (held until every request has been answered or queued)
        return plain(name, password)
    users.verify = counting_verify

    async def fifty():
        transport = httpx.ASGITransport(app=web.client.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver",
                                     headers={"origin": "http://testserver"}) as client:
            posts = [asyncio.ensure_future(client.post("/login", data={"user": "tech", "password": f"guess-{n}"}))
                     for n in range(50)]
            for _ in range(5000):                     # until each is answered or being checked
                if sum(p.done() for p in posts) + len(verified) >= len(posts):
                    break
                await asyncio.sleep(0)
            release.set()
            return [(await p).status_code for p in posts]

    try:
        codes = web.client.portal.call(fifty)
    finally:
        release.set()
        users.verify = plain
    assert len(verified) <= FREE_FAILURES and codes.count(401) == len(verified)
    assert codes.count(429) == 50 - len(verified)


def test_sessions_end_idle_and_at_logout(web):
    assert web.client.get("/faults", follow_redirects=False).headers["location"] == "/login?next=/faults"
    web.login("staff")
    assert web.client.get("/faults").status_code == 200
    web.clock.now += IDLE_S + 1
    assert web.client.get("/faults", follow_redirects=False).status_code == 303
    web.login("staff")
    assert web.client.post("/logout", follow_redirects=False).headers["location"] == "/login"
    assert web.client.get("/api/status").status_code == 401


def test_secure_cookie_over_tls(tmp_path, table_db):
    with WebTable(tmp_path, table_db, tls=True) as table:
        ok = table.login("tech")
        assert "Secure" in ok.headers["set-cookie"]
        assert table.client.get("/login").headers["strict-transport-security"].startswith("max-age=")


def test_staff_may_look_but_not_act(web):
    web.login("staff")
    assert web.client.get("/api/status").json()["status"]["book"]["hand"] == 1
    for path, body in (("/api/ack", None), ("/api/stop", None), ("/api/hold", {"kind": "jog", "name": "dice"})):
        refused = web.client.post(path, json=body)
        assert refused.status_code == 403 and "your role (staff) may not" in refused.json()["error"]
    assert web.control.requests == []
    assert "Acknowledging is for technicians" in web.client.get("/faults").text


def test_a_technician_acknowledges_and_the_controller_answers(web):
    web.login("tech")
    web.control.answers["ack"] = {"ok": False, "error": "refused: lid open (E04)"}
    answer = web.client.post("/api/ack").json()
    assert answer == {"ok": False, "error": "refused: lid open (E04)"} and web.control.requests == [{"cmd": "ack"}]


def test_the_event_stream_snapshot_patches_and_heartbeat(web):
    web.login("staff")
    with web.client.stream("GET", "/events") as events:
        lines = events.iter_lines()
        assert next(lines) == "retry: 2000"
        assert next(lines) == "" and next(lines) == "event: snapshot"
        snapshot = json.loads(next(lines).removeprefix("data: "))
        assert snapshot["book"]["hand"] == 1 and snapshot["link"]["up"] and snapshot["at_s"] == 12.5
        assert snapshot["live"]["line"] == "in_play   hand 1 dealer side 0 chips 500 500 500 500"
        next(lines)
        web.push({"patch": {"chips": {"chips": [524, 492, 492, 492]}}, "at_s": 13.0})
        web.push({"patch": {"book": {"hand_open": False}}, "at_s": 13.2})
        web.tick(0.1)                                    # within the patch interval: coalesced, not yet sent
        web.tick(web.settings.patch_interval_s)
        assert next(lines) == "event: patch"
        patch = json.loads(next(lines).removeprefix("data: "))
        assert patch["chips"] == {"chips": [524, 492, 492, 492]} and patch["book"] == {"hand_open": False}
        assert patch["live"]["line"].endswith("chips 524 492 492 492") and patch["at_s"] == 13.2
        next(lines)
        web.tick(web.settings.heartbeat_s + 0.1)
        assert next(lines) == "event: heartbeat"
        next(lines), next(lines)
        web.push(None)                                   # the controller's connection ends
        web.tick(web.settings.patch_interval_s)
        assert next(lines) == "event: patch"
        link = json.loads(next(lines).removeprefix("data: "))["link"]
        assert not link["up"] and "closed the connection" in link["reason"]
        assert link["why"] == "lost" and link["detail"] == link["reason"]     # (the page words why; the OS says what)


def test_one_login_cannot_hold_every_event_stream(web):
    """Streams are capped per session too: one login's fifth page is refused, another login still gets one."""
    from firmware.web.hub import MAX_STREAMS_PER_SESSION

    hub = web.state.hub
    mine = [hub.open("session-a") for _ in range(MAX_STREAMS_PER_SESSION)]
    assert all(mine) and hub.open("session-a") is None and hub.open("session-b") is not None
    hub.close(mine[0])
    assert hub.open("session-a") is not None                 # one closed: one more may open


def test_hold_to_run_keepalives_release_and_the_dead_man(web):
    web.login("tech")
    start = web.client.post("/api/hold", json={"kind": "jog", "name": "turntable"}).json()
    assert start["ok"] and web.control.requests[-1] == {"cmd": "jog", "mechanism": "turntable", "hold": True,
                                                        "lease_s": 1.0}        # (the controller's own dead-man)
    hold = start["hold"]
    for _ in range(5):                                   # held: keep-alives well inside the dead-man time
        web.tick(0.3)
        assert web.client.post(f"/api/hold/{hold}/alive").json() == {"ok": True, "running": True}
    assert not web.control.helds[0].closed and {"cmd": "stop"} not in web.control.requests
    assert web.control.helds[0].renewed == 5             # each keep-alive renews the lease at the controller
    web.tick(0.3)
    web.tick(0.3)                                        # 0.6 s without a keep-alive: the dead-man stops it
    assert {"cmd": "stop"} in web.control.requests and web.control.helds[0].closed
    ended = web.client.post(f"/api/hold/{hold}/alive").json()
    assert ended["ok"] and not ended["running"] and "no keep-alive for 0.5 s" in ended["answer"]["error"]

    web.control.requests.clear()
    again = web.client.post("/api/hold", json={"kind": "test", "name": "lifts"}).json()
    assert web.control.requests == [{"cmd": "test", "name": "lifts", "lease_s": 1.0}]
    assert web.client.post(f"/api/hold/{again['hold']}/release").json()["stopping"]
    web.tick(0.0)
    assert {"cmd": "stop"} in web.control.requests and web.control.helds[1].closed

    third = web.client.post("/api/hold", json={"kind": "jog", "name": "stacker0"}).json()
    web.client.portal.call(_answer, web.control.helds[2], {"ok": True, "mechanism": "stacker0", "elapsed_s": 1.4})
    done = web.client.post(f"/api/hold/{third['hold']}/alive").json()
    assert done == {"ok": True, "running": False, "answer": {"ok": True, "mechanism": "stacker0", "elapsed_s": 1.4}}
    bad = web.client.post("/api/hold", json={"kind": "jog", "name": "everything"})
    assert bad.status_code == 400 and bad.json()["error"].startswith("bad request body: name: Input should be ")
    assert "'turntable' or 'dice'" in bad.json()["error"]


def test_the_dead_man_stops_a_held_jog_when_the_hubs_tick_fails(web, monkeypatch):
    web.login("tech")
    assert web.client.post("/api/hold", json={"kind": "jog", "name": "turntable"}).json()["ok"]

    async def broken_tick(now_s):
        raise RuntimeError("the hub is broken")
    monkeypatch.setattr(web.state.hub, "tick", broken_tick)
    web.tick(0.3)
    web.tick(0.3)                                        # 0.6 s without a keep-alive, every hub tick failing
    assert {"cmd": "stop"} in web.control.requests and web.control.helds[0].closed


def test_follow_reconnects_after_any_error_of_the_subscription():
    from firmware.web.hub import Hub, follow

    class Control:
        subscriptions = 0

        async def subscribe(self):
            Control.subscriptions += 1
            if Control.subscriptions == 1:
                raise RuntimeError("a bug in the client")
            yield {"ok": True, "snapshot": STATUS, "at_s": 1.0}
            await asyncio.Event().wait()

    async def scenario():
        clock = [0.0]
        hub = Hub(lambda: clock[0])
        following = asyncio.ensure_future(follow(Control(), hub))
        for _ in range(5):
            await asyncio.sleep(0)
        lost = dict(hub.link)
        clock[0] = 1.0
        await hub.tick(clock[0])                          # the retry is due
        for _ in range(5):
            await asyncio.sleep(0)
        following.cancel()
        return lost, dict(hub.link), following

    lost, back, following = run_async(scenario())
    assert not lost["up"] and "a bug in the client" in lost["reason"]
    assert (lost["why"], lost["detail"]) == ("unexpected", "a bug in the client")
    assert back == {"up": True, "reason": None, "why": None, "detail": None} and Control.subscriptions == 2


def test_each_way_the_link_goes_down_is_named_for_the_page_to_word():
    """The banner's reason comes as ``why`` (worded by the page in its language) and ``detail`` (the seconds, or
    the other side's own words); ``reason`` keeps the English for the log and a script."""
    from firmware.web.hub import STALE_S, Hub, LINK_WHY, follow

    clock = [0.0]
    hub = Hub(lambda: clock[0])
    assert (hub.link["up"], hub.link["why"]) == (False, "connecting")
    hub.line({"ok": True, "snapshot": STATUS, "at_s": 1.0})
    hub.line({"heartbeat": True, "status_age_s": STALE_S + 2.5})
    assert (hub.link["why"], hub.link["detail"]) == ("stale", f"{STALE_S + 2.5:g}")
    assert hub.link["reason"] == f"the controller has not answered for {STALE_S + 2.5:g} s"
    hub.line({"heartbeat": True, "status_age_s": 0.5})
    assert hub.link["up"] and hub.link["why"] is None
    hub.line({"ok": False, "error": "too many subscriptions"})
    assert (hub.link["why"], hub.link["detail"]) == ("refused", "too many subscriptions")

    class Ends:
        async def subscribe(self):
            yield {"ok": True, "snapshot": STATUS, "at_s": 1.0}

    async def ended():
        following = asyncio.ensure_future(follow(Ends(), hub))
        for _ in range(5):
            await asyncio.sleep(0)
        following.cancel()
    run_async(ended())
    assert (hub.link["why"], hub.link["detail"]) == ("ended", None)
    with pytest.raises(ValueError, match="why is one of"):
        hub.lost("gremlins", "?")
    assert set(LINK_WHY) == {"connecting", "stale", "refused", "ended", "lost", "unexpected"}


def test_every_link_why_has_the_page_s_words_in_each_language():
    from firmware.web.hub import LINK_WHY
    from firmware.web import i18n
    from firmware.web.i18n import SCRIPT

    for why in LINK_WHY:
        assert f"link_{why}" in SCRIPT
    words = i18n.words("zh_CN").script()["text"]
    assert words["link_stale"] == "已有 %(detail)s 秒没有应答"
    assert all(words[f"link_{why}"] != SCRIPT[f"link_{why}"] for why in LINK_WHY)       # (translated, not English)


async def _answer(held, answer) -> None:
    held.answer.set_result(answer)


def test_one_hold_at_a_time_and_only_its_own_session(web):
    web.login("tech")
    first = web.client.post("/api/hold", json={"kind": "jog", "name": "dice"}).json()
    web.client.cookies.clear()
    web.login("tech")                                    # the same technician on another phone: a new session
    busy = web.client.post("/api/hold", json={"kind": "jog", "name": "stacker1"}).json()
    assert not busy["ok"] and "Dice is held by tech" in busy["error"]          # (the mechanism in words)
    foreign = web.client.post(f"/api/hold/{first['hold']}/alive")
    assert foreign.status_code == 404 and "another session" in foreign.json()["error"]
    assert web.client.post("/api/hold/nope/release").status_code == 404


def test_two_presses_at_once_start_one_action_and_the_dead_man_watches_it():
    """Two buttons pressed together (two fingers, two tabs): the second is refused before anything is sent,
    so every action that starts has a hold whose dead-man stops it."""
    from firmware.web.holds import Holds
    from tests.support.web_fakes import FakeControl

    async def scenario():
        control, gate = FakeControl(), asyncio.Event()
        plain = control.begin

        async def slow_begin(request, timeout_s=600.0):        # (the controller's answer takes a while)
            await gate.wait()
            return await plain(request, timeout_s)
        control.begin = slow_begin
        holds = Holds(control, deadman_s=0.5)
        first = asyncio.ensure_future(holds.start("s1", "ana", {"cmd": "jog", "mechanism": "turntable"}, 0.0))
        await asyncio.sleep(0)
        second = asyncio.ensure_future(holds.start("s2", "bo", {"cmd": "jog", "mechanism": "stacker0"}, 0.0))
        await asyncio.sleep(0)
        gate.set()
        first, second = await first, await second
        await holds.sweep(1.0)                                  # no keep-alive: the dead-man stops the jog
        for _ in range(3):
            await asyncio.sleep(0)
        return control, first, second

    control, first, second = run_async(scenario())
    assert first["ok"] and not second["ok"] and "ana is starting a held action" in second["error"]
    assert control.requests[0] == {"cmd": "jog", "mechanism": "turntable", "lease_s": 1.0}
    assert len(control.helds) == 1
    assert {"cmd": "stop"} in control.requests and control.helds[0].closed


def test_pages_read_the_table_database_read_only(web, table_db):
    web.login("tech")
    faults = web.client.get("/faults").text
    assert "E32" in faults and "Clear tiles jammed in the South side's stacking head" in faults
    assert "lamps East+South, then South" in faults                   # (0+1 then 1: the sides lit)
    board = web.client.get("/scoreboard").text
    assert all(f'href="/hand/{n}"' in board for n in (1, 2, 3))
    assert "win" in board and "won" in board                       # seed 3 has a win with its payments (和牌)
    rows = web.client.get("/scoreboard/rows").text
    assert "<tr" in rows and "<html" not in rows
    hand = web.client.get("/hand/1")
    assert hand.status_code == 200 and "Hand 1" in hand.text and "East (East wind)" in hand.text
    assert "/static/tiles/" in hand.text            # the starting hands, from the hand's record
    assert web.client.get("/hand/999").status_code == 404
    card = web.client.get("/card").text
    assert 'id="state-in_play"' in card and ">Playing</text>" in card and "E98" in card
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        read_only_connect(str(table_db)).execute("DELETE FROM faults")


def test_the_faults_page_shows_shuffle_and_wear_warnings_in_words(web):
    web.login("staff")
    assert "Warnings are not faults" in web.client.get("/faults").text and "The shuffle looks biased" not in \
        web.client.get("/faults").text
    warnings = {"fairness": [{"chart": "pairs:E", "seat": "E", "pattern": None, "hand": 41, "hands": 41,
                              "statistic": 16.3, "threshold": 16.0, "observed_mean": 2.61, "fair_mean": 1.39}],
                "maintenance": [{"part": "head2", "mechanism": "stacker2", "cycle": 19, "hand": 3, "at_s": 59.3,
                                 "baseline_s": 1.435, "last_s": 1.539, "slower_pct": 7.23,
                                 "trend_pct_per_cycle": 0.52, "statistic": 0.41, "threshold": 0.4}]}
    web.push({"patch": {"warnings": warnings}, "at_s": 13.0})
    page = web.client.get("/faults").text
    assert "Seat East was dealt 2.61 pairs a hand over 41 hands; a fair shuffle deals 1.39" in page
    assert "Stacking head 3 is wearing" in page and "7.2% slower" in page and "0.52% more every cycle" in page
    assert "mjtable diag warnings --reset head2" in page
    web.client.cookies.set("mjtable_lang", "zh_CN")
    page = web.client.get("/faults").text
    assert "洗牌疑似不公平" in page and "正在磨损" in page
