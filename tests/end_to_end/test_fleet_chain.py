"""A chain of parlours on real brokers: light tables on two parlour Mosquittos bridged to a three-node NATS cluster.

The chain's central consumer (MQTT 3.1.1 on the cluster, a persistent
session, the cluster's nodes tried in turn) records every table's hands by
``msg_id`` as a recorder's database would, through: a parlour's broker
killed (what it had acknowledged but not yet bridged up is asked for again
with a signed ``resend_since`` that the bridge carries down), the uplink cut
(the cluster stopped: the parlour brokers queue), the consumer frozen past
its keep-alive (the cluster drops it and sends again what it had not
acknowledged), a cluster node killed,
and the central consumer restarted.  Every hand arrives exactly once, each
table's in order of its seq, and after each heal every table is online in
the hall's view.  Nothing sleeps: waiting polls against deadlines.
"""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import pytest

from firmware.fleet.broker_config import Bridge, bridge_text
from firmware.fleet.chain import ChainConsumer
from firmware.fleet.command_auth import hmac_key, sign_command
from firmware.fleet.consumer import ConsumerClient
from firmware.fleet.mqtt.client import ClientSettings, PahoAdapter
from firmware.fleet.mqtt.network import MqttNetwork
from firmware.fleet.topics import TableTopics
from firmware.ports.broker import parse_broker_url
from hal.runtime import HOST_CLOCK
from sim.light_fleet import LightFleet
from tests.support.fleet_rig import LoopThread, wait_for
from tests.support.mosquitto_broker import Mosquitto, free_port, plain_conf
from tests.support.nats_cluster import NatsCluster

SITES = ("p1", "p2")
TABLES = 4
KEY = hmac_key(bytes(range(50, 82)))
KEEPALIVE_S = 5


class Recorder:
    """The chain's central consumer and what a recorder's database would keep: each event once, by msg_id."""

    def __init__(self, cluster: NatsCluster) -> None:
        self.lt = LoopThread("chain-recorder")
        self.network = MqttNetwork("chain", clock=HOST_CLOCK).start()
        nodes = [parse_broker_url(u) for u in cluster.urls]
        self.adapter = PahoAdapter(self.network, self.lt.loop.post,
                                   ClientSettings("chain-recorder", nodes[0], session_expiry_s=3600, mqtt311=True,
                                                  others=tuple(nodes[1:]), keepalive_s=KEEPALIVE_S,
                                                  connect_timeout_s=3.0))
        self.consumer = ChainConsumer()
        self.kept: dict[str, dict] = STORE                     # survives the recorder's restart (its database)
        self.client = ConsumerClient(self.lt.loop, self.adapter, self.consumer, wall_clock_s=time.time,
                                     on_change=self._change, name="chain-recorder", backoff_max_s=1.0)
        self.lt.call(self.client.start)

    def _change(self, change) -> None:
        if change.what == "event" and change.message.get("kind") == "hand":
            self.kept.setdefault(change.message["msg_id"], change.message)

    def ask_for_missing(self) -> int:
        """A signed resend_since for every table the chain lacks events of (down the parlour's bridge)."""
        def ask() -> int:
            asked = 0
            for (site, table), first in self.consumer.missing().items():
                payload = sign_command(KEY, site=site, table=table, verb="resend_since", args={"seq": first - 1},
                                       issuer="chain", issued_at=time.time(), ttl_s=60)
                self.adapter.publish(TableTopics(site, table).command("resend_since"), payload, 1, False)
                asked += 1
            return asked
        return self.lt.call(ask)

    def account(self) -> str:
        """What the recorder holds and knows (a failed wait's message): seqs per table, what it would ask for,
        what each table's birth says it wrote, whether it is subscribed."""
        seqs: dict[str, list[int]] = {}
        for m in self.kept.values():
            seqs.setdefault(m["table"], []).append(m["seq"])
        births = self.lt.call(lambda: {t: v.birth.get("seq") for c in self.consumer.sites.values()
                                       for t, v in c.tables.items()})
        return (f"seqs {({t: sorted(v) for t, v in sorted(seqs.items())})}; "
                f"missing {self.lt.call(self.consumer.missing)}; births' seq {births}; "
                f"connected {self.client.connected}, subscribed {self.client.subscribed}")

    def statuses(self) -> dict[str, str]:
        now = time.time()
        return self.lt.call(lambda: {t: v.status(now) for c in self.consumer.sites.values()
                                     for t, v in c.tables.items()})

    def close(self) -> None:
        self.lt.call(self.client.stop)
        self.lt.stop()
        self.network.stop()


STORE: dict[str, dict] = {}


