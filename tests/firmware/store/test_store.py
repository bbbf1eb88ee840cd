"""The table database: durable, versioned, migrated, and never silently reset when it is damaged."""

import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from firmware.rules.registry import load_ruleset
from firmware.controller.states import TableState
from firmware.store.table_store import TableStore, open_table_store
from firmware.store.schema import CURRENT
from firmware.faults import FaultCode
from firmware.game.scoreboard import Scoreboard
from sim.table_run import SimRun

DATA = Path(__file__).parents[2] / "data"
SCHEMA_0 = DATA / "table-schema0.db"      # written by the first release (see git log of the file)


def _copy_schema0(tmp_path: Path) -> Path:
    path = tmp_path / "table.db"
    shutil.copy(SCHEMA_0, path)
    shutil.copy(DATA / "table-schema0.db.world.json", tmp_path / "table.db.world.json")
    return path


def test_writes_are_durable_and_the_schema_is_versioned(tmp_path):
    store = TableStore(tmp_path / "t.db")
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 2          # FULL
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store._db.execute("PRAGMA user_version").fetchone()[0] == CURRENT
    store.close()


def test_a_hands_record_rows_cost_the_card_only_their_own_pages(tmp_path, monkeypatch):
    """The hand in play's record rows are appended with its money and cleared with its result: clearing frees
    their pages without writing them again (no zeroed pages, one b-tree, no row-by-row delete)."""
    from firmware.store import table_store as store_module
    from firmware.store.score_rows import ScoreRows

    monkeypatch.setattr(store_module, "WAL_AUTOCHECKPOINT", 0)      # (every frame stays in the WAL to be counted)
    store = TableStore(tmp_path / "t.db")
    rows = ScoreRows(store)
    wal = tmp_path / "t.db-wal"

    def frames(write) -> int:
        before = wal.stat().st_size if wal.exists() else 0
        with store.batch():
            write()
        return (wal.stat().st_size - before) // (store_module.PAGE_SIZE + 24)

    actions = [(e, None, f"{e % 4} discard {e % 9 + 1}m") for e in range(160)]
    appended = frames(lambda: rows.log_actions(7, actions[:150]))
    more = frames(lambda: rows.log_actions(7, actions[150:159] + [(159, 42, actions[159][2])]))
    assert rows.logged_actions(7) == actions[:159] + [(159, 42, actions[159][2])]     # (the seq on its row's last)
    cleared = frames(rows.clear_log)
    assert rows.logged_actions(7) == []
    assert appended <= 8, appended             # ~2.4 KB of lines in 512-byte pages: one row and its overflow
    assert more <= 3, more
    assert cleared <= 3, cleared               # the root and the free list, not every page again
    store.close()


def test_a_long_record_is_kept_deflated_and_a_damaged_one_costs_only_itself(tmp_path, caplog):
    from firmware.store.score_rows import ScoreRows

    store = TableStore(tmp_path / "t.db")
    rows = ScoreRows(store)
    lines = [(e, None, f"{e % 4} discard {e % 9 + 1}m") for e in range(100)]
    record = '{"actions": [%s]}' % ", ".join(f'"{a}"' for *_, a in lines)
    with store.batch():
        rows.log_actions(3, lines[:60])
        rows.log_actions(3, lines[60:64])                 # short: kept as text
        rows.log_actions(3, lines[64:])
        game = rows.current_game("mcr", 0, 1)
        rows.record_result(game, 3, 0, [1], False, [], "", 0, record)
    kinds = [t for t, in store.read("SELECT typeof(action) FROM hand_log ORDER BY event")]
    assert kinds == ["blob", "text", "blob"]
    assert store.read("SELECT typeof(record), length(record) FROM hand_results")[0][0] == "blob"
    assert store.read("SELECT length(record) FROM hand_results")[0][0] < len(record) / 3
    assert rows.logged_actions(3) == lines and rows.hand_results(None)[0]["record"] == record

    with store.batch():                                   # a flipped bit in the last row and in the result's record
        store.write("UPDATE hand_log SET action = X'789c0000' WHERE event = 64")
        store.write("UPDATE hand_results SET record = X'00ff' WHERE hand = 3")
    assert rows.logged_actions(3) == lines[:64]
    shown = rows.hand_results(None)[0]
    assert shown["record"] == "" and shown["winners"] == [1]
    assert "the record's row from action 64: not readable" in caplog.text and "hand 3: its record" in caplog.text
    store.close()


