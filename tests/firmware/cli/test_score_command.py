"""``mjtable score``: JSON lines in, one result per line out, errors per line, payments when asked."""

import io
import json
from pathlib import Path

import pytest

from firmware.cli.main import main
from firmware.rules.case_scoring import score_stream

DATA = Path(__file__).parents[2] / "data"
CHICKEN = {"id": "c", "rules": "mcr", "hand": "56s678pWW", "win_tile": "7s", "seat_wind": "S", "round_wind": "E",
           "melds": [{"kind": "chow", "tiles": "123m", "from": "left"},
                     {"kind": "chow", "tiles": "345m", "from": "left"}]}


def _run(lines, rules=None):
    out = io.StringIO()
    score_stream(io.StringIO("\n".join(lines) + "\n"), out, rules)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_scores_a_whole_file_in_order(capsys):
    assert main(["score", str(DATA / "mcr-random.jsonl")]) == 0
    results = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    cases = [json.loads(line) for line in (DATA / "mcr-random.jsonl").read_text().splitlines()]
    assert [r["id"] for r in results] == [c["id"] for c in cases]
    assert set(results[0]) == {"id", "win", "total", "total_without_flowers", "meets_minimum", "unit", "fans"}
    assert all({"name", "key", "en", "points", "count"} == set(f) for r in results for f in r["fans"])
    assert all(r["total"] == c["expected"]["total"] for r, c in zip(results, cases))


def test_negative_cases_say_not_a_win():
    results = _run((DATA / "mcr-negative.jsonl").read_text().splitlines()[:3])
    assert all(r["win"] is False and r["reason"] for r in results)


@pytest.mark.parametrize("line, words", [
    ("{not json", "not JSON"),
    ('{"id": 7, "rules": "mcr", "hand": "1111m1m", "win_tile": "1m", "seat_wind": "E", "round_wind": "E"}',
     "standing tiles"),
    ('{"id": 7, "rules": "mcr", "hand": "11112345678999m", "win_tile": "1m", "seat_wind": "E", "round_wind": "E"}',
     "standing tiles"),
    ('{"id": 7, "rules": "mcr", "hand": "1111234567899m", "win_tile": "1m", "seat_wind": "E", "round_wind": "E"}',
     "more than four of a tile: 5 x 1m"),
    ('{"id": 7, "rules": "mcr", "hand": "123456789m123sX", "win_tile": "1m", "seat_wind": "E", "round_wind": "E"}',
     "field 'hand'"),
    ('{"id": 7, "rules": "mcr", "hand": "123456789m123s1f", "win_tile": "1m", "seat_wind": "E", "round_wind": "E"}',
     "flowers are counted"),
    ('{"id": 7, "rules": "mcr", "hand": "123456789m1s", "win_tile": "1s", "seat_wind": "E", "round_wind": "E", '
     '"melds": [{"kind": "chow", "tiles": "135s", "from": "left"}]}', "consecutive"),
    ('{"id": 7, "rules": "mcr", "hand": "123456789m123sE", "win_tile": "E", "seat_wind": "Q", "round_wind": "E"}',
     "seat_wind"),
])
def test_bad_lines_get_an_error_and_scoring_goes_on(line, words):
    good = json.dumps(CHICKEN)
    results = _run([good, line, good])
    assert results[0]["total"] == 8 and results[2]["total"] == 8
    assert "error" in results[1] and words in results[1]["error"]
    assert results[1]["id"] in (7, None)


def test_payments_when_the_discarder_is_given():
    on_discard = dict(CHICKEN, discarder="E")
    self_drawn = {"id": "d", "rules": "mcr", "hand": "1112223334445m", "win_tile": "5m", "self_drawn": True,
                  "last_tile": True, "flowers": 1, "seat_wind": "E", "round_wind": "E", "discarder": None}
    too_small = {"id": "s", "rules": "mcr", "hand": "445566m2277779s", "win_tile": "8s", "seat_wind": "E",
                 "round_wind": "E", "discarder": "N"}
    r1, r2, r3 = _run([json.dumps(on_discard), json.dumps(self_drawn), json.dumps(too_small)])
    assert r1["payments"] == {"E": -16, "S": 32, "W": -8, "N": -8}
    assert r2["payments"] == {"E": 462, "S": -154, "W": -154, "N": -154} and r2["total"] == 146
    assert r3["meets_minimum"] is False and r3["payments"] == {"E": -30, "S": 10, "W": 10, "N": 10}
    assert all(sum(r["payments"].values()) == 0 for r in (r1, r2, r3))
    assert "payments" not in _run([json.dumps(CHICKEN)])[0]


