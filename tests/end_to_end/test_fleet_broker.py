"""Fleet telemetry on a real Mosquitto with the real paho adapter: birth, Wills, restarts, power cuts, a dead broker."""

from __future__ import annotations

import signal
import threading
import time

from firmware.fleet import messages
from firmware.ports.broker import WillMessage
from firmware.fleet.topics import Leaf, TableTopics
from firmware.ports.broker import parse_broker_url
from firmware.fleet.mqtt.client import ClientSettings, PahoAdapter
from hal.runtime import HOST_CLOCK
from tests.support.fleet_rig import SITE, LoopThread, TableProcess, Watcher, wait_for
from tests.support.mosquitto_broker import broker  # noqa: F401 (the fixture)


def test_birth_and_retained_state_reach_a_late_subscriber(broker, tmp_path):  # noqa: F811
    table = TableProcess(tmp_path / "t01.db", "t01", broker.url,
                         status={"state": "playing", "hand": 7, "dealer": 2, "chips": [10, -5, 0, -5],
                                 "faults": [{"code": "E41", "hint": "refill side 0"}], "counters": {"cycles": 12}})
    try:
        wait_for(lambda: table.st()["state"] == "connected" and table.st()["published"] == 0, what="connected")
        watcher = Watcher(broker.url)                 # subscribes after everything was published
        try:
            view = wait_for(lambda: (v := watcher.view("t01")) and v.online and v.meta and v.state and v.faults
                            and v.counters and v, what="every retained leaf")
            assert view.state == {"state": "playing", "hand": 7, "dealer": 2, "chips": [10, -5, 0, -5]}
            assert view.faults == [{"code": "E41", "hint": "refill side 0"}]
            assert view.meta["model"] == "four-port double-set" and view.session == 1
            assert view.counters["table"] == {"cycles": 12} and view.outbox_depth() == 0
        finally:
            watcher.close()
    finally:
        table.close()


def test_the_will_on_a_killed_connection_and_the_session_counter_beating_a_late_will(broker, tmp_path):  # noqa: F811
    watcher = Watcher(broker.url)
    table = TableProcess(tmp_path / "t01.db", "t01", broker.url)
    try:
        wait_for(lambda: (v := watcher.view("t01")) and v.online, what="online")
        table.lt.call(table.adapter.kill_connection)                # the cable, not a clean disconnect
        wait_for(lambda: any(c.what == "avail" and c.message["data"] == {"online": False, "boot": 1, "session": 1}
                             for c in list(watcher.changes)), what="the Will of session 1")
        view = wait_for(lambda: (v := watcher.view("t01")) and v.online and v.session == 2 and v,
                        what="online again in session 2")
        boot_id = view.boot_id

        # a Will of session 1 arriving late (here from another connection: the broker cannot tell)
        ghost_loop = LoopThread("ghost")
        ghost = PahoAdapter(table.network, ghost_loop.loop.post, ClientSettings("ghost", parse_broker_url(broker.url)))
        late = messages.avail(messages.Source(SITE, "t01", boot_id), False, 1, 1, time.time())
        reports = []

        class Listener:
            def on_connected(self, session, ok, reason):
                reports.append(ok)

            def on_connection_lost(self, *a):
                pass

        ghost_loop.call(ghost.connect, 1, WillMessage(TableTopics(SITE, "t01").avail, late), Listener())
        wait_for(lambda: reports == [True], what="the ghost connected")
        ghost_loop.call(ghost.kill_connection)
        wait_for(lambda: any(c.what == "stale" for c in list(watcher.changes)), what="the late Will seen")
        assert watcher.view("t01").online is True                  # the session counter wins
        wait_for(lambda: table.st()["reasserted"] >= 1, what="the table said online again")
        # The retained avail is online again: a subscriber arriving now may still get the late Will first (the
        # table's publish and its subscribe are on two connections, in no order), then the table's online.
        late_watcher = Watcher(broker.url, client_id="late")
        try:
            wait_for(lambda: (v := late_watcher.view("t01")) and (v.online, v.session) == (True, 2),
                     what="the retained avail online in session 2")
        finally:
            late_watcher.close()
        ghost_loop.stop()
    finally:
        table.close()
        watcher.close()