@pytest.mark.parametrize("rules, reads_the_deal", [("mcr", True), ("liaoning", False)])
def test_the_end_of_a_hand_reads_the_games_deal_only_where_games_end_by_rounds(tmp_path, rules, reads_the_deal):
    """A game that never ends by rounds (辽宁: one game for as long as the table runs) must not read every hand of
    it at each hand's end (a year of hands would be read per hand)."""
    store = TableStore(tmp_path / "t.db")
    board = Scoreboard(store, load_ruleset(rules))
    with store.batch():
        for hand in range(1, 40):
            board.rows.record_result(board.game, hand, hand % 4, [1], False, [], "", 0, "")
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    with store.batch():
        board.end_game_if_over(40, True)
    store._db.set_trace_callback(None)
    assert any("SELECT dealer FROM hand_results" in s for s in statements) is reads_the_deal, statements
    store.close()


@pytest.mark.parametrize("made", ["new", "first release, migrated"])
def test_the_game_in_play_is_read_by_its_number_not_by_a_scan_of_every_hand(tmp_path, made):
    """The dealer rotation and the held payments are read at every hand's end: by the game's index, so that a table
    with years of hands does not scan them all each hand (it did: milliseconds a hand, growing)."""
    store = TableStore(tmp_path / "t.db" if made == "new" else _copy_schema0(tmp_path))
    plans = []
    for sql, args in (("SELECT dealer FROM hand_results WHERE game = ? ORDER BY hand", (1,)),
                      ("SELECT payee, sum(amount) FROM payments WHERE game = ? AND held = ? GROUP BY payee", (1, 0)),
                      ("SELECT count(*) FROM hand_results WHERE game = ?", (1,))):
        plans.append(" ".join(row[-1] for row in store._db.execute(f"EXPLAIN QUERY PLAN {sql}", args)))
    assert all("USING" in plan and "INDEX" in plan and "SCAN hand_results" not in plan
               and "SCAN payments" not in plan for plan in plans), plans
    store.close()


def test_the_first_release_database_loads_after_every_migration(tmp_path):
    path = _copy_schema0(tmp_path)
    store = TableStore(path)
    assert store._db.execute("PRAGMA user_version").fetchone()[0] == CURRENT
    book = store.book()
    assert book.hand == 3 and book.sets == {"A": "table", "B": "stacked"}
    board = Scoreboard(store, load_ruleset("mcr"))
    assert board.chips == [516, 462, 549, 473] and board.conserved()
    assert [h.hand for h in board.hands()] == [1, 2, 3]
    assert [h["hand"] for h in store.hands()] == [1, 2, 3]
    faults = store.faults()
    assert faults[0]["code"] == "E22" and faults[0]["acknowledged_at_s"] is not None
    assert store.nominal()["center_lift"] and store.walls()["A"]
    store.close()


def test_a_table_from_the_first_release_resumes_its_game(tmp_path):
    path = _copy_schema0(tmp_path)
    run = SimRun(hands=1, state_path=path, play=True)
    assert run.start_hand == 3
    assert run.run(timeout_s=3000)
    board = run.session.scoreboard
    assert [h.hand for h in board.hands()] == [1, 2, 3, 4] and board.conserved()
    run.close()


def _valid_db(tmp_path: Path) -> Path:
    path = _copy_schema0(tmp_path)
    TableStore(path).close()                  # migrated to the current schema
    return path


def _mutate_sql(path: Path, sql: str) -> None:
    db = sqlite3.connect(path)
    db.execute(sql)
    db.commit()
    db.close()


