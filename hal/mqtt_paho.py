"""The fleet's MQTT client on paho-mqtt 2.x (MQTT 5, TLS with client certificates): the only module importing paho.

:class:`MqttNetwork` is one network thread for any number of clients: a
selector over their sockets, paho's ``loop_read`` / ``loop_write`` /
``loop_misc`` (keepalive) driven from it, so ``sim --fleet 200`` needs one
thread, not 200.  Connecting (TCP and the TLS handshake block) runs on a
few worker threads, so an unreachable broker never stalls the clients that
are connected.  Every paho call on a connected client runs on the network
thread; the loop thread only queues work there (:meth:`MqttNetwork.call`).

:class:`PahoAdapter` is one table's client (the :class:`~firmware.fleet.adapter.MqttAdapter`
protocol).  Each connection is a new paho client with a clean start: the
table's outbox, not paho's memory, decides what is sent again after a
reconnect.  paho's callbacks only ``post()`` reports into the firmware's
loop; they never act.  A table's client (:class:`InboundLimits`) bounds what
it posts of the messages it receives, so a flood on its ``cmd/+`` (a
technician's account, a compromised broker) cannot starve the table's loop:
at most ``max_pending`` posted and not yet handled, at most ``rate_per_s``
(a token bucket of ``burst``); the excess is dropped on the network thread,
counted (``inbound_dropped``, in the link's counters) and summed up in the
log once a minute.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import logging
import os
import queue
import selectors
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from firmware.fleet.adapter import AdapterListener, BrokerAddress, InboundMessage, PublishProperties, WillMessage

log = logging.getLogger(__name__)

MISC_PERIOD_S = 0.5          # keepalive pings and their timeouts are checked this often
DROPS_LOGGED_EVERY_S = 60.0  # dropped inbound messages are summed up in the log this often


@dataclass(frozen=True)
class InboundLimits:
    """What a table's client lets into the loop of the messages it receives (see the module's docstring)."""

    max_pending: int = 32        # posted into the loop and not yet handled
    rate_per_s: float = 5.0      # the token bucket's refill
    burst: int = 10              # and its size


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
    inbound: InboundLimits | None = None   # None: every message is posted (a consumer must not drop events)


class MqttNetwork:
    """The network thread shared by many clients (see the module's docstring)."""

    def __init__(self, name: str = "mqtt", connect_workers: int = 4) -> None:
        self.name = name
        self._connect_workers = connect_workers
        self._calls: queue.SimpleQueue[tuple[Callable[..., Any], tuple]] = queue.SimpleQueue()
        self._clients: dict[paho.Client, Any] = {}      # client -> the socket registered for it
        self._dirty: set[paho.Client] = set()           # clients whose registration may have to change
        self._thread: threading.Thread | None = None
        self._running = False
        self._selector: selectors.BaseSelector | None = None
        self._wake_r: socket.socket | None = None
        self._wake_w: socket.socket | None = None
        self.connector: concurrent.futures.ThreadPoolExecutor | None = None

    def start(self) -> "MqttNetwork":
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self.connector = concurrent.futures.ThreadPoolExecutor(self._connect_workers, f"{self.name}-connect")
        self._running = True
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """End the thread; every client's socket is closed (without a DISCONNECT: call disconnect before)."""
        if self._thread is None:
            return
        self.call(self._set_stopped)
        self._thread.join(timeout=5.0)
        self.connector.shutdown(wait=False, cancel_futures=True)
        for client in list(self._clients):
            self.forget(client)
        self._selector.close()
        self._wake_r.close()
        self._wake_w.close()
        self._thread = None

    def _set_stopped(self) -> None:
        self._running = False

    def call(self, fn: Callable[..., Any], *args: Any) -> None:
        """Thread-safe: run ``fn(*args)`` on the network thread."""
        self._calls.put((fn, args))
        try:
            self._wake_w.send(b"\0")
        except (BlockingIOError, OSError, AttributeError):
            pass                                    # (already woken, or stopped)

    # -- the clients (network thread) ---------------------------------------------------------------------------
    def attach(self, client: paho.Client) -> None:
        self._clients[client] = None
        client.on_socket_close = self._socket_closing
        self._sync(client)

    def touch(self, client: paho.Client | None) -> None:
        """(network thread) ``client`` was used: its socket's registration is brought up to date."""
        if client is not None:
            self._dirty.add(client)

    def forget(self, client: paho.Client) -> None:
        """Drop a client without a word to the broker (its socket closed: the broker publishes its Will)."""
        sock = self._clients.pop(client, None)
        self._dirty.discard(client)
        if sock is not None:
            self._unregister(sock)
        client.on_socket_close = None
        own = client.socket()
        if own is not None:
            try:
                own.close()
            except OSError:
                pass

    def _socket_closing(self, client: paho.Client, userdata: Any, sock: Any) -> None:
        if self._clients.get(client) is sock:
            self._unregister(sock)
            self._clients[client] = None

    def _unregister(self, sock: Any) -> None:
        try:
            self._selector.unregister(sock)
        except (KeyError, ValueError, OSError):
            pass

    def _sync(self, client: paho.Client) -> None:
        """Register the client's socket for reading, and for writing while paho has bytes to send."""
        if client not in self._clients:
            return
        sock, registered = client.socket(), self._clients[client]
        if registered is not None and registered is not sock:
            self._unregister(registered)
            self._clients[client] = registered = None
        if sock is None:
            return
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if client.want_write() else 0)
        try:
            if registered is None:
                self._selector.register(sock, events, client)
                self._clients[client] = sock
            elif self._selector.get_key(sock).events != events:
                self._selector.modify(sock, events, client)
        except (ValueError, OSError, KeyError) as exc:     # a socket closed under us: paho reports it
            log.debug("%s: socket not registered: %s", self.name, exc)

    def _run(self) -> None:
        next_misc = time.monotonic()
        while self._running:
            try:
                next_misc = self._iterate(next_misc)
            except Exception:                       # noqa: BLE001 (the thread serves every client: it goes on)
                log.exception("%s: the network thread's iteration failed", self.name)

    def _iterate(self, next_misc: float) -> float:
        """One pass: wait for sockets (until the next keepalive check), read and write, run queued calls."""
        timeout_s = max(0.0, next_misc - time.monotonic())
        for key, mask in self._selector.select(timeout_s):
            if key.data is None:
                self._drain_wake()
                continue
            client = key.data
            self._dirty.add(client)
            if mask & selectors.EVENT_READ and client in self._clients:
                self._guard(client.loop_read)
            if mask & selectors.EVENT_WRITE and client in self._clients:
                self._guard(client.loop_write)
        while True:
            try:
                fn, args = self._calls.get_nowait()
            except queue.Empty:
                break
            self._guard(fn, *args)
        if time.monotonic() >= next_misc:
            for client in list(self._clients):
                self._guard(client.loop_misc)
            self._dirty.update(self._clients)
            next_misc = time.monotonic() + MISC_PERIOD_S
        dirty, self._dirty = self._dirty, set()
        for client in dirty:                        # (only those used: 200 clients cost nothing idle)
            self._sync(client)
        return next_misc

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except (BlockingIOError, OSError):
            pass

    def _guard(self, fn: Callable[..., Any], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:                           # noqa: BLE001 (the thread serves every client: it goes on)
            log.exception("%s: %s failed", self.name, getattr(fn, "__qualname__", fn))


class PahoAdapter:
    """One table's MQTT 5 client on a shared :class:`MqttNetwork` (see the module's docstring).

    ``post`` is the firmware loop's thread-safe ``post``: every report goes
    through it."""

    def __init__(self, network: MqttNetwork, post: Callable[..., None], settings: ClientSettings,
                 clock_s: Callable[[], float] = time.monotonic) -> None:
        self.network = network
        self.post = post
        self.settings = settings
        self._clock_s = clock_s
        self._gate = threading.Lock()                # (the inbound counters: network thread and loop thread)
        self._pending = 0                            # inbound messages posted, not yet handled by the loop
        self._bucket = float(settings.inbound.burst) if settings.inbound else 0.0
        self._filled_at_s = clock_s()
        self.inbound_dropped = 0                     # (read by the link's status from the loop thread)
        self._drops_unsaid = 0
        self._drops_said_at_s: float | None = None
        self._tokens = itertools.count(1)
        self._client: paho.Client | None = None      # (network thread only, from here on)
        self._session = 0
        self._listener: AdapterListener | None = None
        self._mids: dict[int, int] = {}              # paho mid -> token (QoS 1 publishes, subscriptions)
        self._answered = False                       # the current connection got its CONNACK

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
        try:
            props = None
            if s.session_expiry_s > 0:                # (a consumer's queue survives its reconnects)
                props = Properties(PacketTypes.CONNECT)
                props.SessionExpiryInterval = s.session_expiry_s
            rc = client.connect(s.broker.host, s.broker.port, keepalive=s.keepalive_s,
                                clean_start=s.session_expiry_s == 0, properties=props)
            if rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
                raise OSError(paho.error_string(rc))
        except (OSError, ssl.SSLError, ValueError) as exc:
            reason = f"{s.broker}: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}"
            self.network.call(self._connect_failed, client, session, listener, reason)
            return
        self.network.call(self._attach, client)

    def _connect_failed(self, client: paho.Client, session: int, listener: AdapterListener, reason: str) -> None:
        if client is self._client:
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
        if self.settings.inbound is None:
            self.post(self._listener.on_message, session, inbound)
        elif self._admit(self.settings.inbound):
            self.post(self._deliver, self._listener, session, inbound)

    def _admit(self, limits: InboundLimits) -> bool:
        """(network thread) Whether one more message may be posted: room in the loop and a token in the bucket;
        else it is dropped, counted and (once a minute) summed up in the log."""
        now_s = self._clock_s()
        with self._gate:
            self._bucket = min(float(limits.burst),
                               self._bucket + max(0.0, now_s - self._filled_at_s) * limits.rate_per_s)
            self._filled_at_s = now_s
            if self._pending < limits.max_pending and self._bucket >= 1.0:
                self._pending += 1
                self._bucket -= 1.0
                return True
            self.inbound_dropped += 1
        self._drops_unsaid += 1
        if self._drops_said_at_s is None or not 0 <= now_s - self._drops_said_at_s < DROPS_LOGGED_EVERY_S:
            log.warning("%s: %d inbound message(s) dropped (more than %g/s or %d waiting for the loop; %d dropped "
                        "since start; summed up again in %g s while it goes on)", self.settings.client_id,
                        self._drops_unsaid, limits.rate_per_s, limits.max_pending, self.inbound_dropped,
                        DROPS_LOGGED_EVERY_S)
            self._drops_said_at_s, self._drops_unsaid = now_s, 0
        return False

    def _deliver(self, listener: AdapterListener, session: int, inbound: InboundMessage) -> None:
        """(loop thread) One admitted message handled: room for the next."""
        with self._gate:
            self._pending -= 1
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
