"""Errors from deep in the firmware in the command line's language: a broken configuration file, in parts.

A :class:`~firmware.faults.ConfigError` carries its problems in parts
(file, table, key, what); the command line words the sentence around them
in Chinese or English and keeps the technical detail it cannot translate
(the TOML parser's message, a validator's English).
"""

from __future__ import annotations

import pytest

from firmware.cli import words
from firmware.cli.main import main
from firmware.config import default_table_path
from tests.firmware.cli.test_cli_languages_commands import HAN, english_left


@pytest.fixture(autouse=True)
def _english_after():
    yield
    words.use("en")


def _bad_table(tmp_path):
    bad = tmp_path / "table.toml"
    text = default_table_path().read_text().replace("[stacker]", "[stacker]\ncam_turn = 1.4", 1)
    bad.write_text(text.replace('name = "', 'name = 3\nold_name = "', 1))
    return bad


def test_a_broken_table_file_in_chinese_and_english(tmp_path, capsys):
    bad = _bad_table(tmp_path)
    assert main(["--lang", "zh-CN", "sim", "--table", str(bad), "--hands", "1"]) == 2
    err = capsys.readouterr().err
    assert f"mjtable: {bad}：表 [table] 的键 'name'：须为文本（加引号）（实际为 3）" in err, err
    assert f"{bad}：表 [stacker] 的键 'cam_turn'：未知的键" in err and english_left(err.replace(str(bad), "")) == []
    assert main(["--lang", "en", "sim", "--table", str(bad), "--hands", "1"]) == 2
    err = capsys.readouterr().err
    assert f"mjtable: {bad}: table [table] key 'name': must be text (in quotes) (got 3)" in err
    assert f"{bad}: table [stacker] key 'cam_turn': unknown key" in err and not HAN.search(err)


def test_config_check_words_every_problem(tmp_path, capsys):
    broken = tmp_path / "broken.toml"
    broken.write_text("[table\n")
    empty = tmp_path / "empty.toml"
    empty.write_text(default_table_path().read_text().replace('name = "', 'name = " "\nold = "', 1))
    pins = tmp_path / "pins.toml"
    pins.write_text(default_table_path().read_text().replace('motor_pin = "exp0:GPIO12"', 'motor_pin = "GPIO22"', 1))
    files = [str(p) for p in (broken, tmp_path / "none.toml", tmp_path, empty, pins)]
    assert main(["--lang", "zh-CN", "config", "check", *files]) == 1
    err = capsys.readouterr().err
    assert f"{broken}：不是有效的 TOML：" in err and "(at line 1" in err             # (the parser's detail kept)
    assert f"{tmp_path / 'none.toml'}：文件不存在" in err and f"{tmp_path}：是文件夹，不是 TOML 文件" in err
    assert f"{empty}：表 [table] 的键 'name'：不能为空（也不能只有空格）（实际为 ' '）" in err
    assert f"{pins}：表 [dice] 的键 'motor_pin'：pin GPIO22 is already used by center_lift.up_motor_pin" in err, err
    assert "table [" not in err and "no such file" not in err and "missing key" not in err
    assert main(["--lang", "en", "config", "check", *files]) == 1
    err = capsys.readouterr().err
    assert f"{broken}: not valid TOML: " in err and f"{tmp_path / 'none.toml'}: no such file" in err
    assert f"{empty}: table [table] key 'name': must not be empty (nor only spaces) (got ' ')" in err
    assert not HAN.search(err)


