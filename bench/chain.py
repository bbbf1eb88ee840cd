"""Chain benchmark: light tables across 10 parlour Mosquittos bridged to a three-node NATS cluster, doubling.

Starts the cluster (nats-server, JetStream, MQTT), ten parlour brokers each
bridged to it, and a central recorder (the chain's consumer, MQTT 3.1.1 on
the cluster); brings up N light tables (``sim/light_fleet.py``: the real
outbox, link and client per table) spread over the parlours and has each
write hands at a steady pace for a while.  Measures the hands per second
delivered end to end (distinct, at the recorder), the latency from a hand's
commit (the wall time written into its event) to its receipt (p50, p99),
the CPU seconds and peak memory of the brokers (parlours and cluster) and
of the light tables' one process, and whether every hand arrived.  The
hands are timers on the tables' loop at their planned instants (as a
table's controller commits its own), each table's spread evenly over the
play time: a steady pace; the lag from a hand's planned instant to its
commit says whether the light tables' process keeps the pace.
N doubles from 125 until the first limit: a hand not delivered within the
drain time (named by parlour: a whole parlour's hands missing is its
bridge), p99 over 5 s, tables that cannot all connect or open their
database (the process's file descriptors: about four a table), the light
tables' process falling behind the pace (commit lag p99 over 2 s), or
8,000 tables (the benchmark's budget).  Skipped without the ``mosquitto``
or ``nats-server`` binaries.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import statistics
import tempfile
import threading
import time
from pathlib import Path

PARLOURS = 10
START_TABLES = 125
MAX_TABLES = 8000
HANDS_EACH = 4
PLAY_S = 8.0                 # the hands of a round are spread over this long
DRAIN_S = 60.0
P99_LIMIT_S = 5.0
LAG_LIMIT_S = 2.0            # a hand committed this late after its planned instant: the process is behind


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
    out: dict = {"rows": [], "limit": None, "load_before": os.getloadavg()}
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
    out["load_after"] = os.getloadavg()
    return out


def one(tables: int) -> dict:
    import resource

    from firmware.fleet.broker_config import Bridge, bridge_text
    from firmware.fleet.chain import ChainConsumer
    from firmware.fleet.consumer import ConsumerClient
    from firmware.fleet.link_settings import LinkSettings
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
        self_cpu0 = time.process_time()
        try:
            try:
                fleet = LightFleet([(f"p{i:02d}", parlours[i].url) for i in range(PARLOURS)], per,
                                   folder / "tables", settings=settings)
            except (OSError, sqlite3.Error, RuntimeError, TimeoutError) as exc:
                return {"tables": tables, "parlours": PARLOURS, "hands": 0, "delivered": 0, "hands_per_s": None,
                        "offered_per_s": None, "latency_p50_s": None, "latency_p99_s": None, "lag_p99_s": None,
                        "brokers_cpu_s": 0.0, "brokers_peak_mb": 0.0, "tables_cpu_s": 0.0, "tables_peak_mb": 0.0,
                        "limit": f"the tables could not all start: {type(exc).__name__}: {exc} "
                                 f"({_open_fds()} file descriptors open, ulimit -n {hard})"}
            deadline = time.monotonic() + 60 + tables / 20
            while fleet.connected() < len(fleet.tables) and time.monotonic() < deadline:
                threading.Event().wait(0.5)
            connected = fleet.connected()
            if connected < len(fleet.tables):
                limit = (f"only {connected} of {len(fleet.tables)} tables connected within {60 + tables / 20:.0f} s "
                         f"({_open_fds()} file descriptors open, ulimit -n {hard})")

            def born() -> int:              # (every table's birth at the recorder: its parlour's bridge is up)
                return lt.call(lambda: sum(1 for c in consumer.sites.values() for v in c.tables.values()
                                           if v.online))
            while not limit and born() < len(fleet.tables) and time.monotonic() < deadline:
                threading.Event().wait(0.5)
            if not limit and born() < len(fleet.tables):
                limit = f"only {born()} of {len(fleet.tables)} tables' births reached the cluster's recorder"
            cpu0, _ = _cpu_mem([p.proc.pid for p in parlours] + [n.proc.pid for n in cluster.nodes])
            nats_cpu0, _ = _cpu_mem([n.proc.pid for n in cluster.nodes])
            self_cpu0 = time.process_time()
            started = time.time() + 0.5          # (the timers set before the first is due)
            written = 0
            lags: list[float] = []
            # each table a hand every PLAY_S / HANDS_EACH, the tables' hands spread evenly over that interval: a
            # steady pace of tables * HANDS_EACH / PLAY_S hands a second, each a timer on the tables' loop
            every_s = PLAY_S / HANDS_EACH
            count = len(fleet.tables)
            for i, t in enumerate(fleet.tables):
                for k in range(HANDS_EACH):
                    planned_at = started + k * every_s + every_s * i / count
                    fleet.loop.call_later(planned_at - time.time(), _stamp_and_play, fleet, t, planned_at, lags)
                    written += 1
            drain_end = time.monotonic() + DRAIN_S
            while len(received) < written and time.monotonic() < drain_end:
                threading.Event().wait(0.2)
            elapsed = max(received.values(), default=time.time()) - started
            window_s = time.time() - started           # (the play and the drain: what the CPU shares are of)
            cpu1, mem = _cpu_mem([p.proc.pid for p in parlours] + [n.proc.pid for n in cluster.nodes])
            nats_cpu1, nats_mem = _cpu_mem([n.proc.pid for n in cluster.nodes])
            lat = sorted(latencies)
            p50 = statistics.median(lat) if lat else None
            p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))] if lat else None
            lagged = sorted(lags)
            lag99 = lagged[min(len(lagged) - 1, int(0.99 * len(lagged)))] if lagged else None
            if not limit and len(received) < written:
                limit = f"{written - len(received)} of {written} hands not delivered within {DRAIN_S:.0f} s " \
                        f"({_missing_by_parlour(fleet, received)})"
            if not limit and p99 is not None and p99 > P99_LIMIT_S:
                limit = f"p99 latency {p99:.1f} s over {P99_LIMIT_S:.0f} s"
            if not limit and lag99 is not None and lag99 > LAG_LIMIT_S:
                limit = (f"the light tables' one process fell behind the pace: hands committed up to {lag99:.1f} s "
                         f"(p99) after their planned instant (the benchmark's tables, not the chain)")
            return {"tables": len(fleet.tables), "parlours": PARLOURS, "hands": written,
                    "delivered": len(received), "hands_per_s": len(received) / elapsed if elapsed > 0 else None,
                    "offered_per_s": written / PLAY_S,
                    "latency_p50_s": p50, "latency_p99_s": p99, "lag_p99_s": lag99, "brokers_cpu_s": cpu1 - cpu0,
                    "cluster_cpu_s": nats_cpu1 - nats_cpu0, "cluster_peak_mb": nats_mem,
                    "brokers_peak_mb": mem, "tables_cpu_s": time.process_time() - self_cpu0, "window_s": window_s,
                    "tables_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "limit": limit}
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


def _stamp_and_play(fleet, table, planned_at: float, lags: list[float]) -> None:
    """(the fleet's loop) The table commits a hand, stamped with the wall time of its commit."""
    from sim.light_fleet import generated_hand

    table.hands += 1
    data = generated_hand(fleet.rng, table.hands)
    data["committed_at"] = time.time()
    lags.append(data["committed_at"] - planned_at)
    table.outbox.add("hand", data)
    table.link.outbox_changed()


def _missing_by_parlour(fleet, received: dict[str, float]) -> str:
    """Which parlours' hands did not arrive: a whole parlour's missing is its bridge, scattered ones its tables."""
    got: dict[str, int] = {}
    for msg_id in received:
        site = msg_id.split(":", 1)[0].rsplit("-t", 1)[0]
        got[site] = got.get(site, 0) + 1
    parts = []
    for site in sorted({t.site for t in fleet.tables}):
        wrote = sum(t.hands for t in fleet.tables if t.site == site)
        if got.get(site, 0) < wrote:
            parts.append(f"{site}: {wrote - got.get(site, 0)} of {wrote}"
                         + (" (all: its bridge)" if not got.get(site) else ""))
    return "; ".join(parts)


def _open_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return -1


def print_table(results: dict) -> None:
    print(f"\nchain: light tables over {PARLOURS} parlour Mosquittos bridged to a 3-node NATS cluster, "
          f"{HANDS_EACH} hands each over {PLAY_S:.0f} s at a steady pace; doubling until the first limit")
    if "skipped" in results:
        print(f"  skipped: {results['skipped']}")
        return
    load = results.get("load_before"), results.get("load_after")
    if all(load):
        print(f"  load average (1, 5, 15 min) before {' '.join(f'{v:.1f}' for v in load[0])}, "
              f"after {' '.join(f'{v:.1f}' for v in load[1])}; {os.cpu_count()} cores")
    print(f"{'tables':>6} {'hands':>6} {'delivered':>9} {'offered/s':>9} {'hands/s':>8} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'lag p99 ms':>10} {'broker cpu s':>12} {'broker MB':>9} {'tables cpu s':>12} {'tables MB':>9} "
          f"{'window s':>8}")
    for r in results["rows"]:
        def ms(v):
            return "-" if v is None else f"{v * 1000:.0f}"
        rate = "-" if r["hands_per_s"] is None else f"{r['hands_per_s']:.1f}"
        offered = "-" if r.get("offered_per_s") is None else f"{r['offered_per_s']:.0f}"
        print(f"{r['tables']:6d} {r['hands']:6d} {r['delivered']:9d} {offered:>9} {rate:>8} "
              f"{ms(r['latency_p50_s']):>7} {ms(r['latency_p99_s']):>7} {ms(r.get('lag_p99_s')):>10} "
              f"{r['brokers_cpu_s']:12.1f} {r['brokers_peak_mb']:9.0f} {r.get('tables_cpu_s', 0.0):12.1f} "
              f"{r.get('tables_peak_mb', 0.0):9.0f} {r.get('window_s', 0.0):8.1f}  {r['limit'] or 'ok'}")
    print("  (broker: the ten Mosquittos and the three NATS nodes together; of which the cluster: "
          + ", ".join(f"{r['tables']}: {r['cluster_cpu_s']:.1f} s {r['cluster_peak_mb']:.0f} MB"
                      for r in results["rows"] if "cluster_cpu_s" in r) + ")")
    print(f"  first limit: {results['limit']}")
