"""A tournament end to end on a real broker: the hall's service seats simulated tables, collects, ranks, publishes.

32 players of an MCR event on 8 simulated tables play two rounds, then a 竞技麻将
event one: ``mjtable tourney serve`` (its own process, as a hall runs it) seats
each round by signed retained assignments, the tables play them, and every
result reaches the database once, through a table's power cut and a broker
restart in the middle of a round.  The standings the service stores and
publishes equal a recomputation from the stored results made here
independently.  The same on SQLite and PostgreSQL.  Nothing sleeps: the test
steps the simulated tables while it waits for the service.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

from firmware.cli.main import main
from firmware.fleet.link_settings import LinkSettings
from parlour.service import standings_topic
from parlour.store.facts_store import TourneyStore
from sim.fleet_run import FleetSim
from tests.support.fleet_rig import RawClient
from tests.support.mosquitto_broker import broker  # noqa: F401 (the fixture)

SITE = "hall1"
SECRET = bytes(range(7, 39))
FAST = LinkSettings(state_min_interval_s=0.2, counters_period_s=5.0, first_connect_spread_s=0.0, backoff_min_s=0.1,
                    backoff_max_s=0.5, connect_timeout_s=2.0, mark_delay_s=0.05, poll_s=0.5)
TABLES = [f"t{i:03d}" for i in range(1, 9)]
ROOT = Path(__file__).resolve().parents[2]


def new_event(db: str, folder: Path, name: str, rules: str, rounds: int, hands: int, *extra: str) -> None:
    players = folder / f"{name}.csv"
    players.write_text("name,team\n" + "".join(f"{name[:3]}{i:02d},\n" for i in range(1, 33)), encoding="utf-8")
    assert main(["tourney", "new", "--db", db, "--name", name, "--rules", rules, "--players", str(players),
                 "--rounds", str(rounds), "--hands-per-round", str(hands), *extra]) == 0


def serve(db: str, broker_url: str, key: Path, event: str, *rounds: int) -> subprocess.Popen:
    argv = [sys.executable, "-m", "firmware.cli.main", "tourney", "serve", "--db", db, "--event", event,
            "--broker", broker_url, "--site", SITE, "--tables", ",".join(TABLES), "--command-key", str(key),
            "--until-complete", "--seconds", "600"]
    for r in rounds:
        argv += ["--round", str(r)]
    return subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))


def play_until_served(fleet: FleetSim, service: subprocess.Popen, during=None, timeout_s: float = 300.0) -> str:
    """Step the tables until the service has every result it waits for; ``during(fleet)`` is asked each step."""
    deadline = time.monotonic() + timeout_s
    while service.poll() is None:
        if time.monotonic() > deadline:
            service.kill()
            pytest.fail(f"the service did not complete within {timeout_s} s: {service.communicate()[0][-3000:]}")
        fleet.step()
        if during is not None:
            during(fleet)
    out = service.communicate()[0]
    assert service.returncode == 0, out
    return out


def mcr_recount(results: list[dict]) -> dict[str, tuple[Fraction, int]]:
    """MCR table points (4/2/1/0, equal scores sharing their places' points) and scores, summed per player."""
    total: dict[str, tuple[Fraction, int]] = {}
    for r in results:
        scores = r["score"]
        for seat, name in r["seats"].items():
            better = sum(1 for s in scores.values() if s > scores[seat])
            equal = sum(1 for s in scores.values() if s == scores[seat])
            pts = Fraction(sum((4, 2, 1, 0)[better:better + equal]), equal)
            p, s = total.get(name, (Fraction(0), 0))
            total[name] = (p + pts, s + scores[seat])
    return total


def stored_results(db: str, event: str) -> list[dict]:
    store = TourneyStore(db)
    try:
        event_id = store.event_id(event)
        state = store.state(event_id)
        facts = store.facts(event_id)
    finally:
        store.close()
    results = [f.body for f in facts if f.kind.value == "result"]
    for r in results:
        seats = next(t["seats"] for t in state.seatings[r["round"]]["tables"] if t["table"] == r["table"])
        r["seats"] = seats
    return results


def standings(db: str, event: str, capsys) -> list[dict]:
    capsys.readouterr()
    assert main(["tourney", "standings", "--db", db, "--event", event, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_two_rounds_of_an_mcr_event_and_a_competition_round_played_on_simulated_tables(broker, tmp_path,  # noqa: F811
                                                                                       tourney_db, capsys):
    key = tmp_path / "cmd.key"
    key.write_text(f"hmac-sha256:{SECRET.hex()}\n")
    new_event(tourney_db, tmp_path, "spring", "mcr", 2, 2)
    (tmp_path / "mcr").mkdir()
    fleet = FleetSim(8, broker.url, SITE, rules="mcr", seed=3, settings=FAST, folder=tmp_path / "mcr",
                     await_assignments=True, command_key=key)
    try:
        done = {"cut": False, "restarted": False}

        def trouble(fleet: FleetSim) -> None:
            playing = [r for r in fleet.runs if r.wants_round() and r.session.scoreboard is not None]
            if not done["cut"] and playing and playing[0].session.rounds.status()["state"] == "playing":
                playing[0].power_cut(1.0)              # a table loses power in the middle of its round
                done["cut"] = True
            elif done["cut"] and not done["restarted"]:
                broker.restart()                        # and the broker restarts
                done["restarted"] = True

        out = play_until_served(fleet, serve(tourney_db, broker.url, key, "spring", 1, 2), trouble)
        assert done["cut"] and done["restarted"]
        assert "16 results" in out
    finally:
        fleet.close()
    results = stored_results(tourney_db, "spring")
    assert sorted((r["round"], r["table"]) for r in results) == [(r, f"T{t}") for r in (1, 2) for t in range(1, 9)]
    assert all(r["source"] == "fleet" and r["hands"] == 2 and r["reason"] == "hands_done"
               and sum(r["score"].values()) == 0 for r in results)
    recount = mcr_recount(results)
    rows = standings(tourney_db, "spring", capsys)
    assert len(rows) == 32
    for row in rows:
        points, score = recount[row["name"]]
        assert (Fraction(row["table_points"]).limit_denominator(100), row["score"]) == (points, score)
        assert row["rounds"] == 2
    keys = [(-recount[r["name"]][0], -recount[r["name"]][1]) for r in rows]
    assert keys == sorted(keys)
    # every hand once: 8 tables x 2 rounds x 2 hands
    store = TourneyStore(tourney_db)
    hands = [f.body["msg_id"] for f in store.facts(store.event_id("spring")) if f.kind.value == "hand"]
    store.close()
    assert len(hands) == len(set(hands)) == 32
    # no pair of players met twice (32 players, 2 rounds)
    met = [frozenset(p) for r in results for p in itertools.combinations(r["seats"].values(), 2)]
    assert len(met) == len(set(met))
    # the hall's screens: the retained standings equal the stored ones
    screen = RawClient(broker.url, "hall-screen")
    try:
        assert screen.connect() == (True, "Success")
        screen.subscribe(standings_topic(SITE, "spring"))
        deadline = time.monotonic() + 10
        while not screen.messages and time.monotonic() < deadline:
            fleet.clock.wait(0.05)
        published = [json.loads(m.payload) for m in screen.messages]
    finally:
        screen.close()
    assert published and published[-1]["standings"] == rows
    # the finished rounds' seats are withdrawn: no table would play them again
    probe = RawClient(broker.url, "hall-probe")
    try:
        assert probe.connect() == (True, "Success")
        probe.subscribe(f"mj/v1/{SITE}/tbl/+/assign")
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            fleet.clock.wait(0.05)
        assert [m.topic for m in probe.messages if m.payload] == []
    finally:
        probe.close()

    # a 竞技麻将 event's round on tables started with that rule set, in the same database
    new_event(tourney_db, tmp_path, "summer", "competition", 1, 2, "--alternates", "2")
    (tmp_path / "comp").mkdir()
    fleet = FleetSim(8, broker.url, SITE, rules="competition", seed=5, settings=FAST, folder=tmp_path / "comp",
                     await_assignments=True, command_key=key)
    try:
        play_until_served(fleet, serve(tourney_db, broker.url, key, "summer", 1))
    finally:
        fleet.close()
    results = stored_results(tourney_db, "summer")
    assert len(results) == 8
    rows = standings(tourney_db, "summer", capsys)
    advanced = [r for r in rows if r["advanced"]]
    firsts = set()
    for r in results:
        best = max(r["score"].values())
        firsts |= {r["seats"][s] for s, v in r["score"].items() if v == best}
    assert firsts <= {r["name"] for r in advanced} and len(advanced) >= len(firsts) + 2
    assert all(r["table_points"] == 8 for r in advanced) and all(r["table_points"] == 0 for r in rows
                                                                   if not r["advanced"])
