"""Staff and technicians at the table (issue 32, items 3 and 4): the table session (开台) on the simulated table,
names, games and rule sets switched between games, the fleet's signed session commands, the web API against the
real commands, the technician's log and the support archive with no secret in it."""

from __future__ import annotations

import io
import json
import tarfile
from types import SimpleNamespace

import pytest

from firmware.diagnostics import log_ring
from firmware.diagnostics.commands import DiagCommands
from firmware.fleet.command_auth import CommandRefused, CommandVerifier, hmac_key, sign_command
from firmware.fleet.table_link import TableLink
from firmware.game.assignment import parse_assignment
from firmware.game.status import LIVE_COMPONENTS, live_line
from firmware.support_bundle import REDACTED, archive, parts_of, redact, redact_text
from sim.table_run import SimRun
from sim.virtual_loop import SimTimeout
from tests.support.web_fakes import FakeControl, WebTable

MIN = 60.0


def _events(run: SimRun, kind: str) -> list[dict]:
    return [json.loads(p)["data"] if "data" in json.loads(p) else json.loads(p)
            for (p,) in run.store.read("SELECT payload FROM outbox WHERE kind = ? ORDER BY seq", (kind,))]


def _in_play(run: SimRun) -> None:
    run.loop.run_until(lambda: run.controller.book.hand >= 1 and run.controller.state == "in_play", 3000)


def _ask(run: SimRun, request: dict) -> dict:
    answers: list[dict] = []
    DiagCommands(run.session).handle(request, answers.append)
    run.loop.run_until(lambda: bool(answers), 600)
    return answers[0]


def test_a_session_of_3_simulated_minutes_ends_its_hand_in_play_and_raises_no_new_wall():
    run = SimRun(hands=40, seed=2)
    run.store.keep_events = True
    try:
        _in_play(run)
        staff = run.session.staff
        assert staff.open(3, "desk")["state"] == "open"
        hand = run.controller.book.hand
        heard = []
        run.bus.subscribe("table_session", lambda e: heard.append(e.data["state"]))
        run.loop.run_until(lambda: staff.state == "closed", 3000)
        last = run.controller.book.hand
        assert last >= hand and run.session.scoreboard.recorded(last)       # the hand in play was played out
        with pytest.raises(SimTimeout):                                    # nobody's key raises a wall now
            run.loop.run_until(lambda: run.controller.book.hand > last, 900)
        assert run.controller.state == "ready" and run.controller.book.hand == last
        row = staff.sessions()[-1]
        assert row["minutes"] == 3 and row["reason"] == "time_up" and row["hands"] == last - hand
        assert heard[-1] == "ended"
        ended = [e for e in _events(run, "session") if e["event"] == "ended"]
        assert ended and ended[-1]["hands"] == row["hands"] and ended[-1]["minutes"] == 3
        assert "session over: table closed" in live_line(run.session.get_status(LIVE_COMPONENTS))
        # a new session opens the table again: walls rise
        staff.open(30, "desk")
        run.loop.run_until(lambda: run.controller.book.hand > last, 900)
    finally:
        run.close()


def test_a_longer_session_warns_at_10_and_5_minutes_and_staff_close_it_after_the_hand():
    run = SimRun(hands=80, seed=3)
    run.store.keep_events = True
    try:
        _in_play(run)
        staff = run.session.staff
        staff.open(16, "desk")
        warned = []
        run.bus.subscribe("table_session", lambda e: e.data["state"] == "warning" and warned.append(
            (e.data["minutes_left"], run.loop.now())))
        t0 = run.loop.now()
        run.loop.run_until(lambda: len(warned) == 1, 16 * MIN)
        assert warned[0][0] == 10 and abs(warned[0][1] - t0 - 6 * MIN) < 1.0
        assert "min left!" in live_line(run.session.get_status(LIVE_COMPONENTS))
        run.loop.run_until(lambda: len(warned) == 2, 16 * MIN)
        assert warned[1][0] == 5 and abs(warned[1][1] - t0 - 11 * MIN) < 1.0
        assert [e["minutes_left"] for e in _events(run, "session") if e["event"] == "warning"] == [10, 5]
        run.loop.run_until(lambda: run.controller.state == "in_play", 900)
        assert staff.close("desk")["state"] == "ending"                    # the hand in play goes on
        run.loop.run_until(lambda: staff.state == "closed", 900)
        assert staff.sessions()[-1]["reason"] == "closed" and staff.sessions()[-1]["ended_by"] == "desk"
    finally:
        run.close()


