"""The chain's faults at any scale, on real brokers: a rig of parlours bridged to a NATS cluster, and the faults.

:class:`Chain` starts a three-node NATS cluster (JetStream, MQTT), one
Mosquitto per parlour bridged to it (as ``mjtable fleet broker-config``
configures it: 100,000 ``max_queued_messages``, no in-flight limit), light
tables on each (``sim/light_fleet.py``) and
the chain's recorder (``tests/support/chain_recorder.py``); the tables and
the hall run on one :class:`~sim.sped_clock.SpedClock` so that their 60 s
counters (the heartbeat) and the hall's three minutes to ``stale`` pass in
seconds, while the brokers, the bridges and the sockets keep real time.

:func:`run_faults` plays the chain through five faults, one after another,
the tables playing on through each: a parlour's broker killed, the
recorder frozen past its keep-alive, the uplink cut (every node of the
cluster stopped), a cluster node killed, the recorder restarted.  Each
fault lasts at least ``STALE_AFTER_S`` of the hall's time (long enough for
the hall to show ``stale`` every table it stopped hearing from: where it
cannot hear, the test waits until it does, which shows the check after the
heal can fail).  Each fault's *heal is complete* at a moment the test sees
on the real brokers, by the hall's clock (a poll every 10 ms of real time,
a fraction of a second of the hall's):

* the broker killed: it listens again and its bridge holds a new
  connection on a node of the cluster (the nodes' ``/connz`` by MQTT client
  id);
* the recorder frozen: it is connected again (a new session) and
  subscribed;
* the uplink cut: every node is back and healthy, every parlour's bridge
  holds a connection on it, and the recorder is subscribed again;
* a node killed: the node is back and healthy, every bridge holds a
  connection on the cluster, and the recorder is subscribed;
* the recorder restarted: the new recorder is subscribed.

From that moment the hall must show every table ``online`` within one
heartbeat, ``COUNTERS_S`` (60 s) of the hall's clock: each table sends its
counters once a heartbeat, so a table the hall does not show online a
heartbeat after the path is whole again is one the chain lost.  (After the
recorder's own faults the view is right at once: the cluster retains each
table's last counters, said within the last heartbeat.)  Then every
hand written so far must be recorded (the recorder asks for what it lacks
with ``resend_since``).  Nothing sleeps: waiting polls against deadlines.
"""

from __future__ import annotations

import json
import logging
import signal
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from firmware.fleet.broker_config import MAX_INFLIGHT_MESSAGES, MAX_QUEUED_MESSAGES, Bridge, bridge_text
from firmware.fleet.consumer import STALE_AFTER_S
from firmware.fleet.link_settings import LinkSettings
from firmware.ports.broker import BrokerAddress, parse_broker_url
from sim.light_fleet import LightFleet
from sim.sped_clock import SpedClock
from tests.support.chain_recorder import Recorder, settle
from tests.support.fleet_rig import wait_for
from tests.support.mosquitto_broker import Mosquitto, free_port, plain_conf
from tests.support.nats_cluster import NatsCluster

log = logging.getLogger(__name__)

COUNTERS_S = 60.0             # the link's heartbeat (its counters), as on a table, in the tables' seconds
FAULT_S = STALE_AFTER_S + 15.0  # how long each fault lasts at least, in the hall's seconds (past its ``stale``)
KEEPALIVE_S = 5               # the recorder's MQTT keep-alive (real seconds: the cluster's sockets)
HEAL_TIMEOUT_S = 150.0        # (real) a bridge's next attempt (restart_timeout 1 30) on a loaded machine


def sped_settings(speed: float) -> LinkSettings:
    """The tables' behaviour in their (sped-up) seconds; what is a real wait (a connection's timeout, a backoff,
    the PUBACKs gathered into one write) is multiplied by ``speed`` so that it lasts the real seconds a table
    waits."""
    return LinkSettings(state_min_interval_s=1.0, counters_period_s=COUNTERS_S, first_connect_spread_s=0.0,
                        backoff_min_s=0.2 * speed, backoff_max_s=2.0 * speed, connect_timeout_s=10.0 * speed,
                        stable_s=30.0 * speed, mark_delay_s=0.1 * speed, poll_s=0.5 * speed)


