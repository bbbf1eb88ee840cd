"""Fleet telemetry's pure modules without a broker: topics, envelopes, command authentication, backoff, consumer
(the outbox they drain: tests/firmware/store/test_outbox.py)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from firmware import event_json
from firmware.fleet import messages, topics
from firmware.store import outbox
from firmware.ports.broker import parse_broker_url
from firmware.fleet.backoff import Backoff, seeded_rng
from firmware.fleet.command_auth import (CommandRefused, CommandVerifier, ed25519_key, hmac_key, load_signing_key,
                                         load_verify_keys, sign_command)
from firmware.fleet.consumer import FleetConsumer

NOW = 1_750_000_000.0


# -- topics --------------------------------------------------------------------------------------------------------
def test_the_tree_and_its_parser_agree():
    t = topics.TableTopics("hall1", "t07")
    assert t.avail == "mj/v1/hall1/tbl/t07/avail"
    assert t.event("hand") == "mj/v1/hall1/tbl/t07/evt/hand"
    assert t.command("ack") == "mj/v1/hall1/tbl/t07/cmd/ack"
    assert topics.parse(t.event("fault")) == topics.ParsedTopic("hall1", "t07", "evt", "fault")
    assert topics.parse(t.leaf(topics.Leaf.STATE)) == topics.ParsedTopic("hall1", "t07", "state")
    assert topics.parse(t.response("anna") + "/x") == topics.ParsedTopic("hall1", "t07", "resp", "anna/x")
    assert topics.parse("mj/v1/hall1/tbl/t07/evt/unknown") is None
    assert topics.parse("mj/v1/hall1/tbl/t.7/state") is None
    assert topics.parse("other/v1/hall1/tbl/t07/state") is None
    assert topics.site_filter("hall1") == "mj/v1/hall1/tbl/+/#"


@pytest.mark.parametrize("bad", ["", "a/b", "t+", "t#", "staff.viewer", "-t", "x" * 65, "tisch ä"])
def test_ids_that_would_open_another_subtree_are_refused(bad):
    with pytest.raises(ValueError, match="table id"):
        topics.TableTopics("hall1", bad)


def test_a_table_answers_only_inside_its_own_resp_subtree():
    t = topics.TableTopics("hall1", "t07")
    assert t.owns_response_topic("mj/v1/hall1/tbl/t07/resp/anna")
    for other in ("mj/v1/hall1/tbl/t08/resp/anna", "mj/v1/hall1/tbl/t07/resp/", "mj/v1/hall1/tbl/t07/resp/#",
                  "mj/v1/hall1/tbl/t07/state", "elsewhere"):
        assert not t.owns_response_topic(other)


@pytest.mark.parametrize("url, expected", [("mqtt://broker", ("broker", 1883, False)),
                                           ("mqtts://10.0.0.2:8884", ("10.0.0.2", 8884, True)),
                                           ("mqtts://[::1]:9000", ("::1", 9000, True))])
def test_broker_urls(url, expected):
    a = parse_broker_url(url)
    assert (a.host, a.port, a.tls) == expected


@pytest.mark.parametrize("url, words", [("http://x", "scheme"), ("broker:1883", "not a broker URL"),
                                        ("mqtt://x:0", "port"), ("mqtt://x:99999", "port"), ("mqtt://u@x", "HOST"),
                                        ("mqtt://x/path", "HOST"), ("mqtt://:1883", "no host")])
def test_bad_broker_urls_say_what_is_wrong(url, words):
    with pytest.raises(ValueError, match=words):
        parse_broker_url(url)


# -- envelopes ---------------------------------------------------------------------------------------------------------
def test_an_event_envelope_carries_ids_and_the_rows_data_unchanged():
    src = messages.Source("hall1", "t07", "abc-3")
    body = json.loads(messages.event(src, "hand", 17, "abc", 2, '{"hand":5,"payments":[1,-1]}', NOW))
    assert body == {"v": 1, "kind": "hand", "site": "hall1", "table": "t07", "boot_id": "abc-2", "ts": NOW,
                    "msg_id": "t07:abc:17", "seq": 17, "data": {"hand": 5, "payments": [1, -1]}}
    assert messages.parse_msg_id(body["msg_id"]) == ("t07", "abc", 17)
    assert messages.parse_msg_id("t07:abc:x") is None


def test_data_is_never_refused_only_replaced():
    assert json.loads(event_json.encode_data({"x": float("nan"), "p": Path("/a/b"), 3: topics.Leaf.STATE})) == \
        {"x": None, "p": "/a/b", "3": "state"}
    big = event_json.encode_data({"blob": "x" * 70_000})
    assert json.loads(big) == {"truncated": True, "bytes": 70_011}
    deep: list = []
    for _ in range(40):
        deep = [deep]
    assert "unencodable" in json.loads(event_json.encode_data(deep))


@pytest.mark.parametrize("payload, words", [(b"\xff", "UTF-8"), (b"[1]", "object"), (b"{", "JSON"),
                                            (b'{"a": NaN}', "JSON"), (b"[" * 40 + b"]" * 40, "nested"),
                                            (b"x" * 200_000, "over the limit")])
def test_decoding_refuses_what_is_not_a_message(payload, words):
    with pytest.raises(messages.MessageError, match=words):
        messages.decode(payload)


def test_brackets_inside_strings_are_not_nesting():
    assert messages.decode(json.dumps({"note": "[" * 100}).encode()) == {"note": "[" * 100}


def _db() -> sqlite3.Connection:
    """An outbox's database in memory (the verifier keeps its nonces there)."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    outbox.ensure_schema(db)
    return db


