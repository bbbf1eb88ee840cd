"""The service side: the systemd unit, sd_notify, the install command, and a dry run of ``mjtable run``."""

import configparser
import os
import shlex
import socket
from pathlib import Path

import pytest

from firmware.cli.main import build_parser, main
from firmware.config import config_dir, load_table_config
from hal.systemd import Notifier

UNIT = config_dir() / "systemd" / "mjtable.service"


def _unit():
    parser = configparser.ConfigParser(strict=True, interpolation=None)
    parser.optionxform = str
    parser.read_string(UNIT.read_text())
    return parser


def test_unit_file_is_a_notify_service_that_restarts_and_is_watched():
    unit = _unit()
    assert set(unit.sections()) == {"Unit", "Service", "Install"}
    service = unit["Service"]
    assert service["Type"] == "notify" and service["Restart"] == "on-failure"
    assert int(service["WatchdogSec"]) > 0 and service["User"] == "mjtable"
    assert unit["Install"]["WantedBy"] == "multi-user.target"


def test_unit_file_command_line_is_one_the_cli_accepts():
    argv = shlex.split(_unit()["Service"]["ExecStart"])
    assert argv[0].endswith("/mjtable") and argv[1] == "run"
    args = build_parser().parse_args(argv[1:])
    assert args.func.__module__ == "firmware.cli.run_cmd"
    assert str(args.state).startswith("/var/lib/mjtable") and str(args.table).startswith("/etc/mjtable")


def test_notifier_speaks_sd_notify(tmp_path):
    path = str(tmp_path / "notify")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(path)
    server.settimeout(2)
    try:
        notifier = Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "10000000"})
        assert notifier.watchdog_s == 10.0
        assert notifier.ready("table ready")
        assert server.recv(256) == b"READY=1\nSTATUS=table ready"
        assert notifier.watchdog() and server.recv(256) == b"WATCHDOG=1"
    finally:
        server.close()
    assert not Notifier({}).ready() and Notifier({}).watchdog_s is None


def test_install_into_a_root(tmp_path, capsys):
    assert main(["install", "--root", str(tmp_path), "--no-venv"]) == 0
    assert (tmp_path / "etc/systemd/system/mjtable.service").read_text() == UNIT.read_text()
    installed = load_table_config(tmp_path / "etc/mjtable/tables/table.toml")
    assert installed.registry_files()["A"].resolve() == (tmp_path / "etc/mjtable/tiles/sim-A.csv").resolve()
    assert (tmp_path / "var/lib/mjtable").is_dir()
    assert "systemctl daemon-reload" in capsys.readouterr().out
    assert main(["install", "--root", str(tmp_path), "--no-venv"]) == 2          # exists: needs --force
    assert "--force" in capsys.readouterr().err
    assert main(["install", "--root", str(tmp_path), "--no-venv", "--force"]) == 0


def test_install_with_another_rule_set_checks_it_against_the_table(tmp_path, capsys):
    assert main(["install", "--root", str(tmp_path), "--no-venv", "--rules", "competition"]) == 0
    unit = (tmp_path / "etc/systemd/system/mjtable.service").read_text()
    assert "--rules competition" in unit and "--rules mcr" not in unit
    # 辽宁 plays 136 tiles: the four-port model is set up for 144, so the service would latch E03
    assert main(["install", "--root", str(tmp_path / "b"), "--no-venv", "--rules", "liaoning"]) == 2
    assert "plays 136 tiles" in capsys.readouterr().err


@pytest.mark.slow          # real time
def test_run_dry_on_mock_pins(tmp_path):
    db = tmp_path / "state" / "table.db"
    assert main(["run", "--pin-factory", "mock", "--seconds", "0.5", "--state", str(db)]) == 0
    assert db.exists()


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX only")
def test_make_install_pi_target_uses_the_install_command():
    makefile = (Path(__file__).parent.parent / "Makefile").read_text()
    assert "install-pi:" in makefile and "mjtable install --root /" in makefile


def test_journal_lines_carry_their_priority():
    import logging

    from hal.systemd import JournalFormatter, log_to_journal_if_there

    record = logging.LogRecord("mjtable.run", logging.ERROR, __file__, 1, "E31 stacking head side 0\nhint: x",
                               None, None)
    assert JournalFormatter().format(record) == "<3>mjtable.run: E31 stacking head side 0\n<3>hint: x"
    record.levelno = logging.INFO
    assert JournalFormatter().format(record).startswith("<6>")
    assert not log_to_journal_if_there({})


@pytest.mark.slow          # real time
@pytest.mark.parametrize("content", [b"this is not a database", b""])
def test_run_on_an_unreadable_database_moves_it_aside_and_latches_e98(tmp_path, caplog, content):
    """The service never boot-loops on its database: the file is moved aside, the table latched with E98."""
    db = tmp_path / "table.db"
    db.write_bytes(content)
    assert main(["run", "--pin-factory", "mock", "--seconds", "0.5", "--state", str(db), "--diag-socket",
                 "none"]) == 0
    assert (tmp_path / "table.db.bad1").read_bytes() == content
    assert any("E98" in r.getMessage() and "moved" in r.getMessage() for r in caplog.records)
