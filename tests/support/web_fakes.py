"""A fake controller socket and a hand-driven clock for the web page's tests (Starlette's test client)."""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path
from typing import Any, AsyncIterator

with warnings.catch_warnings():             # (Starlette 1.x prefers httpx2 to httpx; both work)
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from firmware.web.app import create_app
from firmware.web.state import WebSettings
from firmware.web.guards import HostRules
from firmware.web.records import TableRecords
from firmware.web.users import Role, Users

PASSWORDS = {"tech": ("technician-pw-1", Role.TECHNICIAN), "staff": ("staff-password-2", Role.STAFF)}
ORIGIN = "http://testserver"


class FakeHeld:
    def __init__(self) -> None:
        self.answer: asyncio.Future = asyncio.get_running_loop().create_future()
        self.closed = False
        self.renewed = 0

    def close(self) -> None:
        self.closed = True
        if not self.answer.done():
            self.answer.cancel()

    def renew(self) -> None:
        self.renewed += 1


class FakeControl:
    """Records every request; answers ``ask`` from ``answers`` (by cmd); subscription lines are pushed."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answers: dict[str, dict[str, Any]] = {}
        self.helds: list[FakeHeld] = []
        self.queue: asyncio.Queue | None = None

    async def ask(self, request: dict[str, Any], timeout_s: float = 30.0) -> dict[str, Any]:
        self.requests.append(request)
        return self.answers.get(request["cmd"], {"ok": True})

    async def begin(self, request: dict[str, Any], timeout_s: float = 600.0) -> FakeHeld:
        self.requests.append(request)
        held = FakeHeld()
        self.helds.append(held)
        return held

    async def subscribe(self, tick_s: float = 0.25) -> AsyncIterator[dict[str, Any]]:
        if self.queue is None:
            self.queue = asyncio.Queue()
        while True:
            line = await self.queue.get()
            if line is None:
                raise ConnectionError("the controller closed the connection")
            yield line

    async def push(self, line: dict[str, Any] | None) -> None:
        while self.queue is None:
            await asyncio.sleep(0)
        self.queue.put_nowait(line)
        for _ in range(5):
            await asyncio.sleep(0)          # (the hub takes it before the test goes on)


def run_async(coroutine: Any) -> Any:
    """``asyncio.run`` on a thread of its own (a browser test's Playwright keeps a loop running in this one)."""
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def users_file(folder: Path) -> Path:
    path = folder / "users.json"
    users = Users.load(path)
    for name, (password, role) in PASSWORDS.items():
        users.set_password(name, password, role)
    return path


STATUS = {
    "table": {"state": "in_play", "fault": None, "interlocks": [], "stuck_keys": [], "service_mode": False,
              "service_test": False, "moving": [], "motors_safe": True, "sets": {"A": "table"}, "enrol": None},
    "book": {"hand": 1, "hand_open": True, "dealer": 0, "dealer_streak": 0, "round_wind": "E", "last_winner": None,
             "dice": [3, 4], "walls": {"A": "verified"}},
    "stacking": {"active": False, "set_id": None, "target": None, "counted": None, "stacked": None, "paused": False},
    "reader": {"frames_ok": 10},
    "faults": {"active": [], "look_for": None, "check": None, "storage_error": None},
    "chips": {"chips": [500, 500, 500, 500], "rules": "mcr", "start": 500, "game": 1},
    "sensors": {"lid": False},
    "deal": {"hand": 1, "dealer": 0, "dice": [3, 4], "hands": {"0": ["1m", "E"]}, "wall": "verified"},
}


class WebTable:
    """The app against a fake controller, a hand-driven clock and ticker, and a table database file."""

    def __init__(self, folder: Path, db: Path, users: bool = True, tls: bool = False, **settings: Any) -> None:
        self.control, self.clock = FakeControl(), Clock()
        self.ticks: list = []
        loaded = Users.load(users_file(folder) if users else folder / "none.json")
        self.settings = WebSettings(users=loaded, hosts=HostRules.of(["table7", "table7.local", "testserver"]),
                                    tls=tls, **settings)
        app = create_app(self.settings, self.control, TableRecords(db), self.clock, self._start_ticker)
        base = "https://testserver" if tls else "http://testserver"
        # (in English, as the tests read it; the page itself speaks zh-CN to a browser that asks for neither)
        self.client = TestClient(app, base_url=base, headers={"origin": base, "accept-language": "en"})

    def _start_ticker(self, tick: Any) -> Any:
        self.ticks.append(tick)
        return lambda: None

    def __enter__(self) -> "WebTable":
        self.client.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.client.__exit__(*exc)

    @property
    def state(self) -> Any:
        return self.client.app.state.web

    def push(self, line: dict[str, Any] | None) -> None:
        self.client.portal.call(self.control.push, line)

    def tick(self, advance_s: float) -> None:
        self.clock.now += advance_s
        self.client.portal.call(self.ticks[0], self.clock.now)
        self.client.portal.call(_settle)


    def login(self, name: str) -> Any:
        return self.client.post("/login", data={"user": name, "password": PASSWORDS[name][0], "next": "/"},
                                follow_redirects=False)


async def _settle() -> None:
    """Let the tasks a tick started (a stop sent to the controller) run."""
    for _ in range(5):
        await asyncio.sleep(0)