# -- command authentication --------------------------------------------------------------------------------------------
def _verifier(key, now=NOW, **kw) -> CommandVerifier:
    return CommandVerifier("hall1", "t07", [key.verify_key()], lambda: now, boot_wall_s=NOW - 3600, **kw)


def _cmd(key, verb="ack", args=None, **kw) -> bytes:
    fields = dict(site="hall1", table="t07", verb=verb, args={"code": "E41"} if args is None else args,
                  issuer="anna", issued_at=NOW - 1, ttl_s=60)
    fields.update(kw)
    return sign_command(key, **fields)


@pytest.fixture(params=["hmac", "ed25519"])
def key(request):
    return hmac_key(b"k" * 32) if request.param == "hmac" else ed25519_key(Ed25519PrivateKey.generate())


def test_a_signed_command_passes_once(key, caplog):
    v = _verifier(key)
    payload = _cmd(key)
    command = v.verify("ack", payload)
    assert (command.verb.value, command.args, command.issuer) == ("ack", {"code": "E41"}, "anna")
    with pytest.raises(CommandRefused, match="replayed"):
        v.verify("ack", payload)
    assert v.refused == 1 and "refused: replayed" in caplog.text


@pytest.mark.parametrize("change, words", [
    (dict(issued_at=NOW - 200, ttl_s=100), "expired"),
    (dict(issued_at=NOW + 120), "future"),
    (dict(issued_at=NOW - 7200, ttl_s=10_000), "before this table started"),
    (dict(ttl_s=3600), "lives"),
    (dict(table="t08"), "addressed to table 't08'"),
    (dict(site="hall2"), "of site 'hall2'"),
    (dict(args={"code": "E31"}), "latched fault; it is acknowledged at the table"),
    (dict(args={"code": "E02"}), "hold fault"),
    (dict(args={"code": "E999"}), "not a fault code"),
    (dict(args={"code": "E41", "also": 1}), "ack takes"),
    (dict(verb="resend_since", args={"seq": -1}), "resend_since takes"),
    (dict(verb="rebirth", args={"x": 1}), "no arguments"),
    (dict(issuer="a/b"), "issuer or nonce"),
])
def test_commands_refused_with_their_reason(key, change, words):
    verb = change.get("verb", "ack")
    with pytest.raises(CommandRefused, match=words):
        _verifier(key).verify(verb, _cmd(key, **change))


