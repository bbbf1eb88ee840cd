"""``mjtable fleet`` (certificates, broker configuration, watch) and the table model's ``[fleet]`` section."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from firmware.cli.main import main
from firmware.config import default_table_path, parse_table_config
from firmware.faults import ConfigError
from tests.support.fleet_rig import TableProcess, wait_for
from tests.support.mosquitto_broker import broker, free_port  # noqa: F401 (the fixture)
from tests.firmware.cli.test_cli import _imported


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_help_loads_neither_paho_nor_rich_nor_cryptography():
    modules = _imported(["--help"])
    assert "firmware.cli.fleet_cmd" in modules
    assert not [m for m in modules if m.split(".")[0] in ("paho", "rich", "cryptography")]
    assert not [m for m in modules if m.startswith("firmware.fleet")]


def test_a_parlour_is_set_up_from_the_command_line(tmp_path, capsys):
    p = tmp_path
    assert _run(capsys, "fleet", "certs", "ca", "--out", str(p / "ca"), "--site", "hall1")[0] == 0
    code, _, err = _run(capsys, "fleet", "certs", "ca", "--out", str(p / "ca"))
    assert code == 2 and "a CA key is never overwritten" in err and "Traceback" not in err
    assert _run(capsys, "fleet", "certs", "table", "t07", "--ca", str(p / "ca"), "--out", str(p / "tables"))[0] == 0
    code, _, err = _run(capsys, "fleet", "certs", "table", "t07", "--ca", str(p / "ca"), "--out", str(p / "tables"))
    assert code == 2 and "give --force" in err
    assert _run(capsys, "fleet", "certs", "table", "t07", "--ca", str(p / "ca"), "--out", str(p / "tables"),
                "--force")[0] == 0
    assert _run(capsys, "fleet", "certs", "server", "127.0.0.1", "broker.lan", "--ca", str(p / "ca"), "--out",
                str(p / "broker"))[0] == 0
    assert _run(capsys, "fleet", "certs", "command-key", "--out", str(p / "keys"), "--name", "hall1-cmd")[0] == 0
    code, out, _ = _run(capsys, "fleet", "broker-config", "--site", "hall1", "--ca", str(p / "ca"), "--server",
                        str(p / "broker"), "--out", str(p / "broker"), "--plain-port", "1884")
    assert code == 0 and "mosquitto -c" in out
    conf = (p / "broker/mosquitto.conf").read_text()
    assert "listener 1884 127.0.0.1" in conf and f"cafile {(p / 'broker/ca.crt').resolve()}" in conf
    assert (p / "broker/ca.crt").read_bytes() == (p / "ca/ca.crt").read_bytes()     # the CA's certificate only:
    assert not (p / "broker/ca.key").exists()                                      # the folder is for the server
    acl = (p / "broker/acl").read_text()
    assert "pattern write mj/v1/hall1/tbl/%u/evt/#" in acl and "pattern read mj/v1/hall1/tbl/%u/cmd/#" in acl
    assert "pattern read mj/v1/hall1/tbl/%u/assign" in acl and "pattern write mj/v1/hall1/tbl/%u/#" not in acl
    for name in ("ca/ca.key", "tables/t07.key", "broker/server.key", "keys/hall1-cmd.pem", "broker/credentials"):
        assert (p / name).stat().st_mode & 0o777 == 0o600, name
    assert (p / "keys/hall1-cmd.pub").read_text().startswith("-----BEGIN PUBLIC KEY-----")


def test_broker_config_writes_a_folder_to_copy_to_the_server(tmp_path, capsys):
    p = tmp_path
    assert _run(capsys, "fleet", "certs", "ca", "--out", str(p / "ca"), "--site", "hall1")[0] == 0
    assert _run(capsys, "fleet", "certs", "server", "broker.lan", "--ca", str(p / "ca"), "--out",
                str(p / "made"))[0] == 0
    code, out, _ = _run(capsys, "fleet", "broker-config", "--site", "hall1", "--ca", str(p / "ca"), "--server",
                        str(p / "made"), "--out", str(p / "broker"), "--install-dir", "/etc/mosquitto/mjtable")
    assert code == 0 and "mosquitto -c /etc/mosquitto/mjtable/mosquitto.conf" in out
    paths = [line.split(" ", 1)[1] for line in (p / "broker/mosquitto.conf").read_text().splitlines()
             if line.split(" ")[0] in ("cafile", "certfile", "keyfile", "password_file", "acl_file",
                                      "persistence_location")]
    assert len(paths) == 9 and all(path.startswith("/etc/mosquitto/mjtable/") for path in paths), paths
    for name in ("ca.crt", "server.crt", "server.key", "passwd", "acl", "mosquitto.conf"):   # all it names
        assert (p / "broker" / name).is_file(), name
    assert (p / "broker/server.key").read_bytes() == (p / "made/server.key").read_bytes()
    assert (p / "broker/server.key").stat().st_mode & 0o777 == 0o600
    code, _, err = _run(capsys, "fleet", "broker-config", "--site", "hall1", "--ca", str(p / "ca"), "--server",
                        str(p / "made"), "--out", str(p / "ca"))
    assert code == 2 and f"--out {p / 'ca'}: holds the CA's key (ca.key); the broker's folder goes to the server" in err
    code, _, err = _run(capsys, "fleet", "broker-config", "--site", "hall1", "--ca", str(p / "ca"), "--server",
                        str(p / "made"), "--out", str(p / "b2"), "--install-dir", "mjtable")
    assert code == 2 and "--install-dir mjtable: not an absolute path" in err


def test_broker_config_with_a_bridge_to_a_chains_cluster(tmp_path, capsys):
    p = tmp_path
    assert _run(capsys, "fleet", "certs", "ca", "--out", str(p / "ca"), "--site", "hall1")[0] == 0
    assert _run(capsys, "fleet", "certs", "server", "broker.lan", "--ca", str(p / "ca"), "--out",
                str(p / "made"))[0] == 0
    (p / "pw").write_text("uplink-secret\n")
    code, _, err = _run(capsys, "fleet", "broker-config", "--site", "hall1", "--ca", str(p / "ca"), "--server",
                        str(p / "made"), "--out", str(p / "broker"), "--install-dir", "/etc/mosquitto/mjtable",
                        "--bridge", "mqtt://c1.chain:1883,mqtt://c2.chain:1883", "--bridge-user", "hall1",
                        "--bridge-password-file", str(p / "pw"))
    assert code == 0, err
    assert "include_dir /etc/mosquitto/mjtable/bridge" in (p / "broker/mosquitto.conf").read_text()
    bridge = p / "broker/bridge/bridge.conf"
    assert "address c1.chain:1883 c2.chain:1883" in bridge.read_text()
    assert "remote_password uplink-secret" in bridge.read_text() and bridge.stat().st_mode & 0o777 == 0o600
    code, _, err = _run(capsys, "fleet", "broker-config", "--site", "hall1", "--ca", str(p / "ca"), "--server",
                        str(p / "made"), "--out", str(p / "b2"), "--bridge", "nats://c1:4222")
    assert code == 2 and "--bridge" in err and "scheme" in err


@pytest.mark.parametrize("argv, words", [
    (["fleet", "certs", "table", "t/1", "--ca", "x", "--out", "y"], "table id 't/1'"),
    (["fleet", "certs", "table", "t1", "--ca", "nowhere", "--out", "y"], "no CA there"),
    (["fleet", "certs", "server", "a b", "--ca", "nowhere", "--out", "y"], "not a host name"),
    (["fleet", "broker-config", "--site", "hall1", "--ca", "nowhere", "--out", "y"], "no such file (--ca"),
    (["fleet", "broker-config", "--site", "hall#", "--ca", "x", "--out", "y"], "site 'hall#'"),
    (["fleet", "broker-config", "--site", "hall1", "--ca", "x", "--out", "y", "--tls-port", "0"], "--tls-port"),
    (["fleet", "watch", "--broker", "tcp://x", "--site", "hall1"], "--broker"),
    (["fleet", "watch", "--broker", "mqtts://x", "--site", "hall1"], "--ca"),
    (["fleet", "watch", "--broker", "mqtt://x", "--site", "a/b"], "site 'a/b'"),
])
def test_bad_arguments_are_one_line_and_exit_2(argv, words, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = None
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_watch_prints_every_table_live_once_and_as_json(broker, tmp_path, capsys):  # noqa: F811
    table = TableProcess(tmp_path / "t01.db", "t01", broker.url,
                         status={"state": "playing", "hand": 3, "dealer": 1, "chips": [1, 2, -3, 0],
                                 "faults": [{"code": "E41", "hint": "refill side 0"}]})
    try:
        wait_for(table.connected, what="t01 connected")
        code, out, err = _run(capsys, "fleet", "watch", "--broker", broker.url, "--site", "hall1", "--once", "--json")
        assert code == 0, err
        views = [json.loads(line) for line in out.splitlines()]
        assert [v["table"] for v in views] == ["t01"]
        assert views[0]["online"] is True and views[0]["state"]["hand"] == 3
        assert views[0]["faults"] == [{"code": "E41", "hint": "refill side 0"}] and views[0]["outbox_depth"] == 0
        code, out, _ = _run(capsys, "fleet", "watch", "--broker", broker.url, "--site", "hall1", "--once")
        assert code == 0 and all(words in out for words in ("t01", "online", "E41", "playing", "1 2 -3 0"))
        code, out, _ = _run(capsys, "fleet", "watch", "--broker", broker.url, "--site", "hall1", "--seconds", "1.5")
        assert code == 0 and all(words in out for words in ("site hall1: 1 table, 1 online", "t01", "playing"))
        table.add_events("hand", [{"hand": 3}])
        code, out, _ = _run(capsys, "fleet", "watch", "--broker", broker.url, "--site", "hall1", "--json",
                            "--seconds", "1.5")
        lines = [json.loads(line) for line in out.splitlines()]
        assert {(line["table"], line["what"]) for line in lines} >= {("t01", "avail"), ("t01", "state")}
    finally:
        table.close()


def test_a_technician_sends_signed_commands_and_reads_the_answers(broker, tmp_path, capsys):  # noqa: F811
    from firmware.fleet.certs import make_command_key
    from firmware.fleet.command_auth import load_signing_key

    pem, pub = make_command_key(tmp_path, "hall1-cmd")
    acks = []
    table = TableProcess(tmp_path / "t01.db", "t01", broker.url, keys=[load_signing_key(pem)],
                         on_command=lambda verb, args, issuer: acks.append((args["code"], issuer)) or {"ok": 1})
    base = ["fleet", "send", "--broker", broker.url, "--site", "hall1", "--sign-key", str(pem), "--issuer", "anna"]
    try:
        wait_for(table.connected, what="t01 connected")
        code, out, err = _run(capsys, *base, "--table", "t01", "ack", "E41")
        assert code == 0 and json.loads(out)["ok"] is True and acks == [("E41", "anna")], err
        code, out, _ = _run(capsys, *base, "--table", "t01", "ack", "E31")
        assert code == 1 and "latched fault" in json.loads(out)["error"] and len(acks) == 1
        code, out, _ = _run(capsys, *base, "--table", "t01", "resend_since", "0")
        assert code == 0 and json.loads(out)["result"]["published"] == 0
        code, _, err = _run(capsys, *base, "--table", "t02", "rebirth", "--seconds", "1")
        assert code == 1 and "table t02: no answer within 1 s" in err
        for extra, words in ((["ack"], "give the fault code"), (["resend_since", "x"], "a whole number"),
                             (["rebirth", "now"], "takes no value"), (["--issuer", "a b", "rebirth"], "--issuer")):
            code, _, err = _run(capsys, *base, "--table", "t01", *extra)
            assert code == 2 and words in err, err
    finally:
        table.close()


def test_watch_says_when_the_broker_does_not_answer(capsys):
    code, _, err = _run(capsys, "fleet", "watch", "--broker", f"mqtt://127.0.0.1:{free_port()}", "--site", "hall1",
                        "--once", "--seconds", "1")
    assert code == 1 and "no answer" in err


# -- the [fleet] section ---------------------------------------------------------------------------------------
def _with_fleet(**fleet) -> dict:
    data = tomllib.loads(default_table_path().read_text())
    data["fleet"] = fleet
    return data


def test_without_a_fleet_section_there_is_no_telemetry():
    cfg = parse_table_config(tomllib.loads(default_table_path().read_text()), Path("t.toml"))
    assert cfg.fleet is None


def test_a_fleet_section():
    cfg = parse_table_config(_with_fleet(broker_url="mqtts://broker.lan:8883", site="hall1", table_id="t07",
                                         ca_file="fleet/ca.crt", cert_file="fleet/t07.crt", key_file="fleet/t07.key",
                                         command_key_file="fleet/cmd.pub", state_min_interval_s=2.0),
                             Path("/etc/mjtable/tables/t.toml"))
    assert cfg.fleet.table_id == "t07" and cfg.fleet.counters_period_s == 60.0
    assert cfg.fleet.files(cfg.base_dir)["cert_file"] == Path("/etc/mjtable/tables/fleet/t07.crt")


@pytest.mark.parametrize("fleet, words", [
    (dict(broker_url="http://b", site="hall1", table_id="t07"), "key 'broker_url': 'http://b': the scheme"),
    (dict(broker_url="mqtt://b", site="hall1", table_id="t/7"), "key 'table_id': 1 to 64 letters"),
    (dict(broker_url="mqtt://b", site="hall+", table_id="t7"), "key 'site': 1 to 64 letters"),
    (dict(broker_url="mqtts://b", site="hall1", table_id="t7", ca_file="ca.crt"), "key 'cert_file': required"),
    (dict(broker_url="mqtt://b", site="hall1", table_id="t7", cert_file="x"), "key 'cert_file': needs an mqtts"),
    (dict(broker_url="mqtt://b", site="hall1", table_id="t7", counters_period_s=1), "key 'counters_period_s'"),
    (dict(broker_url="mqtt://b", site="hall1", table_id="t7", colour="red"), "key 'colour': unknown key"),
    (dict(site="hall1", table_id="t7"), "key 'broker_url': missing key"),
])
def test_bad_fleet_sections_name_file_table_and_key(fleet, words):
    with pytest.raises(ConfigError) as info:
        parse_table_config(_with_fleet(**fleet), Path("t.toml"))
    assert str(info.value).startswith("t.toml: table [fleet]") and words in str(info.value), str(info.value)


# -- the [fleet] section's files, checked by config check and at start-up ------------------------------------------
FLEET_TOML = """
[fleet]
broker_url = "mqtts://broker.hall1.lan:8883"
site = "hall1"
table_id = "t07"
ca_file = "{ca}"
cert_file = "{cert}"
key_file = "{key}"
command_key_file = "{cmd}"
"""


@pytest.fixture(scope="module")
def parlour_files(tmp_path_factory):
    from datetime import timedelta

    from firmware.fleet.certs import make_ca, make_command_key, make_table_cert
    from hal.runtime import utc_now

    root = tmp_path_factory.mktemp("files")
    now = utc_now()
    make_ca(root / "ca", now, site="hall1")
    make_ca(root / "other", now, site="hall1")                       # another parlour's CA, of the same name
    for table in ("t07", "t08"):
        make_table_cert(root / "ca", table, root / "tables/fleet", now)
    make_table_cert(root / "other", "t07", root / "tables/other", now)
    make_table_cert(root / "ca", "t07", root / "tables/old", now - timedelta(days=900), days=825)
    make_command_key(root / "tables/fleet", "hall1-cmd")
    (root / "tables/fleet/ca.crt").write_bytes((root / "ca/ca.crt").read_bytes())
    (root / "tables/fleet/garbage.key").write_text("not a key\n")
    return root / "tables"


def _table_file(folder: Path, name: str = "table.toml", **files: str) -> Path:
    paths = {"ca": "fleet/ca.crt", "cert": "fleet/t07.crt", "key": "fleet/t07.key", "cmd": "fleet/hall1-cmd.pub",
             **files}
    path = folder / name
    path.write_text(default_table_path().read_text() + FLEET_TOML.format(**paths))
    return path


@pytest.mark.parametrize("files, words", [
    (dict(ca="fleet/nope.crt"), "key 'ca_file': {d}/fleet/nope.crt: cannot be read (No such file or directory)"),
    (dict(cert="fleet"), "key 'cert_file': {d}/fleet: cannot be read (Is a directory)"),
    (dict(ca="fleet/t07.key"), "key 'ca_file': {d}/fleet/t07.key: not a PEM certificate"),
    (dict(cert="fleet/t08.crt", key="fleet/t08.key"), "key 'cert_file': {d}/fleet/t08.crt: its CN is 't08', not the "
                                                      "table_id 't07'"),
    (dict(key="fleet/t08.key"), "key 'key_file': {d}/fleet/t08.key: not the key of {d}/fleet/t07.crt"),
    (dict(key="fleet/garbage.key"), "key 'key_file': {d}/fleet/garbage.key: not an unencrypted PEM private key"),
    (dict(cert="other/t07.crt", key="other/t07.key"), "key 'cert_file': {d}/other/t07.crt: not signed by the CA in "
                                                      "{d}/fleet/ca.crt"),
    (dict(cert="old/t07.crt", key="old/t07.key"), "key 'cert_file': {d}/old/t07.crt: valid from"),
    (dict(cmd="fleet/t07.key"), "key 'command_key_file': {d}/fleet/t07.key: holds a private key"),
])
def test_config_check_refuses_fleet_files_naming_file_table_and_key(parlour_files, files, words, capsys):
    path = _table_file(parlour_files, **files)
    code, _, err = _run(capsys, "config", "check", str(path))
    assert code == 1 and err.startswith(f"{path}: table [fleet] ") and words.format(d=parlour_files) in err, err


def test_config_check_passes_a_fleet_section_whose_files_belong_together(parlour_files, capsys):
    code, out, err = _run(capsys, "config", "check", str(_table_file(parlour_files)))
    assert code == 0 and ": ok (" in out, err


def test_a_link_whose_files_are_wrong_is_not_started_and_says_which_once(parlour_files, caplog):
    """At start-up one error names the file and the key; the table plays, its events wait in its database."""
    from firmware.config import load_table_config
    from firmware.fleet.table_link import FleetPlug
    from sim.table_run import SimRun

    class NeverAdapter:
        def connect(self, session, will, listener):
            raise AssertionError("a link whose files are wrong connected")

        def disconnect(self, send_will=False):
            pass

    cfg = load_table_config(_table_file(parlour_files, "bad.toml", cert="fleet/t08.crt", key="fleet/t08.key"))
    run = SimRun(cfg, rules="mcr", seed=3, hands=1, play=True,
                 fleet=lambda: (FleetPlug(lambda cfg, post: NeverAdapter(), lambda: 1.75e9), lambda: None))
    try:
        assert run.run(900.0)
        assert run.store.event_outbox().depth() >= 1 and run.link.status()["state"] == "stopped"
        errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
        assert len(errors) == 1 and "fleet link t07 not started" in errors[0], errors
        assert f"{parlour_files}/bad.toml: table [fleet] key 'cert_file': {parlour_files}/fleet/t08.crt: its CN is " \
               f"'t08'" in errors[0] and "mjtable config check" in errors[0]
        assert "its CN is 't08'" in run.link.status()["last_error"]
    finally:
        run.close()


@pytest.mark.parametrize("value", ["1" + "0" * 30, "9223372036854775808", "²", "١٢"],
                         ids=["1e30", "2^63", "superscript-two", "arabic-indic-digits"])
def test_fleet_send_refuses_a_seq_out_of_range_or_not_ascii_digits_before_connecting(capsys, tmp_path, value):
    """A seq the table cannot take (SQLite's INTEGER) or not a plain number ('²'.isdigit() is True, int('²') raises):
    one line, exit 2, nothing sent (no broker is there to send to)."""
    code, out, err = _run(capsys, "fleet", "send", "--broker", f"mqtt://127.0.0.1:{free_port()}", "--site", "hall1",
                          "--table", "t01", "--sign-key", str(tmp_path / "none.pem"), "resend_since", value)
    assert code == 2 and out == "" and err.startswith("mjtable: resend_since:"), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
