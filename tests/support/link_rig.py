"""The fleet link on virtual time against a scripted adapter (the test plays the broker), a table's status and
command handler, and the rig of the two (tests/firmware/fleet's ``rig`` fixture)."""

from __future__ import annotations

import json
import sqlite3

from firmware.fleet import topics
from firmware.fleet.command_auth import CommandRefused, CommandVerifier, hmac_key
from firmware.fleet.link import FleetLink
from firmware.fleet.link_settings import LinkSettings
from firmware.store import outbox
from sim.virtual_loop import VirtualLoop

EPOCH = 1_750_000_000.0
T = topics.TableTopics("hall1", "t07")
KEY = hmac_key(b"s" * 32)


class ScriptedAdapter:
    """Records what the link asks; the test plays the broker's part by calling the listener."""

    def __init__(self) -> None:
        self.connects: list[tuple[int, object]] = []
        self.published: list[dict] = []
        self.subscribed: list[str] = []
        self.disconnects: list[bool] = []
        self.listener = None
        self._token = 0

    def connect(self, session, will, listener):
        self.connects.append((session, will))
        self.listener = listener

    def publish(self, topic, payload, qos, retain, properties=None):
        self._token += 1
        self.published.append({"token": self._token, "topic": topic, "body": json.loads(payload), "qos": qos,
                               "retain": retain, "props": properties})
        return self._token

    def subscribe(self, topic_filter, qos):
        self.subscribed.append(topic_filter)
        self._token += 1
        return self._token

    def disconnect(self, send_will=False):
        self.disconnects.append(send_will)

    # the broker's part
    @property
    def session(self) -> int:
        return self.connects[-1][0]

    def accept(self) -> None:
        self.listener.on_connected(self.session, True, "Success")

    def ack(self, *tokens: int, ok: bool = True) -> None:
        for token in tokens:
            self.listener.on_published(self.session, token, ok, "Success" if ok else "Not authorized")

    def events(self) -> list[dict]:
        return [p for p in self.published if "/evt/" in p["topic"]]

    def on(self, leaf: str) -> list[dict]:
        return [p for p in self.published if p["topic"] == T.root + "/" + leaf]


class Table:
    def __init__(self) -> None:
        self.status = {"state": "idle", "hand": 0, "dealer": 0, "chips": [0, 0, 0, 0], "faults": [],
                       "counters": {"cycles": 0}}
        self.acks: list[tuple] = []

    def on_command(self, verb, args, issuer):
        if args["code"] == "E42":
            raise CommandRefused("E42 is not active")
        self.acks.append((verb, args, issuer))
        return {"acknowledged": args["code"]}


def make_rig():
    loop = VirtualLoop()
    adapter = ScriptedAdapter()
    db = sqlite3.connect(":memory:", isolation_level=None)
    box = outbox.SqliteOutbox(db)
    table = Table()
    verifier = CommandVerifier("hall1", "t07", [KEY.verify_key()], lambda: EPOCH + loop.now(), boot_wall_s=EPOCH)
    link = FleetLink(loop, adapter, box, lambda: table.status, table.on_command, site="hall1", table="t07",
                     meta={"firmware": "1.0"}, wall_clock_s=lambda: EPOCH + loop.now(), verifier=verifier,
                     settings=LinkSettings(first_connect_spread_s=10.0, max_in_flight=4, counters_period_s=30.0))
    return loop, adapter, box, table, link


def connected(rig):
    loop, adapter, box, table, link = rig
    link.start()
    loop.run_for(10.0)
    adapter.accept()
    return rig
