"""A bundle's, a release's and the operating system's words in the command line's language (their English kept).

The release's errors are made with ``worded()`` and the OS checks' texts
with ``worded_text()``: their str is the English (the log, the fleet's
``reason``); the command line says them in Chinese or English.
"""

from __future__ import annotations

import pytest

from firmware.cli import words
from firmware.cli.error_words import said_text
from firmware.cli.main import main
from firmware.release.os_checks import INSTALL_MARKS, check_table_os, format_report
from tests.firmware.cli.test_cli_languages_commands import HAN
from tests.firmware.release.test_os_checks import make_root


@pytest.fixture(autouse=True)
def _english_after():
    yield
    words.use("en")


def test_a_bundle_that_is_not_one_in_both_languages(tmp_path, capsys):
    bundle = tmp_path / "x.bundle.tar"
    bundle.write_text("not a tar")
    (tmp_path / "root").mkdir()
    install = ["install", "--bundle", str(bundle), "--root", str(tmp_path / "root")]
    assert main(["--lang", "zh-CN", *install]) == 2
    assert capsys.readouterr().err.strip() == f"mjtable: {bundle}：不是发布包（不是 tar 文件）"
    assert main(["--lang", "en", *install]) == 2
    assert capsys.readouterr().err.strip() == f"mjtable: {bundle}: not a release bundle (not a tar file)"


def test_a_release_and_a_signing_key_refused_in_both_languages(tmp_path, capsys):
    root = ["--root", str(tmp_path)]
    assert main(["--lang", "zh-CN", "release", "rollback", *root]) == 2
    assert capsys.readouterr().err.strip() == "mjtable: 没有可回滚到的上一个版本"
    assert main(["--lang", "zh-CN", "release", "activate", "9.9", *root]) == 2
    assert capsys.readouterr().err.strip() == f"mjtable: {tmp_path}/opt/mjtable/releases 下没有版本 9.9"
    assert main(["--lang", "en", "release", "activate", "9.9", *root]) == 2
    assert capsys.readouterr().err.strip() == f"mjtable: no release 9.9 under {tmp_path}/opt/mjtable/releases"
    key = tmp_path / "key.pub"
    key.write_text("-----BEGIN PRIVATE KEY-----\n")
    from firmware.faults import TableError
    from firmware.release.bundle import check_public_key
    with pytest.raises(TableError) as caught:
        check_public_key(key)
    assert str(caught.value) == (f"{key}: a private key; trust the public one (.pub), keep the private one off "
                                 "the tables")                                    # (the log's English)
    words.use("zh_CN")
    from firmware.cli.error_words import said
    assert said(caught.value) == f"{key}：这是私钥；请信任公钥（.pub），私钥不要放到牌桌上"


def test_the_operating_systems_checks_in_both_languages(tmp_path):
    checks = check_table_os(make_root(tmp_path))
    english = format_report(checks, INSTALL_MARKS)
    assert english.startswith("warn    read-only root: / is ext4 mounted read-write: a power cut") and not HAN.search(
        english)
    assert format_report(checks, INSTALL_MARKS, said_text) == english        # (English: the same words)
    words.use("zh_CN")
    chinese = format_report(checks, INSTALL_MARKS, said_text)
    lines = chinese.splitlines()
    assert lines[0] == "注意    只读根分区：/ 是以读写方式挂载的 ext4：系统写入时断电可能将其损坏", chinese
    assert lines[1].startswith("        处理：sudo raspi-config nonint do_overlayfs 0（菜单：")
    assert "注意    数据分区（/var/lib/mjtable）：数据库位于根文件系统上：" in chinese
    assert ("注意    journald：Storage=auto（默认值）：由于 /var/log/journal 存在，日志保存在存储卡上，且没有大小上限"
            in chinese)
    assert not any(w in chinese for w in ("warn", "fix:", "power", "the card", "read-write", "partition"))
    assert str(checks[0].detail) == "/ is ext4 mounted read-write: a power cut while the system writes can corrupt it"


def test_the_selftest_in_both_languages(tmp_path, capsys):
    """Each check's name and detail in the language, the controller's state in words, its English kept for the log."""
    state = tmp_path / "table.db"
    args = ["selftest", "--config-dir", "config", "--table", "config/tables/four_port_double.toml",
            "--state", str(state), "--sim-seconds", "0", "--os-root", str(tmp_path)]
    assert main(["--lang", "zh-CN", *args]) == 0
    zh = capsys.readouterr().out.splitlines()
    assert zh[0].startswith("正常  模块导入：") and zh[0].endswith("个模块")
    assert zh[1].startswith("正常  配置：config/tables/four_port_double.toml（")
    assert "张牌，牌套 A/B），规则 mcr" in zh[1]
    assert zh[2] == f"正常  数据库：{state} 尚不存在：将新建一个" and zh[-1] == "自检通过"
    assert main(["--lang", "en", *args]) == 0
    en = capsys.readouterr().out.splitlines()
    assert en[2] == f"ok  database: {state} does not exist yet: a fresh one starts" and en[-1] == "selftest passed"
    assert main(["--lang", "zh-CN", *args[:3], "--table", str(tmp_path / "none.toml"), *args[5:]]) == 1
    failed = capsys.readouterr()
    assert "失败  配置：" in failed.out and "自检失败：配置" in failed.err


def test_a_failed_run_names_the_state_in_words():
    from firmware.cli.error_words import said, said_text
    from firmware.cli.release_cmd import _check_detail
    from firmware.controller.states import TableState
    from firmware.reader.driver import LinkState
    from firmware.release.selftest import check_sim_run

    check = check_sim_run(lambda seconds: (TableState.LATCHED, ["E31"], LinkState.UP), 2.0)
    assert not check.ok and check.line() == "FAILED run --sim: after 2 s: state latched, reader UP, faults E31"
    words.use("zh_CN")
    detail = _check_detail(check, said, said_text)
    assert detail.startswith("2 秒后：状态 ") and "latched" not in detail and detail.endswith("故障 E31")
    assert HAN.search(detail.split("状态 ")[1].split("，")[0])
