"""The web page stays reachable for the people who need it: its limits, against the real page on loopback.

Each test serves the app with uvicorn as ``mjtable web`` does
(:class:`tests.support.web_server.RealPage`) and plays phones from addresses of
their own (127.0.0.2, 127.0.0.3 ...; the technician at 127.0.0.9):

* connections: one address that opens as many idle connections as it likes
  keeps at most its share, and the technician's ``/login`` is answered
  200; addresses that fill every connection together make room for
  another (the fullest gives one up);
* sessions: 260 logins as ``staff`` end staff's oldest sessions, never
  ``tech``'s;
* event streams: staff's pages together leave the technicians' streams;
* bodies: every ``/api/`` POST answers 4xx to any body that is not what it
  takes (hypothesis, and the cases the campaign found), and a hold with a
  wrong-typed field moves nothing; a hand's number past any hand and a
  form of too many fields are 404 and 400, not 500; a client that leaves
  before its body ended is no error;
* logins: wrong passwords for a name from one phone do not lock that name
  out on another phone; guessing it from many addresses is slowed down.

The page's clock is the test's (time moves when a test moves it); the only
waits are for the real server's answers and closings, each bounded.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import socket
import threading
import time
import urllib.parse
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware.diagnostics.service_limits import GROUP_TESTS
from firmware.web.app import MAX_BODY_BYTES
from firmware.web.bodies import MECHANISMS, TEST_BUTTONS
from firmware.web.hub import MAX_STREAMS, MAX_STREAMS_PER_SESSION, STREAMS_KEPT_FOR_TECHNICIANS
from firmware.web.sessions import (FREE_FAILURES, MAX_DELAY_S, MAX_SESSIONS, MAX_SESSIONS_PER_USER,
                                   NAME_FREE_FAILURES, NAME_MAX_DELAY_S, LoginThrottle)
from firmware.web.connections import HEADER_TIMEOUT_S, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS, ConnectionBook
from tests.support.web_server import USERS, WAIT_S, RealPage, closed_by_page

TECHNICIAN = "127.0.0.9"
PHONE = "127.0.0.2"


@pytest.fixture
def real_page(tmp_path) -> Iterator[RealPage]:
    served = RealPage(tmp_path / "page")
    yield served
    served.stop()


@contextlib.contextmanager
def held(socks: list[socket.socket]) -> Iterator[list[socket.socket]]:
    try:
        yield socks
    finally:
        for sock in socks:
            sock.close()


# -- connections ------------------------------------------------------------------------------------------------
def test_one_address_filling_connections_cannot_lock_out_another(real_page):
    page = real_page
    """The campaign's attack: 120 idle connections from one phone (more than the page takes in all).  Its
    connections past its share are refused at once, the technician's /login is answered 200 while the
    phone still holds its share open, and nothing waits for the 5 s header timeout."""
    with held([page.connect(PHONE) for _ in range(MAX_CONNECTIONS + 20)]) as phone:
        answer = page.request(TECHNICIAN, "GET", "/login")
        assert answer.status == 200, answer.body[:200]
        refused = closed_by_page(phone, len(phone) - MAX_CONNECTIONS_PER_ADDRESS, within_s=HEADER_TIMEOUT_S / 2)
        assert len(refused) == len(phone) - MAX_CONNECTIONS_PER_ADDRESS
        assert not closed_by_page([s for s in phone if s not in refused], 1, within_s=0.0)  # its share: open


def test_addresses_that_fill_every_connection_together_cannot_keep_another_out(real_page):
    page = real_page
    """Seven phones with their share each hold more than the page takes in all: the fullest give connections
    up for the later ones, and the technician, holding none, is let in (no address is cut below another's)."""
    phones = [f"127.0.0.{n}" for n in range(2, 9)]
    assert len(phones) * MAX_CONNECTIONS_PER_ADDRESS > MAX_CONNECTIONS
    by_phone = {phone: [page.connect(phone) for _ in range(MAX_CONNECTIONS_PER_ADDRESS)] for phone in phones}
    with held([sock for socks in by_phone.values() for sock in socks]) as every:
        answer = page.request(TECHNICIAN, "GET", "/login")
        assert answer.status == 200, answer.body[:200]
        made_room = len(every) - (MAX_CONNECTIONS - 1)           # (the technician's took one more place)
        gone = closed_by_page(every, made_room, within_s=HEADER_TIMEOUT_S / 2)
        assert len(gone) == made_room
        kept = {phone: sum(s not in gone for s in socks) for phone, socks in by_phone.items()}
        assert max(kept.values()) - min(kept.values()) <= 1, kept


def test_the_connection_book_shares_the_bound_fairly():
    book: ConnectionBook[int] = ConnectionBook(max_total=10, max_per_address=4)
    admitted = [book.admit(n, f"a{n % 3}", lambda c: True) for n in range(12)]       # a0 a1 a2 a0 a1 a2 ...
    assert [a.admitted for a in admitted] == [True] * 10 + [False, False] and admitted[10].refused == "full"
    assert book.admit(99, "a0", lambda c: True).refused == "address"                  # a0 holds 4: its bound
    newcomer = book.admit(100, "b", lambda c: c != 0)                                 # the fullest (a0) gives one:
    assert newcomer.admitted and newcomer.victim == 3                                 # its oldest between requests
    assert book.count("a0") == 3 and book.count("b") == 1 and book.total == 10
    book.remove(3, "a0")                                                              # (its close, later: nothing)
    assert book.total == 10


def test_the_pages_connections_send_without_nagles_delay(real_page):
    """Noticed here: the listening socket bound before uvicorn started said protocol 0, so asyncio left Nagle's
    algorithm on, and each answer on a kept-alive connection waited 40 ms for the client's delayed ACK."""
    page = real_page
    conn = page.client(PHONE)
    for _ in range(2):
        assert page.request(PHONE, "GET", "/login", connection=conn).status == 200
    book = page.server.config.http_protocol_class.connections_book
    (protocol,) = book.by_address[PHONE]
    sock = protocol.transport.get_extra_info("socket")
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    conn.close()


def _trickled_until_closed(sock: socket.socket, first: bytes, every_s: float, for_s: float) -> float | None:
    """Send ``first``, then a header line every ``every_s`` (a client too slow on purpose); the seconds until the
    page closed the connection (None: still open after ``for_s``)."""
    started = time.monotonic()
    sock.sendall(first)
    while time.monotonic() - started < for_s:
        if closed_by_page([sock], 1, within_s=every_s):
            return time.monotonic() - started
        try:
            sock.setblocking(True)
            sock.sendall(b"x-slow: 1\r\n" if b"\r\n\r\n" not in first else b"a")
        except OSError:
            return time.monotonic() - started
    return None


def _read_answer(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"content-length: (\d+)", head, re.I).group(1))
    while len(body) < length:
        body += sock.recv(65536)
    return head


