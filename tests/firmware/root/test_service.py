"""The service side: the systemd unit, sd_notify, the install command, and a dry run of ``mjtable run``."""

import configparser
import os
import shlex
import socket
import sys
from pathlib import Path

import pytest

from firmware.cli.main import build_parser, main
from firmware.config import load_table_config
from firmware.config_paths import shipped_dir
from hal.systemd import Notifier

UNIT = shipped_dir() / "systemd" / "mjtable.service"


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
    service = _unit()["Service"]
    argv = shlex.split(service["ExecStart"])
    assert argv[0] == "/opt/mjtable/current/bin/mjtable" and argv[1] == "run"
    args = build_parser().parse_args(argv[1:])
    assert args.func.__module__ == "firmware.cli.run_cmd"
    assert str(args.state).startswith("/var/lib/mjtable") and str(args.config_dir) == "/etc/mjtable"
    # the start guard runs as root before every start; the trial ends only after READY (ExecStartPost)
    assert service["ExecStartPre"] == "+/opt/mjtable/bin/mjtable-start guard"
    assert service["ExecStartPost"] == "+/opt/mjtable/bin/mjtable-start ready"


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


def test_install_into_a_root_without_a_bundle_writes_the_configuration_and_the_unit(tmp_path, capsys):
    """Configuration, unit and start guard; the table's model enrols its own tile sets, not the simulator's."""
    assert main(["install", "--config-only", "--root", str(tmp_path)]) == 0
    unit = (tmp_path / "etc/systemd/system/mjtable.service").read_text()
    assert unit == UNIT.read_text()
    installed = load_table_config(tmp_path / "etc/mjtable/tables/table.toml")
    assert installed.registry_files()["A"].resolve() == (tmp_path / "etc/mjtable/tiles/A.csv").resolve()
    assert not list((tmp_path / "etc/mjtable/tiles").iterdir())          # nothing enrolled yet
    assert (tmp_path / "var/lib/mjtable").is_dir() and (tmp_path / "opt/mjtable/bin/mjtable-start").exists()
    out = capsys.readouterr().out
    assert "systemctl daemon-reload" in out and "not enrolled" in out and "mjtable diag enroll --set A" in out
    # an update keeps the table's configuration (a technician's edits, its enrolled sets)
    (tmp_path / "etc/mjtable/tiles/A.csv").write_text("uid,set,tile\n")
    assert main(["install", "--config-only", "--root", str(tmp_path)]) == 0
    assert "configuration kept" in capsys.readouterr().out
    assert (tmp_path / "etc/mjtable/tiles/A.csv").exists()
    (tmp_path / "etc/mjtable/tables/table.toml").write_text("# edited\n")
    assert main(["install", "--config-only", "--root", str(tmp_path), "--force"]) == 0    # the defaults again,
    assert (tmp_path / "etc/mjtable/tiles/A.csv").exists()                                # the enrolled sets kept
    assert load_table_config(tmp_path / "etc/mjtable/tables/table.toml")
    assert main(["install", "--root", str(tmp_path)]) == 2                                # no bundle: say so
    assert "--bundle FILE is required" in capsys.readouterr().err


def test_install_with_another_rule_set_checks_it_against_the_table(tmp_path, capsys):
    assert main(["install", "--config-only", "--root", str(tmp_path), "--rules", "competition"]) == 0
    unit = (tmp_path / "etc/systemd/system/mjtable.service").read_text()
    assert "--rules competition" in unit and "--rules mcr" not in unit
    assert main(["install", "--config-only", "--root", str(tmp_path)]) == 0    # an update keeps the rule set
    assert "--rules competition" in (tmp_path / "etc/systemd/system/mjtable.service").read_text()
    # 辽宁 plays 136 tiles: the four-port model is set up for 144, so the service would latch E03
    (tmp_path / "b").mkdir()
    assert main(["install", "--config-only", "--root", str(tmp_path / "b"), "--rules", "liaoning"]) == 2
    assert "plays 136 tiles" in capsys.readouterr().err


SHIPPED_MODEL = ["--table", str(shipped_dir() / "tables" / "four_port_double.toml")]


@pytest.mark.slow          # real time
def test_run_dry_on_mock_pins(tmp_path):
    db = tmp_path / "state" / "table.db"
    assert main(["run", *SHIPPED_MODEL, "--pin-factory", "mock", "--seconds", "0.5", "--state", str(db),
                 "--diag-socket", "none"]) == 0
    assert db.exists()


def _run_sim(tmp_path, caplog, seconds: float) -> tuple[list[bytes], str]:
    """``mjtable run --sim`` for ``seconds`` of real time: (the sd_notify messages, the log)."""
    import logging

    caplog.set_level(logging.INFO)
    notify = tmp_path / "notify"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(str(notify))
    server.setblocking(False)
    os.environ["NOTIFY_SOCKET"] = str(notify)
    try:
        assert main(["run", "--sim", "--seconds", str(seconds), "--diag-socket", "none"]) == 0
        messages = []
        while True:
            try:
                messages.append(server.recv(4096))
            except BlockingIOError:
                break
    finally:
        del os.environ["NOTIFY_SOCKET"]
        server.close()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    return messages, "\n".join(r.getMessage() for r in caplog.records)


def test_run_on_the_simulated_table_for_a_few_seconds(tmp_path, caplog):
    """``mjtable run --sim``: the production service (real-time loop, gpiozero devices, pyserial) against the
    simulated table's models: READY to systemd, the reader up, the centre up for the players' tiles."""
    messages, text = _run_sim(tmp_path, caplog, 5.0)
    assert any(m.startswith(b"READY=1") for m in messages)
    assert any(m == b"STATUS=state open" for m in messages)
    assert "reader up" in text and "state homing" in text and "state center_up" in text, text
    assert "the simulated table behind the pins" in text and "every output safe" in text