CORRUPTIONS = {
    "the hand not a number": lambda p: _mutate_sql(p, "UPDATE book SET hand = 'many'"),
    "the sets not an object": lambda p: _mutate_sql(p, "UPDATE book SET sets = '[1, 2]'"),
    "the sets not JSON": lambda p: _mutate_sql(p, "UPDATE book SET sets = '{oops'"),
    "the dealer of the wrong type": lambda p: _mutate_sql(p, "UPDATE book SET dealer = 'two'"),
    "a flag that is not a flag": lambda p: _mutate_sql(p, "UPDATE book SET hand_open = 7"),
    "the dealer out of range": lambda p: _mutate_sql(p, "UPDATE book SET dealer = 9"),
    "the bookkeeping row gone": lambda p: _mutate_sql(p, "DELETE FROM book"),
    "state unknown": lambda p: _mutate_sql(p, "UPDATE book SET state = 'flying'"),
    "a wall cut short": lambda p: _mutate_sql(p, "UPDATE walls SET faces = x'0102'"),
    "nominal times not numbers": lambda p: _mutate_sql(
        p, "UPDATE kv SET value = '{\"stacker0\": [\"x\"]}' WHERE key = 'nominal'"),
    "chips of the wrong type": lambda p: _mutate_sql(p, "UPDATE chips SET chips = 'lots' WHERE side = 2"),
    "a payment lost": lambda p: _mutate_sql(p, "DELETE FROM payments WHERE id = (SELECT min(id) FROM payments)"),
    "fault detail not JSON": lambda p: _mutate_sql(p, "UPDATE faults SET detail = '{oops'"),
    "hands table dropped": lambda p: _mutate_sql(p, "DROP TABLE hands"),
    "scoreboard dropped": lambda p: _mutate_sql(p, "DROP TABLE hand_results"),
    "a newer release": lambda p: _mutate_sql(p, "PRAGMA user_version = 99"),
    "not SQLite": lambda p: p.write_text("table, chips\n1, 500\n"),
    "emptied": lambda p: p.write_bytes(b""),
    "truncated to a page": lambda p: p.write_bytes(p.read_bytes()[:4096]),
    "truncated to half": lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
    "header only": lambda p: p.write_bytes(p.read_bytes()[:100]),
}


@pytest.mark.parametrize("name", CORRUPTIONS)
def test_a_damaged_database_is_moved_aside_with_a_latched_e98(tmp_path, name):
    path = _valid_db(tmp_path)
    CORRUPTIONS[name](path)
    again = tmp_path / "again" / "table.db"
    again.parent.mkdir()
    shutil.copy(path, again)
    store, problem = open_table_store(path)
    assert problem is not None, "the damage went unnoticed"
    assert problem["file"] == str(path) and Path(problem["moved_to"]).exists() and problem["reason"]
    assert store.book() is None and store.hands() == []          # a fresh database, the old one kept aside
    store.close()
    run = SimRun(hands=1, state_path=again)           # the table powered on with that file: latched, safe
    assert run.state is TableState.LATCHED and run.controller.fault.code is FaultCode.E98
    assert "moved_to" in run.controller.fault.detail
    assert not any(run.world.motors_running().values())
    run.close()


def test_flipped_bytes_never_crash_and_never_silently_reset(tmp_path):
    """Random damage: the file either loads with the same game (the bytes hit nothing that matters, or only
    what cannot be checked) or is moved aside with E98; never a traceback, never an empty table."""
    rng = random.Random(7)
    original = _valid_db(tmp_path)
    pristine = original.read_bytes()
    outcomes = {"loaded": 0, "moved aside": 0}
    for trial in range(40):
        path = tmp_path / f"flip{trial}.db"
        data = bytearray(pristine)
        for _ in range(rng.choice([1, 4, 32])):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(data))
        store, problem = open_table_store(path)
        if problem is None:
            outcomes["loaded"] += 1
            assert store.book() is not None and len(store.hands()) == 3, "silently reset"
        else:
            outcomes["moved aside"] += 1
            assert Path(problem["moved_to"]).exists()
        store.close()
    assert outcomes["moved aside"] > 0, outcomes


def test_a_folder_or_an_unwritable_place_never_boot_loops(tmp_path):
    folder = tmp_path / "a-folder.db"
    folder.mkdir()
    store, problem = open_table_store(folder)
    assert problem is not None and store.path == ":memory:"
    store.close()