@pytest.fixture
def quick_timeouts(monkeypatch, tmp_path) -> Iterator[RealPage]:
    """The page with its request timeouts short (1 s for a head, 2 s for a body), so that waiting them out is quick."""
    import firmware.web.connections as connections

    monkeypatch.setattr(connections, "HEADER_TIMEOUT_S", 1.0)
    monkeypatch.setattr(connections, "BODY_TIMEOUT_S", 2.0)
    served = RealPage(tmp_path / "page")
    yield served
    served.stop()


@pytest.mark.alone          # (timed to the second)
def test_a_next_request_sent_a_byte_at_a_time_does_not_hold_its_connection(quick_timeouts):
    """Found against ``mjtable sim --web``: after one answer, a request head trickled a line a second held the
    connection for ever (uvicorn's keep-alive timer stops at any byte; the 5 s bound was the first request's
    only), so a phone's 16 connections stayed taken."""
    page = quick_timeouts
    sock = page.connect(PHONE)
    sock.sendall(b"GET /login HTTP/1.1\r\nhost: 127.0.0.1:%d\r\n\r\n" % page.port)
    assert b" 200 " in _read_answer(sock)
    closed = _trickled_until_closed(sock, b"GET /login HTTP/1.1\r\n", every_s=0.2, for_s=6.0)
    sock.close()
    assert closed is not None and 0.8 <= closed <= 3.0, closed


@pytest.mark.alone          # (timed to the second)
def test_a_body_sent_a_byte_at_a_time_does_not_hold_its_connection(quick_timeouts):
    page = quick_timeouts
    for host in (f"127.0.0.1:{page.port}", "elsewhere.example"):      # a request taken, and one refused at once
        sock = page.connect(PHONE)
        head = (b"POST /login HTTP/1.1\r\nhost: %s\r\norigin: %s\r\ncontent-type: application/x-www-form-urlencoded"
                b"\r\ncontent-length: 5000\r\n\r\nuser=" % (host.encode(), page.origin.encode()))
        closed = _trickled_until_closed(sock, head, every_s=0.2, for_s=8.0)
        sock.close()
        assert closed is not None and 1.5 <= closed <= 5.0, (host, closed)


