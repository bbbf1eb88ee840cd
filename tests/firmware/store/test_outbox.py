"""The table's event outbox (firmware/store/outbox.py): events kept with the transaction they report, bounded in
rows and bytes, drained in order, pruned in small steps, counters that survive a reopened file, and its place in
the table database's schema."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from firmware.store import outbox


def _db(path: str = ":memory:") -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    outbox.ensure_schema(db)
    return db


def test_an_event_is_kept_only_with_the_transaction_it_reports():
    db = _db()
    db.execute("CREATE TABLE results (hand INTEGER)")
    with pytest.raises(RuntimeError, match="inside the transaction"):
        outbox.add(db, "hand", {"hand": 1})
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT INTO results VALUES (1)")
    assert outbox.add(db, "hand", {"hand": 1}) == 1
    db.execute("COMMIT")
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT INTO results VALUES (2)")
    outbox.add(db, "hand", {"hand": 2})
    db.execute("ROLLBACK")                        # the hand's write failed: its event goes with it
    db.execute("BEGIN IMMEDIATE")
    assert outbox.add(db, "fault", {"code": "E41"}) == 2    # (and its seq was not used up)
    db.execute("COMMIT")
    assert [(r.seq, r.kind) for r in outbox.pending(db)] == [(1, "hand"), (2, "fault")]
    with pytest.raises(ValueError):
        box = outbox.SqliteOutbox(db)
        box.add("nonsense", {})


def test_the_outbox_is_bounded_in_bytes_too_and_drops_faults_before_hands(caplog):
    """A broker gone for months: past a bound the oldest faults go first (a flapping sensor's reports), then
    the oldest of any kind, down to nine tenths; the bytes are counted as rows come and go."""
    db = _db()
    db.execute("BEGIN IMMEDIATE")
    hand = {"hand": 0, "record": "x" * 900}                # ~920 bytes of data each
    for i in range(20):
        outbox.add(db, "hand" if i % 4 == 0 else "fault", dict(hand, hand=i), max_bytes=50_000)
    db.execute("COMMIT")
    assert outbox.unsent_bytes(db) == outbox.unsent_bytes(db, counted=False) > 18_000
    db.execute("BEGIN IMMEDIATE")
    for i in range(20, 60):
        outbox.add(db, "hand", dict(hand, hand=i), max_bytes=50_000)
    db.execute("COMMIT")
    kept = outbox.pending(db, 0, 1000)
    assert outbox.unsent_bytes(db) == outbox.unsent_bytes(db, counted=False) <= 50_000
    hands = [i for i in range(60) if i % 4 == 0 or i >= 20]
    assert [json.loads(r.payload)["hand"] for r in kept if r.kind == "hand"] == hands     # every hand is kept
    faults = [json.loads(r.payload)["hand"] for r in kept if r.kind == "fault"]
    assert faults and faults == [i for i in range(20) if i % 4][-len(faults):]          # the oldest faults went
    assert outbox.meta(db).dropped == 60 - len(kept) and "the oldest faults first" in caplog.text
    db.execute("BEGIN IMMEDIATE")
    outbox.mark_sent(db, [r.seq for r in kept[:10]] + [kept[0].seq])           # (one marked twice counts once)
    db.execute("COMMIT")
    assert outbox.unsent_bytes(db) == outbox.unsent_bytes(db, counted=False)


def test_a_database_made_before_the_bytes_were_counted_gets_them_counted():
    db = _db()
    db.execute("BEGIN IMMEDIATE")
    outbox.add(db, "hand", {"hand": 1, "record": "y" * 500})
    db.execute("COMMIT")
    db.execute("ALTER TABLE fleet_meta DROP COLUMN unsent_bytes")         # (as made by the earlier release)
    before = outbox.unsent_bytes(db)
    assert before == outbox.unsent_bytes(db, counted=False) > 500
    db.execute("BEGIN IMMEDIATE")
    outbox.add(db, "fault", {"code": "E41"})
    db.execute("COMMIT")
    assert outbox.unsent_bytes(db) == outbox.unsent_bytes(db, counted=False) > before


def test_rows_drain_in_order_and_marked_rows_are_not_pending():
    box = outbox.SqliteOutbox(_db())
    seqs = [box.add("hand", {"hand": i}) for i in range(1, 11)]
    assert seqs == list(range(1, 11))
    assert [r.seq for r in box.pending(0, 4)] == [1, 2, 3, 4]
    assert [r.seq for r in box.pending(4, 3)] == [5, 6, 7]
    box.mark_sent([1, 2, 5])
    assert [r.seq for r in box.pending(0, 100)] == [3, 4, 6, 7, 8, 9, 10]
    assert box.depth() == 7
    assert [r.seq for r in box.since(3, 100)] == list(range(4, 11))     # resend_since: sent or not
    assert json.loads(box.pending(9, 1)[0].payload) == {"hand": 10}


def test_sent_rows_are_pruned_in_small_steps_and_seq_is_never_reused():
    db = _db()
    box = outbox.SqliteOutbox(db)
    for i in range(60):
        box.add("hand", {"hand": i})
    for seq in range(1, 61):
        outbox.mark_sent(db, [seq], keep_sent=10, prune_step=4)
    kept = [r.seq for r in box.since(0, 1000)]
    assert kept[-1] == 60 and len(kept) <= 10 + 4 and kept == sorted(kept)
    assert box.oldest_kept() == kept[0]
    db.execute("DELETE FROM outbox")            # even with every row gone
    assert box.add("hand", {}) == 61


def test_unsent_rows_are_bounded_the_oldest_dropped_and_counted(caplog):
    db = _db()
    for i in range(8):
        db.execute("BEGIN")
        outbox.add(db, "hand", {"hand": i}, max_unsent=5)
        db.execute("COMMIT")
    assert [r.seq for r in outbox.pending(db)] == [5, 6, 7, 8]      # (past 5: down to 4, nine tenths)
    assert outbox.meta(db).dropped == 4
    assert "dropped" in caplog.text


def test_the_counters_survive_a_reopened_file(tmp_path: Path):
    path = str(tmp_path / "t.db")
    box = outbox.SqliteOutbox(_db(path))
    first = box.begin_boot()
    box.add("hand", {"hand": 1})
    box.db.close()
    box = outbox.SqliteOutbox(sqlite3.connect(path, isolation_level=None))
    again = box.begin_boot()
    assert (again.db_id, again.boot, again.last_seq) == (first.db_id, first.boot + 1, 1)
    assert [r.boot for r in box.pending(0, 10)] == [first.boot]
    assert len(first.db_id) == 12 and _db().execute("SELECT db_id FROM fleet_meta").fetchone()[0] != first.db_id


def test_the_schema_runs_statement_by_statement():
    """The table database's migrations split scripts on ';' (store_schema.run_script)."""
    from firmware.store.schema import run_script

    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute("BEGIN")
    run_script(db, outbox.OUTBOX_SCHEMA)
    db.execute("COMMIT")
    assert outbox.meta(db).last_seq == 0


def test_the_outbox_is_in_schema_2_and_written_in_the_batch_of_what_it_reports():
    """The table database's contract: the outbox's tables in schema 2, ``TableStore.add_event`` inside the batch
    that writes the scoreboard row (rolled back with it), the link's view over the same file."""
    from firmware.store.score_rows import ScoreRows
    from firmware.store.table_store import TableStore
    from firmware.rules.money import WIN, Payment

    store = TableStore(":memory:", on_failure=lambda exc, what: None)
    store.keep_events = True
    rows = ScoreRows(store)
    game = rows.current_game("mcr", 0, 1)                                  # evt/game (started): seq 1
    with store.batch("result and event"):
        rows.record_result(game, 1, 0, [2], False, [], "", 0, "")
        rows.add_payments(game, 1, [Payment(0, 2, 8, WIN)])
        assert store.add_event("hand", {"hand": 1, "payments": [[0, 2, 8, "win"]]}) == 2
    with store.batch("a write that fails"):
        store.add_event("hand", {"hand": 2})
        store.write("INSERT INTO no_such_table VALUES (1)")               # (the card fails mid-batch)
    with pytest.raises(RuntimeError, match="outside the batch"):
        store.add_event("hand", {"hand": 3})
    box = store.event_outbox()
    assert box.depth() == 2 and box.meta().last_seq == 2                   # the event went with the failed write
    assert [(r.kind, json.loads(r.payload).get("hand")) for r in box.pending(0, 10)] == [("game", None), ("hand", 1)]
    assert json.loads(box.pending(0, 1)[0].payload) == {"event": "started", "game": game, "rules": "mcr",
                                                         "start_chips": 0, "first_hand": 1}
    assert box.begin_boot().boot == 1
    box.mark_sent([1, 2])
    assert box.depth() == 0 and rows.chips(game) == [-8, 0, 8, 0]
    store.keep_events = False                                               # a table without [fleet]
    with store.batch("no telemetry"):
        assert store.add_event("hand", {"hand": 4}) is None
    assert box.meta().last_seq == 2
