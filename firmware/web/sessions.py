"""Server-side sessions and login throttling for the web page, on an injected clock.

A session is a random token (the cookie, HttpOnly and SameSite=Strict, Secure
over TLS) naming a user and role kept in this process: a session ends
``idle_s`` after its last request or ``max_age_s`` after the login, at a
logout, or when the service restarts.  One user holds at most
``max_per_user`` sessions (32: a parlour may share one staff login on every
phone and browser): a new login ends *that user's* session unused the
longest, never anyone else's, so logging in again and again as ``staff``
cannot log ``tech`` out.  The table keeps at most ``max_sessions`` (256) in
all; users are the few names of the users file, so that bound is not
reached (8 users holding 32 each), and should it be, the session unused the
longest of the user holding the most goes (one user cannot exhaust it
either).

Logins are throttled by address and by name, so that guessing a password
is slow, while a wrong password typed on one phone never locks the right
user out on another phone.  Three counts of failures in a row, each
cleared by a success that concerns it:

* **the address** (``ip:ADDRESS``, any name; an IPv6 address counts as its
  /64) and **the name from that address** (``pair:NAME@ADDRESS``): after
  ``free_failures`` (3) failures, each further try is refused for a delay
  that doubles (1 s, 2 s, 4 s ... up to ``max_delay_s``, 5 minutes).  The
  pair is what a success of another name from the same address does not
  clear (a staff member's own login does not reset the guesses at
  ``tech``'s password from that phone); neither touches another address.
* **the name from everywhere** (``name:NAME``), much more generous, against
  guessing from many addresses at once: a count that forgets one failure
  every ``name_leak_s`` (60 s); at ``name_free_failures`` (30) and over, each
  try of that name waits 1 s, 2 s ... up to ``name_max_delay_s`` (60 s)
  after the name's last failure, so many addresses together guess at most
  about once a minute.  One address never gets there: the doubling above
  lets it fail about 12 times in its first 9 minutes and then once in 5
  minutes, which the count forgets faster (at most about 8 at once, see
  ``test_one_address_never_trips_the_names_limit``).

A try is counted as failed before its password is checked (a success then
clears the counts of its address, its pair and its name), and only one try
per address and one per name is checked at a time, so parallel requests
cannot all be checked before the first failure counts.  The table of counts
is bounded (``max_keys``, the longest unchanged goes first).
"""

from __future__ import annotations

import logging
import secrets
from collections import Counter, OrderedDict
from dataclasses import dataclass

from firmware.web.users import Role

log = logging.getLogger(__name__)

IDLE_S = 8 * 3600.0            # a parlour shift
MAX_AGE_S = 24 * 3600.0
MAX_SESSIONS = 256
MAX_SESSIONS_PER_USER = 32     # one login's phones and browsers (the 33rd ends that user's session unused longest)
FREE_FAILURES = 3
MAX_DELAY_S = 300.0
MAX_THROTTLED = 4096
NAME_FREE_FAILURES = 30        # a name's failures from everywhere before its tries are slowed down
NAME_LEAK_S = 60.0             # the name's count forgets one failure this often
NAME_MAX_DELAY_S = 60.0        # so a name is guessed at most about once a minute from all addresses together


@dataclass
class Session:
    token: str
    user: str
    role: Role
    created_s: float
    seen_s: float


