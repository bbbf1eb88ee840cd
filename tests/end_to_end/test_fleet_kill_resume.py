"""``mjtable sim --fleet N --state-dir DIR`` killed with SIGKILL at any instant resumes with the same command.

Each table keeps its database, with its simulated table in it, in DIR (as
one table's ``--state``), so the same command after a kill resumes every
table: a hand a kill left in play is ended void by the players, the others
go on to ``--hands`` hands in all; a tournament round's game goes on to its
hands; the outboxes send again what the broker did not acknowledge, under
the same message ids (the same databases), so a de-duplicating consumer
(:class:`~firmware.fleet.consumer.FleetConsumer`, on the broker the whole
time) sees every event once.  The child is the command itself, telling the
parent on a pipe when a table's virtual clock passes the instant to kill at
(:data:`tests.power_cut_campaign._CLI_CHILD`); nothing sleeps: the parent
waits on the pipe, the process and the broker's messages, each with a
timeout.
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from firmware.fleet.assignment_auth import sign_assignment
from firmware.fleet.command_auth import hmac_key
from firmware.fleet.topics import TableTopics
from tests.support.fleet_rig import SITE, RawClient, Watcher, wait_for
from tests.support.mosquitto_broker import broker  # noqa: F401 (the fixture)
from tests.support.power_cut_campaign import (_CLI_CHILD, CUT_WITHIN_S, ROOT, Campaign, _compare_committed, _hands_once,
                                      final_checks)

SECRET = bytes(range(32))
RUN_TIMEOUT_S = 300.0


def _spawn(command: list[str], kill_at_s: float) -> tuple[subprocess.Popen, int]:
    read_end, write_end = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", _CLI_CHILD, f"{kill_at_s:.3f}", str(write_end), *command],
                             pass_fds=(write_end,), cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(write_end)
    return child, read_end


def _told(pipe: int, timeout_s: float) -> bytes:
    """What the child said on its pipe within ``timeout_s`` (b"k": its clock passed the instant; b"e": it ended;
    b"": nothing yet, or it died)."""
    ready, _, _ = select.select([pipe], [], [], timeout_s)
    return os.read(pipe, 1) if ready else b""


def _last_seqs(folder: Path, tables: list[str]) -> dict[str, int]:
    out = {}
    for table in tables:
        with sqlite3.connect(folder / f"{table}.db") as con:
            out[table] = con.execute("SELECT last_seq FROM fleet_meta").fetchone()[0]
    return out


def _every_event_once(watcher: Watcher, folder: Path, tables: list[str]) -> list[str]:
    """The consumer has every table's events 1..last_seq, each once (repeats dropped), and no other."""
    written = _last_seqs(folder, tables)
    wait_for(lambda: watcher.lt.call(lambda: watcher.consumer.unique) >= sum(written.values()), 60,
             f"the consumer's {sum(written.values())} events")
    seen = watcher.lt.call(lambda: [(e["table"], e["seq"]) for e in watcher.consumer.events])
    problems = []
    for table in tables:
        seqs = sorted(seq for t, seq in seen if t == table)
        if seqs != list(range(1, written[table] + 1)):
            problems.append(f"{table}: the consumer saw seqs {seqs[:5]}...{seqs[-5:]} of {written[table]} written")
    db_ids = watcher.lt.call(lambda: {key for key in watcher.consumer._seen})
    if len(db_ids) != len(tables):
        problems.append(f"the tables' message ids changed database: {sorted(db_ids)}")
    return problems


def _hands_each(folder: Path, table: str) -> list[int]:
    with sqlite3.connect(folder / f"{table}.db") as con:
        return [h for h, in con.execute("SELECT hand FROM hand_results ORDER BY hand")]


def run_fleet_campaign(broker_url: str, folder: Path, seed: int, kills: int, tables: int = 3) -> list[str]:
    """``sim --fleet T --hands H --state-dir DIR`` killed ``kills`` times at random virtual instants, the same
    command each time, then once more to its end: every hand once per table, chips conserved, every event once."""
    rng = random.Random(seed)
    hands = kills + 1                 # (each kill within about a hand of the run's start: each leaves hands to play)
    state = folder / "state"
    ids = [f"t{i + 1:03d}" for i in range(tables)]
    command = ["sim", "--fleet", str(tables), "--broker", broker_url, "--site", SITE, "--hands", str(hands),
               "--seed", str(seed), "--state-dir", str(state), "--quiet", "--drain-s", "60"]
    watcher = Watcher(broker_url, client_id=f"recorder-{seed}")
    campaigns = {table: Campaign() for table in ids}
    problems: list[str] = []
    cuts = 0
    try:
        wait_for(lambda: watcher.lt.call(lambda: watcher.client.subscribed), 30, "the consumer subscribed")
        for i in range(3 * kills):
            if cuts == kills:
                break
            child, pipe = _spawn(command, rng.uniform(0.5, CUT_WITHIN_S))
            said = _told(pipe, RUN_TIMEOUT_S)
            if said == b"k":
                child.kill()
                cuts += 1
            out, err = child.communicate(timeout=RUN_TIMEOUT_S)
            os.close(pipe)
            if said != b"k" and child.returncode != 0:
                problems.append(f"run {i} (not killed) ended {child.returncode}: {err[-600:]}")
            for table in ids:
                if (state / f"{table}.db").exists():
                    _compare_committed(state / f"{table}.db", campaigns[table], f"kill {i}")
        final = subprocess.run([sys.executable, "-m", "firmware.cli.main", *command], cwd=ROOT, capture_output=True,
                               text=True, timeout=RUN_TIMEOUT_S, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        if final.returncode != 0:
            problems.append(f"the resume after the last kill said ({final.returncode}): {final.stderr[-800:]}")
        for table in ids:
            db = state / f"{table}.db"
            campaigns[table].final_exit = final.returncode
            problems += [f"{table}: {p}" for p in final_checks(db, campaigns[table]) + _hands_once(db)]
            if _hands_each(state, table) != list(range(1, hands + 1)):
                problems.append(f"{table}: hands with results {_hands_each(state, table)}, not 1..{hands}")
        problems += _every_event_once(watcher, state, ids)
    finally:
        watcher.close()
    if cuts != kills:
        problems.append(f"only {cuts} of {kills} kills landed")
    return problems


@pytest.mark.parametrize("seed", [3])
def test_a_killed_fleet_resumes_with_the_same_command_every_hand_and_event_once(broker, tmp_path,  # noqa: F811
                                                                                  seed):
    problems = run_fleet_campaign(broker.url, tmp_path, seed, kills=3)
    assert not problems, problems


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11, 12, 13])
def test_many_kills_of_a_fleet_lose_nothing(broker, tmp_path, seed):  # noqa: F811
    problems = run_fleet_campaign(broker.url, tmp_path, seed, kills=8, tables=4)
    assert not problems, problems


