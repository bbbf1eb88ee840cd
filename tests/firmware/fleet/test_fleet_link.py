"""The fleet link on virtual time against a scripted adapter: connect, birth, rate limits, drain, refusals, the Will
(its commands: test_fleet_link_commands.py)."""

from __future__ import annotations

import json


from firmware.ports.broker import InboundMessage
from firmware.fleet.link import FleetLink
from firmware.fleet.link_settings import LinkState
from sim.virtual_loop import VirtualLoop
from tests.support.link_rig import T, ScriptedAdapter, connected


def test_the_first_connect_is_spread_and_the_same_for_the_same_table(rig):
    loop, adapter, box, table, link = rig
    link.start()
    assert link.state is LinkState.WAITING and adapter.connects == []
    loop.run_for(10.0)
    assert len(adapter.connects) == 1 and link.state is LinkState.CONNECTING
    session, will = adapter.connects[0]
    assert will.topic == T.avail and will.retain and json.loads(will.payload)["data"] == {
        "online": False, "boot": 1, "session": 1}
    other = VirtualLoop()
    a = FleetLink(other, ScriptedAdapter(), box, dict, None, site="hall1", table="t07", meta={}, wall_clock_s=float)
    b = FleetLink(other, ScriptedAdapter(), box, dict, None, site="hall1", table="t07", meta={}, wall_clock_s=float)
    c = FleetLink(other, ScriptedAdapter(), box, dict, None, site="hall1", table="t08", meta={}, wall_clock_s=float)
    assert a.backoff.first_delay_s(10) == b.backoff.first_delay_s(10) != c.backoff.first_delay_s(10)


def test_birth_publishes_every_retained_leaf_then_subscribes(rig):
    loop, adapter, box, table, link = connected(rig)
    assert [p["topic"].rsplit("/", 1)[1] for p in adapter.published] == ["avail", "meta", "faults", "state",
                                                                          "counters"]
    assert all(p["retain"] and p["qos"] == 1 for p in adapter.published)
    birth = adapter.published[0]["body"]["data"]
    assert {k: birth[k] for k in ("online", "boot", "session", "seq", "oldest")} == {
        "online": True, "boot": 1, "session": 1, "seq": 0, "oldest": 0}
    assert birth["db_id"] and len(birth["db_id"]) == 12
    assert adapter.on("state")[0]["body"]["data"] == {"state": "idle", "hand": 0, "dealer": 0, "chips": [0, 0, 0, 0]}
    assert adapter.on("faults")[0]["body"]["data"] == []
    counters = adapter.on("counters")[0]["body"]["data"]
    assert counters["table"] == {"cycles": 0} and counters["link"]["outbox_depth"] == 0
    assert adapter.subscribed == [T.commands_filter, T.avail]
    assert link.state is LinkState.CONNECTED and link.status()["session"] == 1
    assert link.status_line() == "fleet connected, outbox 0"


def test_state_is_rate_limited_faults_are_not_and_the_last_change_goes_out(rig):
    loop, adapter, box, table, link = connected(rig)
    for hand in range(1, 6):
        table.status = dict(table.status, hand=hand, state="playing")
        link.notify()
        loop.run_for(0.1)
    assert [p["body"]["data"]["hand"] for p in adapter.on("state")] == [0]      # (the birth's, 0.5 s ago)
    loop.run_for(0.51)
    assert [p["body"]["data"]["hand"] for p in adapter.on("state")] == [0, 5]
    table.status = dict(table.status, hand=6)
    loop.run_for(1.0)
    link.notify()                                      # a second after the last: at once
    assert [p["body"]["data"]["hand"] for p in adapter.on("state")] == [0, 5, 6]
    table.status = dict(table.status, faults=[{"code": "E41", "hint": "refill side 0"}])
    link.notify()
    assert adapter.on("faults")[-1]["body"]["data"] == [{"code": "E41", "hint": "refill side 0"}]
    link.notify()                                      # nothing changed: nothing published
    assert len(adapter.on("faults")) == 2 and len(adapter.on("state")) == 3
    loop.run_for(30.0)
    assert len(adapter.on("counters")) == 2


def test_a_clean_stop_publishes_the_state_its_rate_limit_held_back_before_it_disconnects(rig):
    loop, adapter, box, table, link = connected(rig)
    order = []
    adapter.disconnect = lambda send_will=False: order.append(("disconnect", send_will))
    adapter_publish = adapter.publish
    adapter.publish = lambda topic, *rest: order.append(topic.rsplit("/", 1)[1]) or adapter_publish(topic, *rest)
    table.status = dict(table.status, hand=4, chips=[9, -3, -3, -3], state="idle")
    link.notify()                                      # within the state's rate limit: held back
    assert [p["body"]["data"]["hand"] for p in adapter.on("state")] == [0]
    link.stop()
    assert [p["body"]["data"]["chips"] for p in adapter.on("state")] == [[0, 0, 0, 0], [9, -3, -3, -3]]
    assert order[-3:] == ["state", "counters", ("disconnect", True)] and link.state is LinkState.STOPPED
    loop.run_for(5.0)
    assert len(adapter.on("state")) == 2               # (its timer went with the link)
    stopped = len(adapter.published)
    link.stop()                                        # not connected: nothing more to say
    assert len(adapter.published) == stopped


