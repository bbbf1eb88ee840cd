"""Why a hand's record cannot be, the tile parser's words, the control socket's own answers and the enrol hint,
said in the command line's language (their English kept byte for byte where they are logged or sent)."""

from __future__ import annotations

import json

import pytest

from firmware.cli import words
from firmware.cli.error_words import said, said_text
from firmware.cli.main import main
from firmware.diagnostics.render import render
from firmware.i18n import text_of
from firmware.reader.registry import TileRegistry
from firmware.refusals import answer_of, part, worded_answer
from firmware.rules.hand_record import BadRecord, HandRecord, parse_action
from firmware.tiles.tile import TileError, code, parse
from tests.firmware.cli.test_cli_languages_commands import HAN
from tests.firmware.diagnostics.test_diag_socket_hostile import _connect, _lines
from tests.firmware.diagnostics.test_diag_socket_hostile import table  # noqa: F401 (the served table, a fixture)


@pytest.fixture(autouse=True)
def _english_after():
    yield
    words.use("en")


def _both(exc: BaseException) -> tuple[str, str]:
    words.use("zh_CN")
    chinese = said(exc)
    words.use("en")
    return chinese, said(exc)


# -- a hand's record ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("actions, chinese, english", [
    (["0 deal 123m", "1 pung 5m"], "失败：第 1 个动作（'1 pung 5m'）：pung 须写出吃碰的是谁打出的牌：'from 边号'",
     "FAILED: action 1 ('1 pung 5m'): a pung says whose discard it took: 'from SIDE'"),
    (["0 deal 123m", "0 discard 1m", "1 pung 5m from 0"], "失败：1 号边要 5m，但 0 号边打出的是 1m",
     "FAILED: side 1 claims 5m but side 0 discarded 1m"),
    (["0 deal 12mq"], "失败：第 0 个动作（'0 deal 12mq'）：'12mq' 中有未知的牌代码 'q'",
     "FAILED: action 0 ('0 deal 12mq'): unknown tile code 'q' in '12mq'"),
    (["0 penalty bogus"], "失败：第 0 个动作：规则 mcr 没有罚分 'bogus'（没有任何种类）",
     "FAILED: action 0: rule set mcr has no penalty 'bogus' (kinds: none)"),
], ids=["an action line", "a claim", "a tile inside an action line", "a rule set's penalty"])
def test_a_bad_record_judged_in_both_languages(actions, chinese, english, tmp_path, capsys):
    record = tmp_path / "hand.json"
    record.write_text(json.dumps({"rules": "mcr", "actions": actions}), encoding="utf-8")
    assert main(["--lang", "zh-CN", "diag", "--sim", "judge", "--hand-record", str(record)]) == 1
    assert capsys.readouterr().out.strip() == chinese
    assert main(["--lang", "en", "diag", "--sim", "judge", "--hand-record", str(record)]) == 1
    out = capsys.readouterr().out.strip()
    assert out == english and not HAN.search(out)


def test_a_bad_record_keeps_its_english_and_its_parts():
    with pytest.raises(BadRecord) as caught:
        parse_action("2 chow 135m from 1", 7)
    exc = caught.value
    assert str(exc) == "action 7 ('2 chow 135m from 1'): a chow is three consecutive tiles of one suit, got '135m'"
    assert _both(exc) == ("第 7 个动作（'2 chow 135m from 1'）：吃须为同一花色的三张顺连牌，实际为 '135m'", str(exc))
    with pytest.raises(BadRecord) as caught:
        HandRecord.from_json({"rules": "mcr", "round_wind": "X"})
    assert _both(caught.value) == ("字段 'round_wind' 须为 E、S、W 或 N，实际为 'X'",
                                   "field 'round_wind' must be E, S, W or N, got 'X'")


def test_a_reason_inside_an_answer_is_said_in_parts_and_sent_as_plain_json():
    """``未记录：第 3 个动作（…）：<the tile parser's words>``: three reasons deep, each in the language."""
    with pytest.raises(BadRecord) as caught:
        parse_action("1 discard 9f", 3)
    answer = {**worded_answer("not recorded: %(why)s", why=part(caught.value)), "recorded": False}
    assert answer["error"] == "not recorded: action 3 ('1 discard 9f'): unknown tile code '9f' in '9f'"
    assert json.loads(json.dumps(answer)) == answer                   # (plain JSON: the socket sends it)
    words.use("zh_CN")
    assert words.refusal(answer) == "未记录：第 3 个动作（'1 discard 9f'）：'9f' 中有未知的牌代码 '9f'"
    assert words.refusal(json.loads(json.dumps(answer_of(caught.value)))) == \
        "第 3 个动作（'1 discard 9f'）：'9f' 中有未知的牌代码 '9f'"
    refused = text_of(caught.value)                  # (the hand in play returns its reason: a text, its parts kept)
    assert refused == str(caught.value)
    assert said_text(refused) == "第 3 个动作（'1 discard 9f'）：'9f' 中有未知的牌代码 '9f'"
    assert words.refusal(worded_answer("not recorded: %(why)s", why=part(refused))) == words.refusal(answer)


