"""The real controller's fleet link on a real Mosquitto: the table unchanged by a dead or frozen broker, every hand
exactly once across power cuts, ``mjtable sim --fleet``."""

from __future__ import annotations

import json
import signal
import sqlite3
import sys
from pathlib import Path

import pytest

from firmware.cli.main import main
from firmware.config import FleetSection, default_table_path, load_table_config
from firmware.fleet.link_settings import LinkSettings
from sim.fleet_run import FleetSim
from sim.table_run import SimRun
from tests.support.fleet_rig import Watcher, wait_for
from tests.support.mosquitto_broker import broker, free_port  # noqa: F401 (the fixture)

SITE = "hall1"
FAST = LinkSettings(state_min_interval_s=0.2, counters_period_s=5.0, first_connect_spread_s=0.0, backoff_min_s=0.1,
                    backoff_max_s=0.5, connect_timeout_s=0.5, mark_delay_s=0.05, poll_s=0.5)
SEED, HANDS = 5, 2


def behaviour(run: SimRun, db: Path) -> tuple:
    """What the table did: every event on its bus (topic, simulated time, data), its end, and every row of its
    database (the outbox's too) but the boot counter and the random id of ``fleet_meta``."""
    seen = [(e.topic, round(e.at_s, 6), repr(e.data)) for e in run.record.events]
    end = (run.loop.now(), run.controller.state, list(run.session.scoreboard.chips))
    rows = {}
    with sqlite3.connect(db) as con:
        for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
            if name != "fleet_meta":
                rows[name] = sorted(map(repr, con.execute(f"SELECT * FROM {name}")))
        rows["fleet_meta"] = con.execute("SELECT last_seq, dropped FROM fleet_meta").fetchall()
    return seen, end, rows


def played_with(broker_url: str, folder: Path) -> tuple:
    folder.mkdir()
    fleet = FleetSim(1, broker_url, SITE, hands=HANDS, seed=SEED, settings=FAST, folder=folder)
    try:
        assert fleet.run(timeout_s=120)
        run = fleet.runs[0]
        link = run.link.status()
        assert link["state"] in ("backing_off", "connecting") and link["published"] == 0
        written = run.store.event_outbox().meta().last_seq       # hands, the game, each set's sealed walls
        assert written >= HANDS + 1
        assert link["outbox_depth"] == written                      # every event waits in the table's database
        return behaviour(run, folder / "t001.db")
    finally:
        fleet.close()


def test_the_table_plays_stacks_and_writes_the_same_with_the_broker_dead_or_frozen(broker, tmp_path):  # noqa: F811
    cfg = load_table_config(default_table_path()).model_copy(update={"fleet": FleetSection(
        broker_url="mqtt://127.0.0.1:1", site=SITE, table_id="t001")})
    alone = SimRun(cfg, rules="mcr", seed=SEED, hands=HANDS, play=True, state_path=tmp_path / "alone.db")
    try:
        assert alone.run(HANDS * 900.0)
        without = behaviour(alone, tmp_path / "alone.db")
    finally:
        alone.close()
    assert len(without[0]) > 500 and without[2]["outbox"]          # (a real run: stacking, deals, results)

    dead = played_with(f"mqtt://127.0.0.1:{free_port()}", tmp_path / "dead")
    broker.proc.send_signal(signal.SIGSTOP)                        # it takes the TCP connection, then says nothing
    try:
        frozen = played_with(broker.url, tmp_path / "frozen")
    finally:
        broker.proc.send_signal(signal.SIGCONT)
    for other in (dead, frozen):
        assert other[1] == without[1]                               # the same end, at the same simulated instant
        assert other[0] == without[0]                               # the same states and events, in order
        assert other[2] == without[2]                               # the same rows


def test_power_cuts_mid_stream_deliver_every_hand_exactly_once(broker, tmp_path):  # noqa: F811
    recorder = Watcher(broker.url, client_id="recorder", session_expiry_s=600)
    hands = 5

    def cut_twice(run: SimRun) -> None:
        for deal in (3, 5):                                        # right after a result: its event not yet acked
            run.world.on_event("hand", deal, lambda r=run: r.loop.call_later(0.0, r.power_cut, 2.0))

    try:
        wait_for(lambda: recorder.client.subscribed, what="the recorder subscribed")
        fleet = FleetSim(1, broker.url, SITE, hands=hands, seed=SEED, settings=FAST, folder=tmp_path,
                         on_run=cut_twice)
        try:
            assert fleet.run(timeout_s=120) and fleet.drain(20)
            run = fleet.runs[0]
            assert run.boots == 3
            written = run.store.event_outbox().meta().last_seq
            published = sum(link.status()["published"] for link in run.links)
        finally:
            fleet.close()
        wait_for(lambda: recorder.lt.call(lambda: recorder.consumer.unique) >= written, what="every event")
        got = recorder.lt.call(lambda: [(e["kind"], e["data"].get("hand")) for e in recorder.consumer.events])
        stats = recorder.lt.call(recorder.consumer.stats)
        assert sorted(h for k, h in got if k == "hand") == list(range(1, hands + 1))
        assert stats["events"] == written and stats["missing"] == 0
        print(f"power cuts: {written} events written, {published} published, {stats['duplicates']} duplicates "
              f"dropped by the consumer")
    finally:
        recorder.close()