@pytest.mark.alone          # (timed to the second)
def test_a_kept_alive_connection_between_requests_is_not_cut_by_the_request_timeouts(quick_timeouts):
    page = quick_timeouts
    conn = page.client(PHONE)
    assert page.request(PHONE, "GET", "/login", connection=conn).status == 200
    assert page.login(PHONE, "staff", "wrong", connection=conn).status in (200, 303, 401, 429)
    time.sleep(2.5)                         # past both request timeouts, within uvicorn's keep-alive
    assert page.request(PHONE, "GET", "/login", connection=conn).status == 200
    conn.close()


# -- sessions ---------------------------------------------------------------------------------------------------
def test_logins_of_one_user_never_log_another_out(real_page):
    page = real_page
    tech = page.session(TECHNICIAN, "tech")
    conn = page.client(PHONE)
    staff = [page.login(PHONE, "staff", connection=conn).cookie for _ in range(MAX_SESSIONS + 4)]     # 260
    assert page.request(TECHNICIAN, "GET", "/api/status", cookie=tech).status == 200
    live = [c for c in staff if page.request(PHONE, "GET", "/api/status", cookie=c, connection=conn).status == 200]
    assert live == staff[-MAX_SESSIONS_PER_USER:]                     # staff's own oldest went
    conn.close()


# -- event streams ----------------------------------------------------------------------------------------------
def test_staff_cannot_take_the_event_streams_a_technician_needs(real_page):
    page = real_page
    staff_names = [n for n, (_, role) in USERS.items() if role.value == "staff"]
    assert len(staff_names) * MAX_SESSIONS_PER_USER * MAX_STREAMS_PER_SESSION > MAX_STREAMS
    streams, refusal = [], None
    logins = [(name, f"127.0.0.{20 + i * MAX_SESSIONS_PER_USER + k}")
              for i, name in enumerate(staff_names) for k in range(MAX_SESSIONS_PER_USER)]
    for name, phone in logins:
        cookie = page.session(phone, name)
        for _ in range(MAX_STREAMS_PER_SESSION):
            conn, answer = _open_stream(page, phone, cookie)
            if answer.status != 200:
                refusal = json.loads(answer.read())["error"]
                conn.close()
                break
            streams.append(conn)
        if refusal:
            break
    try:
        cookie = page.session(TECHNICIAN, "tech")
        conn, answer = _open_stream(page, TECHNICIAN, cookie)
        streams.append(conn)
        assert answer.status == 200, answer.read()[:200]                    # the technician's page is live
        assert answer.readline() == b"retry: 2000\n"
        assert len(streams) == MAX_STREAMS - STREAMS_KEPT_FOR_TECHNICIANS + 1
        assert f"其余 {STREAMS_KEPT_FOR_TECHNICIANS} 个留给技术员" in refusal          # (no Accept-Language: zh-CN)
    finally:
        for conn in streams:
            conn.close()


def _open_stream(page: RealPage, source: str, cookie: str) -> tuple[Any, Any]:
    conn = page.client(source)
    conn.request("GET", "/events", headers={"cookie": cookie})
    return conn, conn.getresponse()


# -- bodies -----------------------------------------------------------------------------------------------------
POST_ROUTES = ["/api/hold", "/api/ack", "/api/stop", "/api/hold/HOLD/alive", "/api/hold/HOLD/release"]
HOSTILE = [
    b"[" * 8_000 + b"]" * 8_000,                                       # RecursionError in the json module
    b'{"a":' * 2_000 + b"1" + b"}" * 2_000,
    b'{"kind": "jog", "name": ["dice"]}',                               # TypeError: a list is not hashable
    b'{"kind": "jog", "name": {"x": 1}}',
    b'{"kind": "jog", "name": "center_lift", "to": ["up"]}',            # moved without a "to" before
    b'{"kind": "jog", "name": "center_lift", "to": 7}',
    b'{"kind": "jog", "name": "center_lift", "to": "sideways"}',
    b'{"kind": "jog", "name": "dice", "to": "up"}',                     # a stop is the centre's only
    b'{"kind": "jog", "name": "turntable", "seconds": 1e9}',            # a field the page does not send
    b'{"kind": ' + b"9" * 5_000 + b"}",                                 # past Python's digits for an int
    b'{"kind": "test", "name": 1e999}',
    b'{"kind": true, "name": null}',
    b'[{"kind": "jog", "name": "dice"}]',
    b'"jog"', b"17", b"null", b"true", b"[]",
    b"\xff\xfe\xfd", b'{"kind": "jog", "name": "dice\xff"}', b'{"kind": "jog", "name": "\\ud800"}',
    b"kind=jog&name=dice", b"{", b"{'kind': 'jog'}", b'{"kind": "jog", "name": "dice"} trailing',
]


