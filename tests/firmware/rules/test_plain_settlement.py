"""The plain settlement of a case (no record) against settle_hand on the case's record, case by case."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from bench.mcr_hands import generated_wins
from bench.scoring import case_line
from firmware.rules.case_format import CaseError, load_object, parse_case
from firmware.rules.case_record import case_record, plain_settlement, table_context
from firmware.rules.names import DEFAULT, RULE_NAMES
from firmware.rules.registry import load_ruleset
from firmware.rules.settlement import settle_hand

DATA = Path(__file__).resolve().parents[2] / "data"


def _lines() -> list[str]:
    lines = []
    for path in sorted(DATA.glob("*.jsonl")):
        lines += path.read_text(encoding="utf-8").splitlines()
    rng = random.Random(5)
    lines += [case_line(i, w, rng) for i, w in enumerate(generated_wins(random.Random(17), 4000))]
    return lines


def _compare(line: str, rules: str | None) -> bool:
    """Whether the plain way applied; fails when it applied and differs from the record's settlement."""
    try:
        data = load_object(line)
        if "record" in data:
            return False
        case = parse_case(data)
        table = table_context(data)
    except (CaseError, ValueError):
        return False
    name = case.rules or rules or DEFAULT
    if name not in RULE_NAMES:
        return False
    try:
        ruleset = load_ruleset(name).with_options(table["options"])
    except ValueError:
        return False
    plain = plain_settlement(case, ruleset, table)
    if plain is None:
        return False
    settled = settle_hand(ruleset, case_record(case, ruleset.name, table))
    verdict, payments = plain
    assert verdict == settled.verdicts[-1], line
    assert settled.verdicts == [verdict], line
    assert payments == settled.payments, line
    return True


@pytest.mark.parametrize("rules", [None, *RULE_NAMES])
def test_plain_settlement_is_settle_hands(rules: str | None) -> None:
    applied = sum(_compare(line, rules) for line in _lines())
    if rules in (None, "mcr"):
        assert applied > 4000           # (the generated cases, and the MCR ones of tests/data)


def test_plain_settlement_not_for_context() -> None:
    """A case that tells of the other seats or the chips takes the record's way."""
    line = json.loads(_lines()[-1])
    line["table"] = {"chips": {"E": 100, "S": 100, "W": 100, "N": 100}}
    case, table = parse_case(line), table_context(line)
    assert plain_settlement(case, load_ruleset("mcr"), table) is None
