"""A parlour's bridge cut for ten minutes of play, on real brokers: the parlour's Mosquitto queues, nothing is lost.

Two parlours of light tables (``sim/light_fleet.py``) on their Mosquittos,
bridged to a three-node NATS cluster; the chain's recorder on the cluster.
Parlour p1's bridge goes through :class:`~tests.support.uplink_cut.Uplink`,
which the test cuts (every connection reset, new ones refused) for ten
minutes of the tables' time while every table keeps playing a hand every
30 s.  The tables and the hall run on one :class:`~sim.sped_clock.SpedClock`
at ``SPEED`` times real time: their hands, their 60 s counters, their state
and the hall's three-minute ``stale`` are those of ten minutes, played in
ten minutes / ``SPEED`` (30 s); the brokers, the bridge and the sockets keep
real time, so p1's broker queues for its bridge what ten minutes of play
make (about 2,500 messages: more than Mosquitto's default
``max_queued_messages`` of 1,000 holds; the test's brokers have the
configuration's 100,000).

While cut, p1's tables see nothing wrong (their broker acknowledges every
hand: their outboxes empty), the hall gets none of p1's hands and shows
p1's tables ``stale`` once three counters periods pass (born, silent, no
Will: the documented view of a bridge down), never ``offline``; p2 stays
online.  When the uplink returns, every hand arrives exactly once, without
the hall asking for any again (the queue held them all), each table's in
the order of its seq, and the hall shows every table online within one
counters period of the bridge's return.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from firmware.fleet.command_auth import hmac_key
from firmware.fleet.consumer import STALE_AFTER_S
from firmware.ports.broker import parse_broker_url
from sim.light_fleet import LightFleet
from sim.sped_clock import SpedClock
from tests.support.chain_faults import COUNTERS_S, parlour_conf, sped_settings
from tests.support.chain_recorder import Recorder, hands_of, settle
from tests.support.fleet_rig import wait_for
from tests.support.mosquitto_broker import Mosquitto, free_port
from tests.support.nats_cluster import NatsCluster
from tests.support.uplink_cut import Uplink

pytestmark = pytest.mark.slow

SPEED = 20.0                  # the tables' and the hall's seconds per real second
CUT_S = 600.0                 # ten minutes of the tables' time
HAND_EVERY_S = 30.0           # a hand a table every 30 s of its time (a played MCR hand takes ~300 s: ten times busier)
TABLES = {"p1": 50, "p2": 10}
KEY = hmac_key(bytes(range(90, 122)))
SETTINGS = sped_settings(SPEED)


class HallWatch:
    """Every status the hall's view showed for every table, sampled every 0.1 s of real time (2 s of the hall's)
    in a thread: ``seen[phase][table]`` = the statuses shown in that phase."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.phase = "before"
        self.seen: dict[str, dict[str, set[str]]] = {}
        self.first_all_online_s: float | None = None      # (the hall's clock) once the phase is "healed"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hall-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            try:
                statuses = self.recorder.statuses()
            except (TimeoutError, RuntimeError):
                continue
            phase = self.phase
            for table, status in statuses.items():
                self.seen.setdefault(phase, {}).setdefault(table, set()).add(status)
            if phase == "healed" and self.first_all_online_s is None and set(statuses.values()) == {"online"}:
                self.first_all_online_s = self.recorder.clock.wall_s()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5.0)

    def statuses_in(self, phase: str, site: str) -> set[str]:
        return {s for table, seen in self.seen.get(phase, {}).items() if table.startswith(f"{site}-")
                for s in seen}


@pytest.fixture
def cut_chain(tmp_path: Path):
    kept: dict[str, dict] = {}
    cluster = NatsCluster(tmp_path / "nats").start()
    uplink = Uplink([n.mqtt_port for n in cluster.nodes])
    direct = tuple(parse_broker_url(u) for u in cluster.urls)
    through_uplink = tuple(parse_broker_url(f"mqtt://127.0.0.1:{p}") for p in uplink.ports)
    parlours = {}
    for site, nodes in (("p1", through_uplink), ("p2", direct)):
        folder = tmp_path / site
        folder.mkdir()
        port = free_port()
        parlours[site] = Mosquitto(folder, parlour_conf(port, folder, site, nodes), port).start()
    clock = SpedClock(SPEED)
    (tmp_path / "tables").mkdir()
    fleets = {site: LightFleet([(site, parlours[site].url)], count, tmp_path / "tables", settings=SETTINGS,
                               keys=[KEY.verify_key()], clock=clock, seed=i + 1)
              for i, (site, count) in enumerate(TABLES.items())}
    recorder = Recorder(cluster.urls, kept, KEY, clock=clock)
    try:
        yield clock, uplink, fleets, recorder
    finally:
        for closing in (recorder.close, *[f.close for f in fleets.values()], *[m.stop for m in parlours.values()],
                        uplink.close, cluster.stop):
            try:
                closing()
            except Exception:                       # noqa: BLE001 (the others still close)
                pass


