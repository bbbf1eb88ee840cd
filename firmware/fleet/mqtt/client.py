"""The fleet's MQTT client on paho-mqtt 2.x (MQTT 5, TLS with client certificates): the only module importing paho.

:class:`PahoAdapter` is one table's client (the :class:`~firmware.ports.broker.MqttAdapter`
protocol) on a shared :class:`~firmware.fleet.mqtt.network.MqttNetwork`, the one network
thread for any number of clients: every paho call on a connected client runs
there; the loop thread only queues work there.  Each connection is a new paho
client with a clean start: the table's outbox, not paho's memory, decides
what is sent again after a reconnect.  paho's callbacks only ``post()``
reports into the firmware's loop; they never act.  A table's client bounds
what it posts of the messages it receives (:class:`~firmware.fleet.mqtt.inbound.InboundGate`),
so a flood on its ``cmd/+`` cannot starve the table's loop.
"""

from __future__ import annotations

import itertools
import logging
import os
import socket
import ssl
from dataclasses import dataclass
from typing import Any, Callable

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from firmware.ports.broker import AdapterListener, BrokerAddress, InboundMessage, PublishProperties, WillMessage
from firmware.fleet.mqtt.inbound import InboundGate, InboundLimits
from firmware.fleet.mqtt.network import MqttNetwork

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ClientSettings:
    """One client's connection: the broker, its identity, TLS files (for ``mqtts://``), an optional password."""

    client_id: str
    broker: BrokerAddress
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    username: str | None = None
    password: str | None = None
    keepalive_s: int = 30
    connect_timeout_s: float = 10.0
    session_expiry_s: int = 0          # 0: a clean start each time (a table); above: the broker keeps the session
    mqtt311: bool = False              # MQTT 3.1.1 (a cluster's MQTT interface, e.g. NATS); session kept: clean
                                       #   session off when session_expiry_s > 0
    others: tuple[BrokerAddress, ...] = ()   # a cluster's other nodes: a failed or lost connection tries the next
    inbound: InboundLimits | None = None   # None: every message is posted (a consumer must not drop events)


