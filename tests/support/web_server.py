"""The real web page on loopback for the limit tests: the app served by uvicorn as ``mjtable web`` serves it.

:class:`RealPage` builds the app (:func:`firmware.web.app.create_app`) on a
fake controller (:class:`tests.support.web_fakes.FakeControl`, which records every
request: "nothing moved" is "nothing was asked") and a hand-driven clock,
and serves it with :func:`firmware.web.runtime.make_server` on 127.0.0.1 in a
thread of its own, with the connections' bounds and uvicorn as on a table.
Clients are plain sockets or ``http.client`` connections bound to a source
address of their own (127.0.0.2, 127.0.0.3 ...: each a phone on the Wi-Fi).

The users' passwords are real Argon2id hashes with the smallest parameters
(the page verifies what the hash says), so that hundreds of logins take
milliseconds each rather than a core for a moment.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import selectors
import socket
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher

from firmware.web.app import create_app
from firmware.web.state import WebSettings
from firmware.web.guards import HostRules
from firmware.web.records import TableRecords
from firmware.web.users import Role, Users
from firmware.web.runtime import listen, make_server
from tests.support.web_fakes import Clock, FakeControl

WAIT_S = 20.0                  # the longest a client here waits for the page (it never needs that long)
QUICK_HASHER = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
USERS = {"tech": ("technician-pw-1", Role.TECHNICIAN), "tech2": ("technician-pw-2", Role.TECHNICIAN),
         "staff": ("staff-password-2", Role.STAFF), "staff2": ("staff-password-3", Role.STAFF),
         "staff3": ("staff-password-4", Role.STAFF)}


def quick_users(folder: Path) -> Users:
    path = folder / "users.json"
    doc = {"version": 1, "users": {name: {"role": role.value, "hash": QUICK_HASHER.hash(password)}
                                   for name, (password, role) in USERS.items()}}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return Users.load(path)


class Answer:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def cookie(self) -> str | None:
        """The session cookie this answer sets (``name=value``)."""
        setting = self.headers.get("set-cookie")
        return setting.split(";", 1)[0] if setting else None


class _Client(http.client.HTTPConnection):
    """``http.client``'s connection without Nagle's delay (as browsers: each request on a kept-alive connection
    otherwise waits for the page's delayed acknowledgement, 40 ms)."""

    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class RealPage:
    """The app served by uvicorn on 127.0.0.1 (a free port), on a thread with its own event loop."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.control, self.clock = FakeControl(), Clock()
        self.settings = WebSettings(users=quick_users(folder), hosts=HostRules.of([]))
        self.started = threading.Event()
        self.app = create_app(self.settings, self.control, TableRecords(folder / "table.db"), self.clock,
                              self._start_ticker)
        self.sock = listen("127.0.0.1", 0)
        self.port = self.sock.getsockname()[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.server = make_server(self.app, self.sock)
        self.thread = threading.Thread(target=self._run, name="real-page", daemon=True)
        self.thread.start()
        if not self.started.wait(WAIT_S):
            raise RuntimeError("the page did not start")

    def _start_ticker(self, tick: Any) -> Any:
        self.started.set()                  # (the lifespan has begun: the app's state exists)
        return lambda: None

    def _run(self) -> None:
        asyncio.run(self.server.serve(sockets=[self.sock]))

    @property
    def state(self) -> Any:
        return self.app.state.web

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(WAIT_S)
        self.sock.close()

    # -- clients ------------------------------------------------------------------------------------------
    def connect(self, source: str) -> socket.socket:
        """A TCP connection from ``source`` (an address of 127/8), sending nothing."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((source, 0))
        sock.settimeout(WAIT_S)
        sock.connect(("127.0.0.1", self.port))
        return sock

    def client(self, source: str) -> http.client.HTTPConnection:
        return _Client("127.0.0.1", self.port, timeout=WAIT_S, source_address=(source, 0))

    def request(self, source: str, method: str, path: str, body: bytes | None = None, cookie: str | None = None,
                content_type: str = "application/json", connection: http.client.HTTPConnection | None = None
                ) -> Answer:
        """One request from ``source`` (on ``connection`` when given, else on a connection of its own)."""
        conn = connection or self.client(source)
        headers = {"origin": self.origin, "accept-language": "en"}      # (the tests read the page in English)
        if cookie:
            headers["cookie"] = cookie
        if body is not None:
            headers["content-type"] = content_type
        try:
            conn.request(method, path, body=body, headers=headers)
            answer = conn.getresponse()
            return Answer(answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read())
        finally:
            if connection is None:
                conn.close()

    def login(self, source: str, name: str, password: str | None = None,
              connection: http.client.HTTPConnection | None = None) -> Answer:
        form = urllib.parse.urlencode({"user": name, "password": password or USERS[name][0], "next": "/"})
        return self.request(source, "POST", "/login", form.encode(), content_type="application/x-www-form-urlencoded",
                            connection=connection)

    def session(self, source: str, name: str) -> str:
        """A logged-in session's cookie for ``name`` (from ``source``)."""
        answer = self.login(source, name)
        assert answer.status == 303 and answer.cookie, (answer.status, answer.body[:200])
        return answer.cookie


def closed_by_page(socks: list[socket.socket], at_least: int, within_s: float) -> set[socket.socket]:
    """The connections of ``socks`` the page has closed (each read to its end: a refusal's answer, then end of
    file or a reset), waiting until ``at_least`` are, or ``within_s`` has passed; then any others closed
    by that time."""
    found: set[socket.socket] = set()
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + within_s
        while True:
            wait_s = 0.0 if len(found) >= at_least else max(0.0, deadline - time.monotonic())
            ready = selector.select(wait_s)
            for key, _ in ready:
                sock = key.fileobj
                if _read_to_end(sock):
                    found.add(sock)
                    selector.unregister(sock)
            if not ready and (len(found) >= at_least or time.monotonic() >= deadline):
                return found


def _read_to_end(sock: Any) -> bool:
    try:
        while True:
            if not sock.recv(4096):
                return True
    except ConnectionResetError:
        return True
    except BlockingIOError:
        return False