def test_rules_option_and_unknown_rule_sets():
    line = json.dumps({k: v for k, v in CHICKEN.items() if k != "rules"})
    assert _run([line], "mcr")[0]["total"] == 8
    assert "cannot be scored yet" in _run([json.dumps(dict(CHICKEN, rules="sichuan-3p"))])[0]["error"]
    assert "table.void" in _run([json.dumps(dict(CHICKEN, rules="sichuan"))])[0]["error"]
    assert "--rules says" in _run([json.dumps(CHICKEN)], "jinzhou")[0]["error"]


def test_stdin_and_a_missing_file(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(CHICKEN) + "\n\n"))
    assert main(["score", "-"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1
    assert main(["score", "/nonexistent/cases.jsonl"]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_competition_cases_with_payments_and_the_chips_floor():
    case = {"id": "c1", "rules": "competition", "hand": "123345678mN", "win_tile": "N", "seat_wind": "E",
            "round_wind": "E", "flowers": 2, "melds": [{"kind": "pung", "tiles": "EEE", "from": "left"}],
            "discarder": "W"}
    r1, r2, r3 = _run([json.dumps(case), json.dumps(dict(case, table={"dealer_streak": 1})),
                       json.dumps(dict(case, table={"chips": {"E": 100, "S": 100, "W": 0, "N": 100}}))])
    assert r1["total"] == 28 and [f["key"] for f in r1["fans"]] == ["half_flush", "flower", "single_wait"]
    assert r1["payments"] == {"E": 56, "S": 0, "W": -56, "N": 0} and r1["unit"] == "point"
    assert [(m["payer"], m["payee"], m["amount"], m["reason"]) for m in r1["money"]] == [("W", "E", 56, "win")]
    assert r2["payments"] == {"E": 112, "S": 0, "W": -112, "N": 0}
    # winning off a player with no points: that player gets the win's score, and each of the three 10
    assert "refused" in r3 and r3["payments"] == {"E": -58, "S": 10, "W": 38, "N": 10}


def test_northeast_cases_with_the_table_context_and_a_breakdown():
    liaoning = {"id": "l1", "rules": "liaoning", "hand": "46p789s555s99m", "win_tile": "5p", "seat_wind": "S",
                "round_wind": "E", "melds": [{"kind": "chow", "tiles": "123m", "from": "left"}], "discarder": "W",
                "table": {"open_seats": ["E", "W", "N"]}}
    jinzhou = {"id": "j1", "rules": "jinzhou", "hand": "111m555p888s5m", "win_tile": "5m", "seat_wind": "E",
               "round_wind": "E", "melds": [{"kind": "kong", "tiles": "CCCC", "concealed": True}],
               "self_drawn": True, "kong_win": True, "discarder": None,
               "table": {"first_discard_followed": False, "open_seats": []}}
    closed = dict(liaoning, id="l2", melds=[], hand="123m46p789s555s99m")
    r1, r2, r3 = _run([json.dumps(liaoning), json.dumps(jinzhou), json.dumps(closed)])
    assert r1["payments"] == {"E": 0, "S": 4, "W": -4, "N": 0}
    assert {b["key"] for b in r1["breakdown"]["W"]["items"]} == {"single_wait", "discard"}
    # the 红中 concealed kong is paid too (8 from each): the hand's record has it
    assert r2["payments"] == {"E": 3072 + 24, "S": -1032, "W": -1032, "N": -1032}
    assert {m["reason"] for m in r2["money"]} == {"win", "concealed_kong"}
    assert r3["meets_minimum"] is False and "开门" in r3["reason"]
    assert r3["payments"] == {"E": 10, "S": -30, "W": 10, "N": 10}            # a false win
    blind = _run([json.dumps({k: v for k, v in liaoning.items() if k != "table"})])[0]
    assert "open_seats" in blind["error"]                  # who was closed changes the money: never guessed
    bad = _run([json.dumps(dict(liaoning, table={"liable": 3}))])[0]
    assert "error" in bad and "liable" in bad["error"]


def test_competition_liability_pays_alone():
    case = {"id": "c1", "rules": "competition", "hand": "123345678mN", "win_tile": "N", "seat_wind": "E",
            "round_wind": "E", "flowers": 2, "melds": [{"kind": "pung", "tiles": "EEE", "from": "left"}],
            "self_drawn": True, "discarder": None, "table": {"liable": "N"}}
    r = _run([json.dumps(case)])[0]
    assert r["payments"] == {"E": 84, "S": 0, "W": 0, "N": -84} and r["liable"] == "N"