def test_names_and_a_game_of_another_rule_set_of_the_same_tiles_between_games(tmp_path):
    run = SimRun(hands=40, seed=4, state_path=tmp_path / "table.db")
    run.store.keep_events = True
    try:
        _in_play(run)
        staff = run.session.staff
        refused = _ask(run, {"cmd": "game", "action": "start", "rules": "competition"})
        assert refused["error"].startswith("a hand is") and refused["refusal"] == "hand_in_play"    # (a code: worded
        assert refused["params"] == {}                                                               # where shown)
        names = {"E": "Ana", "S": "Bo", "W": "陈", "N": "Dong"}
        assert _ask(run, {"cmd": "players", "players": names, "by": "web:staff"})["players"] == names
        assert _ask(run, {"cmd": "players", "players": {"E": "x"}})["ok"] is False
        assert run.session.get_status(["round"])["round"]["players"] == names
        staff.open(1, "desk")                    # (a minute's session: then the table stands between hands)
        run.loop.run_until(lambda: staff.state == "closed" and run.controller.state == "ready", 900)
        refused = _ask(run, {"cmd": "game", "action": "start", "rules": "sichuan"})
        assert refused["error"].startswith("rule set sichuan plays 108 tiles") and refused["refusal"] == \
            "rules_tile_set" and refused["params"] == {"rules": "sichuan", "tiles": 108, "table_tiles": 144}
        answer = _ask(run, {"cmd": "game", "action": "start", "rules": "competition", "chips": 1000})
        assert answer["ok"] and answer["game"]["rules"] == "competition" and answer["game"]["chips"] == 1000
        c = run.controller
        assert c.rules.name == run.session.hand.rules.name == run.session.scoreboard.rules.name == "competition"
        assert c.dice.throws == c.rules.throws and run.session.rounds.rules.name == "competition"
        assert run.session.scoreboard.chips == [1000] * 4
        started = [e for e in _events(run, "game") if e["event"] == "started"][-1]
        assert started["rules"] == "competition" and started["players"] == names
        # a tournament round of another rule set of these tiles is taken, not refused (it switches when taken)
        a = parse_assignment({"id": "ev/1/t1", "event": "ev", "round": 1, "rules": "mcr", "hands": 1,
                              "seats": names, "ends_at": None})
        assert run.session.rounds.offer(a) == "pending"
        run.session.rounds.withdraw()
        run.power_cut(2.0)
        run.loop.run_until(lambda: run.controller is not None, 60)
        assert run.controller.rules.name == "competition"                 # kept across a power cut
        assert run.session.staff.players == names and run.session.scoreboard.chosen_chips == 1000
    finally:
        run.close()


def test_a_hold_fault_keeps_the_time_it_was_cleared():
    from sim.faults import parse_fault

    run = SimRun(hands=3, seed=5, faults=[parse_fault("lid-open@hand2=10s")])
    try:
        assert run.run(timeout_s=5000.0)
        rows = [f for f in run.store.faults() if f["tier"] == "hold"]
        assert rows and all(f["cleared_at_s"] is not None and f["cleared_at_s"] > f["at_s"] for f in rows)
    finally:
        run.close()


# -- the fleet ----------------------------------------------------------------------------------------------------
NOW = 1_750_000_000.0
KEY = hmac_key(bytes(range(32)))


def _signed(verb: str, args: dict, key=KEY) -> bytes:
    return sign_command(key, site="hall1", table="t07", verb=verb, args=args, issuer="booking", issued_at=NOW - 1,
                        ttl_s=60)


