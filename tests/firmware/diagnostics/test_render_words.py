"""A diag answer as text in the command line's language: headings, payments, a breakdown, input changes, a test."""

from __future__ import annotations

import pytest

from firmware.cli import words
from firmware.diagnostics.render import PLAIN, render

ANSWER = {
    "ok": True, "test": "dice",
    "moves": [{"mechanism": "dice", "ok": True, "elapsed_s": 1.73}],
    "fans": [{"name": "平和", "points": 2, "count": 1}],
    "money": [{"name": "和牌", "reason": "win", "payer": 1, "payee": 0, "amount": 8, "held": True}],
    "breakdown": [{"payer": 1, "amount": 8, "items": []}],
    "record": {"hand": 3, "actions": ["draw 1m"]},
    "changes": [{"after_s": 0.5, "input": "lid_closed", "active": True}],
}


@pytest.fixture(autouse=True)
def _english_after():
    yield
    words.use("en")


def test_a_diag_answer_in_chinese():
    words.use("zh_CN")
    text = render(ANSWER, words)
    for said in ("测试：dice", "动作：", "番种：", "  和牌（win）：1 号边付给 0 号边 8（暂扣，到一局结束时结算）",
                 "明细（每个付款方的份额）：", "  1 号边：8 = 底分", "记录：hand 3", "变化：1 次",
                 "lid_closed       开"):
        assert said in text, (said, text)
    for english in ("moves:", "fans:", "pays side", "held until", "breakdown", "record:", "changes:", "base"):
        assert english not in text


def test_a_diag_answer_in_english_is_the_codes_own():
    text = render(ANSWER, PLAIN)
    for said in ("test: dice", "moves:", "fans:",
                 "  和牌 (win): side 1 pays side 0 8 (held until the game ends)", "breakdown (each payer's share):",
                 "  side 1: 8 = base", "record: hand 3", "changes: 1", "ON"):
        assert said in text, (said, text)
