"""The hand pages, read from a real table database opened read-only: only the hand asked for, payments by
reason, items in the rule set's unit, a 锦州 hand's record settled again into each payer's share (in the records'
thread), a doubling explained, and a hand whose record cannot be settled said so.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading

import pytest

from firmware.web.records import read_only_connect
from firmware.store.score_rows import ScoreRows
from firmware.store.table_store import TableStore
from firmware.web import records
from firmware.web.scoreboard import hand_view, items_heading, payment_lines
from firmware.web.settled import NO_RECORD, settled_hand
from firmware.web.units import Unit, unit_of
from sim.table_run import SimRun
from tests.support.web_fakes import STATUS, WebTable, run_async


@pytest.fixture(scope="module")
def jinzhou_db(tmp_path_factory):
    """A 锦州 game's table database: in hand 1 side 3 discards to side 1 and pays every payer's share (包三家),
    and the win itself scores no doubling; hand 5 is won with 洞.  (Seed 8's walls as they were stacked before the
    cycle steered the tiles to the heads: which head a tile falls into decides the walls, and hands like these two
    are rare.)"""
    from firmware.config import default_table_path, load_table_config

    db = tmp_path_factory.mktemp("jinzhou") / "table.db"
    cfg = load_table_config(default_table_path())
    cfg = cfg.model_copy(update={"stacker": cfg.stacker.model_copy(update={"steer_tiles": False})})
    run = SimRun(cfg, rules="jinzhou", hands=5, play=True, state_path=db, seed=8)
    assert run.run(timeout_s=5000.0)
    run.close()
    return db


def results_of(db) -> dict[int, dict]:
    store = TableStore(db, connect=read_only_connect)
    try:
        return {r["hand"]: r for r in ScoreRows(store).hand_results(None)}
    finally:
        store.close()


def test_the_hand_page_reads_only_its_hand(table_db, monkeypatch):
    """Hand 1 of a database of hands: its deal row, its result and its payments, none of the later hands'."""
    statements: list[str] = []
    plain = records.read_only_connect

    def traced(path, **kwargs):
        connection = plain(path, **kwargs)
        connection.set_trace_callback(statements.append)
        return connection
    monkeypatch.setattr(records, "read_only_connect", traced)
    table = records.TableRecords(table_db)
    try:
        run_async(table.read(lambda store: None))     # (opening checks the database: not the page's reads)
        statements.clear()
        dealt, result = run_async(table.hand(1))
    finally:
        table.close()
    assert dealt["hand"] == 1 and result["hand"] == 1 and len(results_of(table_db)) == 3
    reads = [s for s in statements if any(t in s for t in (" hands ", "hand_results", "payments"))]
    assert len(reads) == 3 and all("hand = 1" in s for s in reads), reads


def test_payments_by_reason_and_the_hand_view():
    money = [{"event": 3, "seq": 0, "payer": 2, "payee": 1, "amount": 12, "reason": "melded_kong", "held": False},
             {"event": 9, "seq": 0, "payer": 0, "payee": 3, "amount": 8, "reason": "win", "held": False},
             {"event": 9, "seq": 1, "payer": 1, "payee": 3, "amount": 34, "reason": "win", "held": False},
             {"event": 9, "seq": 2, "payer": 2, "payee": 3, "amount": 16, "reason": "win", "held": False},
             {"event": 5, "seq": 0, "payer": 0, "payee": 1, "amount": 4, "reason": "penalty:early_draw", "held": False},
             {"event": 6, "seq": 0, "payer": 0, "payee": 2, "amount": 9, "reason": "added_kong", "held": True}]
    record = json.dumps({"dealt": {"1": "1m5m9m5pE", "3": "1s2s?"}, "actions": ["0 draw 4m"]})
    result = {"hand": 4, "dealer": 1, "winners": [3], "drawn": False, "note": "", "round_wind": 1, "record": record,
              "fans": [{"name": "清一色", "key": "full_flush", "en": "Full Flush", "points": 24, "count": 1},
                       {"name": "花牌", "key": "flower_tiles", "en": "Flower Tiles", "points": 1, "count": 2}],
              "money": money}
    assert payment_lines(result) == [
        {"reason": "melded_kong", "name": "点杠", "amounts": [0, 12, -12, 0]},
        {"reason": "win", "name": "和牌", "amounts": [-8, -34, -16, 58]},
        {"reason": "penalty:early_draw", "name": "罚分 early_draw", "amounts": [-4, 4, 0, 0]}]    # (held: not shown)
    assert payment_lines(dict(result, rules="competition"))[2]["name"] == "抢摸"     # the rule set's name for it
    assert payment_lines({**result, "money": []}) == []
    view = hand_view(result, {"hand": 4, "dealer": 1, "dice": [2, 5], "set_id": "B"},
                     {"hand": 4, "hands": {"1": ["E"]}})
    assert view["winners"] == [{"side": 3, "wind": "W"}] and view["total"] == 26 and view["round_wind"] == "S"
    assert view["starting_hands"][0] == {"side": 1, "wind": "E", "tiles": ["1m", "5m", "9m", "5p", "E"]}
    assert view["dice"] == [2, 5] and view["set_id"] == "B"


