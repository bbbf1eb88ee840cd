"""The broker port: what the fleet's protocol logic needs of an MQTT client, and the messages it carries.

An adapter (the paho client on a table; a fake in unit tests) owns the
network.  Its calls return at once and never block the loop: ``connect``
starts a connection, ``publish`` and ``subscribe`` queue a packet and return
a token that the adapter's later report names.  Reports arrive through an
:class:`AdapterListener` *on the loop's thread*: the adapter's own threads
only ``post()`` them, never act.  Every report names the connection
(``session``) it is about, so that a late report of a connection already
given up is recognised and ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from firmware.i18n import worded


# a site's or a table's id: one segment of a topic (no '/', '+', '#'; no '.', so that it is also a file name)
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"


@dataclass(frozen=True)
class WillMessage:
    """What the broker publishes for a connection that ends without a clean disconnect."""

    topic: str
    payload: bytes
    qos: int = 1
    retain: bool = True


@dataclass(frozen=True)
class PublishProperties:
    """The MQTT 5 properties the fleet uses (None: not sent)."""

    response_topic: str | None = None
    correlation_data: bytes | None = None
    message_expiry_s: int | None = None


@dataclass(frozen=True)
class InboundMessage:
    """A message the broker delivered.  ``message_expiry_s`` is what is left of its MQTT 5 expiry (the broker
    counts the time it held it), None when it carries none."""

    topic: str
    payload: bytes
    retain: bool = False
    response_topic: str | None = None
    correlation_data: bytes | None = None
    message_expiry_s: int | None = None


class AdapterListener(Protocol):
    """Reports of an adapter, called on the loop's thread."""

    def on_connected(self, session: int, ok: bool, reason: str) -> None:
        """The broker's CONNACK (ok), or why the connection could not be made (not ok)."""

    def on_connection_lost(self, session: int, reason: str) -> None:
        """An established connection ended (not after a clean :meth:`MqttAdapter.disconnect`)."""

    def on_published(self, session: int, token: int, ok: bool, reason: str) -> None:
        """QoS 1: the broker's PUBACK (ok, or a refusal such as 'Not authorized'); QoS 0: written."""

    def on_subscribed(self, session: int, token: int, granted: list[int]) -> None:
        """The SUBACK: per filter the granted QoS (0-2) or a refusal code (0x80 and above)."""

    def on_message(self, session: int, message: InboundMessage) -> None:
        """A delivered message."""


class MqttAdapter(Protocol):
    """One MQTT client: one table's connection to its broker (MQTT 5)."""

    def connect(self, session: int, will: WillMessage | None, listener: AdapterListener) -> None:
        """Start connection ``session`` (clean start, no session kept on the broker); any earlier one is
        dropped.  The outcome is reported to ``listener``."""

    def publish(self, topic: str, payload: bytes, qos: int, retain: bool,
                properties: PublishProperties | None = None) -> int:
        """Queue a message on the current connection; returns the token its report names."""

    def subscribe(self, topic_filter: str, qos: int) -> int:
        """Queue a subscription on the current connection; returns the token its report names."""

    def disconnect(self, send_will: bool = False) -> None:
        """End the current connection cleanly (with ``send_will``: asking the broker to publish the Will, MQTT 5
        reason 0x04); nothing more is reported about it."""


REFUSED_WHO = ("Not authorized", "Bad user name or password", "Bad authentication method", "Banned")


def refused_who(reason: str) -> bool:
    """Whether a refused connection's reason (the CONNACK's) is the broker refusing *who* connects (an account, a
    certificate, none given): trying again will not change it; a person must."""
    return any(words in reason for words in REFUSED_WHO)


@dataclass(frozen=True)
class BrokerAddress:
    """Where the broker listens: ``mqtt://host:port`` (plain) or ``mqtts://host:port`` (TLS)."""

    host: str
    port: int
    tls: bool

    def __str__(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"


def parse_broker_url(url: str) -> BrokerAddress:
    """``mqtt://HOST[:PORT]`` or ``mqtts://HOST[:PORT]`` (default ports 1883 and 8883); ValueError says what is
    wrong."""
    if not isinstance(url, str) or "://" not in url:
        raise worded(ValueError, "%(url)r is not a broker URL (mqtt://HOST:PORT or mqtts://HOST:PORT)", url=url)
    scheme, rest = url.split("://", 1)
    if scheme not in ("mqtt", "mqtts"):
        raise worded(ValueError, "%(url)r: the scheme is mqtt:// (plain) or mqtts:// (TLS), not %(scheme)s://",
                     url=url, scheme=scheme)
    if not rest or any(c in rest for c in "/?#@ "):
        raise worded(ValueError, "%(url)r: expected HOST[:PORT] after %(scheme)s:// (no path, user or query)",
                     url=url, scheme=scheme)
    host, port_text = rest, ""
    if rest.startswith("["):                           # [IPv6]:port
        host, _, tail = rest[1:].partition("]")
        port_text = tail[1:] if tail.startswith(":") else ("" if not tail else "x")
    elif ":" in rest:
        host, port_text = rest.rsplit(":", 1)
    if not host:
        raise worded(ValueError, "%(url)r: no host", url=url)
    if port_text and not (port_text.isdigit() and 1 <= int(port_text) <= 65535):
        raise worded(ValueError, "%(url)r: the port is a number from 1 to 65535", url=url)
    port = int(port_text) if port_text else (8883 if scheme == "mqtts" else 1883)
    return BrokerAddress(host, port, scheme == "mqtts")


def parse_broker_urls(text: str) -> list[BrokerAddress]:
    """A comma-separated list of broker URLs (a cluster's nodes, tried in turn); ValueError names the bad one."""
    urls = [u.strip() for u in str(text).split(",") if u.strip()]
    if not urls:
        raise worded(ValueError, "no broker URL given")
    return [parse_broker_url(u) for u in urls]