@pytest.fixture(scope="module")
def tech_page(tmp_path_factory) -> Iterator[tuple[RealPage, str]]:
    served = RealPage(tmp_path_factory.mktemp("tech-page"))
    yield served, served.session(TECHNICIAN, "tech")
    served.stop()


def _post(page: RealPage, route: str, cookie: str, body: bytes) -> Any:
    return page.request(TECHNICIAN, "POST", route, body, cookie=cookie)


def test_hostile_bodies_are_refused_on_every_route_and_nothing_moves(tech_page):
    page, cookie = tech_page
    asked = len(page.control.requests)
    for route in POST_ROUTES:
        for body in HOSTILE:
            answer = _post(page, route, cookie, body)
            assert answer.status == 400, (route, body[:60], answer.status, answer.body[:200])
            assert answer.json()["error"].startswith("bad request body: "), answer.body[:200]
    assert _post(page, "/api/hold", cookie, b"[" * (MAX_BODY_BYTES + 1)).status == 413        # (read no further)
    assert len(page.control.requests) == asked                # nothing was asked of the controller: no motion
    to_list = _post(page, "/api/hold", cookie, b'{"kind": "jog", "name": "center_lift", "to": ["up"]}').json()
    assert to_list == {"ok": False, "error": "bad request body: to: Input should be 'up' or 'down'"}


def test_other_routes_refuse_what_they_cannot_take_with_4xx(tech_page):
    page, cookie = tech_page
    for number in ("9" * 5_000, "9" * 20, "-1", "0x10", "١٢"):              # (past int's digits, SQLite's range)
        answer = page.request(TECHNICIAN, "GET", f"/hand/{urllib.parse.quote(number)}", cookie=cookie)
        assert answer.status == 404 and b"No hand" in answer.body, (number[:20], answer.status)
    form = "&".join(f"field{n}=x" for n in range(20)).encode()
    answer = page.request("127.0.0.3", "POST", "/login", form, content_type="application/x-www-form-urlencoded")
    assert answer.status == 400 and b"at most 8 fields" in answer.body


def test_a_client_gone_before_its_body_ended_is_no_error(real_page, caplog):
    """A phone that sends a body's first bytes and leaves (anyone can, in a loop): answered 400 for nobody,
    nothing asked of the controller, and no error logged for it (before: an exception and its traceback each)."""
    page = real_page
    cookie = page.session(TECHNICIAN, "tech")
    for path, kind, partial in (("/api/hold", "application/json", b'{"kind": "jog", "na'),
                                ("/login", "application/x-www-form-urlencoded", b"user=tech&pass")):
        sock = page.connect(PHONE)
        sock.sendall(f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{page.port}\r\norigin: {page.origin}\r\n"
                     f"cookie: {cookie}\r\ncontent-type: {kind}\r\ncontent-length: 1000\r\n\r\n".encode() + partial)
        sock.close()
    book, tasks = page.server.config.http_protocol_class.connections_book, page.server.server_state.tasks
    assert until(lambda: book.total == 0 and not tasks, within_s=WAIT_S)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert page.control.requests == []


def until(condition: Any, within_s: float) -> bool:
    """Poll the real server's state (it has no event to wait on) with short waits, for at most ``within_s``."""
    deadline, pause = time.monotonic() + within_s, threading.Event()
    while not condition():
        if time.monotonic() >= deadline:
            return False
        pause.wait(0.01)
    return True


def _json_values() -> st.SearchStrategy:
    near = st.sampled_from(["jog", "test", "up", "down", *sorted(MECHANISMS), *GROUP_TESTS, ""])
    leaves = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
              | st.text(max_size=20) | near)
    keys = st.sampled_from(["kind", "name", "to", "hold", "seconds"]) | st.text(max_size=8)
    return st.recursive(leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
                        max_leaves=12)


BODIES = (st.dictionaries(st.sampled_from(["kind", "name", "to"]), _json_values(), max_size=3).map(json.dumps)
          .map(str.encode)
          | _json_values().map(lambda v: json.dumps(v).encode())
          | st.binary(max_size=64)
          | st.integers(1, 8_000).map(lambda n: b"[" * n + b"]" * n))