def test_items_are_labelled_in_the_rule_sets_unit():
    mcr, competition, jinzhou, liaoning = (unit_of(r) for r in ("mcr", "competition", "jinzhou", "liaoning"))
    assert mcr.title(26) == "Fans (26)" and mcr.value(24) == "24" and mcr.column == "fans"
    assert competition.title(48) == "Points (S = 48)" and competition.column == "points"
    assert jinzhou.title(2) == "Doublings (+2)" and jinzhou.value(1) == "+1" and jinzhou.column == "doublings"
    assert jinzhou.share(3) == {"base": 1, "power": 3, "capped": ""}
    assert liaoning.share(8) == {"base": 1, "power": 6, "capped": "N = 8, at most 6"}     # (辽宁: N capped at 6)
    assert mcr.share(3) is None                      # a share in fans or points is its items' sum
    assert unit_of("nonesuch") == Unit("item") and Unit("item").title(3) == "Items (3)"
    fans = [{"name": "混一色", "key": "half_flush", "en": "Half Flush", "points": 20, "count": 1},
            {"name": "花牌", "key": "flower", "en": "Flower", "points": 2, "count": 2}]
    view = hand_view({"hand": 3, "dealer": 0, "winners": [1], "fans": fans, "rules": "competition"})
    assert view["title"] == "Points (S = 24)" and [f["value"] for f in view["fans"]] == ["20", "2"]
    doubled = hand_view({"hand": 3, "dealer": 0, "winners": [1], "rules": "jinzhou",
                         "fans": [{"name": "洞", "key": "single_wait", "en": "single wait", "points": 1}]})
    assert doubled["title"] == "Doublings (+1)" and doubled["fans"][0]["value"] == "+1"
    assert items_heading([view, view]) == "points" and items_heading([view, doubled]) == "items"
    assert items_heading([]) == "items" and items_heading([], "jinzhou") == "doublings"   # (the game's, no hand yet)


def test_a_hands_record_settled_again_shows_each_payers_share(jinzhou_db):
    hand1 = results_of(jinzhou_db)[1]
    assert [(m["payer"], m["payee"], m["amount"]) for m in hand1["money"]] == [(3, 1, 6)] and hand1["fans"] == []
    settled = settled_hand(hand1)
    assert settled["problem"] is None and settled["differs"] is None
    (win,) = settled["wins"]
    assert win["legal"] and win["side"] == 1 and win["discarder"] == {"side": 3, "wind": "N"}
    assert win["scored"] == [] and win["title"] == "Doublings (+0)" and len(win["standing"]) + 1 + \
        3 * len(win["melds"]) >= 14
    assert [(s["payer"], s["amount"], [(i["name"], i["value"]) for i in s["scored"]], s["reckoned"]["power"])
            for s in win["shares"]] == [(0, 2, [("庄", "+1")], 1), (2, 2, [("对方闭门", "+1")], 1),
                                         (3, 2, [("点炮", "+1")], 1)]
    assert win["one_paid"] and [(p["payer"], p["payee"], p["amount"]) for p in win["paid"]] == [(3, 1, 6)]
    hand5 = settled_hand(results_of(jinzhou_db)[5])["wins"][0]     # the win's own doubling is in every share
    assert [(i["name"], i["value"]) for i in hand5["scored"]] == [("洞", "+1")]
    assert [(s["payer"], s["amount"], [i["name"] for i in s["scored"]]) for s in hand5["shares"]] == [
        (0, 2, ["洞"]), (2, 2, ["洞"]), (3, 8, ["洞", "点炮", "庄"])]


