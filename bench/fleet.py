"""Fleet benchmark: ``sim --fleet 50`` (and 200) on a local Mosquitto restarted twice during the run.

Starts its own broker (plain, loopback, persistence on) and a de-duplicating
recorder with a persistent session (:class:`~firmware.fleet.consumer.FleetConsumer`),
then plays the fleet (:class:`~sim.fleet_run.FleetSim`, every table its own
controller, database and client id) and restarts the broker when a third
and two thirds of the hands are played.  Reports hands per second across the
fleet, the end-to-end event latency (the envelope's publish time to the
recorder's receipt, p50 / p99), the deepest outbox seen and the one left, the
reconnects, and what the recorder got: events lost (written by a table,
never received) and duplicates after de-duplication (the same hand of the
same table twice), both to be 0.  Skipped without the ``mosquitto`` binary.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
from pathlib import Path

from firmware.fleet.link_settings import LinkSettings
from sim.fleet_run import FleetSim

SIZES = ((50, 4), (200, 1))         # (tables, hands each)
SITE = "hall1"                       # (the recorder of tests/support/fleet_rig.py watches this site)
SETTINGS = LinkSettings(first_connect_spread_s=2.0, backoff_min_s=0.5, backoff_max_s=4.0, connect_timeout_s=10.0,
                        mark_delay_s=0.2, poll_s=2.0)
RESTARTS_AT = (1 / 3, 2 / 3)


def run() -> dict:
    if shutil.which("mosquitto") is None and not Path("/usr/sbin/mosquitto").exists():
        return {"skipped": "mosquitto is not installed (apt-get install mosquitto)"}
    logging.getLogger().setLevel(logging.CRITICAL)
    return {str(tables): one(tables, hands) for tables, hands in SIZES}


def one(tables: int, hands: int) -> dict:
    from tests.support.fleet_rig import Watcher, wait_for
    from tests.support.mosquitto_broker import Mosquitto, free_port, plain_conf

    with tempfile.TemporaryDirectory(prefix="mjtable-bench-fleet-") as tmp:
        folder = Path(tmp)
        port = free_port()
        broker = Mosquitto(folder, plain_conf(port, folder), port).start()
        recorder = Watcher(broker.url, client_id="bench-recorder", session_expiry_s=3600)
        try:
            wait_for(lambda: recorder.client.subscribed, what="the recorder subscribed")
            started = time.perf_counter()
            fleet = FleetSim(tables, broker.url, SITE, hands=hands, seed=1, settings=SETTINGS)
            built_s = time.perf_counter() - started
            total, restarts, deepest, next_look = tables * hands, [], 0, 0.0
            try:
                play_start = time.perf_counter()
                while fleet.step():
                    now = time.perf_counter()
                    if now >= next_look:
                        next_look = now + 0.5
                        deepest = max(deepest, fleet.outbox_depth())
                        played = sum(r.game.hands_recorded for r in fleet.runs if r.game is not None)
                        if len(restarts) < len(RESTARTS_AT) and played >= total * RESTARTS_AT[len(restarts)]:
                            broker.restart()
                            restarts.append(played)
                play_s = time.perf_counter() - play_start
                drained = fleet.drain(120.0)
                rows = fleet.summary()
            finally:
                fleet.close()
            written = sum(r.events for r in rows)
            try:
                wait_for(lambda: recorder.lt.call(lambda: recorder.consumer.unique) >= written, timeout_s=60,
                         what="every event at the recorder")
            except AssertionError:
                pass
            consumer = recorder.consumer
            stats = recorder.lt.call(consumer.stats)
            hands_seen = recorder.lt.call(lambda: [(e["table"], e["data"].get("hand")) for e in consumer.events
                                                   if e["kind"] == "hand"])
            played = sum(r.hands for r in rows)
            return {"tables": tables, "hands": played, "build_s": round(built_s, 1), "play_s": round(play_s, 1),
                    "hands_per_s": round(played / play_s, 2) if play_s else 0.0,
                    "events_written": written, "events_received": stats["events"],
                    "events_lost": written - stats["events"], "duplicates_dropped": stats["duplicates"],
                    "duplicates_after_dedup": len(hands_seen) - len(set(hands_seen)),
                    "hand_events": len(hands_seen), "missing_seqs": stats["missing"],
                    "latency_p50_s": _round(stats["latency_p50_s"]), "latency_p99_s": _round(stats["latency_p99_s"]),
                    "outbox_deepest": deepest, "outbox_left": sum(max(0, r.outbox_depth) for r in rows),
                    "drained": drained, "broker_restarts": len(restarts), "restarted_after_hands": restarts,
                    "reconnects": sum(r.reconnects for r in rows),
                    "published": sum(r.published for r in rows)}
        finally:
            recorder.close()
            broker.stop()


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def print_table(results: dict) -> None:
    print("\nfleet: N simulated tables on a local Mosquitto restarted twice during the run "
          "(targets: 0 events lost, 0 duplicates after de-duplication)")
    if "skipped" in results:
        print(f"  skipped: {results['skipped']}")
        return
    print(f"{'tables':>6} {'hands':>5} {'hands/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'outbox max':>10} {'left':>5} "
          f"{'reconnects':>10} {'events':>7} {'lost':>5} {'dups':>5} {'dropped':>7}")
    for r in results.values():
        p50 = "-" if r["latency_p50_s"] is None else f"{r['latency_p50_s'] * 1000:.0f}"
        p99 = "-" if r["latency_p99_s"] is None else f"{r['latency_p99_s'] * 1000:.0f}"
        print(f"{r['tables']:6d} {r['hands']:5d} {r['hands_per_s']:8.2f} {p50:>7} {p99:>7} {r['outbox_deepest']:10d} "
              f"{r['outbox_left']:5d} {r['reconnects']:10d} {r['events_written']:7d} {r['events_lost']:5d} "
              f"{r['duplicates_after_dedup']:5d} {r['duplicates_dropped']:7d}  "
              f"{'ok' if r['events_lost'] == 0 and r['duplicates_after_dedup'] == 0 else 'LOST OR DOUBLED'}")
