"""Chain benchmark: light tables across 10 parlour Mosquittos bridged to a three-node NATS cluster, doubling.

Starts the cluster (nats-server, JetStream, MQTT), ten parlour brokers each
bridged to it, and a central recorder (the chain's consumer, MQTT 3.1.1 on
the cluster); brings up N light tables (``sim/light_fleet.py``: the real
outbox, link and client per table) spread over the parlours and has each
write hands at a steady pace for a while.  Measures the hands per second
delivered end to end (distinct, at the recorder), the latency from a hand's
commit (the wall time written into its event) to its receipt (p50, p99),
the CPU seconds and peak memory of the brokers (parlours and cluster), and
whether every hand arrived.  N doubles from 125 until the first limit: a
hand not delivered within the drain time, p99 over 5 s, tables that cannot
all connect, or 2,000 tables (this machine's budget).  Skipped without the
``mosquitto`` or ``nats-server`` binaries.
"""

from __future__ import annotations

import logging
import os
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

PARLOURS = 10
START_TABLES = 125
MAX_TABLES = 2000
HANDS_EACH = 4
PLAY_S = 8.0                 # the hands of a round are spread over this long
DRAIN_S = 60.0
P99_LIMIT_S = 5.0


def _cpu_mem(pids: list[int]) -> tuple[float, float]:
    """CPU seconds (user + system) and resident MB summed over the processes."""
    tick = os.sysconf("SC_CLK_TCK")
    cpu = mem = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / tick
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    mem += int(line.split()[1]) / 1024
        except (OSError, IndexError, ValueError):
            continue
    return cpu, mem


def run() -> dict:
    if not (shutil.which("mosquitto") or Path("/usr/sbin/mosquitto").exists()) or not (
            shutil.which("nats-server") or Path("/usr/sbin/nats-server").exists()):
        return {"skipped": "mosquitto or nats-server is not installed"}
    logging.getLogger().setLevel(logging.CRITICAL)
    out: dict = {"rows": [], "limit": None}
    tables = START_TABLES
    while tables <= MAX_TABLES:
        row = one(tables)
        out["rows"].append(row)
        if row["limit"]:
            out["limit"] = f"{tables} tables: {row['limit']}"
            break
        tables *= 2
    else:
        out["limit"] = f"none up to {MAX_TABLES} tables (the benchmark's budget)"
    return out


