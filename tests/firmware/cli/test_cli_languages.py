"""The command line's languages: ``--lang``, else the environment; its catalogue (domain ``cli``) complete and compiled.

Commands run with ``--lang zh-CN``, with ``LANG=zh_CN.UTF-8`` (in a process
of their own too) and with ``--lang en`` over a Chinese environment; what
they write is Chinese or English as asked, with no state's identifier in it.
The catalogue: every message ``make i18n`` extracts (``babel-cli.cfg``) has
its Chinese with the same placeholders, each language's ``.mo`` says what
its ``.po`` says, and the plural forms are each language's.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from firmware.cli import words
from firmware.cli.main import main
from firmware.i18n import LOCALES, locale_of_environment

ROOT = Path(__file__).resolve().parents[3]
LOCALE = ROOT / "firmware" / "cli" / "locale"
PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]|%s")
HAN = re.compile(r"[\u4e00-\u9fff]")
ZH_ENV = {"LANG": "zh_CN.UTF-8"}


@pytest.fixture(autouse=True)
def _english_after():
    yield
    words.use("en")                     # (the process's language: the next test starts from the code's English)


def _environment(monkeypatch, **values: str) -> None:
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in values.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("environ, chosen", [
    ({"LANG": "zh_CN.UTF-8"}, "zh_CN"), ({"LANG": "zh_TW.UTF-8"}, "zh_CN"), ({"LANG": "en_GB.UTF-8"}, "en"),
    ({"LANG": "C.UTF-8"}, "en"), ({"LANG": "de_DE.UTF-8"}, "en"), ({}, "en"), ({"LANG": "POSIX"}, "en"),
    ({"LANGUAGE": "zh_CN:en", "LANG": "en_US.UTF-8"}, "zh_CN"), ({"LANGUAGE": "en", "LANG": "zh_CN.UTF-8"}, "en"),
    ({"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh_CN"), ({"LC_MESSAGES": "zh_CN", "LANG": "C"}, "zh_CN"),
    ({"LANGUAGE": "", "LC_ALL": "", "LANG": "zh_SG"}, "zh_CN"),
])
def test_the_environment_chooses_the_language(environ, chosen):
    assert locale_of_environment(environ) == chosen


def test_lang_comes_before_the_environment_and_is_checked():
    assert words.choose(words.language("zh-CN"), {"LANG": "en_US.UTF-8"}) == "zh_CN"
    assert words.choose(words.language("en"), ZH_ENV) == "en"
    assert words.choose(None, ZH_ENV) == "zh_CN"
    with pytest.raises(ValueError, match="zh-CN or en"):
        words.language("fr")


def test_a_bad_lang_is_one_line_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--lang", "klingon", "config", "check"])
    assert exc.value.code == 2 and "zh-CN or en" in capsys.readouterr().err


def test_lang_zh_cn_words_results_and_errors_in_chinese(monkeypatch, capsys, tmp_path):
    _environment(monkeypatch, LANG="en_US.UTF-8")
    rules = ROOT / "config" / "rules" / "mcr.toml"
    assert main(["--lang", "zh-CN", "config", "check", str(rules)]) == 0
    assert f"{rules}：正常（规则 mcr，144 张牌）" in capsys.readouterr().out
    assert main(["--lang", "zh-CN", "score", str(tmp_path / "none.jsonl")]) == 2
    assert "无法读取" in capsys.readouterr().err
    users = tmp_path / "users.json"
    monkeypatch.setattr(sys, "stdin", io.StringIO("correct-horse-1\n"))
    assert main(["--lang", "zh-CN", "web", "passwd", "ana", "--role", "technician", "--users", str(users),
                 "--password-stdin"]) == 0
    assert f"用户 ana（技术员）已写入 {users}" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["--lang", "zh-CN", "web", "passwd", "bo", "--users", str(users), "--password-stdin"]) == 2
    assert "标准输入中没有密码" in capsys.readouterr().err


def test_score_says_what_went_wrong_in_the_chosen_language(monkeypatch, capsys, tmp_path):
    """The answers on standard output are data (their errors as the format has them); the line on standard error
    is for the person, counted with plural forms."""
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": 1}\nnot json\n{"id": 2}\n')
    assert main(["--lang", "en", "score", str(cases)]) == 1
    err = capsys.readouterr().err
    assert "3 lines answered, 1 could not be read, 2 are not valid cases" in err
    assert main(["--lang", "zh-CN", "score", str(cases)]) == 1
    out, err = capsys.readouterr()
    assert "已回答 3 行，1 行无法读取，2 行不是有效的牌例" in err and '"error"' in out


def test_lang_en_over_a_chinese_environment_is_english(monkeypatch, capsys):
    _environment(monkeypatch, **ZH_ENV)
    assert main(["--lang", "en", "config", "check", str(ROOT / "config" / "rules" / "mcr.toml")]) == 0
    out = capsys.readouterr().out
    assert ": ok (rule set mcr, 144 tiles)" in out and not HAN.search(out.replace("mcr", ""))


def test_lang_zh_cn_environment_words_the_simulators_summary(monkeypatch, capsys):
    _environment(monkeypatch, **ZH_ENV)
    assert main(["sim", "--hands", "1", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "牌局：共 1 手，已打 1 手" in out and "最终状态：" in out and "识牌器：" in out
    assert not re.search(r"\bin_play\b|\bhands:|final state", out)
    _environment(monkeypatch, LANG="C.UTF-8")
    assert main(["sim", "--hands", "1", "--seed", "3", "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("final state Playing")


def test_diag_words_its_lines_in_chinese(monkeypatch, capsys):
    _environment(monkeypatch, **ZH_ENV)
    assert main(["diag", "--sim", "--service", "jog", "turntable", "--seconds", "4"]) == 0
    assert "运转 4 秒，1 圈" in capsys.readouterr().out
    assert main(["diag", "--sim", "session", "status"]) == 0
    assert "开台：未开台（牌桌可自由使用）" in capsys.readouterr().out
    assert main(["diag", "--sim", "state"]) == 0
    assert capsys.readouterr().out.startswith("状态：请推牌\n")      # (the state in words: never its identifier)
    assert main(["diag", "--sim", "test", "dice"]) == 1            # (the controller's refusal: a code, worded here)
    out = capsys.readouterr().out
    assert out.startswith("失败：电机测试需要维修模式") and "the table is" not in out


def test_a_process_of_its_own_takes_lang_from_its_environment(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")}
    env.update(PYTHONPATH=str(ROOT), LANG="zh_CN.UTF-8")
    done = subprocess.run([sys.executable, "-m", "firmware.cli.main", "install", "--config-only", "--root",
                           str(tmp_path / "none")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2 and "文件夹不存在" in done.stderr, done.stderr[-1000:]


# -- the catalogue -----------------------------------------------------------------------------------------------
babel_needed = pytest.mark.skipif(not __import__("importlib").util.find_spec("babel"),
                                  reason="Babel is a tool of the build (the test and lint extras)")


def _po(locale: str):
    from babel.messages.pofile import read_po

    with open(LOCALE / locale / "LC_MESSAGES" / "cli.po", "rb") as f:
        return read_po(f)


def _extracted() -> dict[object, str]:
    """The messages as ``make i18n`` extracts them for the command line (babel-cli.cfg, the same keywords)."""
    from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
    from babel.messages.frontend import parse_mapping_cfg

    with open(ROOT / "babel-cli.cfg") as f:
        method_map, options_map = parse_mapping_cfg(f)
    keywords = {**DEFAULT_KEYWORDS, "N_": None, "Nn_": (1, 2), "worded": (2,)}
    return {message: filename for filename, _, message, _c, _ in
            extract_from_dir(str(ROOT), method_map, options_map, keywords)}


@babel_needed
def test_every_message_of_the_command_line_has_its_chinese_with_the_same_placeholders():
    extracted = _extracted()
    assert len(extracted) > 150
    zh = _po("zh_CN")
    missing, wrong = [], []
    for message, where in extracted.items():
        entry = zh.get(message)
        strings = entry.string if entry is not None and isinstance(entry.string, tuple) else (
            (entry.string,) if entry is not None else ())
        if entry is None or entry.fuzzy or not strings or not all(strings):
            missing.append((message, where))
            continue
        ids = message if isinstance(message, tuple) else (message,)
        if any(sorted(PLACEHOLDER.findall(s)) != sorted(PLACEHOLDER.findall(ids[0])) for s in strings):
            wrong.append(message)
    assert missing == [], f"not translated (make i18n, then translate in the .po): {missing[:5]}"
    assert wrong == [], f"placeholders differ: {wrong[:5]}"
    en = _po("en")
    assert all(all(m.string) for m in en if m.id and isinstance(m.id, tuple)), "en: plural forms not filled"


@babel_needed
@pytest.mark.parametrize("locale", LOCALES)
def test_the_compiled_catalogue_says_what_its_po_says(locale, tmp_path):
    """The .mo the wheel ships (committed) is what ``make i18n`` compiles from its .po: compiled again here, the
    same messages."""
    from babel.messages.mofile import read_mo, write_mo

    po = _po(locale)
    fresh = tmp_path / "cli.mo"
    with open(fresh, "wb") as f:
        write_mo(f, po)
    with open(LOCALE / locale / "LC_MESSAGES" / "cli.mo", "rb") as f:
        shipped = read_mo(f)
    with open(fresh, "rb") as f:
        compiled = read_mo(f)

    def table(catalog):
        return {(tuple(m.id) if isinstance(m.id, (list, tuple)) else m.id):
                (tuple(m.string) if isinstance(m.string, (list, tuple)) else m.string) for m in catalog if m.id}
    assert table(shipped) == table(compiled), f"{locale}: run make i18n (pybabel compile)"
    assert shipped.plural_forms == po.plural_forms


def test_the_chinese_catalogue_falls_back_to_the_pages_for_faults_and_states():
    zh = words.catalogue_of("zh_CN")
    from firmware.faults import FaultCode
    from firmware.web.i18n import STATES

    assert HAN.search(zh.gettext(FaultCode("E04").hint)) and HAN.search(zh.gettext(STATES["in_play"]))
    assert zh.gettext("selftest passed") == "自检通过"
    assert words.catalogue_of("en").gettext("selftest passed") == "selftest passed"
