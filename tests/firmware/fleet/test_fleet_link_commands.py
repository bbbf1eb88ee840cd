"""The fleet link's commands: authenticated ones reach the table and are answered with their correlation, the
link's own (rebirth, resend_since), refusals logged in bounded lines, every number out of range answered."""

from __future__ import annotations

import base64
import json

import pytest

from firmware.fleet.command_auth import CommandRefused, sign_command
from firmware.ports.broker import InboundMessage
from tests.support.link_rig import EPOCH, KEY, T, connected

RESPONSE = T.response("anna")


def _command(rig, verb, args, expiry_s=30, response=RESPONSE, **kw):
    loop, adapter, box, table, link = rig
    payload = sign_command(KEY, site="hall1", table="t07", verb=verb, args=args, issuer="anna",
                           issued_at=EPOCH + loop.now(), **kw)
    adapter.listener.on_message(adapter.session, InboundMessage(T.command(verb), payload, False, response, b"c-1",
                                                                expiry_s))
    answers = [p for p in adapter.published if p["topic"] == response]
    return answers[-1]["body"] if answers else None


def test_an_authenticated_ack_reaches_the_table_and_is_answered_with_the_correlation(rig):
    connected(rig)
    answer = _command(rig, "ack", {"code": "E41"})
    assert answer == {"v": 1, "kind": "response", "verb": "ack", "ok": True, "error": None,
                      "result": {"acknowledged": "E41"}}
    adapter = rig[1]
    assert adapter.published[-1]["props"].correlation_data == b"c-1"
    assert rig[3].acks == [("ack", {"code": "E41"}, "anna")]
    assert _command(rig, "ack", {"code": "E42"})["error"] == "E42 is not active"
    assert _command(rig, "ack", {"code": "E31"})["error"].startswith("ack: E31 is a latched fault")
    assert rig[4].status()["commands_done"] == 1 and rig[4].status()["commands_refused"] == 2


def test_commands_without_expiry_or_key_are_refused_and_answers_stay_in_the_tables_subtree(rig, caplog):
    loop, adapter, box, table, link = connected(rig)
    assert "MQTT 5 message expiry" in _command(rig, "rebirth", {}, expiry_s=None)["error"]
    births = len(adapter.on("avail"))
    assert _command(rig, "rebirth", {}, expiry_s=None, response=None) is None     # bridged (3.1.1): no answer,
    assert len(adapter.on("avail")) == births + 1                                 # carried out on its signature
    count = len(adapter.published)
    assert _command(rig, "rebirth", {}, response="mj/v1/hall1/tbl/t08/resp/anna") is None
    assert "outside mj/v1/hall1/tbl/t07/resp/" in caplog.text
    assert len(adapter.on("avail")) == 3 and len(adapter.published) > count     # carried out, not answered
    link.desk.verifier = None
    assert "takes no commands" in _command(rig, "rebirth", {})["error"]


def test_rebirth_and_resend_since(rig):
    loop, adapter, box, table, link = rig
    for hand in range(1, 6):
        box.add("hand", {"hand": hand})
    connected(rig)
    adapter.ack(*[e["token"] for e in adapter.events()])
    loop.run_for(1.0)
    assert _command(rig, "rebirth", {})["ok"] and len(adapter.on("avail")) == 2
    before = len(adapter.events())
    answer = _command(rig, "resend_since", {"seq": 2})
    assert answer["result"] == {"after": 2, "published": 3, "through": 5, "oldest_kept": 1, "last_seq": 5,
                                "more": False}
    assert [e["body"]["seq"] for e in adapter.events()[before:]] == [3, 4, 5]


def test_a_flood_of_refused_commands_logs_a_few_lines_and_a_summary_not_a_line_each(rig, caplog):
    loop, adapter, box, table, link = connected(rig)
    flood = InboundMessage(T.command("ack"), b'{"not": "signed"}', False, RESPONSE, b"c", 30)
    for _ in range(1000):
        adapter.listener.on_message(adapter.session, flood)
    assert link.status()["commands_refused"] == 1000
    lines = [r.getMessage() for r in caplog.records if r.levelno >= 30]
    assert 1 <= len(lines) <= 10 and all("refused" in line for line in lines)
    loop.run_for(61.0)
    adapter.listener.on_message(adapter.session, flood)
    lines = [r.getMessage() for r in caplog.records if r.levelno >= 30]
    assert any("995 more refused commands not logged" in line for line in lines)
    assert len(lines) <= 14
    adapter.inbound_dropped = 9_990                   # (what a table's paho adapter dropped of a flood)
    link._publish_counters()
    assert adapter.on("counters")[-1]["body"]["data"]["link"]["inbound_dropped"] == 9_990