def test_a_broker_restart_and_a_power_cut_mid_stream_deliver_every_hand_exactly_once(broker, tmp_path):  # noqa: F811
    recorder = Watcher(broker.url, client_id="recorder", session_expiry_s=600)
    db = tmp_path / "t01.db"
    table = TableProcess(db, "t01", broker.url)
    hands = iter(range(1, 10_000))

    def play(n: int) -> None:
        for _ in range(n):
            hand = next(hands)
            table.add_events("hand", [{"hand": hand, "payments": [{"side": 0, "amount": 8, "reason": "self-drawn"}]}])

    try:
        wait_for(table.connected, what="connected")
        wait_for(lambda: recorder.client.subscribed, what="recorder subscribed")
        play(40)
        broker.restart()                                            # mid-stream: events in flight
        play(40)                                                    # while the table reconnects
        wait_for(table.connected, what="the table reconnected")
        play(20)
        table.power_cut()                                           # unacknowledged rows stay unsent
        play_after = TableProcess(db, "t01", broker.url)            # the power is back: same database
        table = play_after
        play(20)
        wait_for(lambda: recorder.lt.call(lambda: recorder.consumer.unique) >= 120, timeout_s=20,
                 what="120 hands received")
        wait_for(lambda: table.st()["outbox_depth"] == 0, what="the outbox drained")
        stats = recorder.lt.call(recorder.consumer.stats)
        seqs = recorder.lt.call(lambda: [e["seq"] for e in recorder.consumer.events])
        assert sorted(seqs) == list(range(1, 121)) and stats["missing"] == 0 and stats["events"] == 120
        print("restart and power cut:", stats)
        assert table.st()["boot_id"].endswith("-2")
        data = recorder.lt.call(lambda: [e["data"]["hand"] for e in recorder.consumer.events])
        assert sorted(data) == list(range(1, 121))
    finally:
        table.close()
        recorder.close()


def test_the_table_plays_on_while_the_broker_is_down_or_frozen(broker, tmp_path):  # noqa: F811
    table = TableProcess(tmp_path / "t01.db", "t01", broker.url)
    late: list[float] = []
    ticking = threading.Event()

    def tick(due: float) -> None:                 # the table's own timers: each must run on time
        late.append(table.lt.loop.now() - due)
        if ticking.is_set():
            table.lt.loop.call_later(0.01, tick, table.lt.loop.now() + 0.01)

    try:
        wait_for(table.connected, what="connected")
        ticking.set()
        table.lt.call(lambda: table.lt.loop.call_later(0.01, tick, table.lt.loop.now() + 0.01))
        broker.stop()
        for hand in range(30):                                  # hands end, states change: the broker is gone
            table.add_events("hand", [{"hand": hand}])
            table.status = dict(table.status, hand=hand)
            table.lt.call(table.link.notify)
        wait_for(lambda: table.st()["state"] in ("backing_off", "connecting"), what="backing off")
        assert table.st()["outbox_depth"] == 30
        broker.start()
        wait_for(lambda: table.st()["outbox_depth"] == 0, timeout_s=15, what="drained after the broker came back")
        broker.proc.send_signal(signal.SIGSTOP)                # a broker that hangs: no PUBACK, no error
        try:
            table.add_events("hand", [{"hand": h} for h in range(30, 60)])
            wait_for(lambda: len(late) > 150, what="ticks while frozen")
            assert table.st()["outbox_depth"] == 30 and table.st()["in_flight"] == 8
        finally:
            broker.proc.send_signal(signal.SIGCONT)
        wait_for(lambda: table.st()["outbox_depth"] == 0, timeout_s=15, what="drained after the freeze")
        ticking.clear()
        # (the ticks share the loop with the outbox's own commits, each synced to disk: a few ms; a connect or a
        # publish blocking on the broker would show as seconds, the connect timeout being 3 s)
        assert len(late) > 100 and max(late) < 0.25, f"a loop callback ran {max(late):.3f} s late"
    finally:
        table.close()