def test_sim_fleet_publishes_every_table_and_prints_the_summary(broker, capsys):  # noqa: F811
    recorder = Watcher(broker.url, client_id="recorder")
    try:
        wait_for(lambda: recorder.client.subscribed, what="the recorder subscribed")
        assert main(["sim", "--fleet", "2", "--broker", broker.url, "--site", SITE, "--hands", "1", "--quiet",
                     "--seed", "4"]) == 0
        out = capsys.readouterr().out
        assert "t001" in out and "t002" in out
        assert "fleet: 2 tables, 2 hands (1-1 per table)" in out and "outbox depth 0" in out
        wait_for(lambda: recorder.lt.call(lambda: recorder.consumer.by_kind.get("hand", 0)) == 2, what="2 hands")
        assert recorder.lt.call(lambda: sorted(recorder.consumer.tables)) == ["t001", "t002"]
        wait_for(lambda: all(recorder.view(t).outbox_depth() == 0 for t in ("t001", "t002")),
                 what="the consoles' outbox column drained")          # (the counters leaf again once drained)
    finally:
        recorder.close()


def test_the_last_state_reaches_the_broker_before_the_tables_stop(broker):  # noqa: F811
    """At full speed the hands end within one ``state_min_interval_s``: the rate-limited ``state`` leaf still
    says the last hand's chips once the tables have stopped (as do ``counters`` their drained outboxes)."""
    recorder = Watcher(broker.url, client_id="recorder")
    try:
        wait_for(lambda: recorder.client.subscribed, what="the recorder subscribed")
        assert main(["sim", "--fleet", "3", "--broker", broker.url, "--site", SITE, "--hands", "4", "--rules",
                     "jinzhou", "--seed", "5", "--quiet"]) == 0
        wait_for(lambda: recorder.lt.call(lambda: recorder.consumer.by_kind.get("hand", 0)) == 12, what="12 hands")
        last = recorder.lt.call(lambda: {e["table"]: e["data"] for e in recorder.consumer.events
                                         if e["kind"] == "hand"})
    finally:
        recorder.close()
    late = Watcher(broker.url, client_id="late")                     # what the broker holds now
    try:
        wait_for(lambda: all(late.view(t) is not None and late.view(t).online is False and late.view(t).counters
                             for t in last), what="every table's retained leaves")
        for table, hand in last.items():
            view = late.view(table)
            assert view.state["chips"] == hand["chips"] and view.state["hand"] >= hand["hand"] == 4, table
            assert view.outbox_depth() == 0
    finally:
        late.close()