def test_a_top_level_key_in_chinese(tmp_path, capsys):
    bad = tmp_path / "t.toml"
    bad.write_text('[table]\nname = "t"\ntile_set = 144\n')
    assert main(["--lang", "zh-CN", "config", "check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}：顶层的键 'stacker'：缺少此键" in err and "顶层" in err and "top level" not in err


def test_other_errors_keep_their_message():
    from firmware.cli.error_words import said
    from firmware.faults import TableError

    assert said(TableError("E80 reader not answering")) == "E80 reader not answering"


# -- errors the firmware makes with worded(): the fleet's certificates, keys, ids, broker URLs, waves ----------------
def test_a_worded_error_is_english_and_keeps_its_parts():
    from firmware.i18n import Phrase, worded

    exc = worded(FileExistsError, "%(key)s exists (give --force to replace it)", key="k.pem")
    assert isinstance(exc, FileExistsError) and str(exc) == "k.pem exists (give --force to replace it)"
    assert (exc.template, exc.values) == ("%(key)s exists (give --force to replace it)", {"key": "k.pem"})
    from firmware.fleet.topics import check_id

    with pytest.raises(ValueError) as info:
        check_id("a/b", "site")
    assert isinstance(info.value.values["what"], Phrase) and str(info.value).startswith("site 'a/b': 1 to 64")


@pytest.mark.parametrize("argv, chinese, english", [
    (["fleet", "certs", "table", "t1", "--ca", "nowhere", "--out", "y"],
     "nowhere/ca.crt：那里没有 CA（用此命令新建：mjtable fleet certs ca --out nowhere）",
     "nowhere/ca.crt: no CA there (make one with: mjtable fleet certs ca --out nowhere)"),
    (["fleet", "certs", "table", "t/1", "--ca", "x", "--out", "y"], "牌桌编号 't/1'：须为 1 到 64 个字母",
     "table id 't/1': 1 to 64 letters"),
    (["fleet", "certs", "server", "a b", "--ca", "nowhere", "--out", "y"], "'a b' 不是主机名或 IP 地址",
     "'a b' is not a host name or an IP address"),
    (["fleet", "broker-config", "--site", "hall#", "--ca", "x", "--out", "y"], "场馆 'hall#'：须为 1 到 64 个字母",
     "site 'hall#': 1 to 64 letters"),
    (["fleet", "broker-config", "--site", "hall1", "--ca", "nowhere", "--out", "y"],
     "nowhere/ca.crt：文件不存在（--ca；用 mjtable fleet certs 生成）",
     "nowhere/ca.crt: no such file (--ca; make them with mjtable fleet certs)"),
    (["fleet", "watch", "--broker", "tcp://x", "--site", "hall1"],
     "--broker：'tcp://x'：协议应为 mqtt://（明文）或 mqtts://（TLS），而不是 tcp://",
     "--broker: 'tcp://x': the scheme is mqtt:// (plain) or mqtts:// (TLS), not tcp://"),
    (["fleet", "release", "--bundle", "b", "--url", "http://h/b", "--broker", "mqtt://x", "--site", "hall1",
      "--tables", "t1,t2", "--waves", "1,x", "--sign-key", "k"],
     "--waves '1,x'：'x' 不是牌桌的数量（1、2……）或比例（25%）",
     "--waves '1,x': 'x' is not a count (1, 2, ...) or a share (25%) of the tables"),
    (["sim", "--fleet", "2", "--broker", "mqtt://h:99999"], "--broker：'mqtt://h:99999'：端口须为 1 到 65535 的数字",
     "--broker: 'mqtt://h:99999': the port is a number from 1 to 65535"),
])
def test_the_fleets_errors_from_deep_in_the_firmware_in_both_languages(argv, chinese, english, capsys, tmp_path,
                                                                        monkeypatch):
    monkeypatch.chdir(tmp_path)
    for lang, expected in (("zh-CN", chinese), ("en", english)):
        try:
            code = main(["--lang", lang, *argv])
        except SystemExit as exc:
            code = exc.code
        err = capsys.readouterr().err
        assert code == 2 and expected in err and len(err.strip().splitlines()) == 1, (lang, err)
        assert (english_left(err) == []) if lang == "zh-CN" else not HAN.search(err), err


def test_a_broken_tile_registry_and_an_unknown_rule_set_in_both_languages(tmp_path, capsys):
    model = tmp_path / "tables" / "t.toml"
    model.parent.mkdir()
    model.write_text(default_table_path().read_text().replace('A = "../tiles/sim-A.csv"', 'A = "../A.csv"'))
    (tmp_path / "A.csv").write_text("uid,set,tile\nzz,A,1m\n")
    assert main(["--lang", "zh-CN", "config", "check", str(model)]) == 1
    err = capsys.readouterr().err
    assert "A.csv：第 2 行：UID 'zz' 不是十六进制" in err and english_left(err.replace(str(tmp_path), "")) == [], err
    assert main(["--lang", "en", "config", "check", str(model)]) == 1
    assert ": line 2: UID 'zz' is not hex" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--lang", "zh-CN", "deal", "--rules", "riichi"])
    assert "未知的规则 'riichi'；可选：mcr, competition" in capsys.readouterr().err
