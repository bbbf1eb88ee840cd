"""The hall's service without a broker: events as tables publish them become facts once, and only from their table."""

from __future__ import annotations

import json

import pytest

from firmware.fleet import messages
from firmware.fleet.topics import TableTopics
from parlour import desk
from parlour.core.event import EventFormat, FormatError
from parlour.service import HallService, standings_topic
from parlour.store.facts_store import TourneyStore

SITE = "hall1"
TABLES = ["t001", "t002"]


def service(tmp_path):
    store = TourneyStore(str(tmp_path / "t.db"))
    players = desk.read_players("name,team\n" + "".join(f"P{i},\n" for i in range(8)), False)
    event_id, _ = desk.create(store, EventFormat("cup", "mcr", 2, 2), players)
    EVENT_TAG["tag"] = store.state(event_id).tag
    sent: list[tuple] = []
    hall = HallService(store, event_id, SITE, TABLES, publish=lambda *m: sent.append(m), wall_s=lambda: 1000.0,
                       sign_assignment=lambda site, table, data, at, until: json.dumps(data).encode(),
                       sign_resend=lambda site, table, seq, at: json.dumps({"seq": seq}).encode())
    return store, event_id, hall, sent


def tell(hall: HallService, table: str, seq: int, kind: str, data: dict) -> None:
    source = messages.Source(SITE, table, "db1-1")
    payload = messages.event(source, kind, seq, "db1", 1, json.dumps(data), 1000.0)
    change = hall.consumer.feed(TableTopics(SITE, table).event(kind), payload, 1000.0)
    hall.on_change(change)


EVENT_TAG = {"tag": "cup"}


def tag(table: str, round_no: int = 1, event: str | None = None, players: dict | None = None) -> dict:
    event = event or EVENT_TAG["tag"]
    out = {"assignment": {"id": f"{event}/{round_no}/{table}", "event": event, "round": round_no, "table": table}}
    if players is not None:
        out["players"] = players
    return out


def test_a_round_is_assigned_and_its_games_become_results_once(tmp_path):
    store, event_id, hall, sent = service(tmp_path)
    ids = hall.open_round(1)
    event_tag = store.state(event_id).tag
    assert event_tag.startswith("cup-") and len(event_tag) == len("cup-") + 8
    assert ids == [f"{event_tag}/1/t001", f"{event_tag}/1/t002"]
    first = json.loads(sent[0][1])
    assert sent[0][0] == TableTopics(SITE, "t001").assign and sent[0][2] is True
    assert first["seats"] == desk.seat_json(store.state(event_id), 1)["tables"][0]["seats"]
    assert first["rules"] == "mcr" and first["hands"] == 2
    for seq in (1, 2):
        tell(hall, "t001", seq, "hand", {"hand": seq, **tag("t001")})
    tell(hall, "t001", 2, "hand", {"hand": 2, **tag("t001")})              # the broker's repeat
    seats = desk.seat_json(store.state(event_id), 1)["tables"][0]["seats"]
    ended = {"event": "ended", "reason": "hands_done", "hands": 2, "nets": [30, -10, -10, -10],
             **tag("t001", players=seats)}
    tell(hall, "t001", 3, "game", ended)
    tell(hall, "t001", 4, "game", ended)                                   # a resent end under a new seq
    state = store.state(event_id)
    assert state.tables[(1, "T1")].score == {s: v for s, v in zip(state.tables[(1, "T1")].score, (30, -10, -10, -10))}
    assert state.tables[(1, "T1")].hands_told == 2
    assert (hall.counters.results, hall.counters.results_repeated, hall.counters.hands) == (1, 1, 2)
    assert sent[-1][0] == standings_topic(SITE, "cup")
    assert json.loads(sent[-1][1])["standings"][0]["table_points"] == 4
    # a restarted service (a new consumer, the same database) takes nothing twice
    again = HallService(store, event_id, SITE, TABLES, publish=lambda *m: None, wall_s=lambda: 1.0,
                        sign_assignment=lambda *a: b"", sign_resend=lambda *a: b"")
    tell(again, "t001", 3, "game", ended)
    tell(again, "t001", 1, "hand", {"hand": 1, **tag("t001")})
    assert (again.counters.results_repeated, again.counters.hands_repeated) == (1, 1)
    store.close()


