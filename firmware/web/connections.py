"""The web service's connections, bounded per client address and in all, in uvicorn's own protocol.

uvicorn bounds nothing per client: its ``limit_concurrency`` answers 503 to
every request once that many connections are open, whoever holds them, so a
hundred idle connections from one phone (reopened before any timeout) lock
everyone out of the page.  Here every connection is counted when it is made,
before a byte of it is read (:class:`ConnectionBook`, by
:func:`firmware.web.guards.address_key`: an IPv4 address, an IPv6 /64):

* one address holds at most ``MAX_CONNECTIONS_PER_ADDRESS`` (16: a phone's
  browser opens 6 per site, its pages' event streams included); one more is
  answered a canned 503 and closed at once, without parsing anything;
* at most ``MAX_CONNECTIONS`` (100) in all; when they are all taken, a new
  connection takes the place of one of the address that holds the most (its
  oldest between requests, else its oldest), provided that address holds at
  least two more than the newcomer's: so addresses that fill the bound
  together cannot keep another out, and nobody is cut below anybody else's
  share.  Only when every address holds about as many as the newcomer is
  the newcomer refused;
* a connection must begin its first request within ``HEADER_TIMEOUT_S``
  (5 s; uvicorn times a connection only after a response);
* a request begun must have its head within ``HEADER_TIMEOUT_S`` of its
  first byte and its body within ``BODY_TIMEOUT_S`` (10 s) of its head, or
  the connection is closed: uvicorn's keep-alive timer stops at any byte, so
  a client sending its next request a byte at a time (or a body: no request
  here takes more than 16 KiB) held its connection for ever.  A response
  being sent (an event stream) is not timed.

The time of the timeout is the event loop's (``call_later``): this module is
the serving runtime's, beside :mod:`firmware.web.runtime`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Generic, Hashable, TypeVar

from firmware.web.guards import address_key

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 100               # browsers, their event streams and requests together
MAX_CONNECTIONS_PER_ADDRESS = 16    # one phone (a browser opens 6 per site; 4 pages' event streams among them)
HEADER_TIMEOUT_S = 5.0              # a new connection's first request must have begun by then (after TLS's handshake)
BODY_TIMEOUT_S = 10.0               # a request's body must have come by then, counted from its head
TOLD_KEPT = 1024                    # addresses whose refusal was logged (a warning each, not one per connection)


def refusal(why: str) -> bytes:
    """The canned answer written to a refused connection before it is closed (nothing of it is read)."""
    body = f"{why}\n".encode()
    return (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nretry-after: 5\r\n"
            b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


PER_ADDRESS_REFUSAL = refusal("Too many connections from this address: close a page of the table.")
FULL_REFUSAL = refusal("The table's page has as many connections as it takes: try again shortly.")

C = TypeVar("C", bound=Hashable)


@dataclass(frozen=True)
class Admission(Generic[C]):
    admitted: bool
    victim: C | None = None             # admitted in its place (of the address holding the most)
    refused: str | None = None          # "address": at its own bound; "full": every address holds its share


class ConnectionBook(Generic[C]):
    """The open connections by client address: who is let in, and whose connection makes room."""

    def __init__(self, max_total: int = MAX_CONNECTIONS, max_per_address: int = MAX_CONNECTIONS_PER_ADDRESS) -> None:
        if not 1 <= max_per_address <= max_total:
            raise ValueError(f"connections per address: 1 to {max_total}, not {max_per_address}")
        self.max_total, self.max_per_address = max_total, max_per_address
        self.by_address: dict[str, dict[C, None]] = {}      # each address's connections, oldest first
        self.total = 0

    def count(self, address: str) -> int:
        return len(self.by_address.get(address, ()))

    def admit(self, conn: C, address: str, between_requests: Callable[[C], bool]) -> Admission[C]:
        """Count ``conn`` of ``address`` in, or say why not; a connection of another address to close to make
        room for it is taken out of the book here (its owner closes it)."""
        mine = self.count(address)
        if mine >= self.max_per_address:
            return Admission(False, refused="address")
        victim = None
        if self.total >= self.max_total:
            biggest = max(self.by_address, key=lambda a: len(self.by_address[a]))
            theirs = self.by_address[biggest]
            if len(theirs) < mine + 2:
                return Admission(False, refused="full")
            victim = next((c for c in theirs if between_requests(c)), next(iter(theirs)))
            self.remove(victim, biggest)
        self.by_address.setdefault(address, {})[conn] = None
        self.total += 1
        return Admission(True, victim=victim)

    def remove(self, conn: C, address: str) -> None:
        """``conn`` is gone (nothing happens when it was not counted, or already removed)."""
        held = self.by_address.get(address)
        if held is None or conn not in held:
            return
        del held[conn]
        self.total -= 1
        if not held:
            del self.by_address[address]


def bounded_protocol(timeout_s: float | None = None, max_total: int = MAX_CONNECTIONS,
                     max_per_address: int = MAX_CONNECTIONS_PER_ADDRESS, body_timeout_s: float | None = None) -> type:
    """uvicorn's h11 protocol with the bounds above (one :class:`ConnectionBook` for the server using it; the
    timeouts are the module's when not given)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    timeout_s = HEADER_TIMEOUT_S if timeout_s is None else timeout_s
    body_timeout_s = BODY_TIMEOUT_S if body_timeout_s is None else body_timeout_s

    book: ConnectionBook[Any] = ConnectionBook(max_total, max_per_address)
    told: set[str] = set()              # addresses refused and logged (again once it holds none)

    def between_requests(protocol: Any) -> bool:
        return protocol.cycle is None or protocol.cycle.response_complete

    class BoundedH11(H11Protocol):
        connections_book = book

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._address = address_key(self.client[0] if self.client else None)
            admission = book.admit(self, self._address, between_requests)
            self._counted = admission.admitted
            victim = admission.victim
            if victim is not None:
                log.info("web: all %d connections taken: one of %s's closed for %s", max_total, victim._address,
                         self._address)
                victim._counted = False
                victim.transport.abort()            # (no answer is owed between requests)
            if not admission.admitted:
                if self._address not in told:
                    if len(told) >= TOLD_KEPT:
                        told.clear()
                    told.add(self._address)
                    log.warning("web: %s holds %d connections, %d are open in all: its new ones are refused",
                                self._address, book.count(self._address), book.total)
                transport.write(PER_ADDRESS_REFUSAL if admission.refused == "address" else FULL_REFUSAL)
                transport.close()
                return
            self._no_request_timer = self.loop.call_later(timeout_s, self._no_request)

        def _no_request(self) -> None:
            if self.cycle is None and not self.transport.is_closing():
                log.info("web: %s sent no request within %g s: closed", self.client, timeout_s)
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._time_request()

        def _waiting_for(self) -> str | None:
            """What of a request begun has not come yet: ``head``, ``body`` or None (nothing is awaited)."""
            cycle = self.cycle
            if cycle is not None and cycle.more_body and self.conn.their_state is h11.SEND_BODY:
                return "body"               # (also of a request answered before its body came: a refusal)
            if cycle is None or cycle.response_complete:
                # bytes came after the last answer (uvicorn's keep-alive timer is stopped), no new request yet
                return "head" if self.conn.trailing_data[0] else None
            return None

        def _time_request(self) -> None:
            """A request's head, or its body, must come within its bound (a byte now and then does not reset it)."""
            waiting = self._waiting_for()
            timed = getattr(self, "_slow_timed", None)
            if waiting is None:
                self._stop_slow_timer()
                return
            if timed == (self.cycle, waiting):
                return                                  # (its timer runs since its first byte)
            self._stop_slow_timer()
            self._slow_timed = (self.cycle, waiting)
            self._slow_timer = self.loop.call_later(timeout_s if waiting == "head" else body_timeout_s,
                                                    self._too_slow, self.cycle, waiting)

        def _stop_slow_timer(self) -> None:
            timer = getattr(self, "_slow_timer", None)
            if timer is not None:
                timer.cancel()
            self._slow_timer = self._slow_timed = None

        def _too_slow(self, cycle: Any, waiting: str) -> None:
            self._slow_timer = None
            if self.cycle is cycle and self._waiting_for() == waiting and not self.transport.is_closing():
                log.info("web: %s sent a request's %s too slowly: closed", self.client, waiting)
                self.transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_slow_timer()
            timer = getattr(self, "_no_request_timer", None)
            if timer is not None:
                timer.cancel()
            if getattr(self, "_counted", False):
                self._counted = False
                book.remove(self, self._address)
                if not book.count(self._address):
                    told.discard(self._address)
            super().connection_lost(exc)
    return BoundedH11