def _play(clock: SpedClock, fleets: dict[str, LightFleet], duration_s: float) -> int:
    """Every table plays a hand every HAND_EVERY_S for duration_s of the tables' time; the hands written."""
    played = sum(f.play_over(duration_s, HAND_EVERY_S) for f in fleets.values())
    wait_for(lambda: all(f.to_play() == 0 for f in fleets.values()), clock.real_s(duration_s) + 60,
             f"{duration_s:.0f} s of play")
    return played


def _of(kept: dict[str, dict], site: str) -> int:
    return sum(1 for m in list(kept.values()) if m["site"] == site)


def test_a_bridge_cut_for_ten_minutes_of_play_loses_nothing_and_the_hall_never_shows_a_live_table_offline(
        cut_chain):
    clock, uplink, fleets, recorder = cut_chain
    tables = sum(TABLES.values())
    wait_for(lambda: sum(f.connected() for f in fleets.values()) == tables, 60, "the tables on their brokers")
    wait_for(lambda: recorder.client.subscribed, 60, "the recorder on the cluster")
    wait_for(lambda: len(recorder.statuses()) == tables and set(recorder.statuses().values()) == {"online"}, 60,
             "every table born in the hall's view")
    hall = HallWatch(recorder)
    try:
        played = _play(clock, fleets, 120.0)
        settle(recorder, played, "two minutes of play before the cut", ask=False)

        # the uplink cut for ten minutes of the tables' time while every table plays on
        hall.phase = "cut"
        p1_before = _of(recorder.kept, "p1")
        uplink.cut()
        cut_at_s = clock.monotonic_s()
        played_in_cut = _play(clock, fleets, CUT_S)
        played += played_in_cut
        wait_for(lambda: clock.monotonic_s() - cut_at_s >= CUT_S, clock.real_s(CUT_S), "ten minutes of the cut")
        # p1's tables handed every hand to their broker (their outboxes empty); the hall has none of them
        wait_for(lambda: fleets["p1"].outbox_depth() == 0, 60, "p1's tables' outboxes empty")
        p2_written = sum(t.hands for t in fleets["p2"].tables)
        wait_for(lambda: _of(recorder.kept, "p2") == p2_written, 60, "p2's hands, its uplink up, during the cut")
        assert _of(recorder.kept, "p1") == p1_before, "a hand of p1 reached the cluster through a cut uplink"
        wait_for(lambda: recorder.statuses()["p1-t001"] == "stale", 30, "p1 stale in the hall's view")
        cut_lasted_s = clock.monotonic_s() - cut_at_s
        assert cut_lasted_s >= CUT_S

        # the uplink back: the bridge reconnects on its own schedule (restart_timeout 1 30) and empties its queue
        reconnections = uplink.connected
        uplink.heal()
        wait_for(lambda: uplink.connected > reconnections, 120, "p1's bridge back on the cluster")
        back_at_s = clock.wall_s()
        hall.phase = "healed"
        settle(recorder, played, "the queue p1's broker held for its bridge", ask=False)
        wait_for(lambda: hall.first_all_online_s is not None, clock.real_s(COUNTERS_S) + 30,
                 "every table online again")
        online_after_s = hall.first_all_online_s - back_at_s
        played += _play(clock, fleets, 60.0)
        settle(recorder, played, "a minute of play after the heal", ask=False)
    finally:
        hall.stop()

    # every hand exactly once, in each table's order, and first received in that order
    per_table = hands_of(recorder.kept)
    assert len(per_table) == tables
    for table, hands in per_table.items():
        assert hands == list(range(1, len(hands) + 1)), f"{table}: {hands}"
    assert sum(len(h) for h in per_table.values()) == played
    arrived: dict[str, list[int]] = {}
    for table, seq in recorder.arrivals:
        arrived.setdefault(table, []).append(seq)
    for table, seqs in arrived.items():
        assert seqs == sorted(seqs), f"{table}: received out of order {seqs}"
    assert played_in_cut >= TABLES["p1"] * CUT_S / HAND_EVERY_S

    # the hall: never a live table offline; p1 stale while its bridge was down (documented), p2 online throughout
    assert "offline" not in {s for phase in hall.seen.values() for seen in phase.values() for s in seen}
    assert hall.statuses_in("before", "p1") == hall.statuses_in("before", "p2") == {"online"}
    assert hall.statuses_in("cut", "p2") == {"online"}
    assert hall.statuses_in("cut", "p1") == {"online", "stale"}
    assert online_after_s <= COUNTERS_S, (f"the hall showed every table online {online_after_s:.0f} s (its clock) "
                                          f"after the bridge was back; a heartbeat is {COUNTERS_S:.0f} s")
    assert STALE_AFTER_S < CUT_S