def test_a_table_cannot_report_another_tables_round_nor_another_event(tmp_path):
    store, event_id, hall, _ = service(tmp_path)
    hall.open_round(1)
    ended = {"event": "ended", "reason": "hands_done", "hands": 2, "nets": [30, -10, -10, -10]}
    tell(hall, "t002", 1, "game", {**ended, **tag("t001")})                # t002 claims t001's round
    tell(hall, "t009", 1, "game", {**ended, **tag("t009")})                # a table not in the event
    tell(hall, "t001", 1, "game", {**ended, **tag("t001", event="other")})
    tell(hall, "t001", 2, "game", {**ended, "nets": [1, 2], **tag("t001")})   # malformed: refused, named
    assert hall.counters.foreign == 2 and hall.counters.results == 0
    assert any("nets" in why for why in hall.counters.refusals)
    assert store.state(event_id).tables[(1, "T1")].score is None
    store.close()


def test_a_gap_in_a_tables_events_asks_it_to_resend(tmp_path):
    store, event_id, hall, sent = service(tmp_path)
    tell(hall, "t001", 1, "hand", {"hand": 1})
    tell(hall, "t001", 5, "hand", {"hand": 5})
    hall.ask_for_gaps()
    asked = [m for m in sent if m[0] == TableTopics(SITE, "t001").command("resend_since")]
    assert len(asked) == 1 and json.loads(asked[0][1]) == {"seq": 1} and asked[0][3].endswith("/resp/tourney")
    hall.ask_for_gaps()                                                     # not again within 10 s
    assert len([m for m in sent if "resend_since" in m[0]]) == 1
    store.close()


def test_a_rounds_time_limit_goes_with_its_assignments_and_stays_when_they_are_sent_again(tmp_path):
    store = TourneyStore(str(tmp_path / "t.db"))
    players = desk.read_players("name,team\n" + "".join(f"P{i},\n" for i in range(8)), False)
    event_id, _ = desk.create(store, EventFormat("cup", "mcr", 2, 2, round_minutes=30), players)
    sent: list[tuple] = []
    clock = {"now": 1000.0}
    hall = HallService(store, event_id, SITE, TABLES, publish=lambda *m: sent.append(m), wall_s=lambda: clock["now"],
                       sign_assignment=lambda site, table, data, at, until: json.dumps(data).encode(),
                       sign_resend=lambda *a: b"")
    hall.open_round(1)
    clock["now"] = 1500.0                       # a reconnect: the same round published again
    hall.open_round(1)
    ends = {json.loads(m[1])["ends_at"] for m in sent}
    assert ends == {1000.0 + 30 * 60}
    assert store.state(event_id).opened == {1: 1000.0 + 30 * 60}
    short = HallService(store, event_id, SITE, TABLES[:1], publish=lambda *m: None, wall_s=lambda: 1.0,
                        sign_assignment=lambda *a: b"", sign_resend=lambda *a: b"")
    with pytest.raises(FormatError, match="needs table T2 but --tables names 1"):
        short.open_round(2)
    assert 2 not in store.state(event_id).opened          # nothing opened, nothing published
    store.close()


def test_a_game_of_another_database_or_other_players_or_an_unopened_round_is_not_taken(tmp_path):
    """An event made again under the same name (a fresh database), a table still playing an old seating, a round
    this service never opened: none of their results is stored (a referee enters the result)."""
    store, event_id, hall, _ = service(tmp_path)
    seats = desk.seat_json(store.state(event_id), 1)["tables"][0]["seats"]
    ended = {"event": "ended", "reason": "hands_done", "hands": 2, "nets": [30, -10, -10, -10]}
    tell(hall, "t001", 1, "game", {**ended, **tag("t001", players=seats)})          # round 1 not opened yet
    hall.open_round(1)
    old = {"id": "cup-00000000/1/t001", "event": "cup-00000000", "round": 1, "table": "t001"}
    tell(hall, "t001", 2, "game", {**ended, "assignment": old, "players": seats})    # the old database's event
    others = dict(zip("ESWN", ["An", "Bo", "Chen", "Dong"]))
    tell(hall, "t001", 3, "game", {**ended, **tag("t001", players=others)})          # an old seating played
    assert store.state(event_id).tables[(1, "T1")].score is None
    assert hall.counters.results == 0 and hall.counters.foreign == 1
    whys = " ".join(hall.counters.refusals)
    assert "not opened" in whys and "not by the round's seating" in whys and "cup-00000000" in whys
    tell(hall, "t001", 4, "game", {**ended, **tag("t001", players=seats)})
    assert hall.counters.results == 1
    store.close()
