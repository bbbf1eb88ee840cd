"""Server-side sessions and login throttling for the web page, on an injected clock.

A session is a random token (the cookie, HttpOnly and SameSite=Strict, Secure
over TLS) naming a user and role kept in this process: a session ends
``idle_s`` after its last request or ``max_age_s`` after the login, at a
logout, or when the service restarts.  At most ``max_sessions`` are kept (the
oldest goes first).

Logins are throttled per source address and per user name: after
``free_failures`` failures in a row, each further try is refused for a
delay that doubles (1 s, 2 s, 4 s ... up to ``max_delay_s``), so guessing a
password from a phone on the parlour Wi-Fi is slow, and one user cannot be
locked out by someone else for long.  A try is counted as failed before its
password is checked (a success clears the user's and the address's count),
and only one try per address and per name is checked at a time, so
parallel requests cannot all be checked before the first failure counts.
Both tables are bounded.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass

from firmware.web.users import Role

IDLE_S = 8 * 3600.0            # a parlour shift
MAX_AGE_S = 24 * 3600.0
MAX_SESSIONS = 256
FREE_FAILURES = 3
MAX_DELAY_S = 300.0
MAX_THROTTLED = 4096


@dataclass
class Session:
    token: str
    user: str
    role: Role
    created_s: float
    seen_s: float


class Sessions:
    def __init__(self, idle_s: float = IDLE_S, max_age_s: float = MAX_AGE_S,
                 max_sessions: int = MAX_SESSIONS) -> None:
        self.idle_s, self.max_age_s, self.max_sessions = idle_s, max_age_s, max_sessions
        self._by_token: OrderedDict[str, Session] = OrderedDict()

    def __len__(self) -> int:
        return len(self._by_token)

    def create(self, user: str, role: Role, now_s: float) -> Session:
        session = Session(secrets.token_urlsafe(32), user, role, now_s, now_s)
        self._by_token[session.token] = session
        while len(self._by_token) > self.max_sessions:
            self._by_token.popitem(last=False)
        return session

    def get(self, token: str | None, now_s: float) -> Session | None:
        """The live session of a token (its idle time starts again), or None."""
        session = self._by_token.get(token) if token else None
        if session is None:
            return None
        if now_s - session.seen_s > self.idle_s or now_s - session.created_s > self.max_age_s:
            del self._by_token[session.token]
            return None
        session.seen_s = now_s
        self._by_token.move_to_end(session.token)
        return session

    def end(self, token: str | None) -> None:
        if token:
            self._by_token.pop(token, None)


@dataclass
class _Failures:
    count: int
    last_s: float


class LoginThrottle:
    def __init__(self, free_failures: int = FREE_FAILURES, max_delay_s: float = MAX_DELAY_S,
                 max_keys: int = MAX_THROTTLED) -> None:
        self.free_failures, self.max_delay_s, self.max_keys = free_failures, max_delay_s, max_keys
        self._failures: OrderedDict[str, _Failures] = OrderedDict()
        self._in_flight: set[str] = set()

    def wait_s(self, keys: list[str], now_s: float) -> float:
        """How long these keys (``ip:ADDRESS``, ``user:NAME``) must still wait before a try; 0: may try."""
        wait = 0.0
        for key in keys:
            entry = self._failures.get(key)
            if entry is not None and entry.count >= self.free_failures:
                delay = min(self.max_delay_s, 2.0 ** (entry.count - self.free_failures))
                wait = max(wait, entry.last_s + delay - now_s)
        return max(wait, 0.0)

    def begin(self, keys: list[str]) -> bool:
        """Take the keys for one try being checked; False (nothing taken) when one of them is taken already."""
        if any(key in self._in_flight for key in keys):
            return False
        self._in_flight.update(keys)
        return True

    def end(self, keys: list[str]) -> None:
        """The try taken by :meth:`begin` is over (checked or not)."""
        self._in_flight.difference_update(keys)

    def failed(self, keys: list[str], now_s: float) -> None:
        for key in keys:
            entry = self._failures.pop(key, None) or _Failures(0, now_s)
            entry.count, entry.last_s = entry.count + 1, now_s
            self._failures[key] = entry
        while len(self._failures) > self.max_keys:
            self._failures.popitem(last=False)

    def succeeded(self, keys: list[str]) -> None:
        for key in keys:
            self._failures.pop(key, None)