# -- the tile parser ------------------------------------------------------------------------------------------
def test_a_bad_tile_string_in_both_languages(capsys):
    with pytest.raises(TileError) as caught:
        parse("12m3")
    assert _both(caught.value) == ("'12m3' 中有数字没有花色字母", "rank without a suit letter in '12m3'")
    with pytest.raises(TileError) as caught:
        code(99)                                     # (a value named as the error's kind is: worded's is positional)
    assert _both(caught.value) == ("没有牌种 99", "no tile kind 99")
    assert main(["--lang", "zh-CN", "diag", "--sim", "kong", "1", "9x", "--from", "2"]) == 1
    assert capsys.readouterr().out.strip() == "失败：牌：'9x' 中有数字没有花色字母"
    assert main(["--lang", "en", "diag", "--sim", "kong", "1", "9x", "--from", "2"]) == 1
    assert capsys.readouterr().out.strip() == "FAILED: tile: rank without a suit letter in '9x'"


# -- the control socket's own answers -------------------------------------------------------------------------
SOCKET_LINES = [
    (b"[1, 2]\n", "bad request: a request is a JSON object", "错误的请求：请求须为 JSON 对象"),
    (b'{"cmd": "state", "timeout_s": 1e-9}\n', "bad request: timeout_s between 0.1 and 14400 s, not 1e-09",
     "错误的请求：timeout_s 须在 0.1 到 14400 秒之间，而不是 1e-09"),
    (b"\xff\n", "bad request: not UTF-8 text (invalid start byte at byte 0)",
     "错误的请求：不是 UTF-8 文本（第 0 字节：invalid start byte）"),
]


def test_the_sockets_answers_about_a_request_line_in_both_languages(table):  # noqa: F811 (the fixture)
    table.serve()
    with _connect(table.path) as sock:
        sock.sendall(b"".join(line for line, _, _ in SOCKET_LINES))
        answers = _lines(sock, len(SOCKET_LINES))
    assert [a["error"] for a in answers] == [english for _, english, _ in SOCKET_LINES]
    words.use("zh_CN")
    assert [words.refusal(a) for a in answers] == [chinese for _, _, chinese in SOCKET_LINES]
    assert render(answers[0], words) == "失败：错误的请求：请求须为 JSON 对象"
    words.use("en")
    assert [words.refusal(a) for a in answers] == [english for _, english, _ in SOCKET_LINES]


def test_the_sockets_answers_about_the_connection_in_both_languages(table):  # noqa: F811 (the fixture)
    table.serve(idle_timeout_s=0.2)
    with _connect(table.path) as idle:
        idled = _lines(idle, 1)[0]                   # nothing sent: after 0.2 s the server says so and hangs up
    with _connect(table.path) as waiting:            # the loop is not driven: the controller cannot answer
        waiting.sendall(b'{"cmd": "state", "timeout_s": 0.5}\n')
        timed = _lines(waiting, 1)[0]
    assert (idled["error"], timed["error"]) == ("idle for 0.2 s: closing", "the controller did not answer within 0.5 s")
    words.use("zh_CN")
    assert (words.refusal(idled), words.refusal(timed)) == ("空闲 0.2 秒：关闭连接", "控制器在 0.5 秒内没有回答")


# -- the enrol hint -------------------------------------------------------------------------------------------
def test_the_enrol_hint_in_both_languages():
    registry = TileRegistry()
    hint = registry.enrol_hint()
    assert hint == ("no tile set is enrolled (the table model's [reader.registry] names none): walls are counted, "
                    "not verified")
    words.use("zh_CN")
    assert said_text(hint) == "没有登记任何牌套（牌桌型号的 [reader.registry] 未列出任何牌套）：牌墙只计数，不核验"
    words.use("en")
    assert said_text(hint) == hint


def test_a_malformed_request_field_in_both_languages(table):  # noqa: F811 (the fixture)
    table.serve()
    answers = [table.ask(request) for request in ({"cmd": "burn-in", "cycles": "many"},
                                                  {"cmd": "jog", "mechanism": "turntable", "hold": "yes"})]
    assert [a["error"] for a in answers] == ["cycles: a whole number, not 'many'", "hold: true or false, not 'yes'"]
    words.use("zh_CN")
    assert [words.refusal(a) for a in answers] == ["cycles：须为整数，而不是 'many'",
                                                   "hold：须为 true 或 false，而不是 'yes'"]
