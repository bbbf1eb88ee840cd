"""Tables and consumers on a real broker for the fleet tests: each "table process" its own loop thread and network.

A :class:`TableProcess` is what runs on one table as far as telemetry goes:
a ``RealTimeLoop`` in a thread, an ``MqttNetwork``, a ``PahoAdapter``, the
outbox on an SQLite file and a ``FleetLink`` over a fake ``status()``.
:meth:`TableProcess.power_cut` ends it without a word to the broker (the
loop and the network stop, the socket closes, the database is left as the
last commit left it); a new process on the same file is the table after the
power came back.  Waiting is :func:`wait_for`: a condition polled against
a deadline (the pause between polls is an ``Event.wait``, never a sleep).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable

from firmware.ports.broker import parse_broker_url
from firmware.fleet.command_auth import CommandVerifier, SigningKey
from firmware.fleet.consumer import ConsumerClient, FleetConsumer
from firmware.fleet.link import FleetLink
from firmware.fleet.link_settings import LinkSettings
from firmware.store.outbox import SqliteOutbox
from firmware.loop import RealTimeLoop
from firmware.fleet.mqtt.network import MqttNetwork
from firmware.fleet.mqtt.client import ClientSettings, PahoAdapter
from hal.runtime import HOST_CLOCK

SITE = "hall1"
FAST = LinkSettings(state_min_interval_s=0.2, counters_period_s=5.0, first_connect_spread_s=0.0,
                    backoff_min_s=0.1, backoff_max_s=0.5, connect_timeout_s=3.0, mark_delay_s=0.05, poll_s=0.5,
                    max_in_flight=8)


def wait_for(condition: Callable[[], Any], timeout_s: float = 10.0, what: str = "the condition") -> Any:
    deadline = time.monotonic() + timeout_s
    pause = threading.Event()
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout_s} s")
        pause.wait(0.01)


class LoopThread:
    """A RealTimeLoop running in its own thread; :meth:`call` runs a function there and returns its result."""

    def __init__(self, name: str) -> None:
        self.loop = RealTimeLoop(time.monotonic)
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()

    def call(self, fn: Callable[..., Any], *args: Any, timeout_s: float = 5.0) -> Any:
        done, box = threading.Event(), {}

        def run() -> None:
            try:
                box["value"] = fn(*args)
            except BaseException as exc:             # (handed to the caller's thread)
                box["error"] = exc
            done.set()

        self.loop.post(run)
        assert done.wait(timeout_s), f"the loop did not run {fn} within {timeout_s} s"
        if "error" in box:
            raise box["error"]
        return box.get("value")

    def stop(self) -> None:
        self.loop.stop()
        self.thread.join(timeout=5.0)


class TableProcess:
    def __init__(self, db_path: Path, table: str, broker_url: str, *, tls: dict[str, str] | None = None,
                 keys: list[SigningKey] | None = None, settings: LinkSettings = FAST,
                 on_command: Callable | None = None, status: dict | None = None) -> None:
        self.table = table
        self.status = status or {"state": "playing", "hand": 1, "dealer": 0, "chips": [0, 0, 0, 0], "faults": []}
        self.lt = LoopThread(f"table-{table}")
        self.network = MqttNetwork(f"mqtt-{table}", clock=HOST_CLOCK).start()
        self.adapter = PahoAdapter(self.network, self.lt.loop.post,
                                   ClientSettings(table, parse_broker_url(broker_url), **(tls or {})))
        self.db = sqlite3.connect(str(db_path), isolation_level=None, check_same_thread=False)
        self.outbox = self.lt.call(SqliteOutbox, self.db)
        verifier = None
        if keys:
            verifier = CommandVerifier(SITE, table, [k.verify_key() for k in keys], time.time,
                                       boot_wall_s=time.time())
        self.link = FleetLink(self.lt.loop, self.adapter, self.outbox, lambda: self.status, on_command, site=SITE,
                              table=table, meta={"firmware": "test", "model": "four-port double-set"},
                              wall_clock_s=time.time, verifier=verifier, settings=settings)
        self.lt.call(self.link.start)

    def st(self) -> dict:
        return self.lt.call(self.link.status)

    def connected(self) -> bool:
        return self.st()["state"] in ("connected", "draining")

    def add_events(self, kind: str, payloads: list[dict]) -> list[int]:
        def add() -> list[int]:
            seqs = [self.outbox.add(kind, p) for p in payloads]
            self.link.outbox_changed()
            return seqs
        return self.lt.call(add)

    def power_cut(self) -> None:
        """Gone without a word: the loop stops, the sockets close, nothing is flushed."""
        self.lt.stop()
        self.network.stop()

    def close(self) -> None:
        if self.lt.thread.is_alive():
            self.lt.call(self.link.stop)
            self.lt.stop()
        self.network.stop()
        self.db.close()


class Watcher:
    """A de-duplicating consumer of the site on its own loop and network (``session_expiry_s``: a persistent
    session, so that what the broker queued while it was away is delivered after its reconnect)."""

    def __init__(self, broker_url: str, client_id: str = "watcher", session_expiry_s: int = 0,
                 **credentials: Any) -> None:
        self.lt = LoopThread(client_id)
        self.network = MqttNetwork(f"mqtt-{client_id}", clock=HOST_CLOCK).start()
        self.adapter = PahoAdapter(self.network, self.lt.loop.post,
                                   ClientSettings(client_id, parse_broker_url(broker_url),
                                                  session_expiry_s=session_expiry_s, **credentials))
        self.consumer = FleetConsumer(SITE, keep_events=True)
        self.changes: list = []
        self.client = ConsumerClient(self.lt.loop, self.adapter, self.consumer, wall_clock_s=time.time,
                                     on_change=self.changes.append, name=client_id, backoff_max_s=0.5)
        self.lt.call(self.client.start)

    def view(self, table: str):
        return self.lt.call(lambda: self.consumer.tables.get(table))

    def close(self) -> None:
        self.lt.call(self.client.stop)
        self.lt.stop()
        self.network.stop()


class RawClient:
    """A plain MQTT 5 client for the tests (a staff console, an intruder): every report kept."""

    def __init__(self, broker_url: str, client_id: str, **settings: Any) -> None:
        self.lt = LoopThread(client_id)
        self.network = MqttNetwork(f"mqtt-{client_id}", clock=HOST_CLOCK).start()
        self.adapter = PahoAdapter(self.network, self.lt.loop.post,
                                   ClientSettings(client_id, parse_broker_url(broker_url), **settings))
        self.connects: list[tuple[bool, str]] = []
        self.published: dict[int, tuple[bool, str]] = {}
        self.subscribed: dict[int, list[int]] = {}
        self.messages: list = []
        self.lost: list[str] = []

    def connect(self, timeout_s: float = 10.0) -> tuple[bool, str]:
        self.lt.call(self.adapter.connect, 1, None, self)
        return wait_for(lambda: self.connects and self.connects[-1], timeout_s, "an answer to connect")

    def publish(self, topic: str, payload: bytes, qos: int = 1, retain: bool = False, properties=None) -> tuple:
        token = self.lt.call(self.adapter.publish, topic, payload, qos, retain, properties)
        return wait_for(lambda: self.published.get(token), what=f"the PUBACK for {topic}")

    def subscribe(self, topic_filter: str) -> list[int]:
        token = self.lt.call(self.adapter.subscribe, topic_filter, 1)
        return wait_for(lambda: self.subscribed.get(token), what=f"the SUBACK for {topic_filter}")

    def on_connected(self, session, ok, reason):
        self.connects.append((ok, reason))

    def on_connection_lost(self, session, reason):
        self.lost.append(reason)

    def on_published(self, session, token, ok, reason):
        self.published[token] = (ok, reason)

    def on_subscribed(self, session, token, granted):
        self.subscribed[token] = granted

    def on_message(self, session, message):
        self.messages.append(message)

    def close(self) -> None:
        self.lt.call(self.adapter.disconnect)
        self.lt.stop()
        self.network.stop()