def test_the_outbox_drains_in_order_with_a_bounded_window_and_rows_marked_on_puback(rig):
    loop, adapter, box, table, link = rig
    for hand in range(1, 11):
        box.add("hand", {"hand": hand})
    connected(rig)
    events = adapter.events()
    assert [e["body"]["seq"] for e in events] == [1, 2, 3, 4] and link.state is LinkState.DRAINING
    adapter.ack(events[0]["token"], events[1]["token"])
    assert [e["body"]["seq"] for e in adapter.events()] == [1, 2, 3, 4, 5, 6]
    assert box.depth() == 10                            # marks are gathered ...
    loop.run_for(0.3)
    assert box.depth() == 8                             # ... into one write
    for _ in range(10):
        pending = [e["token"] for e in adapter.events()]
        adapter.ack(*pending[-4:])
    loop.run_for(0.3)
    assert box.depth() == 0 and link.state is LinkState.CONNECTED
    box.add("fault", {"code": "E41"})
    link.outbox_changed()
    assert adapter.events()[-1]["topic"] == T.event("fault") and adapter.events()[-1]["body"]["seq"] == 11


def test_unacknowledged_events_are_published_again_after_a_reconnect(rig):
    loop, adapter, box, table, link = rig
    for hand in range(1, 4):
        box.add("hand", {"hand": hand})
    connected(rig)
    first = adapter.events()
    adapter.ack(first[0]["token"])
    adapter.listener.on_connection_lost(1, "Unspecified error")
    assert link.state is LinkState.BACKING_OFF and link.status()["last_error"] == "connection lost: Unspecified error"
    late = adapter.session
    adapter.ack(first[1]["token"])                      # a report of the old connection: ignored
    loop.run_for(2.0)
    assert adapter.session == late + 1
    adapter.accept()
    again = [e["body"]["seq"] for e in adapter.events()[len(first):]]
    assert again == [2, 3]                              # seq 1 was acknowledged; 2 and 3 again, same msg_id
    assert adapter.events()[-1]["body"]["msg_id"] == first[-1]["body"]["msg_id"]
    assert adapter.on("avail")[-1]["body"]["data"]["session"] == 2


def test_an_event_the_broker_refuses_stays_in_the_outbox(rig, caplog):
    loop, adapter, box, table, link = rig
    box.add("hand", {"hand": 1})
    connected(rig)
    adapter.ack(adapter.events()[0]["token"], ok=False)
    loop.run_for(1.0)
    assert box.depth() == 1 and link.status()["refused_by_broker"] == 1
    assert "refused event 1: Not authorized" in caplog.text


def test_a_refusal_is_said_once_with_what_to_do_not_at_every_retry(rig, caplog):
    loop, adapter, box, table, link = rig
    link.start()
    loop.run_for(10.0)
    for reason in ("Connection refused", "Connection refused", "Not authorized", "Not authorized", "Not authorized"):
        adapter.listener.on_connected(adapter.session, False, reason)
        before = len(adapter.connects)
        while len(adapter.connects) == before:
            loop.step()
    said = [(r.levelname, r.getMessage()) for r in caplog.records if r.levelno >= 30]
    assert [level for level, _ in said] == ["WARNING", "ERROR"] and "Connection refused" in said[0][1]
    assert "connect refused: Not authorized; trying again every 60 s at most (the broker does not take this table: " \
           "a table is known by its certificate, CN = its table_id t07, on the tables' TLS listener" in said[1][1]
    assert link.status()["refusal"] == "connect refused: Not authorized" and link.status()["reconnects"] == 5
    adapter.accept()
    assert link.status()["refusal"] == "" and link.status()["last_error"] == ""
    box.add("hand", {"hand": 1})
    box.add("hand", {"hand": 2})
    link.outbox_changed()
    adapter.ack(*[e["token"] for e in adapter.events()], ok=False)       # e.g. table_id is not the CN
    refused = [r.getMessage() for r in caplog.records if "refused event" in r.getMessage() and r.levelno >= 30]
    assert len(refused) == 1 and "is t07 the certificate's CN and hall1 the broker's site?" in refused[0]
    assert link.status()["refused_by_broker"] == 2
    assert link.status()["refusal"] == "the broker refused a message: Not authorized"