def test_many_tables_share_one_loop_and_one_network_thread(broker, tmp_path):  # noqa: F811
    """The seam for ``sim --fleet N``: N links, each its own client id, on one loop and one network thread."""
    import sqlite3

    from firmware.fleet.link import FleetLink
    from firmware.store.outbox import SqliteOutbox
    from firmware.fleet.mqtt.network import MqttNetwork
    from tests.support.fleet_rig import FAST

    recorder = Watcher(broker.url, client_id="recorder")
    lt = LoopThread("fleet")
    network = MqttNetwork("mqtt-fleet", clock=HOST_CLOCK).start()
    links, boxes = [], []
    try:
        before = set(threading.enumerate())
        for n in range(20):
            table = f"t{n:02d}"
            adapter = PahoAdapter(network, lt.loop.post, ClientSettings(table, parse_broker_url(broker.url)))
            box = lt.call(SqliteOutbox, sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False))
            link = FleetLink(lt.loop, adapter, box, lambda: {"state": "playing", "faults": []}, None, site=SITE,
                             table=table, meta={}, wall_clock_s=time.time, settings=FAST)
            lt.call(link.start)
            links.append(link)
            boxes.append(box)

        def play() -> None:
            for link, box in zip(links, boxes):
                for hand in range(10):
                    box.add("hand", {"hand": hand})
                link.outbox_changed()

        wait_for(lambda: all(lt.call(link.status)["state"] == "connected" for link in links), what="all connected")
        lt.call(play)
        wait_for(lambda: recorder.lt.call(lambda: recorder.consumer.unique) == 200, what="200 events")
        stats = recorder.lt.call(recorder.consumer.stats)
        assert stats["tables"] == 20 and stats["online"] == 20 and stats["missing"] == 0
        # the threads the fleet started: the connect workers, no client's own (paho's loop thread); another test's
        # thread that happens to start meanwhile (two workers run tests side by side) is not the fleet's
        started = [t.name for t in threading.enumerate() if t not in before]
        assert len([name for name in started if name.startswith((network.name, "paho-mqtt-client-"))]) <= 4, started
    finally:
        for link in links:
            lt.call(link.stop)
        lt.stop()
        network.stop()
        recorder.close()


def test_a_missing_tls_file_is_named_when_the_client_is_set_up(tmp_path):
    """(not ssl's bare "[Errno 2] No such file or directory" at every retry)"""
    from firmware.fleet.mqtt.network import MqttNetwork

    (tmp_path / "ca.crt").write_text("")
    network = MqttNetwork("mqtt-setup", clock=HOST_CLOCK).start()
    answers = []

    class Listener:
        def on_connected(self, session, ok, reason):
            answers.append((session, ok, reason))

    try:
        adapter = PahoAdapter(network, lambda fn, *args: fn(*args), ClientSettings(
            "t07", parse_broker_url("mqtts://127.0.0.1:1"), ca_file=str(tmp_path / "ca.crt"),
            cert_file=str(tmp_path / "t07.crt"), key_file=str(tmp_path / "t07.key")))
        adapter.connect(1, None, Listener())
        wait_for(lambda: answers, what="the set-up's answer")
        assert answers == [(1, False, f"client set-up: cert_file {tmp_path / 't07.crt'}: no such file")]
    finally:
        network.stop()


def test_a_refused_connection_is_reported_once_not_again_as_dropped():
    """The broker's CONNACK refusal, then its closing the socket: one report (a console would otherwise take the
    second, 'dropped by the broker', for a failure worth retrying)."""
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.reasoncodes import ReasonCode

    from firmware.fleet.mqtt.network import MqttNetwork

    reports = []

    class Listener:
        def on_connected(self, session, ok, reason):
            reports.append((session, ok, reason))

    adapter = PahoAdapter(MqttNetwork("unstarted", clock=HOST_CLOCK), lambda fn, *args: fn(*args),
                          ClientSettings("console", parse_broker_url("mqtt://127.0.0.1:1")))
    client = object()
    adapter._client, adapter._listener = client, Listener()
    adapter._on_connect(client, 1, None, ReasonCode(PacketTypes.CONNACK, "Not authorized"), None)
    adapter._on_disconnect(client, 1, None, ReasonCode(PacketTypes.DISCONNECT, "Protocol error"), None)
    assert reports == [(1, False, "Not authorized")]


def _flooded_adapter(limits, clock: list[float]):
    """A table's adapter on a connected (fake) client whose posts are kept, not run; the listener's messages."""
    from firmware.fleet.mqtt.network import MqttNetwork

    posted: list = []
    heard: list = []

    class Listener:
        def on_message(self, session, message):
            heard.append(message)

    adapter = PahoAdapter(MqttNetwork("unstarted", clock=HOST_CLOCK), lambda fn, *args: posted.append((fn, args)),
                          ClientSettings("t07", parse_broker_url("mqtt://127.0.0.1:1"), inbound=limits),
                          clock_s=lambda: clock[0])
    client = object()
    adapter._client, adapter._listener = client, Listener()
    return adapter, client, posted, heard


def _flood(adapter, client, n: int) -> None:
    from paho.mqtt.client import MQTTMessage

    message = MQTTMessage(topic=b"mj/v1/hall1/tbl/t07/cmd/ack")
    message.payload = b'{"v": 1}'
    for _ in range(n):
        adapter._on_message(client, 1, message)


