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
from pathlib import Path

import pytest

from firmware.fleet.broker_config import Bridge, bridge_text
from firmware.fleet.command_auth import hmac_key
from firmware.ports.broker import parse_broker_url
from sim.light_fleet import LightFleet
from tests.support.chain_recorder import Recorder, hands_of, settle
from tests.support.fleet_rig import wait_for
from tests.support.mosquitto_broker import Mosquitto, free_port, plain_conf
from tests.support.nats_cluster import NatsCluster

SITES = ("p1", "p2")
TABLES = 4
KEY = hmac_key(bytes(range(50, 82)))
KEEPALIVE_S = 5


STORE: dict[str, dict] = {}


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
    recorder = Recorder(cluster.urls, STORE, KEY, keepalive_s=KEEPALIVE_S)
    try:
        yield cluster, parlours, fleet, recorder
    finally:
        for closing in (recorder.close, fleet.close, *[m.stop for m in parlours.values()], cluster.stop):
            try:
                closing()
            except Exception:                       # noqa: BLE001 (the others still close)
                pass


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
    again = Recorder(cluster.urls, STORE, KEY, keepalive_s=KEEPALIVE_S)
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