def bridge_id(site: str) -> str:
    """The parlour's bridge's MQTT client id on the cluster."""
    return f"bridge-{site}"


def parlour_conf(port: int, folder: Path, site: str, nodes: tuple[BrokerAddress, ...]) -> str:
    """A parlour's Mosquitto on a plain loopback port (anonymous), bridged to ``nodes``: what ``mjtable fleet
    broker-config --bridge`` writes in the respects the chain depends on (its queue and in-flight limits, the
    bridge's block)."""
    return (plain_conf(port, folder) + f"max_connections -1\nmax_queued_messages {MAX_QUEUED_MESSAGES}\n"
            f"max_inflight_messages {MAX_INFLIGHT_MESSAGES}\n" + bridge_text(site, Bridge(nodes, bridge_id(site))))


@dataclass(frozen=True)
class Scale:
    """How big a chain: ``parlours`` of ``tables_per_parlour`` tables each, a hand a table every
    ``hand_every_s`` of their time, on a clock ``speed`` times real time."""

    parlours: int
    tables_per_parlour: int
    speed: float
    hand_every_s: float

    @property
    def tables(self) -> int:
        return self.parlours * self.tables_per_parlour

    @property
    def sites(self) -> list[str]:
        return [f"p{i + 1:02d}" for i in range(self.parlours)]


class Chain:
    """The cluster, the parlours' brokers bridged to it, the light tables and the recorder; see the module.
    ``kept``: what the recorder's database keeps (it outlives a recorder's restart)."""

    def __init__(self, folder: Path, scale: Scale, key: Any) -> None:
        self.scale = scale
        self.key = key
        self.kept: dict[str, dict] = {}
        self.clock = SpedClock(scale.speed)
        self.parlours: dict[str, Mosquitto] = {}
        self.fleet: LightFleet | None = None
        self.recorder: Recorder | None = None
        self.cluster = NatsCluster(folder / "nats")
        try:
            self.cluster.start()
            nodes = tuple(parse_broker_url(u) for u in self.cluster.urls)
            for site in scale.sites:
                sub = folder / site
                sub.mkdir()
                port = free_port()
                self.parlours[site] = Mosquitto(sub, parlour_conf(port, sub, site, nodes), port).start()
            (folder / "tables").mkdir()
            self.fleet = LightFleet([(site, m.url) for site, m in self.parlours.items()], scale.tables_per_parlour,
                                    folder / "tables", settings=sped_settings(scale.speed),
                                    keys=[key.verify_key()], clock=self.clock)
            self.recorder = self.new_recorder()
        except BaseException:
            self.close()
            raise

    @staticmethod
    def bridge_id(site: str) -> str:
        return bridge_id(site)

    def new_recorder(self) -> Recorder:
        return Recorder(self.cluster.urls, self.kept, self.key, keepalive_s=KEEPALIVE_S, clock=self.clock)

    def bridges(self) -> dict[str, set[tuple[str, int]]]:
        """Each parlour's bridge's connections on the cluster now: (node, connection id), from the running nodes'
        ``/connz`` (by MQTT client id)."""
        out: dict[str, set[tuple[str, int]]] = {site: set() for site in self.parlours}
        for node in self.cluster.nodes:
            if node.proc is None or node.proc.poll() is not None:
                continue
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{node.monitor_port}/connz?limit=100000",
                                            timeout=2.0) as reply:
                    connections = json.load(reply).get("connections") or []
            except (urllib.error.URLError, OSError, ValueError):
                continue
            by_client = {self.bridge_id(site): site for site in self.parlours}
            for c in connections:
                site = by_client.get(c.get("mqtt_client", ""))
                if site is not None:
                    out[site].add((node.name, c["cid"]))
        return out

    def recorder_back(self, session_before: int) -> bool:
        """The recorder connected again since ``session_before`` (its client's session count) and subscribed."""
        client = self.recorder.client
        return client.session > session_before and client.connected and client.subscribed

    def close(self) -> None:
        closing: list[Callable[[], None]] = []
        if self.recorder is not None:
            closing.append(self.recorder.close)
        if self.fleet is not None:
            closing.append(self.fleet.close)
        closing += [m.stop for m in self.parlours.values()]
        closing.append(self.cluster.stop)
        for close in closing:
            try:
                close()
            except Exception:                       # noqa: BLE001 (the others still close)
                log.exception("closing the chain")


