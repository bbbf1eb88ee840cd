"""A tournament round at the table: the hall's signed, retained assignment, played, ended by hands or time.

The signature and the data are checked without a broker; a simulated table
plays the round from a real Mosquitto, its events carrying the assignment
and the nets, a redelivery after a reconnect replaying nothing; a power cut
in the round resumes its game; the time limit ends it with the hand in play
finished.  No test sleeps: waiting is the fleet's own real-time clock
against a deadline.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from firmware.config import FleetSection, default_table_path, load_table_config
from firmware.fleet.assignment_auth import AssignmentRefused, AssignmentVerifier, sign_assignment
from firmware.fleet.broker_config import acl_text
from firmware.fleet.command_auth import hmac_key
from firmware.fleet.link_settings import LinkSettings
from firmware.fleet.topics import TableTopics, parse
from firmware.game.assignment import AssignmentError, parse_assignment
from firmware.game.rounds import WARN_BEFORE_S
from sim.fleet_run import FleetSim
from sim.table_run import SimRun
from tests.support.fleet_rig import RawClient
from tests.support.mosquitto_broker import broker  # noqa: F401 (the fixture)

SITE = "hall1"
SECRET = bytes(range(32))
KEY = hmac_key(SECRET)
NOW = 1_750_000_000.0
FAST = LinkSettings(state_min_interval_s=0.2, counters_period_s=5.0, first_connect_spread_s=0.0, backoff_min_s=0.1,
                    backoff_max_s=0.5, connect_timeout_s=2.0, mark_delay_s=0.05, poll_s=0.5)


def data(table: str = "t001", hands: int = 2, ends_at: float | None = None, **change) -> dict:
    out = {"id": f"spring-open/2/{table}", "event": "spring-open", "round": 2, "rules": "mcr", "hands": hands,
           "seats": {"E": "Alice", "S": "Bob", "W": "Chen", "N": "Dong"}, "ends_at": ends_at}
    out.update(change)
    return out


def signed(assignment: dict, table: str = "t001", issued_at: float = NOW, ttl_s: float = 3600.0, key=KEY) -> bytes:
    return sign_assignment(key, site=SITE, table=table, assignment=assignment, issued_at=issued_at,
                           expires_at=issued_at + ttl_s)


def verifier(now: float = NOW) -> AssignmentVerifier:
    return AssignmentVerifier(SITE, "t001", [KEY.verify_key()], lambda: now)


# -- the signature and the data --------------------------------------------------------------------------------
def test_a_signed_assignment_verifies_and_its_data_is_kept():
    a = verifier().verify(signed(data(ends_at=1799999999.0)))
    assert a.tag() == {"id": "spring-open/2/t001", "event": "spring-open", "round": 2, "table": "t001"}
    assert a.players() == {"E": "Alice", "S": "Bob", "W": "Chen", "N": "Dong"} and a.hands == 2
    assert a.ends_at == 1799999999.0


@pytest.mark.parametrize("payload, why", [
    (b"", "not an assignment"),
    (json.dumps({"v": 1, "kind": "assignment", "site": SITE, "table": "t001", "assignment": data(),
                 "issued_at": NOW, "expires_at": NOW + 60}).encode(), "field 'alg' missing"),
    (signed(data(), key=hmac_key(b"another secret, 32 bytes long!!")), "unknown key"),
    (signed(data(), issued_at=NOW - 7200), "expired"),
    (signed(data(), issued_at=NOW + 3600), "in the future"),
    (signed(data(), ttl_s=30 * 24 * 3600.0), "lives"),
    (signed(data(round="2")), "field 'round'"),
    (signed(data(hands=0)), "field 'hands'"),
    (signed(data(hands=True)), "field 'hands'"),
    (signed(data(rules="riichi")), "unknown rule set"),
    (signed(data(seats={"E": "Alice", "S": "Bob", "W": "Chen"})), "seats.N"),
    (signed(data(seats={"E": "A" * 41, "S": "Bob", "W": "Chen", "N": "Dong"})), "seats.E"),
    (signed(data(seats={"E": "Al\x07ice", "S": "Bob", "W": "Chen", "N": "Dong"})), "printable"),
    (signed(data(ends_at="soon")), "ends_at"),
    (signed(data(id="spring-open/3/t001")), "is not <event>/<round>/<table>"),
    (signed(data(table="t002")), "for table 't002'"),
    (signed(data(), table="t002"), "addressed to table 't002'"),
    (signed({**data(), "extra": 1}), "extra"),
])
def test_a_forged_unsigned_expired_or_bad_typed_assignment_is_refused_with_a_reason(payload, why):
    with pytest.raises(AssignmentRefused, match=why.replace("(", r"\(")):
        verifier().verify(payload)


def test_a_tampered_assignment_does_not_verify():
    body = json.loads(signed(data()))
    body["assignment"]["seats"]["E"] = "Mallory"
    with pytest.raises(AssignmentRefused, match="bad signature"):
        verifier().verify(json.dumps(body).encode())


def test_an_expired_redelivery_of_an_assignment_the_table_has_is_no_refusal():
    old = signed(data(), issued_at=NOW - 7200)
    assert verifier().verify(old, lambda ident: ident == "spring-open/2/t001").id == "spring-open/2/t001"


def test_the_data_alone_is_checked_strictly():
    with pytest.raises(AssignmentError, match="not a JSON object"):
        parse_assignment([1])
    assert parse_assignment(data(ends_at=17e8)).ends_at == 17e8


def test_the_topic_and_the_brokers_acl():
    topics = TableTopics(SITE, "t07")
    assert topics.assign == "mj/v1/hall1/tbl/t07/assign"
    assert parse(topics.assign).section == "assign"
    acl = acl_text(SITE)
    assert "pattern read mj/v1/hall1/tbl/%u/assign" in acl
    assert "pattern write mj/v1/hall1/tbl/%u/#" not in acl            # (a table never writes its assignment)
    technician = acl.split("user staff.technician")[1].split("user ")[0]
    assert "topic write mj/v1/hall1/tbl/+/assign" in technician
    tourney = acl.split("user service.tourney")[1]
    assert "topic write mj/v1/hall1/tbl/+/assign" in tourney
    recorder = acl.split("user service.recorder")[1].split("user ")[0]
    assert "/assign" not in recorder


# -- the table plays it (no broker: the assignment handed to the table as the link hands it) ---------------------
def fleet_cfg():
    return load_table_config(default_table_path()).model_copy(update={"fleet": FleetSection(
        broker_url="mqtt://127.0.0.1:1", site=SITE, table_id="t001")})


def outbox(db: Path, kind: str) -> list[dict]:
    with sqlite3.connect(db) as con:
        return [json.loads(p) for p, in con.execute("SELECT payload FROM outbox WHERE kind = ? ORDER BY seq",
                                                    (kind,))]


def games(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT id, first_hand, ended_hand, end_reason FROM games ORDER BY id").fetchall()


def hands_of(db: Path, game: int) -> list[int]:
    with sqlite3.connect(db) as con:
        return [h for h, in con.execute("SELECT hand FROM hand_results WHERE game = ? ORDER BY hand", (game,))]


def waiting_table(db: Path, **kw) -> SimRun:
    return SimRun(fleet_cfg(), rules="mcr", seed=4, hands=0, play=True, state_path=db, await_assignments=True,
                  wall_epoch_s=NOW, **kw)


def test_a_power_cut_mid_round_resumes_the_same_rounds_game_each_hand_once(tmp_path):
    db = tmp_path / "t001.db"
    run = waiting_table(db)
    try:
        assert run.session.rounds.offer(parse_assignment(data(hands=3))) == "pending"
        run.run_until(lambda: run.game.hands_recorded >= 1, 3000)
        run.power_cut(5.0)                                   # the firmware dies in the round's second hand
        run.run_until(lambda: run.session is not None, 60)
        rounds = run.session.rounds
        assert rounds.current is not None and rounds.current.id == "spring-open/2/t001"   # read back
        assert rounds.offer(parse_assignment(data(hands=3))) == "unchanged"
        run.run_until(lambda: run.session is not None and run.session.rounds.status()["state"] == "ended", 5000)
        run.run_until(lambda: run.state is not None and run.state.value == "ready", 2000)
    finally:
        run.close()
    assigned = [g for g in games(db) if g[3] == "hands_done"]
    assert len(assigned) == 1                                # started once
    game, first, last, _ = assigned[0]
    assert hands_of(db, game) == [first, first + 1, first + 2]     # every hand once
    started = [e for e in outbox(db, "game") if e["event"] == "started" and "assignment" in e]
    assert len(started) == 1 and started[0]["players"]["E"] == "Alice"
    hands = [e for e in outbox(db, "hand") if e.get("assignment")]
    assert [h["hand"] for h in hands] == [first, first + 1, first + 2]


def test_time_up_finishes_the_hand_in_play_and_raises_no_new_wall(tmp_path):
    db = tmp_path / "t001.db"
    run = waiting_table(db)
    ends_at = NOW + 900.0                                    # (simulated: a hand takes some 300-400 s)
    try:
        run.session.rounds.offer(parse_assignment(data(hands=64, ends_at=ends_at)))
        run.run_until(lambda: run.session is not None and run.session.rounds.status()["state"] == "ended", 5000)
        ended_at = run.wall_clock_s()
        run.run_until(lambda: run.state is not None and run.state.value == "ready", 2000)
        run.loop.run_for(600.0)                              # nobody sits down again: no wall rises
        assert run.state.value == "ready"
        hand_after = run.controller.book.hand
    finally:
        run.close()
    (game, first, last, reason), = [g for g in games(db) if g[3] == "time_up"]
    assert hands_of(db, game)[-1] == last == hand_after     # the hand in play finished; none dealt after
    assert ended_at >= ends_at
    end = [e for e in outbox(db, "game") if e["event"] == "ended" and e.get("reason") == "time_up"][0]
    assert end["hands"] == len(hands_of(db, game)) and sum(end["nets"]) == 0
    warning = [e for e in outbox(db, "game") if e["event"] == "warning"]
    assert len(warning) == 1 and warning[0]["assignment"]["id"] == "spring-open/2/t001"
    assert warning[0]["seconds_left"] <= WARN_BEFORE_S


def test_a_rule_set_the_table_cannot_play_is_refused_saying_why(tmp_path):
    run = waiting_table(tmp_path / "t001.db")
    try:
        with pytest.raises(AssignmentError, match="plays 108 tiles; this table's set has 144"):
            run.session.rounds.offer(parse_assignment(data(rules="sichuan")))
        run.session.rounds.refused("bad signature")
        st = run.session.get_status(["round"])["round"]
        assert st["refused"] == "bad signature" and st["refusals"] == 1
        assert run.session.rounds.wants_play() is False
    finally:
        run.close()


# -- over a real broker ----------------------------------------------------------------------------------------
def test_a_signed_assignment_over_the_broker_is_played_and_a_redelivery_replays_nothing(broker, tmp_path):  # noqa: F811
    key_file = tmp_path / "cmd.key"
    key_file.write_text(f"hmac-sha256:{SECRET.hex()}\n")
    folder = tmp_path / "tables"
    folder.mkdir()
    fleet = FleetSim(1, broker.url, SITE, seed=6, settings=FAST, folder=folder, await_assignments=True,
                     command_key=key_file)
    hall = RawClient(broker.url, "hall")
    try:
        assert hall.connect() == (True, "Success")
        run = fleet.runs[0]
        topic = TableTopics(SITE, "t001").assign
        forged = sign_assignment(hmac_key(b"not the parlour's key, 32 bytes"), site=SITE, table="t001",
                                 assignment=data(), issued_at=time.time(), expires_at=time.time() + 600)
        assert hall.publish(topic, forged, retain=True)[0] is True
        step_until(fleet, lambda: run.session.rounds.status()["refused"] is not None, "the forged one refused")
        assert "unknown key" in run.session.rounds.status()["refused"]
        good = signed(data(hands=2), issued_at=time.time(), ttl_s=3600)
        assert hall.publish(topic, good, retain=True)[0] is True
        step_until(fleet, lambda: run.session.rounds.status()["state"] == "ended", "the round played")
        step_until(fleet, lambda: run.state.value == "ready" and fleet.outbox_depth() == 0, "the table waits")
        db = folder / "t001.db"
        before = (games(db), outbox(db, "hand"))
        run.power_cut(1.0)                                   # a reconnect: the retained assignment comes again
        step_until(fleet, lambda: run.link is not None and run.link.status()["state"] in ("connected", "draining")
                   and run.session.rounds.knows("spring-open/2/t001"), "the table back on the broker")
        for _ in range(200):
            fleet.step()
        assert (games(db), outbox(db, "hand")) == before     # nothing replayed
        assert run.state.value == "ready" and not run.wants_round()
    finally:
        hall.close()
        fleet.close()
    end = [e for e in outbox(db, "game") if e["event"] == "ended" and e.get("reason") == "hands_done"]
    assert len(end) == 1
    end = end[0]
    assert end["assignment"] == {"id": "spring-open/2/t001", "event": "spring-open", "round": 2, "table": "t001"}
    assert end["players"] == {"E": "Alice", "S": "Bob", "W": "Chen", "N": "Dong"}
    assert end["hands"] == 2 and len(end["nets"]) == 4 and sum(end["nets"]) == 0
    assert end["nets"] == [f - 500 for f in end["final"]]
    hands = [e for e in outbox(db, "hand") if e.get("assignment")]
    assert len(hands) == 2 and all(h["assignment"] == end["assignment"] and h["players"] == end["players"]
                                   for h in hands)


def step_until(fleet: FleetSim, condition, what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {timeout_s} s"
        fleet.step()