class Sessions:
    def __init__(self, idle_s: float = IDLE_S, max_age_s: float = MAX_AGE_S,
                 max_sessions: int = MAX_SESSIONS, max_per_user: int = MAX_SESSIONS_PER_USER) -> None:
        if not 1 <= max_per_user <= max_sessions:
            raise ValueError(f"sessions per user: 1 to {max_sessions}, not {max_per_user}")
        self.idle_s, self.max_age_s = idle_s, max_age_s
        self.max_sessions, self.max_per_user = max_sessions, max_per_user
        self._by_token: OrderedDict[str, Session] = OrderedDict()      # unused the longest first

    def __len__(self) -> int:
        return len(self._by_token)

    def of_user(self, user: str) -> list[Session]:
        """``user``'s sessions, unused the longest first."""
        return [s for s in self._by_token.values() if s.user == user]

    def create(self, user: str, role: Role, now_s: float) -> Session:
        """A new session for ``user``; that user's session unused the longest ends when the user holds
        ``max_per_user`` already (and, were the table full, the one of the user holding the most)."""
        for ended in [s for s in self._by_token.values() if self._ended(s, now_s)]:
            del self._by_token[ended.token]
        mine = self.of_user(user)
        for oldest in mine[:max(0, len(mine) - self.max_per_user + 1)]:
            del self._by_token[oldest.token]
        while len(self._by_token) >= self.max_sessions:
            counts = Counter(s.user for s in self._by_token.values())
            biggest = max(counts, key=lambda name: counts[name])
            del self._by_token[self.of_user(biggest)[0].token]
        session = Session(secrets.token_urlsafe(32), user, role, now_s, now_s)
        self._by_token[session.token] = session
        return session

    def _ended(self, session: Session, now_s: float) -> bool:
        return now_s - session.seen_s > self.idle_s or now_s - session.created_s > self.max_age_s

    def get(self, token: str | None, now_s: float) -> Session | None:
        """The live session of a token (its idle time starts again), or None."""
        session = self._by_token.get(token) if token else None
        if session is None:
            return None
        if self._ended(session, now_s):
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
    count: float                # (a name's count leaks: a fraction of a failure may be left)
    last_s: float


class LoginThrottle:
    def __init__(self, free_failures: int = FREE_FAILURES, max_delay_s: float = MAX_DELAY_S,
                 max_keys: int = MAX_THROTTLED, name_free_failures: int = NAME_FREE_FAILURES,
                 name_leak_s: float = NAME_LEAK_S, name_max_delay_s: float = NAME_MAX_DELAY_S) -> None:
        self.free_failures, self.max_delay_s, self.max_keys = free_failures, max_delay_s, max_keys
        self.name_free_failures, self.name_leak_s = name_free_failures, name_leak_s
        self.name_max_delay_s = name_max_delay_s
        self._failures: OrderedDict[str, _Failures] = OrderedDict()
        self._in_flight: set[str] = set()

    @staticmethod
    def _keys(address: str, name: str) -> tuple[str, str, str]:
        return f"ip:{address}", f"pair:{name}@{address}", f"name:{name}"

    def _name_count(self, entry: _Failures, now_s: float) -> float:
        return max(0.0, entry.count - max(0.0, now_s - entry.last_s) / self.name_leak_s)

    def wait_s(self, address: str, name: str, now_s: float) -> float:
        """How long a try of ``name`` from ``address`` must still wait; 0: it may be tried now."""
        ip, pair, by_name = self._keys(address, name)
        wait = 0.0
        for key in (ip, pair):
            entry = self._failures.get(key)
            if entry is not None and entry.count >= self.free_failures:
                delay = min(self.max_delay_s, 2.0 ** (entry.count - self.free_failures))
                wait = max(wait, entry.last_s + delay - now_s)
        entry = self._failures.get(by_name)
        if entry is not None and entry.count >= self.name_free_failures:
            delay = min(self.name_max_delay_s, 2.0 ** (int(entry.count) - self.name_free_failures))
            wait = max(wait, entry.last_s + delay - now_s)
        return max(wait, 0.0)

    def begin(self, address: str, name: str) -> bool:
        """Take the address and the name for one try being checked; False (nothing taken) when one of them
        is taken already."""
        taken = (f"ip:{address}", f"name:{name}")
        if any(key in self._in_flight for key in taken):
            return False
        self._in_flight.update(taken)
        return True

    def end(self, address: str, name: str) -> None:
        """The try taken by :meth:`begin` is over (checked or not)."""
        self._in_flight.difference_update((f"ip:{address}", f"name:{name}"))

    def failed(self, address: str, name: str, now_s: float) -> None:
        ip, pair, by_name = self._keys(address, name)
        for key in (ip, pair, by_name):
            entry = self._failures.pop(key, None) or _Failures(0, now_s)
            count = self._name_count(entry, now_s) if key == by_name else entry.count
            entry.count, entry.last_s = count + 1, now_s
            self._failures[key] = entry
        if self._failures[by_name].count >= self.name_free_failures > self._failures[by_name].count - 1:
            log.warning("logins: %d failures in a row for %r from several addresses: its tries are slowed down",
                        self.name_free_failures, name)
        while len(self._failures) > self.max_keys:
            self._failures.popitem(last=False)

    def succeeded(self, address: str, name: str) -> None:
        for key in self._keys(address, name):
            self._failures.pop(key, None)
