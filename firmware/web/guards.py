"""The web page's rules for every request, before any route: the Host allow-list, Origin, and safe headers.

* **Host** (against DNS rebinding): a request is served only when its Host
  header names this table: an IP address (a rebinding attack needs a name the
  attacker controls, so an address is always this machine), ``localhost``, or
  one of the names allowed (by default the machine's host name and
  ``NAME.local``; ``mjtable web --allow-host`` adds more).  Anything else is
  refused with 421 and served nothing.
* **Origin** (against cross-site requests): every request that may change
  something (any method but GET and HEAD) must carry an ``Origin`` header
  equal to this page's own origin (scheme, and the Host it was sent to);
  one without, or from elsewhere, is refused with 403.  Browsers send Origin
  with every POST, a form's included.
* **Headers** on every answer: a Content-Security-Policy that allows only
  this page's own scripts, styles and images, no framing, no sniffing, no
  referrer to other sites, no caching of pages (static files may be cached),
  and HSTS over TLS.

:func:`address_key` says who a client is for the limits per address (the
connections of :mod:`firmware.web.connections`, the login throttle of
:mod:`firmware.web.sessions`): its IPv4 address, or its IPv6 /64.
"""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

SAFE_METHODS = frozenset({"GET", "HEAD"})
IPV6_PREFIX_BITS = 64           # one client for the limits per address: an IPv6 /64 (a phone's own network)
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'")


def host_name(host: str) -> str:
    """The name or address part of a Host header (``[::1]:8080`` -> ``::1``, ``Table.local:443`` -> ``table.local``)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def address_key(host: str | None) -> str:
    """Who a client is for the page's limits per address (connections, login throttling): an IPv4 address
    as it is (an IPv4-mapped IPv6 address as its IPv4), an IPv6 address as its /64 network (one phone may
    take any address of its /64, SLAAC's privacy addresses), anything else (no address) as it is."""
    try:
        address = ipaddress.ip_address((host or "?").split("%", 1)[0])
    except ValueError:
        return host or "?"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, IPV6_PREFIX_BITS), strict=False))
    return str(address)


def is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class HostRules:
    names: frozenset[str] = field(default_factory=lambda: frozenset({"localhost"}))

    @classmethod
    def of(cls, names: list[str]) -> "HostRules":
        return cls(frozenset({"localhost", *(n.strip().lower().rstrip(".") for n in names if n.strip())}))

    def allows(self, host: str | None) -> bool:
        if not host:
            return False
        name = host_name(host).rstrip(".")
        return is_address(name) or name in self.names


class Guards:
    """Pure ASGI middleware: Host and Origin checked before the app, headers added to every answer."""

    def __init__(self, app: Any, hosts: HostRules, tls: bool) -> None:
        self.app, self.hosts, self.tls = app, hosts, tls
        self.scheme = "https" if tls else "http"

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host")
        if not self.hosts.allows(host):
            log.warning("refused a request for host %r (not this table's name)", host)
            await _plain(send, 421, "This table does not answer to that name.\n")
            return
        if scope["method"] not in SAFE_METHODS:
            origin = headers.get("origin")
            if origin != f"{self.scheme}://{host}":
                log.warning("refused a cross-origin %s %s from origin %r", scope["method"], scope["path"], origin)
                await _plain(send, 403, "Cross-origin request refused.\n")
                return
        static = scope["path"].startswith("/static/") or scope["path"] == "/favicon.ico"

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                extra = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
                         (b"x-frame-options", b"DENY"), (b"referrer-policy", b"same-origin")]
                if not static:
                    extra.append((b"cache-control", b"no-store"))
                if self.tls:
                    extra.append((b"strict-transport-security", b"max-age=31536000"))
                message = {**message, "headers": list(message.get("headers", [])) + extra}
            await send(message)
        await self.app(scope, receive, send_with_headers)


async def _plain(send: Any, status: int, text: str) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()),
                            (b"content-security-policy", CSP.encode()), (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})