@pytest.mark.parametrize("argv, words", [
    (["--fleet", "2"], "--fleet needs --broker"),
    (["--broker", "mqtt://127.0.0.1:1883"], "--broker goes with --fleet"),
    (["--fleet", "2", "--broker", "mqtts://127.0.0.1:8883"], "--broker mqtts://127.0.0.1:8883: the simulated tables "
                                                              "need --ca FILE (the parlour's ca.crt) and --certs DIR"),
    (["--fleet", "2", "--broker", "mqtt://x", "--certs", "d"], "--certs goes with an mqtts:// --broker"),
    (["--fleet", "2", "--broker", "mqtt://x", "--ca", "ca.crt"], "--ca goes with an mqtts:// --broker"),
    (["--ca", "ca.crt"], "--ca goes with --fleet N"),
    (["--fleet", "2", "--broker", "mqtts://x", "--ca", "nowhere.crt", "--certs", "d"], "--ca: nowhere.crt: cannot be "
                                                                                       "read (No such file"),
    (["--fleet", "2", "--broker", "http://x"], "--broker: 'http://x'"),
    (["--fleet", "2", "--broker", "mqtt://x", "--site", "a/b"], "--site 'a/b'"),
    (["--fleet", "2", "--broker", "mqtt://x", "--one-cycle"], "--one-cycle does not go with --fleet"),
    (["--fleet", "2", "--broker", "mqtt://x", "--web", "8080", "--speed", "20"], "--web does not go with --fleet"),
    (["--fleet", "2", "--broker", "mqtt://x", "--web-users", "u.toml"], "--web-users does not go with --fleet"),
    (["--fleet", "0", "--broker", "mqtt://x"], "argument --fleet"),
    (["--fleet", "2", "--broker", "mqtt://x", "--web", "8080", "--speed", "20"], "mjtable fleet watch --broker URL"),
    (["--fleet", "2", "--broker", "mqtt://x", "--state", "t.db"], "--state does not go with --fleet: each simulated "
                                                                  "table has a database of its own"),
    (["--fleet", "2", "--broker", "mqtt://x", "--state", "t.db"], "mjtable sim --seed S --state FILE (table tNNN "
                                                                  "plays seed --seed + NNN - 1)"),
    (["--fleet", "2", "--broker", "mqtt://x", "--inject", "t003:jam:stacker1"],
     "--inject 't003:jam:stacker1': no table t003 in a fleet of 2 (t001..t002)"),
    (["--fleet", "2", "--broker", "mqtt://x", "--inject", "t001:jam:stacker9"], "--inject: "),
    (["--fleet", "2", "--broker", "mqtt://x", "--inject", "jam:stacker1@hand5", "--hands", "2"], "has no hand 5"),
    (["--fleet", "2", "--broker", "mqtt://x", "--report", "/nonexistent/r.json"], "--report /nonexistent/r.json: the "
                                                                                  "folder /nonexistent does not exist"),
])
def test_sim_fleet_arguments_are_checked_first(argv, words, capsys):
    try:
        code = main(["sim", *argv])
    except SystemExit as exc:                    # (argparse's own errors)
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


def test_sim_fleet_injects_faults_into_every_table_or_one_and_reports_them(broker, tmp_path, capsys):  # noqa: F811
    """``--fleet`` refused ``--inject`` and ``--report``, so a parlour with faults could not be studied.  A SPEC goes
    into every table, ``tNNN:SPEC`` into one; the console names the table of each fault line; the report has every
    table's report of one run with what was injected, and the totals."""
    report = tmp_path / "fleet.json"
    assert main(["sim", "--fleet", "3", "--broker", broker.url, "--site", SITE, "--hands", "2", "--seed", "4",
                 "--inject", "jam:stacker1@stacking2", "--inject", "t002:lid-open@hand1=5s", "--report", str(report),
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "faults" in out.splitlines()[0] and "; 4 faults" in out
    doc = json.loads(report.read_text())
    assert sorted(doc["tables"]) == ["t001", "t002", "t003"] and doc["fleet"] == 3 and doc["broker"] == broker.url
    codes = {t: [f["code"] for f in one["faults"]] for t, one in doc["tables"].items()}
    assert codes == {"t001": ["E32"], "t002": ["E32", "E04"], "t003": ["E32"]}, codes
    assert doc["tables"]["t002"]["injected"] == ["jam:stacker1@stacking2", "lid-open@hand1=5s"]
    assert doc["tables"]["t001"]["injected"] == ["jam:stacker1@stacking2"]
    assert all(f["acknowledged_at_s"] is not None for f in doc["tables"]["t001"]["faults"])   # (the technician's)
    assert doc["totals"]["faults_by_code"] == {"E04": 1, "E32": 3} and doc["totals"]["hands_played"] == 6
    assert doc["totals"]["chips_conserved"] and doc["totals"]["tables_latched"] == []
    one = doc["tables"]["t003"]
    assert one["seed"] == 6 and one["hands_played"] == 2 and one["link"]["acked"] == one["link"]["events"] > 0


def test_a_fleet_table_left_latched_fails_the_run_and_is_named(broker, caplog, capsys):  # noqa: F811
    """Nobody acknowledges (``--auto-ack-s none``): that table is given up at one table's run's limit (not run
    forever), the run fails (exit 1) naming it, and the console's fault line says whose it is."""
    import logging

    caplog.set_level(logging.ERROR)
    handler = logging.StreamHandler(sys.stderr)           # (main's console, as on a terminal: tests own the root's)
    logging.getLogger().addHandler(handler)
    try:
        code = main(["sim", "--fleet", "2", "--broker", broker.url, "--site", SITE, "--hands", "1", "--seed", "4",
                     "--inject", "t001:jam:stacker1@stacking1", "--auto-ack-s", "none", "--quiet"])
    finally:
        logging.getLogger().removeHandler(handler)
    captured = capsys.readouterr()
    assert code == 1
    assert "t001: ERROR firmware.faults: E32 stacking head side 1" in captured.err
    assert "mjtable sim: table t001: ended latched" in captured.err
    assert "t001       0" in captured.out and "(latched)" in captured.out and "t002       1" in captured.out