def test_backoff_grows_until_a_connection_proves_stable(rig):
    loop, adapter, box, table, link = rig
    link.start()
    loop.run_for(10.0)
    gaps, last = [], loop.now()
    for _ in range(6):
        adapter.listener.on_connected(adapter.session, False, "Connection refused")
        before = len(adapter.connects)
        while len(adapter.connects) == before:
            loop.step()
        gaps.append(loop.now() - last)
        last = loop.now()
    assert all(g2 > g1 * 0.9 for g1, g2 in zip(gaps[1:], gaps[2:])) and gaps[-1] > 8
    adapter.accept()
    loop.run_for(31.0)                                   # stable: the next failure starts small again
    adapter.listener.on_connection_lost(adapter.session, "gone")
    start = loop.now()
    while len(adapter.connects) == 7:
        loop.step()
    assert loop.now() - start <= 1.0


def test_a_broker_that_never_answers_times_out_and_is_tried_again(rig):
    loop, adapter, box, table, link = rig
    link.start()
    loop.run_for(10.0 + 15.0 + 0.01)
    assert adapter.disconnects == [False] and link.state is LinkState.BACKING_OFF
    assert "no answer" in link.status()["last_error"]
    loop.run_for(2.0)
    assert len(adapter.connects) == 2
    adapter.listener.on_connected(1, True, "Success")    # the first one answering late: ignored
    assert link.state is LinkState.CONNECTING


def test_nothing_the_link_calls_can_raise_into_the_loop(rig, caplog):
    loop, adapter, box, table, link = connected(rig)
    link.status_source = lambda: 1 / 0
    link.notify()
    assert "status() failed" in caplog.text and link.errors >= 1
    box.db.close()                                       # the card fails
    link.outbox_changed()
    loop.run_for(10.0)
    assert "reading the outbox failed" in caplog.text and link.status()["outbox_depth"] == -1


def test_a_late_will_of_another_session_is_answered_with_online(rig):
    loop, adapter, box, table, link = connected(rig)
    stale = {"v": 1, "kind": "avail", "boot_id": link.source.boot_id, "data": {"online": False, "boot": 1,
                                                                               "session": 0}}
    adapter.listener.on_message(1, InboundMessage(T.avail, json.dumps(stale).encode(), retain=True))
    assert {k: adapter.on("avail")[-1]["body"]["data"][k] for k in ("online", "boot", "session")} == {
        "online": True, "boot": 1, "session": 1}
    own = dict(stale, data={"online": True, "boot": 1, "session": 1})
    count = len(adapter.on("avail"))
    adapter.listener.on_message(1, InboundMessage(T.avail, json.dumps(own).encode(), retain=True))
    assert len(adapter.on("avail")) == count and link.status()["reasserted"] == 1


def test_stop_asks_the_broker_for_the_will(rig):
    loop, adapter, box, table, link = connected(rig)
    link.stop()
    assert adapter.disconnects == [True] and link.state is LinkState.STOPPED
    loop.run_for(120.0)
    assert len(adapter.connects) == 1


def test_diag_counters_answers_the_fleet_links_counters():
    """``mjtable diag counters`` on a table with a [fleet] section: the link's counters with the log lines dropped."""
    from firmware.diagnostics.commands import DiagCommands
    from firmware.diagnostics.render import render
    from sim.table_run import SimRun

    run = SimRun(hands=0)
    run.loop.run_for(2.0)
    answers: list = []
    DiagCommands(run.session, fleet=lambda: {"state": "connected", "log_lines_dropped": 190}).handle(
        {"cmd": "counters"}, answers.append)
    assert answers[0]["ok"] and answers[0]["fleet"]["log_lines_dropped"] == 190
    assert "fleet:\n  state: connected\n  log_lines_dropped: 190" in render(answers[0])
    DiagCommands(run.session).handle({"cmd": "counters"}, answers.append)
    assert "fleet" not in answers[1]
    run.close()


def test_a_birth_says_where_the_tables_events_resume_and_the_will_does_not(rig):
    """The birth (online avail) carries the last event seq written and the oldest kept for resend_since, so the
    hall knows at once what it misses; the Will (offline) names only the connection it ends."""
    loop, adapter, box, table, link = connected(rig)
    for hand in range(1, 4):
        box.add("hand", {"hand": hand})
    link.rebirth()
    births = [p["body"]["data"] for p in adapter.on("avail") if p["body"]["data"]["online"]]
    assert births[-1]["seq"] == 3 and births[-1]["oldest"] >= 0
    _, will = adapter.connects[-1]
    assert set(json.loads(will.payload)["data"]) == {"online", "boot", "session"}


def test_warnings_are_a_retained_leaf_of_their_own_sent_when_they_change(rig):
    loop, adapter, box, table, link = connected(rig)
    warning = {"chart": "pairs:E", "seat": "E", "hand": 41, "statistic": 16.2}
    table.status = dict(table.status, warnings={"fairness": [warning], "maintenance": []})
    link.notify()
    assert adapter.on("warnings")[-1]["body"]["data"] == {"fairness": [warning], "maintenance": []}
    link.notify()                                      # nothing changed: nothing published
    loop.run_for(1.0)
    assert len(adapter.on("warnings")) == 1
    assert all("warnings" not in p["body"]["data"] for p in adapter.on("state"))