class Heals:
    """The hall's view after each heal: how long (the hall's seconds) every table took to show online."""

    def __init__(self, chain: Chain) -> None:
        self.chain = chain
        self.online_after_s: dict[str, float] = {}

    def healed_when(self, condition: Callable[[], Any], what: str) -> float:
        """Wait for ``condition`` (the heal complete); the hall's time when it was first seen."""
        wait_for(condition, HEAL_TIMEOUT_S, what)
        return self.chain.clock.wall_s()

    def statuses(self) -> dict[str, str] | None:
        try:
            return self.chain.recorder.statuses()
        except (AssertionError, TimeoutError):      # (the recorder's loop busy with a flood: not known yet)
            return None

    def every_online(self) -> bool:
        statuses = self.statuses() or {}
        return len(statuses) == self.chain.scale.tables and set(statuses.values()) == {"online"}

    def wait_stale(self, sites: list[str], what: str) -> None:
        """The fault lasts until the hall shows every table of ``sites`` stale (it cannot hear them), and the
        other parlours' online."""
        def shown() -> bool:
            statuses = self.statuses() or {}
            return (len(statuses) == self.chain.scale.tables
                    and all((s == "stale") == t.startswith(tuple(f"{x}-" for x in sites))
                            for t, s in statuses.items()))
        wait_for(shown, self.chain.clock.real_s(STALE_AFTER_S + 2 * COUNTERS_S) + 60,
                 f"{what}: the hall showing {', '.join(sites)} stale and the others online")

    def online_within_heartbeat(self, healed_at_s: float, what: str) -> float:
        """Every table online in the hall's view within ``COUNTERS_S`` of ``healed_at_s`` (the hall's clock); the
        hall's seconds it took."""
        clock = self.chain.clock
        pause = threading.Event()
        statuses: dict[str, str] = {}
        while True:
            got = self.statuses()
            read_s = clock.wall_s()                 # (read after the view: what it shows was so by then)
            if got is not None:
                statuses = got
                if len(statuses) == self.chain.scale.tables and set(statuses.values()) == {"online"}:
                    self.online_after_s[what] = read_s - healed_at_s
                    return read_s - healed_at_s
            if read_s - healed_at_s > COUNTERS_S:
                counts: dict[str, list[str]] = {}
                for t, s in sorted(statuses.items()):
                    counts.setdefault(s, []).append(t)
                shown = "; ".join(f"{s}: {len(ts)} ({', '.join(ts[:8])}{' ...' if len(ts) > 8 else ''})"
                                  for s, ts in counts.items())
                raise AssertionError(f"{what}: the hall did not show every table online within {COUNTERS_S:.0f} s "
                                     f"(one heartbeat, its clock) of the heal; {len(statuses)} of "
                                     f"{self.chain.scale.tables} known, {shown}")
            pause.wait(0.01)


def play_for(chain: Chain, duration_s: float) -> int:
    """Every table plays a hand every ``hand_every_s`` over the next ``duration_s`` of the tables' time (not waited
    for); the hands it will write."""
    return chain.fleet.play_over(duration_s, chain.scale.hand_every_s)


def all_played(chain: Chain) -> None:
    wait_for(lambda: chain.fleet.to_play() == 0, chain.clock.real_s(FAULT_S) + 120, "the hands planned")