def test_forged_and_mismatched_commands_are_refused(key):
    v = _verifier(key)
    body = json.loads(_cmd(key))
    body["args"] = {"code": "E42"}                      # changed after signing
    with pytest.raises(CommandRefused, match="bad signature"):
        v.verify("ack", json.dumps(body).encode())
    with pytest.raises(CommandRefused, match="unknown key"):
        v.verify("ack", _cmd(hmac_key(b"z" * 32)))
    with pytest.raises(CommandRefused, match="came on cmd/rebirth"):
        v.verify("rebirth", _cmd(key))
    with pytest.raises(CommandRefused, match="not allowed"):
        v.verify("move_motor", _cmd(key))
    with pytest.raises(CommandRefused, match="not a command"):
        v.verify("ack", b"\xff")
    with pytest.raises(CommandRefused, match="field 'sig'"):
        v.verify("ack", json.dumps({k: v for k, v in body.items() if k != "sig"}).encode())


def test_the_replay_cache_is_bounded_and_refuses_rather_than_forgets(key):
    clock = [NOW]
    v = CommandVerifier("hall1", "t07", [key.verify_key()], lambda: clock[0], boot_wall_s=NOW - 10, cache_size=3)
    for _ in range(3):
        v.verify("rebirth", _cmd(key, verb="rebirth", args={}, ttl_s=10))
    with pytest.raises(CommandRefused, match="too many commands"):
        v.verify("rebirth", _cmd(key, verb="rebirth", args={}, ttl_s=10))
    clock[0] = NOW + 60                                 # the three expired: room again
    v.verify("rebirth", _cmd(key, verb="rebirth", args={}, issued_at=NOW + 59, ttl_s=10))
    assert len(v._seen) == 1