def test_the_fleets_session_commands_are_signed_checked_and_carried_out():
    verifier = CommandVerifier("hall1", "t07", [KEY.verify_key()], lambda: NOW, boot_wall_s=NOW - 3600)
    command = verifier.verify("session_open", _signed("session_open", {"minutes": 90}))
    assert command.args == {"minutes": 90}
    assert verifier.verify("session_close", _signed("session_close", {})).args == {}
    for verb, args, why in (("session_open", {"minutes": 0}, "1 to 1440"), ("session_open", {"minutes": "9"}, "1 to"),
                            ("session_open", {}, "minutes"), ("session_close", {"now": True}, "no arguments")):
        with pytest.raises(CommandRefused, match=why):
            verifier.verify(verb, _signed(verb, args))
    with pytest.raises(CommandRefused):
        verifier.verify("session_open", _signed("session_open", {"minutes": 5}, key=hmac_key(bytes(32))))
    forged = json.loads(_signed("session_open", {"minutes": 5}))
    forged["args"] = {"minutes": 600}
    with pytest.raises(CommandRefused):
        verifier.verify("session_open", json.dumps(forged).encode())
    run = SimRun(hands=0, seed=6)
    try:
        link = SimpleNamespace(session=run.session)
        link._session = lambda *a: TableLink._session(link, *a)
        answer = TableLink._command(link, "session_open", {"minutes": 45}, "booking")
        assert answer["session"]["state"] == "open" and answer["session"]["minutes"] == 45
        assert run.session.staff.sessions()[-1]["opened_by"] == "fleet:booking"
        assert TableLink._command(link, "session_close", {}, "booking")["session"]["state"] == "closed"
        with pytest.raises(CommandRefused, match="no table session is open"):
            TableLink._command(link, "session_close", {}, "booking")
    finally:
        run.close()


# -- the web page's API against the real commands -------------------------------------------------------------------
class SimControl(FakeControl):
    """The web page's control, answered by the simulated table's own diagnostics commands."""

    def __init__(self, run: SimRun) -> None:
        super().__init__()
        self.run = run

    async def ask(self, request: dict, timeout_s: float = 30.0) -> dict:
        self.requests.append(request)
        return _ask(self.run, request)


@pytest.fixture
def sim_web(tmp_path):
    db = tmp_path / "table.db"
    SimRun(hands=0, seed=7, state_path=db).close()            # (the file the page reads)
    log_ring.install()
    with WebTable(tmp_path, db) as table:
        # the simulated table lives on the app's thread (its database connection is used there only)
        run = table.client.portal.call(lambda: SimRun(hands=0, seed=7, state_path=db))
        table.state.control = SimControl(run)
        yield table, run
        table.client.portal.call(run.close)


def test_staff_open_and_close_the_table_and_name_the_seats_from_the_page(sim_web):
    web, run = sim_web
    assert web.client.post("/api/staff/session", json={"action": "open", "minutes": 30}).status_code == 401
    web.login("staff")
    opened = web.client.post("/api/staff/session", json={"action": "open", "minutes": 30})
    assert opened.status_code == 200 and opened.json()["session"]["minutes"] == 30
    assert web.client.portal.call(lambda: run.session.staff.sessions()[-1]["opened_by"]) == "web:staff"
    for bad in ({"action": "open"}, {"action": "open", "minutes": 0}, {"action": "close", "minutes": 3},
                {"action": "open", "minutes": "30"}, {"action": "shut"}):
        assert web.client.post("/api/staff/session", json=bad).status_code == 400, bad
    names = {"E": "Ana", "S": "Bo", "W": "Chen", "N": "Dong"}
    assert web.client.post("/api/staff/players", json={"players": names}).json()["players"] == names
    assert web.client.get("/api/staff/session").json()["session"]["players"] == names
    assert web.client.post("/api/staff/game", json={"action": "start", "rules": "liaoning"}).status_code == 409
    assert web.client.post("/api/staff/session", json={"action": "close"}).json()["session"]["state"] == "closed"
    assert web.client.post("/api/staff/session", json={"action": "close"}, headers={"origin": "http://evil"}
                           ).status_code == 403
    for path in ("/api/tech/log", "/api/tech/faults", "/api/tech/bundle"):
        assert web.client.get(path).status_code == 403, path           # staff look, technicians read the log