def test_a_flood_of_commands_posts_at_most_the_bound_into_the_loop_and_counts_the_rest(caplog):
    """10,000 messages in no time: the bucket's burst is posted, the rest dropped on the network thread, counted and
    said in one log line (not one per message); a minute later the bucket is full again."""
    from firmware.fleet.mqtt.inbound import InboundLimits

    clock = [1000.0]
    adapter, client, posted, heard = _flooded_adapter(InboundLimits(max_pending=32, rate_per_s=5.0, burst=10), clock)
    _flood(adapter, client, 10_000)
    assert len(posted) == 10 and adapter.inbound_dropped == 9_990
    for fn, args in posted:                       # (the loop handles them)
        fn(*args)
    assert len(heard) == 10
    assert len([r for r in caplog.records if "dropped" in r.getMessage()]) == 1
    clock[0] += 60.0
    _flood(adapter, client, 10_000)
    assert len(posted) == 20 and adapter.inbound_dropped == 19_980


def test_the_drops_of_a_flood_that_stopped_are_summed_up_when_the_limit_lifts(caplog):
    """The first drop is said at once, the rest within the minute only at the next drop after it: a flood that stops
    left them unsaid for good.  The network thread's keepalive pass says them once the minute is over, once."""
    from firmware.fleet.mqtt.inbound import InboundLimits

    clock = [1000.0]
    adapter, client, posted, heard = _flooded_adapter(InboundLimits(max_pending=32, rate_per_s=5.0, burst=10), clock)
    _flood(adapter, client, 10_000)
    network = adapter.network
    network.run_tickers()
    assert len([r for r in caplog.records if "dropped" in r.getMessage()]) == 1     # (within the minute: not yet)
    clock[0] += 61.0
    network.run_tickers()
    said = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert len(said) == 2 and "9989 more inbound message(s) dropped in the last 60 s (9990 dropped since start)" \
        in said[1], said
    for _ in range(3):
        clock[0] += 61.0
        network.run_tickers()
    assert len([r for r in caplog.records if "dropped" in r.getMessage()]) == 2 and network._tickers == []
    _flood(adapter, client, 100)                        # a new flood is said at once again
    assert len([r for r in caplog.records if "dropped" in r.getMessage()]) == 3


def test_the_loop_not_keeping_up_bounds_what_waits_for_it():
    """However fast the bucket, at most max_pending wait in the loop; each one handled makes room for one more."""
    from firmware.fleet.mqtt.inbound import InboundLimits

    clock = [1000.0]
    adapter, client, posted, heard = _flooded_adapter(InboundLimits(max_pending=32, rate_per_s=1e9, burst=10**9),
                                                      clock)
    _flood(adapter, client, 10_000)
    assert len(posted) == 32 and adapter.inbound_dropped == 10_000 - 32
    fn, args = posted[0]
    fn(*args)
    _flood(adapter, client, 5)
    assert len(heard) == 1 and len(posted) == 33 and adapter.inbound_dropped == 10_000 - 32 + 4


def test_a_recorder_away_is_queued_the_events_not_every_state(broker, tmp_path):  # noqa: F811
    """A persistent session queues what it subscribed to at QoS 1: the events, not 50 states (which would fill the
    broker's max_queued_messages and push events out); the last state comes back retained."""
    from tests.support.fleet_rig import RawClient

    recorder = Watcher(broker.url, client_id="recorder", session_expiry_s=600)
    wait_for(lambda: recorder.client.subscribed, what="recorder subscribed")
    recorder.close()                                   # away: the broker keeps its session
    t01 = TableTopics(SITE, "t01")
    source = messages.Source(SITE, "t01", "abc-1")
    table = RawClient(broker.url, "t01")
    try:
        assert table.connect()[0]
        for hand in range(50):
            table.publish(t01.leaf(Leaf.STATE),
                          messages.retained(source, "state", {"hand": hand}, time.time()), retain=True)
        for seq in (1, 2, 3):
            table.publish(t01.event("hand"), messages.event(source, "hand", seq, "abc", 1, "{}", time.time()))
        back = Watcher(broker.url, client_id="recorder", session_expiry_s=600)
        try:
            wait_for(lambda: back.lt.call(lambda: back.consumer.unique) == 3, what="the 3 queued events")
            wait_for(lambda: (v := back.view("t01")) and v.state == {"hand": 49}, what="the last state")
            states = back.lt.call(lambda: [c for c in back.changes if c.what == "state"])
            assert len(states) == 1
        finally:
            back.close()
    finally:
        table.close()