def test_key_files(tmp_path: Path):
    private = Ed25519PrivateKey.generate()
    pub = tmp_path / "cmd.pub"
    pub.write_bytes(private.public_key().public_bytes(serialization.Encoding.PEM,
                                                      serialization.PublicFormat.SubjectPublicKeyInfo))
    (tmp_path / "both").write_text(pub.read_text() + "# rotation\nhmac-sha256:" + "ab" * 32 + "\n")
    keys = load_verify_keys(tmp_path / "both")
    assert [k.alg for k in keys] == ["ed25519", "hmac-sha256"]
    pem = tmp_path / "cmd.pem"
    pem.write_bytes(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    signer = load_signing_key(pem)
    assert signer.key_id == keys[0].key_id
    with pytest.raises(ValueError, match="private key; a table needs only the public key"):
        load_verify_keys(pem)
    (tmp_path / "short").write_text("hmac-sha256:abcd\n")
    with pytest.raises(ValueError, match="at least 32 hex digits"):
        load_verify_keys(tmp_path / "short")
    with pytest.raises(ValueError, match="cannot read"):
        load_verify_keys(tmp_path / "missing")


# -- backoff -------------------------------------------------------------------------------------------------------
def test_backoff_doubles_with_jitter_and_is_seeded_by_the_table():
    b = Backoff(seeded_rng("hall1", "t07"), 1.0, 30.0)
    delays = [b.next_delay_s() for _ in range(8)]
    for n, d in enumerate(delays):
        ceiling = min(30.0, 2.0 ** n)
        assert ceiling / 2 <= d <= ceiling
    again = Backoff(seeded_rng("hall1", "t07"), 1.0, 30.0)
    assert [again.next_delay_s() for _ in range(8)] == delays
    spreads = {round(Backoff(seeded_rng("hall1", f"t{i}")).first_delay_s(10.0), 3) for i in range(50)}
    assert len(spreads) == 50 and all(0 <= s <= 10 for s in spreads) and max(spreads) - min(spreads) > 5


# -- the consumer --------------------------------------------------------------------------------------------------
def _avail(online: bool, boot: int, session: int, db: str = "abc") -> bytes:
    return messages.avail(messages.Source("hall1", "t07", messages.boot_id(db, boot)), online, boot, session, NOW)


def test_events_are_counted_once_and_gaps_found():
    c = FleetConsumer("hall1", keep_events=True)
    src = messages.Source("hall1", "t07", "abc-1")
    topic = topics.TableTopics("hall1", "t07").event("hand")
    for seq in (1, 2, 2, 3, 5, 1, 6):
        c.feed(topic, messages.event(src, "hand", seq, "abc", 1, "{}", NOW - 0.01 * seq), NOW)
    assert (c.unique, c.duplicates) == (5, 2)
    assert c.gaps() == {"t07:abc": [4]}
    assert [e["seq"] for e in c.events] == [1, 2, 3, 5, 6]
    assert c.latency_s(0.5) == pytest.approx(0.03)
    assert c.stats()["missing"] == 1 and c.tables["t07"].events == 5


def test_a_consumer_that_joined_mid_stream_keeps_runs_not_every_seq():
    """A recorder started after a table's first 10,000 events: what it keeps stays a few runs (it would
    otherwise keep one number per event for years); repeats, gaps and late fills are still told apart."""
    from firmware.fleet.consumer import _SeqSet

    seen = _SeqSet()
    assert all(seen.add(seq) for seq in range(10_001, 20_001))
    assert not seen.add(15_000) and seen.runs == [[10_001, 20_000]]
    for seq in (20_005, 20_003, 9_000):
        assert seen.add(seq)
    assert seen.gaps() == list(range(9_001, 10_001)) + [20_001, 20_002, 20_004]
    assert seen.add(20_004) and seen.runs == [[9_000, 9_000], [10_001, 20_000], [20_003, 20_005]]
    for seq in range(9_001, 10_001):
        seen.add(seq)
    assert seen.runs == [[9_000, 20_000], [20_003, 20_005]] and seen.gaps() == [20_001, 20_002]


def test_a_table_cannot_have_another_tables_event_dropped_as_a_repeat(caplog):
    """t07 publishes, in its own subtree (all the broker lets it write), events naming t08 (or another site):
    refused and counted, logged once; t08's real event is then taken."""
    c = FleetConsumer("hall1", keep_events=True)
    t07, t08 = topics.TableTopics("hall1", "t07"), topics.TableTopics("hall1", "t08")
    as_t08 = messages.Source("hall1", "t08", "abc-1")
    forged = messages.event(as_t08, "hand", 1, "abc", 1, '{"hand": 666}', NOW)
    assert c.feed(t07.event("hand"), forged, NOW).what == "misnamed"
    body = json.loads(messages.event(messages.Source("hall1", "t07", "abc-1"), "hand", 2, "abc", 1, "{}", NOW))
    for change in ({"msg_id": "t08:abc:2"}, {"site": "hall2"}, {"seq": 3}):
        assert c.feed(t07.event("hand"), json.dumps({**body, **change}).encode(), NOW).what == "misnamed"
    assert c.feed(t08.event("hand"), forged, NOW).what == "event"          # t08's own: not a repeat
    assert (c.unique, c.duplicates, c.misnamed, c.stats()["misnamed"]) == (1, 0, 4, 4)
    assert [e["data"] for e in c.events] == [{"hand": 666}] and c.tables["t07"].events == 0
    assert len([r for r in caplog.records if "refused" in r.getMessage()]) == 1


def test_a_late_will_does_not_mark_a_reconnected_table_offline():
    c = FleetConsumer("hall1")
    avail = topics.TableTopics("hall1", "t07").avail
    c.feed(avail, _avail(True, 1, 1), NOW)
    c.feed(avail, _avail(False, 1, 1), NOW)              # the first connection's Will
    assert c.tables["t07"].online is False
    c.feed(avail, _avail(True, 1, 2), NOW)
    assert c.feed(avail, _avail(False, 1, 1), NOW).what == "stale"   # its Will again, late
    assert c.tables["t07"].online is True
    c.feed(avail, _avail(False, 1, 2), NOW)
    assert c.tables["t07"].online is False
    c.feed(avail, _avail(True, 2, 1), NOW)               # the next boot
    assert c.feed(avail, _avail(False, 1, 2), NOW).what == "stale"
    c.feed(avail, _avail(True, 1, 1, db="fresh"), NOW)   # a table database started afresh
    assert c.tables["t07"].online is True and c.tables["t07"].boot_id == "fresh-1"


def test_leaves_and_bad_messages():
    c = FleetConsumer("hall1")
    t = topics.TableTopics("hall1", "t07")
    src = messages.Source("hall1", "t07", "abc-1")
    c.feed(t.leaf(topics.Leaf.STATE), messages.retained(src, "state", {"state": "playing", "hand": 4}, NOW), NOW)
    c.feed(t.leaf(topics.Leaf.FAULTS), messages.retained(src, "faults", [{"code": "E41"}], NOW), NOW)
    c.feed(t.leaf(topics.Leaf.COUNTERS), messages.retained(src, "counters", {"link": {"outbox_depth": 3}}, NOW), NOW)
    view = c.tables["t07"]
    assert (view.state["hand"], view.faults[0]["code"], view.outbox_depth()) == (4, "E41", 3)
    worn = {"fairness": [], "maintenance": [{"part": "head2", "cycle": 19}]}
    assert c.feed(t.leaf(topics.Leaf.WARNINGS), messages.retained(src, "warnings", worn, NOW), NOW).what == "warnings"
    assert view.warnings == worn
    assert c.feed(t.leaf(topics.Leaf.STATE), b"{nope", NOW).what == "bad"
    assert c.feed("mj/v1/other/tbl/t07/state", b"{}", NOW) is None
    assert c.feed(t.command("ack"), b"{}", NOW) is None


def test_a_table_is_heard_when_it_spoke_not_when_the_broker_replayed_its_retained_leaves():
    """``fleet watch --once`` after the table went offline: the broker's retained leaves arrive now, but the table
    said them at their ``ts``; a live message is heard when it arrives."""
    from firmware.cli.fleet_watch import render
    from rich.console import Console

    c = FleetConsumer("hall1")
    t = topics.TableTopics("hall1", "t07")
    src = messages.Source("hall1", "t07", "abc-1")
    c.feed(t.avail, messages.avail(src, False, 1, 1, NOW - 900), NOW, retained=True)       # the Will: made at connect
    c.feed(t.leaf(topics.Leaf.STATE), messages.retained(src, "state", {"hand": 4}, NOW - 600), NOW, retained=True)
    c.feed(t.leaf(topics.Leaf.COUNTERS), messages.retained(src, "counters", {}, NOW - 610), NOW, retained=True)
    assert c.tables["t07"].last_seen_s == NOW - 600                                      # the newest it said
    console = Console(width=160, record=True)
    console.print(render(c, NOW))
    assert "600 s" in console.export_text()
    empty = Console(width=160, record=True)
    empty.print(render(FleetConsumer("hall2"), NOW, "no table of site hall2 reached staff.viewer"))
    assert "no table of site hall2 reached staff.viewer" in empty.export_text()   # (the live console's caption)
    c.feed(t.leaf(topics.Leaf.META), messages.retained(src, "meta", {}, NOW + 50), NOW, retained=True)
    assert c.tables["t07"].last_seen_s == NOW                                            # (a clock ahead: now)
    c.feed(t.leaf(topics.Leaf.STATE), messages.retained(src, "state", {"hand": 5}, NOW - 5000), NOW + 2)
    assert c.tables["t07"].last_seen_s == NOW + 2                                        # live: when it arrived


@pytest.mark.parametrize("ci, outcome", [("true", "Failed"), ("", "Skipped")])
def test_without_mosquitto_broker_tests_skip_but_fail_under_ci(monkeypatch, ci, outcome):
    from tests.support import mosquitto_broker

    monkeypatch.setattr(mosquitto_broker.shutil, "which", lambda name: None)
    monkeypatch.setattr(mosquitto_broker.os, "access", lambda path, mode: False)
    monkeypatch.setenv("CI", ci)
    with pytest.raises(BaseException) as info:
        mosquitto_broker.mosquitto_binary()
    assert type(info.value).__name__ == outcome and "mosquitto" in str(info.value)


def test_kept_nonces_are_pruned_when_expired_and_a_clock_set_back_cannot_revive_one(key):
    box = outbox.SqliteOutbox(_db())
    clock = [NOW]
    v = CommandVerifier("hall1", "t07", [key.verify_key()], lambda: clock[0], boot_wall_s=NOW - 10, store=box)
    first = _cmd(key, verb="rebirth", args={}, ttl_s=10)
    v.verify("rebirth", first)
    clock[0] = NOW + 100                                 # the first expired: forgotten at the next command
    v.verify("rebirth", _cmd(key, verb="rebirth", args={}, issued_at=NOW + 99, ttl_s=10))
    kept, forgotten_until = box.load_nonces()
    assert len(kept) == 1 and forgotten_until == NOW + 9
    clock[0] = NOW                                       # the clock set back (and a restart)
    again = CommandVerifier("hall1", "t07", [key.verify_key()], lambda: clock[0], boot_wall_s=NOW - 10, store=box)
    with pytest.raises(CommandRefused, match="before a command whose nonce it has forgotten expired"):
        again.verify("rebirth", first)


def test_the_hall_view_tells_online_offline_stale_and_unknown_from_the_lifecycle_alone():
    c = FleetConsumer("hall1")
    t = topics.TableTopics("hall1", "t07")
    source = messages.Source("hall1", "t07", messages.boot_id("abc", 1))
    assert "t07" not in c.tables
    c.feed(t.avail, messages.avail(source, True, 1, 1, NOW, {"seq": 42, "oldest": 7, "firmware": "1.2"}), NOW)
    view = c.tables["t07"]
    assert view.status(NOW) == "online" and view.birth == {"seq": 42, "oldest": 7, "firmware": "1.2"}
    assert view.status(NOW + 100) == "online"
    assert view.status(NOW + 60 * 3 + 10) == "stale"             # three counters missed: no Will yet
    c.feed(t.leaf(topics.Leaf.COUNTERS), messages.retained(source, "counters", {}, NOW + 300), NOW + 300)
    assert view.status(NOW + 301) == "online"                     # heard again
    c.feed(t.avail, messages.avail(source, False, 1, 1, NOW + 400), NOW + 400)
    assert view.status(NOW + 401) == "offline"
    assert FleetConsumer("hall1").tables.get("t07") is None


def test_the_watch_shows_each_tables_release_from_its_meta():
    """``fleet watch``: the version a table runs, and during a staged update the rollout, its wave and where the
    table stands, from the table's retained ``meta`` alone."""
    from rich.console import Console

    from firmware.cli.fleet_watch import release_cell, render

    c = FleetConsumer("hall1")
    metas = {"t01": {"firmware": "2.0.0", "release": {"target": "2.0.0", "state": "installed", "rollout": "r7",
                                                      "wave": 1, "by": "anna"}},
             "t02": {"firmware": "1.0.0", "release": {"target": "2.0.0", "state": "restarting", "rollout": "r7",
                                                      "wave": 2}},
             "t03": {"firmware": "1.0.0", "release": {"target": "2.0.0", "state": "failed", "rollout": "r7",
                                                      "wave": 2, "error": "release 2.0.0 failed its self-test; "
                                                      "the table keeps its release:\nFAILED imports"}},
             "t04": {"firmware": "1.0.0", "release": {"target": "2.0.0", "state": "rolled back", "rollout": "r7",
                                                      "wave": 1}},
             "t05": {"firmware": "1.0.0"}}
    for table, meta in metas.items():
        src = messages.Source("hall1", table, "abc-1")
        c.feed(topics.TableTopics("hall1", table).leaf(topics.Leaf.META), messages.retained(src, "meta", meta, NOW),
               NOW)
    assert release_cell(c.tables["t01"].meta) == "2.0.0\ninstalled 2.0.0\nr7, wave 1"
    assert release_cell(c.tables["t02"].meta) == "1.0.0\npending 2.0.0\nr7, wave 2"
    assert release_cell(c.tables["t03"].meta) == \
        "1.0.0\nfailed 2.0.0\nr7, wave 2\nrelease 2.0.0 failed its self-test; the table keeps its release:"
    assert release_cell(c.tables["t04"].meta) == "1.0.0\nrolled back from 2.0.0\nr7, wave 1"
    assert release_cell(c.tables["t05"].meta) == "1.0.0"
    assert release_cell({"release": {"state": 3}}) == "?"                                # (a bad meta: no crash)
    console = Console(width=220, record=True)
    console.print(render(c, NOW))
    text = console.export_text()
    assert "installed 2.0.0" in text and "r7, wave 1" in text and "pending 2.0.0" in text
    assert "rolled back from 2.0.0" in text
