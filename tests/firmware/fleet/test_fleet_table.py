"""The fleet's events from the real controller, without a broker: evt/hand, evt/game, evt/fault in the transactions
of what they report, an outbox write that fails as E98, the status leaves, the fleet's ack of a recoverable fault."""

from __future__ import annotations

import json
import sqlite3

import pytest

from firmware.config import FleetSection, default_table_path, load_table_config
from firmware.store.table_store import TableStore
from firmware.faults import Fault, FaultCode
from firmware.fleet.command_auth import CommandRefused
from firmware.fleet.table_link import FleetPlug, TableLink
from firmware.fleet.table_status import table_status
from firmware.game.scoreboard import Scoreboard, ScoredHand
from firmware.rules.money import WIN, Payment
from firmware.rules.registry import load_ruleset
from sim.table_run import SimRun

SECTION = FleetSection(broker_url="mqtt://127.0.0.1:1", site="hall1", table_id="t07")


def fleet_cfg():
    return load_table_config(default_table_path()).model_copy(update={"fleet": SECTION})


def events(store: TableStore, kind: str | None = None) -> list[dict]:
    rows = store.read("SELECT kind, payload FROM outbox ORDER BY seq")
    return [json.loads(p) for k, p in rows if kind is None or k == kind]


class NoAdapter:
    """An MQTT client that is never connected (the link waits; nothing reaches the table)."""

    def connect(self, session, will, listener):
        pass

    def publish(self, *args, **kwargs):
        return 0

    def subscribe(self, *args):
        return 0

    def disconnect(self, send_will=False):
        pass


def test_every_hand_is_an_evt_hand_with_what_hand_settled_carries():
    run = SimRun(fleet_cfg(), rules="mcr", seed=3, hands=3, play=True)
    try:
        settled = []
        run.bus.subscribe("hand.settled", lambda e: settled.append(e.data))
        assert run.run(3 * 900.0)
        hands = events(run.store, "hand")
        assert [h["hand"] for h in hands] == [1, 2, 3] and len(settled) == 3
        for sent, seen in zip(hands, settled):
            assert sent == json.loads(json.dumps(seen))            # the same payload, as JSON
        assert set(hands[0]) == {"hand", "dealer", "winners", "drawn", "followed", "note", "verdicts", "payments",
                                 "record", "chips", "game_ended", "seal"}
        sealed = [w["commitment"] for w in events(run.store, "walls")]
        assert all(h["seal"]["commitment"] in sealed and h["seal"]["reveal"] for h in hands)     # (committed walls)
        assert json.loads(hands[0]["record"])["hand"] == 1 and all("reason" in p for p in hands[0]["payments"])
        assert events(run.store, "game") == [{"event": "started", "game": 1, "rules": "mcr", "start_chips": 500,
                                              "first_hand": 1}]
        status = table_status(run.session)
        assert status["hand"] == 3 and status["faults"] == [] and status["counters"]["hands"] == 3
    finally:
        run.close()


def test_a_table_without_fleet_keeps_no_events():
    run = SimRun(rules="mcr", seed=3, hands=1, play=True)
    try:
        assert run.run(900.0)
        assert events(run.store) == []
    finally:
        run.close()


def test_the_end_of_a_game_and_the_next_are_evt_game_in_the_results_transaction():
    rules = load_ruleset("competition")
    store = TableStore(":memory:")
    store.keep_events = True
    board = Scoreboard(store, rules)
    start = rules.start_chips
    broke = [Payment(0, 2, start, WIN), Payment(1, 2, start, WIN)]       # two players with no points: 局结
    with store.batch("hand result"):
        assert board.record(ScoredHand(1, 0, [2], False, broke))
        reason = board.end_game_if_over(1, True)
    assert reason and "局结" in reason
    (ended,) = events(store, "game")[1:]
    assert ended == {"event": "ended", "game": 1, "hand": 1, "reason": reason, "chips": [0, 0, 3 * start, start],
                     "held": [0, 0, 0, 0], "final": [0, 0, 3 * start, start]}
    assert board.chips == [0, 0, 3 * start, start]              # the final scores stand until the next deal
    with store.batch("deal of hand 2"):
        board.begin_hand(2)
    started = events(store, "game")[-1]
    assert started == {"event": "started", "game": 2, "rules": "competition", "start_chips": start, "first_hand": 2}
    assert board.chips == [start] * 4 and board.game == 2


