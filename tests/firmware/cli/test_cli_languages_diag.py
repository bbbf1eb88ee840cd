"""A diag command's answer that is no refusal code, said in the command line's language (its English kept).

Such an answer carries ``words`` (its English template) and ``params``
beside ``error`` (:func:`firmware.refusals.worded_answer`); a state among
its values is named in words, and a reason inside it (``not recorded:
...``) is said in the language too.
"""

from __future__ import annotations

import json

import pytest

from firmware.cli import words
from firmware.cli.main import main
from firmware.game.pad import PadRead
from firmware.i18n import worded_text
from firmware.refusals import answer_of, part, worded, worded_answer
from tests.firmware.cli.test_cli_languages_commands import HAN


@pytest.fixture(autouse=True)
def _english_after():
    yield
    words.use("en")


@pytest.mark.parametrize("command, chinese, english", [
    (["hand"], "失败：没有记录任何一手牌", "FAILED: no hand is recorded"),
    (["hand", "7"], "失败：第 7 手没有记录的结果", "FAILED: hand 7 has no recorded result"),
    (["void", "1", "m"], "失败：规则 mcr 没有定缺", "FAILED: rule set mcr has no void suit (定缺)"),
    (["kong", "1", "5m", "--from", "2"], "失败：没有正在进行的牌局（牌桌状态：请推牌）",
     "FAILED: no hand in play (the table is Push tiles in)"),
    (["judge", "--side", "1", "--tile", "5m", "--discarder", "1"], "失败：'discarder' 须为和牌者以外的另一边",
     "FAILED: 'discarder' must be another side than the winner's"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_a_diag_answer_in_both_languages(command, chinese, english, capsys):
    assert main(["--lang", "zh-CN", "diag", "--sim", *command]) == 1
    assert capsys.readouterr().out.strip() == chinese
    assert main(["--lang", "en", "diag", "--sim", *command]) == 1
    out = capsys.readouterr().out.strip()
    assert out == english and not HAN.search(out.replace("定缺", ""))


def test_the_json_answer_keeps_its_english(capsys):
    assert main(["--lang", "zh-CN", "diag", "--sim", "--json", "hand", "3"]) == 1
    answer = json.loads(capsys.readouterr().out)
    assert answer == {"ok": False, "error": "hand 3 has no recorded result",
                      "words": "hand %(hand)s has no recorded result", "params": {"hand": 3}}


def test_a_reason_inside_an_answer_is_said_too():
    why = worded_text("hand %(hand)s is scored already", hand=4)
    answer = {**worded_answer("not recorded: %(why)s", why=part(why)), "recorded": False}
    assert answer["error"] == "not recorded: hand 4 is scored already"
    json.dumps(answer)                                                   # (plain JSON: the socket sends it)
    words.use("zh_CN")
    assert words.refusal(answer) == "未记录：第 4 手已计分"
    assert words.refusal(answer_of(why)) == "第 4 手已计分"
    pad = PadRead(problem=worded_text("pad of side %(side)s not read: %(problem)s", side=2, problem="timeout"))
    assert words.refusal(answer_of(pad.problem)) == "2 号边的牌垫未能读取：timeout"
    assert answer_of(pad.problem)["error"] == "pad of side 2 not read: timeout"
    assert part("plain English") == "plain English" and answer_of(ValueError("x")) == {"ok": False, "error": "x"}


def test_a_state_in_a_reason_is_named_and_english_is_the_codes_own():
    answer = worded_answer("no hand in play (the table is %(state)s)", state="in_play")
    assert worded(answer, str) == answer["error"]
    words.use("zh_CN")
    said = words.refusal(answer)
    assert said.startswith("没有正在进行的牌局（牌桌状态：") and "in_play" not in said, said


def test_the_page_words_the_diag_answers_it_may_get():
    from firmware.web import i18n

    answer = worded_answer("this process keeps no log for the page (the journal has it: journalctl -u mjtable)")
    assert i18n.words("zh_CN").refusal(answer) == "此进程没有为页面保留日志（日志在 journal 中：journalctl -u mjtable）"
    assert i18n.words("en").refusal(answer) == answer["error"]