class PahoAdapter:
    """One table's MQTT 5 client on a shared :class:`MqttNetwork` (see the module's docstring).

    ``post`` is the firmware loop's thread-safe ``post``: every report goes
    through it.  ``clock_s`` times the inbound bound (None: the network's
    clock, its monotonic seconds)."""

    def __init__(self, network: MqttNetwork, post: Callable[..., None], settings: ClientSettings,
                 clock_s: Callable[[], float] | None = None) -> None:
        if clock_s is None:
            clock_s = network.clock.monotonic_s
        self.network = network
        self.post = post
        self.settings = settings
        self._inbound = (InboundGate(settings.inbound, settings.client_id, clock_s, network.add_ticker)
                         if settings.inbound is not None else None)     # None: every message is posted
        self._tokens = itertools.count(1)
        self._client: paho.Client | None = None      # (network thread only, from here on)
        self._session = 0
        self._listener: AdapterListener | None = None
        self._mids: dict[int, int] = {}              # paho mid -> token (QoS 1 publishes, subscriptions)
        self._answered = False                       # the current connection got its CONNACK
        self._node = 0                               # which of the broker and its ``others`` is tried now

    @property
    def inbound_dropped(self) -> int:
        """Inbound messages dropped since start (read by the link's status from the loop thread)."""
        return self._inbound.dropped if self._inbound is not None else 0

    # -- the MqttAdapter protocol (loop thread) ---------------------------------------------------------------
    def connect(self, session: int, will: WillMessage | None, listener: AdapterListener) -> None:
        self.network.call(self._connect, session, will, listener)

    def publish(self, topic: str, payload: bytes, qos: int, retain: bool,
                properties: PublishProperties | None = None) -> int:
        token = next(self._tokens)
        self.network.call(self._publish, token, topic, payload, qos, retain, properties)
        return token

    def subscribe(self, topic_filter: str, qos: int) -> int:
        token = next(self._tokens)
        self.network.call(self._subscribe, token, topic_filter, qos)
        return token

    def disconnect(self, send_will: bool = False) -> None:
        self.network.call(self._disconnect, send_will)

    def kill_connection(self) -> None:
        """Cut the TCP connection without a DISCONNECT (as a cable pulled out): the broker publishes the Will,
        paho notices the lost connection and the listener hears of it."""
        self.network.call(self._kill)

    def close(self) -> None:
        """Drop the connection silently and report nothing more (a power cut, as far as the broker can tell)."""
        self.network.call(self._drop)

    # -- on the network thread --------------------------------------------------------------------------------
    def _connect(self, session: int, will: WillMessage | None, listener: AdapterListener) -> None:
        self._drop()
        self._session, self._listener, self._mids, self._answered = session, listener, {}, False
        s = self.settings
        missing = [(name, path) for name, path in (("ca_file", s.ca_file), ("cert_file", s.cert_file),
                                                   ("key_file", s.key_file)) if path and not os.path.isfile(path)]
        if missing:                                   # (ssl would say only "[Errno 2] No such file or directory")
            self.post(listener.on_connected, session, False, f"client set-up: {missing[0][0]} {missing[0][1]}: "
                                                             f"no such file")
            return
        try:
            if s.mqtt311:
                client = paho.Client(CallbackAPIVersion.VERSION2, client_id=s.client_id, protocol=paho.MQTTv311,
                                     clean_session=s.session_expiry_s == 0)
            else:
                client = paho.Client(CallbackAPIVersion.VERSION2, client_id=s.client_id, protocol=paho.MQTTv5)
            client.connect_timeout = s.connect_timeout_s
            if s.broker.tls:
                client.tls_set(ca_certs=s.ca_file, certfile=s.cert_file, keyfile=s.key_file,
                               cert_reqs=ssl.CERT_REQUIRED, tls_version=ssl.PROTOCOL_TLS_CLIENT)
            if s.username is not None:
                client.username_pw_set(s.username, s.password)
            if will is not None:
                client.will_set(will.topic, will.payload, will.qos, will.retain)
        except (OSError, ValueError, ssl.SSLError) as exc:
            self.post(listener.on_connected, session, False, f"client set-up: {exc}")
            return
        client.user_data_set(session)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_subscribe = self._on_subscribe
        client.on_message = self._on_message
        self._client = client
        self.network.connector.submit(self._connect_blocking, client, session, listener)

    def _connect_blocking(self, client: paho.Client, session: int, listener: AdapterListener) -> None:
        """(a worker thread) TCP, TLS and the CONNECT packet; the CONNACK is read on the network thread."""
        s = self.settings
        broker = self.address
        try:
            if s.mqtt311:
                rc = client.connect(broker.host, broker.port, keepalive=s.keepalive_s)
            else:
                props = None
                if s.session_expiry_s > 0:                # (a consumer's queue survives its reconnects)
                    props = Properties(PacketTypes.CONNECT)
                    props.SessionExpiryInterval = s.session_expiry_s
                rc = client.connect(broker.host, broker.port, keepalive=s.keepalive_s,
                                    clean_start=s.session_expiry_s == 0, properties=props)
            if rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
                raise OSError(paho.error_string(rc))
        except (OSError, ssl.SSLError, ValueError) as exc:
            reason = f"{broker}: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}"
            self.network.call(self._connect_failed, client, session, listener, reason)
            return
        self.network.call(self._attach, client)

    @property
    def address(self) -> BrokerAddress:
        """The node tried now: the broker, then its ``others`` in turn after each failed or lost connection."""
        nodes = (self.settings.broker, *self.settings.others)
        return nodes[self._node % len(nodes)]

    def _connect_failed(self, client: paho.Client, session: int, listener: AdapterListener, reason: str) -> None:
        if client is self._client:
            self._node += 1
            self._client = None
            self.post(listener.on_connected, session, False, reason)

    def _attach(self, client: paho.Client) -> None:
        if client is self._client:
            self.network.attach(client)
        else:                                         # superseded while connecting
            self.network.forget(client)

    def _drop(self) -> None:
        if self._client is not None:
            self.network.forget(self._client)
        self._client = None

    def _kill(self) -> None:
        sock = self._client.socket() if self._client is not None else None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _publish(self, token: int, topic: str, payload: bytes, qos: int, retain: bool,
                 properties: PublishProperties | None) -> None:
        client, session = self._client, self._session
        if self._listener is None:
            return
        if client is None or not client.is_connected():
            self.post(self._listener.on_published, session, token, False, "not connected")
            return
        info = client.publish(topic, payload, qos, retain, _publish_properties(properties))
        self.network.touch(client)
        if info.rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
            self.post(self._listener.on_published, session, token, False, paho.error_string(info.rc))
        elif qos == 0:
            self.post(self._listener.on_published, session, token, True, "written")
        else:
            self._mids[info.mid] = token

    def _subscribe(self, token: int, topic_filter: str, qos: int) -> None:
        client = self._client
        if self._listener is None:
            return
        if client is None or not client.is_connected():
            self.post(self._listener.on_subscribed, self._session, token, [0x80])
            return
        rc, mid = client.subscribe(topic_filter, qos)
        self.network.touch(client)
        if rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
            self.post(self._listener.on_subscribed, self._session, token, [0x80])
        else:
            self._mids[mid] = token

    def _disconnect(self, send_will: bool) -> None:
        client = self._client
        if client is None:
            return
        self._client = None                          # (its reports are no longer ours)
        if client.is_connected():
            reason = ReasonCode(PacketTypes.DISCONNECT, "Disconnect with will message") if send_will else None
            client.disconnect(reasoncode=reason)     # (paho closes the socket once DISCONNECT is written)
            self.network.touch(client)
        else:
            self.network.forget(client)

    # -- paho's callbacks (network thread): report, never act ----------------------------------------------------
    def _on_connect(self, client: paho.Client, session: int, flags: Any, reason: ReasonCode, props: Any) -> None:
        if client is self._client:
            self._answered = not reason.is_failure
            if reason.is_failure:                     # refused: its end is not reported again ("dropped ...")
                self._client = None
                self.network.call(self.network.forget, client)
            self.post(self._listener.on_connected, session, not reason.is_failure, str(reason))

    def _on_disconnect(self, client: paho.Client, session: int, flags: Any, reason: ReasonCode, props: Any) -> None:
        self.network.call(self.network.forget, client)
        if client is self._client:
            self._client = None
            self._node += 1                           # (a node lost: the next connection tries another)
            if self._answered:
                self.post(self._listener.on_connection_lost, session, str(reason))
            else:                                     # dropped before any CONNACK (e.g. a TLS 1.3 certificate refusal)
                self.post(self._listener.on_connected, session, False, f"dropped by the broker ({reason})")

    def _on_publish(self, client: paho.Client, session: int, mid: int, reason: ReasonCode, props: Any) -> None:
        token = self._mids.pop(mid, None) if client is self._client else None
        if token is not None:
            self.post(self._listener.on_published, session, token, not reason.is_failure, str(reason))

    def _on_subscribe(self, client: paho.Client, session: int, mid: int, reasons: list, props: Any) -> None:
        token = self._mids.pop(mid, None) if client is self._client else None
        if token is not None:
            self.post(self._listener.on_subscribed, session, token, [int(r.value) for r in reasons])

    def _on_message(self, client: paho.Client, session: int, message: paho.MQTTMessage) -> None:
        if client is not self._client:
            return
        props = message.properties
        correlation = getattr(props, "CorrelationData", None)
        inbound = InboundMessage(topic=message.topic, payload=bytes(message.payload), retain=bool(message.retain),
                                 response_topic=getattr(props, "ResponseTopic", None),
                                 correlation_data=bytes(correlation) if correlation is not None else None,
                                 message_expiry_s=getattr(props, "MessageExpiryInterval", None))
        if self._inbound is None:
            self.post(self._listener.on_message, session, inbound)
        elif self._inbound.admit():
            self.post(self._deliver, self._listener, session, inbound)

    def _deliver(self, listener: AdapterListener, session: int, inbound: InboundMessage) -> None:
        """(loop thread) One admitted message handled: room for the next."""
        self._inbound.handled()
        listener.on_message(session, inbound)


def _publish_properties(properties: PublishProperties | None) -> Properties | None:
    if properties is None:
        return None
    props = Properties(PacketTypes.PUBLISH)
    if properties.response_topic is not None:
        props.ResponseTopic = properties.response_topic
    if properties.correlation_data is not None:
        props.CorrelationData = properties.correlation_data
    if properties.message_expiry_s is not None:
        props.MessageExpiryInterval = int(properties.message_expiry_s)
    return props