def run_faults(chain: Chain, heals: Heals) -> int:
    """The five faults and their heals (see the module); the hands written."""
    fleet, cluster, clock = chain.fleet, chain.cluster, chain.clock
    tables = chain.scale.tables
    wait_for(lambda: fleet.connected() == tables, 60 + tables / 20, "the tables on their parlour brokers")
    wait_for(lambda: chain.recorder.client.subscribed, 60, "the recorder on the cluster")
    wait_for(heals.every_online, 60 + tables / 20, "every table born in the hall")
    played = fleet.play(2)
    settle(chain.recorder, played, "the first hands")

    # a parlour's broker killed while its tables play; it comes back (its bridge with it) once the hall shows its
    # tables stale; what it had acknowledged but not bridged up is asked for again (resend_since)
    site = chain.scale.sites[0]
    before = chain.bridges()[site]
    played += fleet.play(1)
    chain.parlours[site].stop(signal.SIGKILL)
    played += play_for(chain, FAULT_S)
    heals.wait_stale([site], f"{site}'s broker killed")
    chain.parlours[site].start()
    healed_at = heals.healed_when(lambda: (now := chain.bridges()[site]) and not now & before,
                                  f"{site}'s broker back and its bridge on the cluster")
    heals.online_within_heartbeat(healed_at, f"{site}'s broker killed")
    all_played(chain)
    settle(chain.recorder, played, f"after {site}'s broker was killed")

    # the recorder frozen past its keep-alive (its network thread hangs: no ping, no ack): the cluster drops it;
    # what it had been sent but had not acknowledged comes again when it is back (the cluster's ack_wait)
    thawed = threading.Event()
    session = chain.recorder.client.session
    frozen_at = time.monotonic()
    chain.recorder.network.call(thawed.wait, clock.real_s(STALE_AFTER_S + 2 * COUNTERS_S) + 60)
    played += play_for(chain, FAULT_S)
    heals.wait_stale(chain.scale.sites, "the recorder frozen")
    wait_for(lambda: time.monotonic() - frozen_at > 2 * KEEPALIVE_S, 3 * KEEPALIVE_S, "the recorder's keep-alive")
    thawed.set()
    healed_at = heals.healed_when(lambda: chain.recorder_back(session), "the recorder connected again")
    heals.online_within_heartbeat(healed_at, "the recorder frozen")
    all_played(chain)
    settle(chain.recorder, played, "after the recorder froze")

    # the uplink cut: every node of the cluster stopped; the parlours' brokers queue what their tables publish
    session = chain.recorder.client.session
    for node in cluster.nodes:
        node.stop()
    played += play_for(chain, FAULT_S)
    heals.wait_stale(chain.scale.sites, "the uplink cut")
    cluster.restart_all()
    healed_at = heals.healed_when(lambda: all(chain.bridges().values()) and chain.recorder_back(session),
                                  "every bridge and the recorder back on the cluster")
    heals.online_within_heartbeat(healed_at, "the uplink cut")
    all_played(chain)
    settle(chain.recorder, played, "after the uplink came back")

    # one cluster node killed: the bridges and the recorder on it go to the others; it comes back a fault's
    # length later (the hall hears every table throughout, or shows stale a bridge that did not move)
    cluster.nodes[0].kill()
    started_s = clock.monotonic_s()
    played += play_for(chain, FAULT_S)
    wait_for(lambda: clock.monotonic_s() - started_s >= FAULT_S, clock.real_s(FAULT_S) + 5, "the node down")
    cluster.restart(cluster.nodes[0])
    healed_at = heals.healed_when(lambda: all(chain.bridges().values()) and chain.recorder.client.subscribed,
                                  "the node back, every bridge and the recorder on the cluster")
    heals.online_within_heartbeat(healed_at, "a cluster node killed")
    all_played(chain)
    settle(chain.recorder, played, "with a node killed and back")

    # the recorder restarted a fault's length later: what came while it was away waits in its session on the
    # cluster; the leaves are retained there (the new recorder hears each table's last counters at once)
    chain.recorder.close()
    started_s = clock.monotonic_s()
    played += play_for(chain, FAULT_S)
    wait_for(lambda: clock.monotonic_s() - started_s >= FAULT_S, clock.real_s(FAULT_S) + 5, "the recorder away")
    chain.recorder = chain.new_recorder()
    healed_at = heals.healed_when(lambda: chain.recorder.client.subscribed, "the new recorder subscribed")
    heals.online_within_heartbeat(healed_at, "the recorder restarted")
    all_played(chain)
    settle(chain.recorder, played, "after the recorder's restart")
    return played
