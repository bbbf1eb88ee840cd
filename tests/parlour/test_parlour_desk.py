"""The tournament desk on both databases: an event created, seated, results typed in, confirmed, corrected, ranked."""

from __future__ import annotations

import csv
import io
import itertools
import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from firmware.cli.main import main
from parlour import desk
from parlour.core.event import EventFormat, FormatError
from parlour.core.facts import FactKind
from parlour.store.facts_store import StoreError, TourneyStore


def players_csv(n: int, teams: int = 0) -> str:
    rows = ["name,team"] + [f"P{i:02d},{'team' + str(i % teams) if teams else ''}" for i in range(1, n + 1)]
    return "\n".join(rows) + "\n"


def pairs_repeated(plan: dict) -> int:
    """An independent count over the plan's JSON: Σ over pairs of (meetings − 1)."""
    met: dict[frozenset, int] = {}
    for rnd in plan["rounds"]:
        for table in rnd["tables"]:
            for a, b in itertools.combinations(table["seats"].values(), 2):
                met[frozenset((a, b))] = met.get(frozenset((a, b)), 0) + 1
    return sum(n - 1 for n in met.values())


def run(capsys, *argv: str, stdin: str | None = None, monkeypatch=None) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(["tourney", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_small_event_from_the_command_line(tourney_db, tmp_path, capsys, monkeypatch):
    (tmp_path / "players.csv").write_text(players_csv(16), encoding="utf-8")
    code, out, err = run(capsys, "new", "--db", tourney_db, "--name", "spring", "--rules", "mcr", "--players",
                         str(tmp_path / "players.csv"), "--rounds", "5", "--hands-per-round", "4", "--json")
    assert code == 0, err
    assert json.loads(out)["certificate"] == {"pairs_repeated": 0, "lower_bound": 0, "optimal": True,
                                              "method": json.loads(out)["certificate"]["method"], "team_clashes": 0}
    code, out, _ = run(capsys, "plan", "--db", tourney_db, "--json")
    plan = json.loads(out)
    assert len(plan["rounds"]) == 5 and pairs_repeated(plan) == plan["certificate"]["pairs_repeated"] == 0
    code, out, _ = run(capsys, "seat", "--db", tourney_db, "--round", "1", "--json")
    seat = json.loads(out)
    assert seat["round"] == 1 and [t["table"] for t in seat["tables"]] == ["T1", "T2", "T3", "T4"]
    assert seat["bye"] == [] and set(seat["tables"][0]["seats"]) == {"E", "S", "W", "N"}
    scores = [{"E": 30, "S": 10, "W": -10, "N": -30}, {"E": 0, "S": 0, "W": 0, "N": 0},
              {"E": -5, "S": 5, "W": 20, "N": -20}, {"E": 1, "S": 2, "W": 3, "N": -6}]
    for table, score in zip(("T1", "T2", "T3", "T4"), scores):
        code, _, err = run(capsys, "result", "--db", tourney_db, "--table", table, "--round", "1", "-",
                           stdin=json.dumps(score), monkeypatch=monkeypatch)
        assert code == 0, err
    # typed twice: refused, pointing at the referee's correction
    code, _, err = run(capsys, "result", "--db", tourney_db, "--table", "T1", "--round", "1", "-",
                       stdin=json.dumps(scores[0]), monkeypatch=monkeypatch)
    assert code == 2 and "confirm" in err and "--correct" in err
    code, _, err = run(capsys, "result", "--db", tourney_db, "--table", "T9", "--round", "1", "-",
                       stdin=json.dumps(scores[0]), monkeypatch=monkeypatch)
    assert code == 2 and "no table 'T9'" in err
    code, _, err = run(capsys, "result", "--db", tourney_db, "--table", "T1", "--round", "2", "-",
                       stdin='{"E": 1, "S": 1, "W": 1, "N": 1}', monkeypatch=monkeypatch)
    assert code == 2 and "sum to 4" in err
    code, out, _ = run(capsys, "standings", "--db", tourney_db, "--json")
    rows = json.loads(out)
    east_t1 = seat["tables"][0]["seats"]["E"]
    assert rows[0]["name"] == east_t1 and rows[0]["rank"] == 1 and rows[0]["table_points"] == 4
    t2 = set(seat["tables"][1]["seats"].values())
    assert {r["rank"] for r in rows if r["name"] in t2} == {r["rank"] for r in rows if r["name"] in t2} and \
        {r["table_points"] for r in rows if r["name"] in t2} == {1.75}
    # the referee corrects T1 (the seats were swapped): the ranking follows
    (tmp_path / "fix.json").write_text('{"E": -30, "S": 10, "W": -10, "N": 30}', encoding="utf-8")
    code, _, err = run(capsys, "confirm", "--db", tourney_db, "--table", "T1", "--round", "1", "--referee", "Li",
                       "--correct", str(tmp_path / "fix.json"))
    assert code == 0, err
    rows = json.loads(run(capsys, "standings", "--db", tourney_db, "--json")[1])
    assert rows[0]["name"] == seat["tables"][0]["seats"]["N"]
    code, out, _ = run(capsys, "export", "--db", tourney_db, "--csv")
    exported = list(csv.DictReader(io.StringIO(out)))
    assert len(exported) == 16 and {r["confirmed"] for r in exported if r["table"] == "T1"} == {"1"}
    assert next(r for r in exported if r["table"] == "T1" and r["seat"] == "N")["score"] == "30"
    progress = json.loads(run(capsys, "progress", "--db", tourney_db, "--json")[1])
    assert progress[0]["results"] == 4 and progress[0]["confirmed"] == 1 and progress[1]["opened"] is False


def test_standings_are_rebuilt_from_the_facts_alone(tourney_db):
    store = TourneyStore(tourney_db)
    event_id, _ = desk.create(store, EventFormat("e1", "competition", 3, 4, alternates=1),
                              desk.read_players(players_csv(8), False))
    state = store.state(event_id)
    for table in ("T1", "T2"):
        desk.enter_result(store, event_id, 1, table, {"E": 40, "S": 20, "W": -20, "N": -40})
    desk.penalty(store, event_id, 1, state.seatings[1]["tables"][0]["seats"]["E"], 30, "late", "Li")
    before = desk.standings_json(store.state(event_id))
    store.close()
    again = TourneyStore(tourney_db)           # a new process: nothing but the stored facts
    assert desk.standings_json(again.state(again.event_id())) == before
    t1 = state.seatings[1]["tables"][0]["seats"]
    by_name = {r["name"]: r for r in before}
    assert by_name[t1["E"]]["score"] == 10 and by_name[t1["S"]]["table_points"] == 8     # the fine made S first
    advanced = [r for r in before if r["advanced"]]
    assert len(advanced) == 3                  # two firsts and the best second (替补)
    again.close()


def test_facts_cannot_be_changed_or_deleted(tourney_db):
    store = TourneyStore(tourney_db)
    event_id, _ = desk.create(store, EventFormat("e1", "mcr", 1, 4), desk.read_players(players_csv(4), False))
    for statement in ("UPDATE facts SET body = '{}'", "DELETE FROM facts", "DELETE FROM events"):
        with pytest.raises(sa.exc.DBAPIError, match="append-only"):
            with store.engine.begin() as conn:
                conn.execute(sa.text(statement))
    assert store.append(event_id, FactKind.HAND, {"round": 1, "table": "T1", "msg_id": "t1:ab:7"}, "t1:ab:7")
    assert not store.append(event_id, FactKind.HAND, {"round": 1, "table": "T1", "msg_id": "t1:ab:7"}, "t1:ab:7")
    assert store.state(event_id).tables[(1, "T1")].hands_told == 1
    store.close()


def test_a_withdrawal_replans_the_rounds_not_played_and_keeps_the_played(tourney_db):
    store = TourneyStore(tourney_db)
    event_id, _ = desk.create(store, EventFormat("e1", "mcr", 4, 4, teams=True),
                              desk.read_players(players_csv(16, teams=4), True))
    desk.open_round(store, event_id, 1, None)
    round1 = desk.seat_json(store.state(event_id), 1)
    plan = desk.withdraw(store, event_id, "P03", replacement="Q01")
    state = store.state(event_id)
    assert desk.seat_json(state, 1) == round1
    later = [n for r in range(2, 5) for t in desk.seat_json(state, r)["tables"] for n in t["seats"].values()]
    assert "P03" not in later and later.count("Q01") == 3 and state.teams["Q01"] == state.teams["P03"]
    assert plan.certificate.pairs_repeated == pairs_repeated(desk.plan_json(state))
    with pytest.raises(FormatError, match="not playing"):
        desk.withdraw(store, event_id, "P03")
    store.close()


def test_bad_input_is_one_line_naming_what(tmp_path, capsys):
    (tmp_path / "p.csv").write_text("name,team\nA,\nB,\nA,\nC,\n", encoding="utf-8")
    code, _, err = run(capsys, "new", "--db", str(tmp_path / "t.db"), "--name", "e", "--rules", "mcr", "--players",
                       str(tmp_path / "p.csv"), "--rounds", "2", "--hands-per-round", "4")
    assert code == 2 and "line 4: 'A' is there twice" in err
    code, _, err = run(capsys, "standings", "--db", str(tmp_path / "nowhere" / "t.db"))
    assert code == 2 and "does not exist" in err
    code, _, err = run(capsys, "standings", "--db", "mysql://x@y/z")
    assert code == 2 and "postgresql://" in err
    code, _, err = run(capsys, "standings", "--db", str(tmp_path / "empty.db"))
    assert code == 2 and "tourney new" in err
    with pytest.raises(StoreError, match="cannot open"):
        TourneyStore("postgresql://nobody@127.0.0.1:1/none")


def test_penalties_show_in_the_export_as_in_the_standings(tourney_db, capsys):
    store = TourneyStore(tourney_db)
    event_id, _ = desk.create(store, EventFormat("e1", "mcr", 1, 4), desk.read_players(players_csv(4), False))
    desk.enter_result(store, event_id, 1, "T1", {"E": 30, "S": 10, "W": -10, "N": -30})
    east = desk.seat_json(store.state(event_id), 1)["tables"][0]["seats"]["E"]
    desk.penalty(store, event_id, 1, east, 25, "late", "Li")
    rows = {r["name"]: r for r in desk.export_rows(store.state(event_id))}
    standing = {r["name"]: r for r in desk.standings_json(store.state(event_id))}
    assert rows[east]["score"] == 5 == standing[east]["score"] and rows[east]["penalty"] == 25
    assert rows[east]["place"] == 2 and rows[east]["points"] == standing[east]["table_points"] == 2
    store.close()
    assert main(["tourney", "export", "--db", tourney_db, "--json"]) == 0
    assert {r["name"]: r["score"] for r in json.loads(capsys.readouterr().out)}[east] == 5


def test_a_bye_is_credited_in_the_standings_and_their_export_once_the_round_is_in(tourney_db, tmp_path, capsys,
                                                                                  monkeypatch):
    """Five players: one sits each round out; the bye takes 1.75 (MCR's mean of a table's places) when the
    round's result is in, is counted as a bye and not a game, in the standings' JSON and their CSV."""
    (tmp_path / "players.csv").write_text(players_csv(5), encoding="utf-8")
    assert run(capsys, "new", "--db", tourney_db, "--name", "five", "--rules", "mcr", "--players",
               str(tmp_path / "players.csv"), "--rounds", "2", "--hands-per-round", "4")[0] == 0
    seat = json.loads(run(capsys, "seat", "--db", tourney_db, "--round", "1", "--json")[1])
    [bye] = seat["bye"]
    assert {r["name"]: r for r in json.loads(run(capsys, "standings", "--db", tourney_db, "--json")[1])}[bye][
        "byes"] == 0
    code, _, err = run(capsys, "result", "--db", tourney_db, "--table", "T1", "--round", "1", "-",
                       stdin='{"E": 30, "S": 10, "W": -10, "N": -30}', monkeypatch=monkeypatch)
    assert code == 0, err
    rows = {r["name"]: r for r in json.loads(run(capsys, "standings", "--db", tourney_db, "--json")[1])}
    assert rows[bye]["table_points"] == 1.75 and rows[bye]["score"] == 0
    assert (rows[bye]["rounds"], rows[bye]["places"], rows[bye]["byes"]) == (0, [], 1)
    assert rows[bye]["rank"] == 3                                   # behind 4 and 2, ahead of 1 and 0
    east = seat["tables"][0]["seats"]["E"]
    assert (rows[east]["rounds"], rows[east]["byes"]) == (1, 0)
    exported = {r["name"]: r for r in csv.DictReader(io.StringIO(run(capsys, "export", "--db", tourney_db, "--csv",
                                                                      "--standings")[1]))}
    assert exported[bye]["byes"] == "1" and exported[bye]["table_points"] == "1.75"
    assert exported[east]["byes"] == "0"
    assert main(["--lang", "en", "tourney", "standings", "--db", tourney_db]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].split() == ["rank", "name", "points", "score", "games", "byes"]
    assert next(line for line in text if bye in line).split()[1:] == [bye, "1.75", "0", "0", "1"]


def test_a_team_that_cannot_be_kept_apart_is_reported_not_called_optimal(tmp_path, capsys):
    (tmp_path / "p.csv").write_text("name,team\n" + "".join(f"P{i},{'big' if i < 6 else 't' + str(i)}\n"
                                                            for i in range(16)), encoding="utf-8")
    assert main(["tourney", "new", "--db", str(tmp_path / "t.db"), "--name", "e", "--rules", "mcr", "--teams",
                 "--players", str(tmp_path / "p.csv"), "--rounds", "2", "--hands-per-round", "4"]) == 0
    out = capsys.readouterr().out
    assert "WARNING: team-mates share a table" in out
    assert main(["tourney", "plan", "--db", str(tmp_path / "t.db"), "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)["certificate"]
    assert cert["team_clashes"] >= 2        # six of one team at four tables: two pairs a round at least


def test_a_withdrawals_certificate_is_the_one_plan_shows(tourney_db):
    store = TourneyStore(tourney_db)
    event_id, _ = desk.create(store, EventFormat("e1", "mcr", 4, 4), desk.read_players(players_csv(16), False))
    desk.open_round(store, event_id, 1, None)
    plan = desk.withdraw(store, event_id, "P05")
    shown = desk.plan_json(store.state(event_id))["certificate"]
    assert (shown["pairs_repeated"], shown["lower_bound"]) == (plan.certificate.pairs_repeated,
                                                              plan.certificate.lower_bound)
    store.close()


@pytest.mark.parametrize("players, why", [
    ("name,team\nA,\n,\nB,\nC,\nD,\n", "line 3: no name"),
    ("name,team\nA,\n\u200b,\nB,\nC,\nD,\n", "not only spaces or invisible"),
    ("name,team\n" + "X" * 5000 + ",\nB,\nC,\nD,\n", "1 to 40 printable"),
])
def test_a_players_file_with_a_line_that_is_no_player_is_refused_naming_the_line(tmp_path, capsys, players, why):
    (tmp_path / "p.csv").write_text(players, encoding="utf-8")
    code = main(["tourney", "new", "--db", str(tmp_path / "t.db"), "--name", "e", "--rules", "mcr", "--players",
                 str(tmp_path / "p.csv"), "--rounds", "2", "--hands-per-round", "4"])
    err = capsys.readouterr().err
    assert code == 2 and why in err and len(err) < 400
    assert not (tmp_path / "t.db").exists() or "no tournament" in _standings_error(tmp_path, capsys)


def _standings_error(tmp_path, capsys) -> str:
    main(["tourney", "standings", "--db", str(tmp_path / "t.db")])
    return capsys.readouterr().err


@pytest.mark.parametrize("argv, why", [
    (["--db", str(Path("/nonexistent-mjt"))], "does not exist"),
    (["--db", ""], "--db is empty"),
    (["--db", "postgresql://postgres@127.0.0.1"], "name the database"),
    (["--db", "."], "is a folder"),
])
def test_a_db_that_cannot_be_one_is_named(tmp_path, capsys, monkeypatch, argv, why):
    monkeypatch.chdir(tmp_path)
    code = main(["tourney", "standings", *[a if a != str(Path("/nonexistent-mjt")) else
                                           str(tmp_path / "no" / "t.db") for a in argv]])
    assert code == 2 and why in capsys.readouterr().err


def test_competition_options_in_an_mcr_event_and_a_bad_plan_time_are_refused(tmp_path, capsys):
    (tmp_path / "p.csv").write_text(players_csv(8), encoding="utf-8")
    base = ["tourney", "new", "--db", str(tmp_path / "t.db"), "--name", "e", "--rules", "mcr", "--players",
            str(tmp_path / "p.csv"), "--rounds", "2", "--hands-per-round", "4"]
    assert main([*base, "--alternates", "99"]) == 2 and "competition" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*base, "--plan-seconds", "-1"])
    assert "above 0" in capsys.readouterr().err
    (tmp_path / "latin1.csv").write_bytes("name,team\nJos\xe9,\n".encode("latin-1"))
    assert main([*base[:-6], "--players", str(tmp_path / "latin1.csv"), "--rounds", "2", "--hands-per-round",
                 "4"]) == 2
    assert "latin1.csv: not UTF-8" in capsys.readouterr().err
