"""Known answers of 竞技麻将, 辽宁, 锦州 and 四川: every worked example of the rule texts (quoted beside it),
scored by the same path as ``mjtable score``; the expected values were typed from the texts, not from the engine."""

import json
from pathlib import Path

import pytest

from firmware.rules.case_scoring import score_line

DATA = Path(__file__).parents[2] / "data"
FILES = ("competition-known.jsonl", "liaoning-known.jsonl", "jinzhou-known.jsonl", "sichuan-known.jsonl")


def _lines():
    for name in FILES:
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            yield pytest.param(line, id=json.loads(line)["id"])


def _by_reason(money: list[dict], by_wind: bool) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for p in money:
        d = out.setdefault(p["reason"], [0, 0, 0, 0])
        payer = "ESWN".index(p["payer"]) if by_wind else p["payer"]
        payee = "ESWN".index(p["payee"]) if by_wind else p["payee"]
        d[payer] -= p["amount"]
        d[payee] += p["amount"]
    return out


@pytest.mark.parametrize("line", list(_lines()))
def test_known_answer(line):
    case = json.loads(line)
    assert case["source"] and case["text"], "every known answer quotes its source"
    expected = case["expected"]
    got = score_line(line)
    assert "error" not in got, got
    record = "record" in case
    if record:
        verdict = got["verdicts"][-1] if got["verdicts"] else {}
        fans = [f["key"] for f in verdict.get("fans", [])]
        if "legal" in expected:
            assert verdict["legal"] is expected["legal"], got
        if "liable" in expected:
            assert verdict["liable"] == expected["liable"], got
        for key in ("followed", "drawn"):
            if key in expected:
                assert got[key] is expected[key]
        if "held" in expected:
            assert all(p.get("held") for p in got["money"]) is expected["held"]
        if "kong_discard_count" in expected:
            assert {f["key"]: f["count"] for f in verdict["fans"]}["kong_discard"] == expected["kong_discard_count"]
        if "money_reasons" in expected:
            assert sorted({p["reason"] for p in got["money"]}) == sorted(expected["money_reasons"])
    else:
        fans = [f["key"] for f in got.get("fans", [])]
        for key in ("win", "meets_minimum", "total"):
            if key in expected:
                assert got[key] == expected[key], (key, got)
        if "reason" in expected:
            assert expected["reason"] in got["reason"], got
        if "refused" in expected:
            assert "refused" in got, got
        if "breakdown" in expected:
            shares = {wind: b["amount"] for wind, b in got["breakdown"].items()}
            assert shares == expected["breakdown"], got["breakdown"]
    if "fans" in expected:
        assert sorted(expected["fans"]) == sorted(fans), (fans, got)      # every item the text counts, no more
    if "payments" in expected:
        assert got["payments"] == expected["payments"], got
    if "money" in expected:
        assert _by_reason(got["money"], by_wind=not record) == expected["money"], got["money"]


def test_every_rule_set_has_its_worked_examples():
    counts = {name: len((DATA / name).read_text(encoding="utf-8").splitlines()) for name in FILES}
    assert all(n >= 15 for n in counts.values()), counts