@pytest.mark.slow          # a minute of real time
def test_run_on_the_simulated_table_stacks_reads_raises_and_deals(tmp_path, caplog):
    messages, text = _run_sim(tmp_path, caplog, 75.0)
    for state in ("stacking", "ready", "raising", "dice", "in_play"):
        assert f"state {state}" in text, text


def test_run_on_a_machine_without_gpio_names_the_extra_to_install(tmp_path, capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_lgpio(name, *args, **kwargs):
        if name == "lgpio" or name.startswith("gpiozero.pins.lgpio"):
            raise ModuleNotFoundError("No module named 'lgpio'", name="lgpio")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_lgpio)
    monkeypatch.delitem(sys.modules, "gpiozero.pins.lgpio", raising=False)
    assert main(["run", *SHIPPED_MODEL, "--seconds", "0.1", "--state", str(tmp_path / "t.db")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "mjtable[pi]" in err and "--sim" in err


def test_run_without_an_installed_table_says_how_to_get_one(tmp_path, capsys):
    assert main(["run", "--config-dir", str(tmp_path), "--seconds", "0.1"]) == 2
    assert "no table model" in capsys.readouterr().err
    assert main(["run", "--sim", "--config-dir", str(tmp_path), "--seconds", "0.1"]) == 2
    assert "no table model" in capsys.readouterr().err


def test_version():
    from firmware import __version__

    with pytest.raises(SystemExit):
        main(["--version"])
    assert __version__.count(".") == 2


def test_the_simulators_url_handler_is_registered_by_the_simulator_only():
    import subprocess

    code = ("import serial, hal.serial_port; assert 'sim.serial_handlers' not in serial.protocol_handler_packages; "
            "import sim.reader_line, random; from firmware.loop import RealTimeLoop; "
            "sim.reader_line.ReaderLine(RealTimeLoop(lambda: 0.0), random.Random(1), 'x'); "
            "assert 'sim.serial_handlers' in serial.protocol_handler_packages")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX only")
def test_make_install_pi_target_installs_a_bundle():
    makefile = (Path(__file__).parents[3] / "Makefile").read_text()
    assert "install-pi: bundle" in makefile and "mjtable install --bundle dist/" in makefile
    assert "bundle:" in makefile and "mjtable bundle --out dist" in makefile


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
    assert main(["run", *SHIPPED_MODEL, "--pin-factory", "mock", "--seconds", "0.5", "--state", str(db),
                 "--diag-socket", "none"]) == 0
    assert (tmp_path / "table.db.bad1").read_bytes() == content
    assert any("E98" in r.getMessage() and "moved" in r.getMessage() for r in caplog.records)


def test_a_dry_run_on_mock_pins_says_why_it_latches_and_which_fault_it_starts_with(tmp_path, caplog):
    """gpiozero's plain mock pins do not move: the run says so (and points at run --sim) before the table
    latches; the next run on the same database names the fault it starts latched with."""
    import logging

    caplog.set_level(logging.INFO)
    argv = ["run", *SHIPPED_MODEL, "--pin-factory", "mock", "--seconds", "0.3", "--state", str(tmp_path / "t.db"),
            "--diag-socket", "none"]
    assert main(argv) == 0
    assert "mock pins do not move" in caplog.text and "run --sim" in caplog.text
    caplog.clear()
    assert main(argv) == 0
    started = [r.getMessage() for r in caplog.records if "starts latched" in r.getMessage()]
    assert started and started[0].split(": ")[1][:1] == "E", started


def test_a_staged_update_restarts_the_service_with_the_code_the_unit_restarts_on():
    """The unit starts the service again after exit 75 (RestartForceExitStatus), counted as a clean exit."""
    from firmware.root.service import RESTART_EXIT

    service = _unit()["Service"]
    assert service["RestartForceExitStatus"] == service["SuccessExitStatus"] == str(RESTART_EXIT)


def test_the_restart_into_a_new_release_waits_until_no_hand_is_on_the_table(tmp_path):
    """Asked during a hand, the service stops only once the table is back between hands; asked at rest, at once."""
    from firmware.controller.states import TableState
    from firmware.root.service import REST_STATES, ServiceRestart
    from firmware.root.simulator import SimRun

    run = SimRun(rules="mcr", seed=5, hands=3, state_path=tmp_path / "table.db")
    try:
        stops: list[str] = []
        restart = ServiceRestart(lambda: stops.append(run.state.value))
        restart.bind(run.wired)
        run.run_until(lambda: run.state is TableState.IN_PLAY, 3600)
        restart()
        assert stops == [] and not restart.stopping
        run.run_until(lambda: run.state is not TableState.IN_PLAY, 3600)
        run.run_until(lambda: bool(stops), 3600)
        assert stops and stops[0] in REST_STATES and restart.stopping
        seen = list(stops)
        run.run_until(lambda: run.state is TableState.IN_PLAY, 3600)
        assert stops == seen                              # (asked once, stopped once)
    finally:
        run.close()
    at_rest = SimRun(rules="mcr", seed=5, hands=1, state_path=tmp_path / "other.db")
    try:
        stops = []
        restart = ServiceRestart(lambda: stops.append(at_rest.state.value))
        restart.bind(at_rest.wired)
        at_rest.run_until(lambda: at_rest.state is not None and at_rest.state.value in REST_STATES, 3600)
        restart()
        assert stops == [at_rest.state.value]
    finally:
        at_rest.close()