def test_technicians_read_the_log_and_the_faults_and_download_diagnostics_without_secrets(sim_web, caplog):
    web, run = sim_web
    web.login("tech")
    import logging
    logging.getLogger("firmware.test").warning("E33 stacker jam token=abc123 seen")
    answer = web.client.get("/api/tech/log", params={"level": "WARNING", "text": "stacker jam"}).json()
    assert answer["ok"] and answer["lines"][-1]["message"].startswith("E33 stacker jam")
    assert all(r["level"] in ("WARNING", "ERROR", "CRITICAL") for r in answer["lines"])
    later = web.client.get("/api/tech/log", params={"after": answer["last"], "text": "stacker jam"}).json()
    assert later["lines"] == []
    assert web.client.get("/api/tech/log", params={"level": "LOUD"}).status_code == 400
    assert web.client.get("/api/tech/log", params={"text": "x" * 101}).status_code == 400
    assert web.client.get("/api/tech/faults").json()["ok"]
    got = web.client.get("/api/tech/bundle")
    assert got.status_code == 200 and got.headers["content-type"] == "application/gzip"
    with tarfile.open(fileobj=io.BytesIO(got.content), mode="r:gz") as tar:
        names = {m.name.split("/", 1)[1] for m in tar.getmembers()}
        text = {n: tar.extractfile(f"mjtable-diagnostics/{n}").read().decode() for n in names}
    assert {"versions.json", "config.json", "faults.json", "log.txt", "integrity_check.txt", "sessions.json",
            "status.json"} <= names
    assert text["integrity_check.txt"].strip() == "ok" and "mjtable" in json.loads(text["versions.json"])
    assert any(n.startswith("config/") and n.endswith(".toml") for n in names)


def test_the_archive_redacts_every_secret():
    secrets_ = ("hunter2", "s3cr3t-token", "0123456789abcdef", "MIIEvQIBADANBg")
    answer = {"ok": True, "versions": {"mjtable": "0.2.0"},
              "config": {"fleet": {"broker_url": "mqtts://b:8883", "key_file": "fleet/t07.key", "password": "hunter2",
                                   "api_token": "s3cr3t-token", "command_key": "0123456789abcdef"}},
              "config_files": {"table.toml": 'name = "t07"\npassword = "hunter2"\nhmac_secret = "0123456789abcdef"\n'
                                             "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n"
                                             "-----END PRIVATE KEY-----\n"},
              "faults": [], "log": [{"n": 1, "at": 1.0, "level": "INFO", "logger": "x",
                                     "message": "-----BEGIN PRIVATE KEY-----MIIEvQIBADANBg-----END PRIVATE KEY-----"}],
              "sessions": [], "status": {}}
    data = archive(parts_of(answer, ["ok"]), NOW)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        every = "".join(tar.extractfile(m).read().decode() for m in tar.getmembers())
    assert not any(s in every for s in secrets_) and REDACTED in every
    assert "fleet/t07.key" in every and "mqtts://b:8883" in every                  # paths and URLs stay
    assert redact({"users": [{"name": "ana", "hash": "h", "password": "x"}]}) == {
        "users": [{"name": "ana", "hash": "h", "password": REDACTED}]}
    assert redact_text("  token: abc\n# password = old\n") == '  token: "<redacted>"\n# password = old\n'


def test_the_cli_writes_the_archive_and_opens_a_session(tmp_path, capsys):
    from firmware.cli.main import main

    out = tmp_path / "diag.tar.gz"
    assert main(["diag", "--sim", "bundle", "--out", str(out)]) == 0
    with tarfile.open(out, mode="r:gz") as tar:
        assert tar.extractfile("mjtable-diagnostics/integrity_check.txt").read().decode().strip() == "ok"
    assert main(["diag", "--sim", "session", "open", "60"]) == 0
    assert "60 min" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["diag", "--sim", "session", "open", "0"])
    assert main(["diag", "--sim", "session", "open"]) != 0