def test_faults_raised_and_acknowledged_are_evt_fault_with_their_rows():
    run = SimRun(fleet_cfg(), rules="mcr", seed=3, hands=1, play=True, auto_ack_s=None)
    try:
        c = run.session
        run.fw_loop.post(run.table.faults.report, Fault(FaultCode.E80, run.loop.now(), "reader", {"port": 0}))
        run.fw_loop.post(run.table.faults.report, Fault(FaultCode.E90, run.loop.now(), "test", {"motor": "turntable"}))
        run.run_until(lambda: c.state == "latched", 60.0)
        raised = events(run.store, "fault")
        assert [(f["event"], f["code"], f["tier"]) for f in raised] == [("raised", "E80", "recoverable"),
                                                                        ("raised", "E90", "latched")]
        rows = {f["id"]: f for f in run.store.faults()}
        assert all(rows[f["id"]]["code"] == f["code"] for f in raised) and raised[1]["hint"] == FaultCode.E90.hint
        assert [f["code"] for f in table_status(c)["faults"]] == ["E90", "E80"]
        assert c.ack() is None
        acked = events(run.store, "fault")[-1]
        assert acked["event"] == "acknowledged" and acked["code"] == "E90" and acked["by"] == "table"
        assert run.store.open_latched() == []

        link = TableLink(c, run.cfg, FleetPlug(lambda cfg, post: NoAdapter(), lambda: 1.75e9))
        with pytest.raises(CommandRefused, match="E61 is not an active"):
            link._command("ack", {"code": "E61"}, "anna")
        assert link._command("ack", {"code": "E80"}, "anna") == {"acknowledged": "E80", "by": "anna"}
        assert events(run.store, "fault")[-1] == {"event": "acknowledged", "code": "E80", "tier": "recoverable",
                                                  "by": "fleet:anna", "at_s": run.loop.now()}
        assert [f["acknowledged_at_s"] is not None for f in run.store.faults() if f["code"] == "E80"] == [True]
        assert table_status(c)["faults"] == []
        with pytest.raises(CommandRefused, match="not an active"):
            link._command("ack", {"code": "E80"}, "anna")            # (once)
        link.detach()
    finally:
        run.close()


def test_an_outbox_write_that_fails_is_the_results_failure_e98(tmp_path):
    run = SimRun(fleet_cfg(), rules="mcr", seed=3, hands=2, play=True, state_path=tmp_path / "t.db",
                 auto_ack_s=None)
    try:
        c = run.session
        run.run_until(lambda: c.state == "in_play", 900.0)
        side = sqlite3.connect(tmp_path / "t.db")                  # the outbox breaks under the controller
        side.execute("DROP TABLE outbox_unsent")
        side.commit()
        side.close()
        run.run_until(lambda: c.state == "latched", 900.0)
        assert c.fault.code is FaultCode.E98 and "outbox" in c.fault.detail["error"]
        assert not c.scoreboard.recorded(1)                         # the hand's result went with its event
    finally:
        run.close()


def test_a_command_accepted_before_a_restart_is_refused_as_replayed_after_it(tmp_path):
    """The accepted nonces live in the table database: the link of the next boot refuses the same command (issued
    5 s before the restart, within the 30 s that the boot floor used to tolerate), takes a new one."""
    from firmware.fleet.command_auth import hmac_key, sign_command

    secret = b"r" * 32
    (tmp_path / "cmd.key").write_text(f"hmac-sha256:{secret.hex()}\n")
    section = SECTION.model_copy(update={"command_key_file": str(tmp_path / "cmd.key")})
    cfg = load_table_config(default_table_path()).model_copy(update={"fleet": section})
    clock = [1.75e9]
    run = SimRun(cfg, rules="mcr", seed=3, hands=1, state_path=tmp_path / "table.db")
    try:
        def link() -> TableLink:
            return TableLink(run.session, run.cfg, FleetPlug(lambda cfg, post: NoAdapter(), lambda: clock[0]))

        def command(verb: str = "rebirth") -> bytes:
            return sign_command(hmac_key(secret), site="hall1", table="t07", verb=verb, args={}, issuer="anna",
                                issued_at=clock[0], ttl_s=120)

        before = link()
        payload = command()
        assert before.link.desk.verifier.verify("rebirth", payload).issuer == "anna"
        before.detach()
        clock[0] += 5.0                                   # the restart
        after = link()
        with pytest.raises(CommandRefused, match="replayed"):
            after.link.desk.verifier.verify("rebirth", payload)
        clock[0] += 5.0
        assert after.link.desk.verifier.verify("rebirth", command()).verb.value == "rebirth"
        after.detach()
    finally:
        run.close()