# -- a tournament round, killed mid-game -------------------------------------------------------------------------
def _round_ended(watcher: Watcher) -> int:
    return watcher.lt.call(lambda: sum(1 for e in watcher.consumer.events if e["kind"] == "game"
                                       and e["data"].get("event") == "ended"
                                       and e["data"].get("reason") == "hands_done"))


def run_round_campaign(broker_url: str, folder: Path, seed: int, kills: int) -> list[str]:
    """One table awaiting assignments (``--state-dir``) plays a round of ``hands`` hands, killed ``kills`` times
    at random virtual instants of it; the same command resumes the round's game; SIGTERM ends the last run."""
    rng = random.Random(seed)
    hands = kills + 1
    state = folder / "state"
    key = folder / "cmd.key"
    key.write_text(f"hmac-sha256:{SECRET.hex()}\n")
    command = ["sim", "--fleet", "1", "--broker", broker_url, "--site", SITE, "--await-assignments",
               "--command-key", str(key), "--seed", str(seed), "--state-dir", str(state), "--quiet"]
    assignment = {"id": "cup-1/1/t001", "event": "cup-1", "round": 1, "rules": "mcr", "hands": hands,
                  "seats": {"E": "An", "S": "Bo", "W": "Chen", "N": "Dong"}, "ends_at": None}
    watcher = Watcher(broker_url, client_id=f"recorder-r{seed}")
    hall = RawClient(broker_url, f"hall-{seed}")
    problems: list[str] = []
    cuts = 0
    try:
        assert hall.connect() == (True, "Success")
        payload = sign_assignment(hmac_key(SECRET), site=SITE, table="t001", assignment=assignment,
                                  issued_at=time.time(), expires_at=time.time() + 3600)
        assert hall.publish(TableTopics(SITE, "t001").assign, payload, retain=True)[0]
        ended = False
        for i in range(kills + 1):
            child, pipe = _spawn(command, rng.uniform(5.0, CUT_WITHIN_S) if i < kills else 1e12)
            deadline = time.monotonic() + RUN_TIMEOUT_S
            said = b""
            while not said and time.monotonic() < deadline and not _round_ended(watcher):
                said = _told(pipe, 0.2)
            if said == b"k":
                child.kill()
                cuts += 1
            else:
                ended = bool(_round_ended(watcher))
                child.send_signal(signal.SIGTERM)
            out, err = child.communicate(timeout=60)
            os.close(pipe)
            if said != b"k" and child.returncode != 0:
                problems.append(f"run {i} (stopped by SIGTERM) ended {child.returncode}: {err[-800:]}")
            if ended:
                break
        if not ended:
            problems.append("the round did not end")
        db = state / "t001.db"
        with sqlite3.connect(db) as con:
            games = con.execute("SELECT id, first_hand, ended_hand FROM games WHERE end_reason = 'hands_done'")\
                .fetchall()
            if len(games) != 1:
                problems.append(f"the round's game ended {len(games)} times: {games}")
            else:
                game, first, last = games[0]
                played = [h for h, in con.execute("SELECT hand FROM hand_results WHERE game = ? ORDER BY hand",
                                                  (game,))]
                if played != list(range(first, first + hands)) or last != first + hands - 1:
                    problems.append(f"the round's hands {played} ({first}..{last}), not {hands} once each")
            ends = [json.loads(p) for p, in con.execute("SELECT payload FROM outbox WHERE kind = 'game'")]
        if len([e for e in ends if e.get("event") == "ended" and e.get("reason") == "hands_done"]) != 1:
            problems.append("the round's end written more than once")
        if _round_ended(watcher) != 1:
            problems.append(f"the consumer saw the round end {_round_ended(watcher)} times")
        campaign = Campaign(final_exit=0)
        problems += final_checks(db, campaign) + _hands_once(db)
        problems += _every_event_once(watcher, state, ["t001"])
    finally:
        hall.close()
        watcher.close()
    if cuts != kills:
        problems.append(f"only {cuts} of {kills} kills landed")
    return problems


def test_a_killed_fleet_resumes_a_tournament_rounds_game_each_hand_once(broker, tmp_path):  # noqa: F811
    problems = run_round_campaign(broker.url, tmp_path, 5, kills=2)
    assert not problems, problems


@pytest.mark.slow
@pytest.mark.parametrize("seed", [21, 22])
def test_many_kills_in_a_tournament_round_lose_nothing(broker, tmp_path, seed):  # noqa: F811
    problems = run_round_campaign(broker.url, tmp_path, seed, kills=6)
    assert not problems, problems