def test_the_hand_page_explains_a_doubling_settled_in_the_records_thread(tmp_path, jinzhou_db, monkeypatch):
    threads = []

    def settled_in_thread(result):
        threads.append(threading.current_thread().name)
        return settled_hand(result)
    monkeypatch.setattr(records, "settled_hand", settled_in_thread)
    with WebTable(tmp_path, jinzhou_db) as table:
        status = dict(STATUS, chips={"chips": [500, 500, 500, 500], "rules": "jinzhou", "start": 500, "game": 1})
        table.push({"ok": True, "snapshot": status, "at_s": 12.5, "tick_s": 0.25})
        table.login("staff")
        page = table.client.get("/hand/1").text
        assert threads and threads[0].startswith("table-db")         # the records' thread, not the event loop
        assert "South (South wind) won on North (North wind)'s discard" in page and "Doublings (+0)" in page
        assert "Each payer pays 1 × 2<sup>N</sup>" in page
        assert "East (East wind): <b>2</b> = 1 × 2<sup>1</sup> · <span class=\"item\">dealer +1</span>" in page
        assert "North (North wind): <b>2</b> = 1 × 2<sup>1</sup> · <span class=\"item\">discarder +1</span>" in page
        assert "one side pays every share" in page and "North (North wind) → South (South wind) 6" in page
        board = table.client.get("/scoreboard").text
        assert "<th>Doublings</th>" in board and "single wait +1" in board
        table.client.cookies.set("mjtable_lang", "zh_CN")                  # the same in Chinese: 庄, 点炮, 洞
        page = table.client.get("/hand/1").text
        assert "南（南家） 和 北（北家） 的打牌（点炮）" in page and "番数（翻倍） (+0)" in page
        assert "东（东家）: <b>2</b> = 1 × 2<sup>1</sup> · <span class=\"item\">庄 +1</span>" in page
        assert "北（北家）: <b>2</b> = 1 × 2<sup>1</sup> · <span class=\"item\">点炮 +1</span>" in page
        assert "洞 +1" in table.client.get("/scoreboard").text


def test_a_hand_whose_record_cannot_be_settled_says_so(tmp_path, jinzhou_db):
    hand1 = results_of(jinzhou_db)[5]
    assert settled_hand(dict(hand1, record="")) == {"wins": [], "problem": NO_RECORD, "message": NO_RECORD, "why": "",
                                                    "differs": None}
    broken = settled_hand(dict(hand1, record=json.dumps({"rules": "jinzhou", "actions": ["0 fly 5m"]})))
    assert broken["wins"] == [] and broken["problem"].startswith("This hand's record cannot be settled again (")
    assert "fly" in broken["problem"]
    assert "cannot be settled again" in settled_hand(dict(hand1, record="{not json"))["problem"]
    assert "cannot be settled again" in settled_hand(dict(hand1, rules="nonesuch"))["problem"]
    other = dict(hand1, money=[dict(m, amount=m["amount"] + 1) for m in hand1["money"]])
    assert "other payments than the table made" in settled_hand(other)["differs"]

    old = tmp_path / "old.db"                        # a hand recorded before the table kept records
    shutil.copyfile(jinzhou_db, old)
    with sqlite3.connect(old) as db:
        db.execute("UPDATE hand_results SET record = '' WHERE hand = 5")
    with WebTable(tmp_path, old) as table:
        table.push({"ok": True, "snapshot": STATUS, "at_s": 12.5, "tick_s": 0.25})
        table.login("staff")
        page = table.client.get("/hand/5")
        assert page.status_code == 200 and "recorded before the table kept hands&#39; records" in page.text
        assert "Doublings (+1)" in page.text and "single wait <b>+1</b>" in page.text   # its stored items (洞)
        assert "Each payer's share" not in page.text and "Traceback" not in page.text


def test_a_win_not_allowed_shows_why_and_a_record_that_settles_otherwise_is_flagged(tmp_path, jinzhou_db):
    record = json.loads(results_of(jinzhou_db)[5]["record"])
    won = next(i for i, line in enumerate(record["actions"]) if line.startswith("1 win "))
    record["actions"].insert(won, "1 dead")          # the referee's fact: side 1 is 相公, its win is a false one
    changed = tmp_path / "changed.db"
    shutil.copyfile(jinzhou_db, changed)
    with sqlite3.connect(changed) as db:
        db.execute("UPDATE hand_results SET record = ? WHERE hand = 5", (json.dumps(record),))
    with WebTable(tmp_path, changed) as table:
        table.push({"ok": True, "snapshot": STATUS, "at_s": 12.5, "tick_s": 0.25})
        table.login("staff")
        page = table.client.get("/hand/5").text
    assert "other payments than the table made" in page                 # (the table paid the win: 和牌 12)
    assert "South (West wind) declared a win on North (East wind)'s discard" in page        # (dealer 3)
    assert "Not allowed: 相公" in page
    assert ("South (West wind) → East (South wind) 10; South (West wind) → West (North wind) 10; "
            "South (West wind) → North (East wind) 10") in page
    assert "Each payer's share" not in page