def _valid(route: str, body: bytes) -> bool:
    """What the route takes, said here independently of the page's models."""
    try:
        value = json.loads(body.decode("utf-8")) if body.strip() else {}
    except (ValueError, RecursionError):            # (UnicodeDecodeError too: the json module guesses UTF-16)
        return False
    if route != "/api/hold":
        return value == {}
    if not isinstance(value, dict) or not set(value) <= {"kind", "name", "to"}:
        return False
    if value.get("kind") == "test":
        return set(value) <= {"kind", "name"} and value.get("name") in GROUP_TESTS
    return (value.get("kind") == "jog" and isinstance(value.get("name"), str) and value["name"] in MECHANISMS
            and (value.get("to") is None or (value["name"] == "center_lift" and value["to"] in ("up", "down"))))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(route=st.sampled_from(POST_ROUTES), body=BODIES)
def test_any_body_on_any_api_route_is_4xx_unless_it_is_valid(tech_page, route, body):
    page, cookie = tech_page
    asked = len(page.control.requests)
    answer = _post(page, route, cookie, body)
    if _valid(route, body):
        assert answer.status in (200, 404), (answer.status, answer.body[:200])      # (404: no such hold)
    else:
        assert 400 <= answer.status < 500 and answer.status != 404, (body[:80], answer.status, answer.body[:200])
        assert len(page.control.requests) == asked


def test_the_bodies_take_every_group_test_the_controller_has():
    assert sorted(TEST_BUTTONS) == sorted(GROUP_TESTS)             # (the service page's buttons are these)


# -- logins -----------------------------------------------------------------------------------------------------
def test_a_wrong_password_on_one_phone_never_locks_the_user_out_on_another(real_page):
    page = real_page
    """Wrong passwords for ``tech`` typed on one phone, as fast as the page lets it, 15 of them: that phone
    waits, tech's own phone logs in at once (before: the name's count locked tech out everywhere)."""
    waited = 0
    for attempt in range(3 * FREE_FAILURES + 6):
        answer = page.login(PHONE, "tech", "a-wrong-password")
        if answer.status == 429:
            waited += 1
            page.clock.now += _wait_s(answer)                              # the phone waits as it is told
            answer = page.login(PHONE, "tech", "a-wrong-password")
        assert answer.status == 401, (attempt, answer.status)
    assert waited and page.login(PHONE, "tech", "a-wrong-password").status == 429        # that phone waits
    assert page.login(TECHNICIAN, "tech").status == 303                                   # tech's phone does not
    assert page.login(PHONE, "tech").status == 429                     # (nor does that phone get a free try)


def test_guessing_a_name_from_many_addresses_is_slowed_down(real_page):
    page = real_page
    """Each address's free failures together reach the name's own, generous limit: then every address, the
    right user's too, waits (at most NAME_MAX_DELAY_S) before that name is tried again."""
    phones = [f"127.0.0.{n}" for n in range(40, 40 + NAME_FREE_FAILURES // FREE_FAILURES + 1)]
    failures = 0
    for phone in phones:
        for _ in range(FREE_FAILURES):
            answer = page.login(phone, "tech", f"guess-{failures}")
            if answer.status == 429:
                break
            assert answer.status == 401
            failures += 1
    assert failures == NAME_FREE_FAILURES
    slowed = page.login("127.0.0.99", "tech")
    assert slowed.status == 429 and 0 < _wait_s(slowed) <= NAME_MAX_DELAY_S
    assert page.login("127.0.0.99", "staff").status == 303                   # other names are not slowed
    page.clock.now += NAME_MAX_DELAY_S
    assert page.login("127.0.0.99", "tech").status == 303


def _wait_s(answer: Any) -> float:
    found = re.search(rb"try again in (\d+) s", answer.body)
    assert found, answer.body[:300]
    return float(found.group(1)) + 1.0


def test_one_address_never_trips_the_names_limit():
    """One address failing ``tech`` as fast as it is let, for two days, a success of another name from it
    after each failure (which clears the address's count but not the pair's): the name's own limit never
    slows another address down (the doubling per address keeps one address under it)."""
    throttle, now_s, peak, failures = LoginThrottle(), 0.0, 0.0, 0
    while now_s < 48 * 3600:
        now_s += throttle.wait_s(PHONE, "tech", now_s)
        assert throttle.begin(PHONE, "tech")
        throttle.failed(PHONE, "tech", now_s)
        throttle.end(PHONE, "tech")
        failures += 1
        peak = max(peak, throttle._name_count(throttle._failures["name:tech"], now_s))
        assert throttle.wait_s(TECHNICIAN, "tech", now_s) == 0.0, (now_s, failures)
        throttle.succeeded(PHONE, "staff")
    assert failures > 48 * 3600 / MAX_DELAY_S and peak < NAME_FREE_FAILURES / 3, peak