def one(tables: int) -> dict:
    import resource

    from firmware.fleet.broker_config import Bridge, bridge_text
    from firmware.fleet.chain import ChainConsumer
    from firmware.fleet.consumer import ConsumerClient
    from firmware.fleet.link import LinkSettings
    from firmware.fleet.mqtt.client import ClientSettings, PahoAdapter
    from firmware.fleet.mqtt.network import MqttNetwork
    from firmware.ports.broker import parse_broker_url
    from hal.runtime import HOST_CLOCK
    from sim.light_fleet import LightFleet
    from tests.support.fleet_rig import LoopThread
    from tests.support.mosquitto_broker import Mosquitto, free_port, plain_conf
    from tests.support.nats_cluster import NatsCluster

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    per = tables // PARLOURS
    with tempfile.TemporaryDirectory(prefix="mjtable-bench-chain-") as tmp:
        folder = Path(tmp)
        cluster = NatsCluster(folder / "nats").start()
        nodes = tuple(parse_broker_url(u) for u in cluster.urls)
        parlours = []
        for i in range(PARLOURS):
            sub = folder / f"p{i:02d}"
            sub.mkdir()
            port = free_port()
            conf = (plain_conf(port, sub) + "max_connections -1\nmax_queued_messages 200000\n"
                    + bridge_text(f"p{i:02d}", Bridge(nodes, f"bridge-p{i:02d}")))
            parlours.append(Mosquitto(sub, conf, port).start())
        received: dict[str, float] = {}
        latencies: list[float] = []
        lock = threading.Lock()

        def on_change(change) -> None:
            if change.what == "event" and change.message.get("kind") == "hand":
                with lock:
                    if change.message["msg_id"] not in received:
                        now = time.time()
                        received[change.message["msg_id"]] = now
                        latencies.append(now - change.message["data"].get("committed_at", now))

        lt = LoopThread("chain-bench")
        network = MqttNetwork("chain-bench", clock=HOST_CLOCK).start()
        adapter = PahoAdapter(network, lt.loop.post, ClientSettings("bench-chain", nodes[0], session_expiry_s=600,
                                                                   mqtt311=True, others=nodes[1:]))
        consumer = ChainConsumer()
        client = ConsumerClient(lt.loop, adapter, consumer, wall_clock_s=time.time, on_change=on_change,
                                name="bench-chain")
        lt.call(client.start)
        settings = LinkSettings(first_connect_spread_s=min(10.0, tables / 100), backoff_min_s=0.5,
                                backoff_max_s=4.0, connect_timeout_s=15.0, mark_delay_s=0.2, poll_s=2.0,
                                counters_period_s=60.0, state_min_interval_s=5.0)
        (folder / "tables").mkdir()
        fleet = None
        limit = ""
        try:
            fleet = LightFleet([(f"p{i:02d}", parlours[i].url) for i in range(PARLOURS)], per, folder / "tables",
                               settings=settings)
            deadline = time.monotonic() + 60 + tables / 20
            while fleet.connected() < len(fleet.tables) and time.monotonic() < deadline:
                threading.Event().wait(0.5)
            connected = fleet.connected()
            if connected < len(fleet.tables):
                limit = f"only {connected} of {len(fleet.tables)} tables connected within {deadline:.0f} s"
            cpu0, _ = _cpu_mem([p.proc.pid for p in parlours] + [n.proc.pid for n in cluster.nodes])
            started = time.time()
            written = 0
            for k in range(HANDS_EACH):
                wave_at = started + k * PLAY_S / HANDS_EACH
                while time.time() < wave_at:
                    threading.Event().wait(0.01)
                for t in fleet.tables:
                    fleet.call(_stamp_and_play, fleet, t)
                    written += 1
            drain_end = time.monotonic() + DRAIN_S
            while len(received) < written and time.monotonic() < drain_end:
                threading.Event().wait(0.2)
            elapsed = max(received.values(), default=time.time()) - started
            cpu1, mem = _cpu_mem([p.proc.pid for p in parlours] + [n.proc.pid for n in cluster.nodes])
            lat = sorted(latencies)
            p50 = statistics.median(lat) if lat else None
            p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))] if lat else None
            if not limit and len(received) < written:
                limit = f"{written - len(received)} of {written} hands not delivered within {DRAIN_S:.0f} s"
            if not limit and p99 is not None and p99 > P99_LIMIT_S:
                limit = f"p99 latency {p99:.1f} s over {P99_LIMIT_S:.0f} s"
            return {"tables": len(fleet.tables), "parlours": PARLOURS, "hands": written,
                    "delivered": len(received), "hands_per_s": len(received) / elapsed if elapsed > 0 else None,
                    "latency_p50_s": p50, "latency_p99_s": p99, "brokers_cpu_s": cpu1 - cpu0,
                    "brokers_peak_mb": mem, "limit": limit}
        finally:
            if fleet is not None:
                fleet.close()
            lt.call(client.stop)
            lt.stop()
            network.stop()
            for p in parlours:
                p.stop()
            cluster.stop()
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _stamp_and_play(fleet, table) -> None:
    from sim.light_fleet import generated_hand

    table.hands += 1
    data = generated_hand(fleet.rng, table.hands)
    data["committed_at"] = time.time()
    table.outbox.add("hand", data)
    table.link.outbox_changed()


def print_table(results: dict) -> None:
    print(f"\nchain: light tables over {PARLOURS} parlour Mosquittos bridged to a 3-node NATS cluster, "
          f"{HANDS_EACH} hands each over {PLAY_S:.0f} s; doubling until the first limit")
    if "skipped" in results:
        print(f"  skipped: {results['skipped']}")
        return
    print(f"{'tables':>6} {'hands':>6} {'delivered':>9} {'hands/s':>8} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'broker cpu s':>12} {'broker MB':>9}")
    for r in results["rows"]:
        p50 = "-" if r["latency_p50_s"] is None else f"{r['latency_p50_s'] * 1000:.0f}"
        p99 = "-" if r["latency_p99_s"] is None else f"{r['latency_p99_s'] * 1000:.0f}"
        rate = "-" if r["hands_per_s"] is None else f"{r['hands_per_s']:.1f}"
        print(f"{r['tables']:6d} {r['hands']:6d} {r['delivered']:9d} {rate:>8} {p50:>7} {p99:>7} "
              f"{r['brokers_cpu_s']:12.1f} {r['brokers_peak_mb']:9.0f}  {r['limit'] or 'ok'}")
    print(f"  first limit: {results['limit']}")