# -- out-of-range numbers are bad arguments; the drop log's total is reported ----------------------
def _raw_command(rig, verb, body_text_of):
    """A command signed with KEY whose JSON text is made by ``body_text_of(signed_body)`` (numbers JSON can hold
    but Python's float cannot: 10**400, 1e400)."""

    from firmware.fleet.command_auth import signed_bytes

    loop, adapter, box, table, link = rig
    body = {"v": 1, "site": "hall1", "table": "t07", "verb": verb, "args": {}, "issuer": "anna",
            "issued_at": EPOCH + loop.now(), "expires_at": EPOCH + loop.now() + 30, "nonce": "n" * 20,
            "alg": KEY.alg, "key_id": KEY.key_id}
    body["sig"] = base64.b64encode(KEY.sign(signed_bytes(body))).decode()
    payload = body_text_of(body).encode()
    adapter.listener.on_message(adapter.session, InboundMessage(T.command(verb), payload, False, RESPONSE, b"c-2", 30))
    answers = [p for p in adapter.published if p["topic"] == RESPONSE]
    return answers[-1]["body"] if answers else None


@pytest.mark.parametrize("seq", [10**30, 2**63, 10**400], ids=["1e30", "2^63", "1e400"])
def test_resend_since_with_an_out_of_range_seq_is_refused_as_a_bad_argument(rig, seq):
    """The seq reached SQLite, whose OverflowError was answered "the outbox cannot be read": it is the argument."""
    loop, adapter, box, table, link = connected(rig)
    box.add("hand", {"hand": 1})
    answer = _command(rig, "resend_since", {"seq": seq})
    assert answer["ok"] is False and "out of range" in answer["error"] and "bad argument" in answer["error"]
    assert "cannot be read" not in answer["error"] and len(answer["error"]) < 200
    assert link.errors == 0 and link.status()["commands_refused"] == 1
    assert _command(rig, "resend_since", {"seq": 2**63 - 1})["result"]["published"] == 0     # (the largest: fine)


def test_the_desk_tells_a_value_sqlite_cannot_bind_from_a_failing_card(rig):
    """Behind the verifier too: an out-of-range seq is a bad argument, a read that fails is the outbox."""
    from firmware.fleet.command_auth import Command
    from firmware.fleet.topics import Verb

    loop, adapter, box, table, link = connected(rig)
    with pytest.raises(CommandRefused, match="bad argument"):
        link.desk._carry_out(Command(Verb.RESEND_SINCE, {"seq": 10**30}, "anna", "n" * 20, EPOCH + 60))
    box.db.close()
    with pytest.raises(CommandRefused, match="the outbox cannot be read"):
        link.desk._carry_out(Command(Verb.RESEND_SINCE, {"seq": 1}, "anna", "n" * 20, EPOCH + 60))


@pytest.mark.parametrize("field, text", [("issued_at", "1" + "0" * 400), ("expires_at", "1" + "0" * 400),
                                         ("issued_at", "-1" + "0" * 400), ("expires_at", "1e400"),
                                         ("issued_at", "-1e400")],
                         ids=["issued-int", "expires-int", "issued-negative-int", "expires-inf", "issued-minus-inf"])
def test_every_number_of_a_command_out_of_range_is_answered_not_raised(rig, field, text):
    """issued_at / expires_at too large for a float (OverflowError) or infinite (1e400): refused with the field
    named, answered, and nothing raised into the link (it was: no answer, a traceback in the log)."""
    loop, adapter, box, table, link = connected(rig)

    def edit(body: dict) -> str:
        return json.dumps(dict(body, **{field: "@"})).replace('"@"', text)

    answer = _raw_command(rig, "rebirth", edit)
    assert answer is not None and answer["ok"] is False, answer
    assert f"'{field}' out of range" in answer["error"]
    assert link.errors == 0


def test_the_links_log_lines_dropped_are_counted_reported_and_summed_up_when_the_limit_lifts(rig, caplog):
    """The lines the rate limits leave out: in the link's status and its counters leaf, and summed up in the log when
    the window ends, even when the flood stopped (before: only at the next refusal, which may never come)."""
    loop, adapter, box, table, link = connected(rig)
    flood = InboundMessage(T.command("ack"), b'{"not": "signed"}', False, RESPONSE, b"c", 30)
    for _ in range(100):
        adapter.listener.on_message(adapter.session, flood)
    status = link.status()
    assert status["commands_refused"] == 100
    assert status["log_lines_dropped"] == 2 * 95        # (the verifier's and the desk's limits: 5 lines each)
    link._publish_counters()
    assert adapter.on("counters")[-1]["body"]["data"]["link"]["log_lines_dropped"] == 190
    caplog.clear()
    loop.run_for(61.0)                                   # no more commands: the flood is over
    lines = [r.getMessage() for r in caplog.records if r.levelno >= 30]
    assert any("95 more refused commands not logged in 60 s (95 not logged since start)" in line for line in lines)
    assert any("95 more command refusals not logged" in line for line in lines)
    caplog.clear()
    loop.run_for(120.0)
    assert not [r for r in caplog.records if "not logged" in r.getMessage()]      # (said once)
    assert link.status()["log_lines_dropped"] == 190