def hands_of(kept: dict[str, dict]) -> dict[str, list[int]]:
    out: dict[str, list[tuple[int, int]]] = {}
    for m in kept.values():
        out.setdefault(m["table"], []).append((m["seq"], m["data"]["hand"]))
    return {t: [h for _, h in sorted(v)] for t, v in out.items()}


@pytest.fixture
def chain(tmp_path: Path):
    STORE.clear()
    cluster = NatsCluster(tmp_path / "nats").start()
    parlours = {}
    nodes = tuple(parse_broker_url(u) for u in cluster.urls)
    for site in SITES:
        folder = tmp_path / site
        folder.mkdir()
        port = free_port()
        conf = plain_conf(port, folder) + bridge_text(site, Bridge(nodes, f"bridge-{site}"))
        parlours[site] = Mosquitto(folder, conf, port).start()
    (tmp_path / "tables").mkdir()
    fleet = LightFleet([(site, m.url) for site, m in parlours.items()], TABLES, tmp_path / "tables",
                       keys=[KEY.verify_key()])
    recorder = Recorder(cluster)
    try:
        yield cluster, parlours, fleet, recorder
    finally:
        for closing in (recorder.close, fleet.close, *[m.stop for m in parlours.values()], cluster.stop):
            try:
                closing()
            except Exception:                       # noqa: BLE001 (the others still close)
                pass


def settle(recorder: Recorder, expected: int, what: str, timeout_s: float = 150.0) -> None:
    """Wait until the recorder has ``expected`` hands, asking for what it lacks now and then.

    A heal takes seconds; the deadline is long because on a loaded two-core machine a bridge's or the
    recorder's connection can wait on the kernel's SYN retries (1, 3, 7, 15, 31, 63 s) while a NATS node is
    busy with JetStream; a hand that never comes fails with what the recorder holds and knows."""
    deadline = time.monotonic() + timeout_s
    asked_at = 0.0
    pause = threading.Event()
    while len(recorder.kept) < expected:
        assert time.monotonic() < deadline, (f"{what}: {len(recorder.kept)} of {expected} hands recorded; "
                                             f"{recorder.account()}")
        if time.monotonic() - asked_at > 2.0:
            recorder.ask_for_missing()
            asked_at = time.monotonic()
        pause.wait(0.05)


def test_every_hand_once_in_order_through_broker_kill_uplink_cut_node_kill_and_recorder_restart(chain):
    cluster, parlours, fleet, recorder = chain
    tables = len(SITES) * TABLES
    wait_for(lambda: fleet.connected() == tables, 30, "the tables on their parlour brokers")
    wait_for(lambda: recorder.client.subscribed, 30, "the recorder on the cluster")
    played = fleet.play(3)
    settle(recorder, played, "first hands")

    # a parlour's broker killed while its tables publish; it comes back and its bridge with it
    played += fleet.play(2)
    parlours["p1"].stop(signal.SIGKILL)
    played += fleet.play(2)
    parlours["p1"].start()
    settle(recorder, played, "after p1's broker was killed")

    # the recorder frozen past its keep-alive while hands arrive: the cluster drops it; what it had been sent
    # but had not acknowledged comes again when it is back (the cluster's ack_wait, 5 s here, 30 s by default)
    thawed = threading.Event()
    recorder.network.call(thawed.wait, KEEPALIVE_S * 2)        # (its network thread hangs: no ping, no ack)
    played += fleet.play(2)
    settle(recorder, played, "after the recorder froze")
    thawed.set()

    # the uplink cut: the whole cluster stopped; the parlours queue what their tables publish
    for node in cluster.nodes:
        node.stop()
    played += fleet.play(3)
    cluster.restart_all()
    settle(recorder, played, "after the uplink came back")

    # one cluster node killed: bridges and the recorder go to the others
    cluster.nodes[0].kill()
    played += fleet.play(2)
    settle(recorder, played, "with a node down")
    cluster.restart(cluster.nodes[0])

    # the recorder restarted: what came while it was away waits in its session on the cluster
    recorder.close()
    played += fleet.play(2)
    again = Recorder(cluster)
    chain_parts = (cluster, parlours, fleet, again)
    try:
        settle(again, played, "after the recorder's restart")
        wait_for(lambda: set(again.statuses().values()) == {"online"} and len(again.statuses()) == tables, 30,
                 "every table online in the hall's view")
    finally:
        again.close()
    del chain_parts
    per_table = hands_of(STORE)
    assert len(per_table) == tables
    for table, hands in per_table.items():
        assert hands == list(range(1, len(hands) + 1)), f"{table}: {hands}"      # once each, in order
    assert sum(len(h) for h in per_table.values()) == played
