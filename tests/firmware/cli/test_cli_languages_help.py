"""The help of every command, and argparse's own words (usage, options, its errors), in Chinese and English.

The language is chosen before the parser is built (``--lang`` read first,
else the environment), so the descriptions, the options' help and the
epilogs come from the ``cli`` catalogue; argparse's headings and refusals
too (:mod:`firmware.cli.argparse_words`), whose messages must still be
argparse's own, word for word, in the Python that runs.
"""

from __future__ import annotations

import argparse
import re

import pytest

from firmware.cli import argparse_words, words
from firmware.cli.main import build_parser, lang_asked, main
from tests.firmware.cli.test_cli_languages_commands import HAN, english_left

# every command and tool a person asks for help on (mjtable tourney too: the hall's side, a plugin)
COMMANDS = [[], ["sim"], ["config"], ["config", "check"], ["deal"], ["diag"], ["diag", "reader"],
            ["diag", "reader", "inventory"], ["diag", "judge"], ["diag", "kong"], ["diag", "test"], ["diag", "enroll"],
            ["reader-sim"], ["score"], ["run"], ["install"], ["release"], ["release", "activate"], ["selftest"],
            ["bundle"], ["web"], ["web", "passwd"], ["web", "cert"], ["fleet"], ["fleet", "certs"],
            ["fleet", "certs", "table"], ["fleet", "broker-config"], ["fleet", "watch"], ["fleet", "send"],
            ["fleet", "release"], ["verify"], ["tourney"], ["tourney", "new"], ["tourney", "serve"]]


@pytest.fixture(autouse=True)
def _english_after():
    yield
    words.use("en")


def _help(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--help"])
    assert exc.value.code == 0
    return capsys.readouterr().out


def _sentences(text: str) -> list[str]:
    """English phrases left in a help text, but for what is no sentence: an example's command line (its words are
    checked apart), the choices' names ({ack,rebirth}), the rule sets' names, the usage line."""
    from firmware.rules.names import RULE_NAMES

    names = "|".join(rf"\b{name}\b" for name in RULE_NAMES)
    text = re.sub(r"\{[^}]*\}|\bmake bundle\b|\bname,team\b|\b\w+(\.\w+)+|" + names, " ", text)   # (a CSV's header)
    kept = [line for line in text.splitlines() if not re.match(r"\s*(用法：|(sudo )?mjtable )", line)]
    return english_left("\n".join(kept))


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "mjtable")
def test_every_commands_help_is_chinese(command, capsys):
    out = _help(capsys, "--lang", "zh-CN", *command)
    assert out.startswith("用法：mjtable") and "\n选项：\n" in out and HAN.search(out), out
    assert not re.search(r"^\S.*:$", out, re.M), out          # (every heading ends as Chinese ends it: ：)
    assert "usage:" not in out and "options:" not in out and "show this help message" not in out
    assert _sentences(out) == [], out


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "mjtable")
def test_every_commands_help_is_english_in_english(command, capsys):
    out = _help(capsys, "--lang", "en", *command)
    assert out.startswith("usage: mjtable") and "options:" in out and "show this help message and exit" in out
    assert not HAN.search(re.sub(r"[(（][^)）]*[\u4e00-\u9fff][^)）]*[)）]|[\u4e00-\u9fff]+'s|\b\S*[\u4e00-\u9fff]+\S*",
                                 "", out)), out


def test_the_help_follows_the_environment_without_lang(monkeypatch, capsys):
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    out = _help(capsys, "deal")
    assert "按哪个规则配牌" in out and "洗牌的种子" in out and "庄家所在的物理边 0..3（默认 0）" in out
    out = _help(capsys, "--lang=en", "deal")
    assert "the rule set whose deal to follow" in out


def test_examples_keep_their_commands_and_translate_their_words(capsys):
    out = _help(capsys, "--lang", "zh-CN")
    assert "\n位置参数：\n" in out and "\n示例：\n" in out
    assert "mjtable sim --seed 7 --inject jam:stacker2@stacking1 --report run.json" in out
    assert "在模拟牌桌上打一局 16 手的国标麻将，并给出汇总" in out


@pytest.mark.parametrize("argv, chinese, english", [
    (["fleet", "send"], "缺少以下必需参数：verb, --broker", "the following arguments are required: verb, --broker"),
    (["reader-sim", "--feed-set", "Z"], "参数 --feed-set：无效的选择：'Z'（可选：'A', 'B'）",
     "argument --feed-set: invalid choice: 'Z' (choose from 'A', 'B')"),
    (["deal", "--seed", "x"], "参数 --seed：无效的 int 值：'x'", "argument --seed: invalid int value: 'x'"),
    (["deal", "--what"], "无法识别的参数：--what", "unrecognized arguments: --what"),
    (["deal", "--seed"], "参数 --seed：需要一个参数", "argument --seed: expected one argument"),
    (["reader-sim", "--noise", "2"], "'2'：概率在 0 和 1 之间", "'2': a probability is between 0 and 1"),
    (["reader-sim", "--pad-tiles", "99"], "99：须在 0 到 14 之间", "99: from 0 to 14"),
    (["reader-sim", "--seconds", "x"], "'x' 不是秒数", "'x' is not a number of seconds"),
    (["nope"], "参数 COMMAND：无效的选择：'nope'", "argument COMMAND: invalid choice: 'nope'"),
])
def test_argparses_refusals_in_both_languages(argv, chinese, english, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--lang", "zh-CN", *argv])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and chinese in err and "（参见 mjtable" in err and english_left(err) == [], err
    with pytest.raises(SystemExit) as exc:
        main(["--lang", "en", *argv])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and english in err and "(see mjtable" in err and not HAN.search(err), err


def test_argparse_speaks_english_again_after_a_run(capsys):
    main(["--lang", "zh-CN", "config", "check", "/nonexistent.toml"])
    capsys.readouterr()
    assert argparse._ is not words._ and argparse.ngettext is not words.ngettext     # (put back as it was)
    assert "usage:" in build_parser().format_usage()


@pytest.mark.parametrize("argv, locale", [
    (["--lang", "zh-CN", "sim"], "zh_CN"), (["--lang=zh_CN", "sim"], "zh_CN"), (["--lang", "en"], "en"),
    (["sim"], None), (["--lang", "klingon", "sim"], None), (["--lang"], None), (["sim", "--", "--lang", "zh"], None),
])
def test_lang_is_read_before_the_parser(argv, locale):
    assert lang_asked(argv) == locale


def test_our_argparse_messages_are_still_argparses_own():
    """Each message we translate for argparse is, word for word, one argparse of this Python asks for (a newer
    Python rewording one would leave it English: then list its new words)."""
    babel = pytest.importorskip("babel.messages.extract")
    asked = {message for _line, message, _c, _ctx in babel.extract_from_file("python", argparse.__file__)}
    ours = set(argparse_words.MESSAGES) | set(argparse_words.PLURALS)
    assert ours - asked == set()
    user_facing = {m for m in asked if isinstance(m, str) and not re.search(
        r"conflict|not defined|callable|merge|invalid argument for positionals|invalid option string|dest=|"
        r"mutually exclusive arguments must|multiple subparser|with mode", m)}
    assert user_facing - ours == set(), "argparse words these too: add them to argparse_words.MESSAGES"
