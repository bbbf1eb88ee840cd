"""A parlour's broker as ``mjtable fleet broker-config`` writes it: TLS, a certificate per table, the ACL, commands."""

from __future__ import annotations

import json
import time

import pytest

from firmware.fleet import messages
from firmware.ports.broker import PublishProperties
from firmware.fleet.broker_config import Listeners, check_password, write_broker_config
from firmware.fleet.certs import make_ca, make_command_key, make_server_cert, make_table_cert
from firmware.fleet.command_auth import load_signing_key, sign_command
from firmware.fleet.topics import Leaf, TableTopics
from hal.runtime import utc_now
from tests.support.fleet_rig import SITE, RawClient, TableProcess, wait_for
from tests.support.mosquitto_broker import Mosquitto, free_port

PASSWORDS = {"staff.viewer": "view-pw", "staff.technician": "tech-pw", "service.recorder": "svc-pw",
             "service.tourney": "tourney-pw"}


@pytest.fixture(scope="module")
def parlour(tmp_path_factory):
    root = tmp_path_factory.mktemp("parlour")
    now = utc_now()
    ca = make_ca(root / "ca", now, site=SITE)
    make_server_cert(root / "ca", ["127.0.0.1", "localhost"], root / "broker", now)
    for table in ("t01", "t02"):
        make_table_cert(root / "ca", table, root / "tables", now)
    make_command_key(root / "keys", "hall1-cmd", hmac_secret=True)
    tls_port, staff_port, plain_port = free_port(), free_port(), free_port()
    write_broker_config(root / "broker", SITE, ca.cert, root / "broker/server.crt", root / "broker/server.key",
                        Listeners(tls_port, staff_port, plain_port, bind="127.0.0.1"), passwords=PASSWORDS)
    conf = (root / "broker/mosquitto.conf").read_text()
    broker = Mosquitto(root / "broker", conf, tls_port, (staff_port, plain_port)).start()
    yield {"root": root, "ca": str(ca.cert), "tables_url": f"mqtts://127.0.0.1:{tls_port}",
           "staff_url": f"mqtts://127.0.0.1:{staff_port}", "plain_url": f"mqtt://127.0.0.1:{plain_port}",
           "broker": broker}
    broker.stop()


def _table_tls(parlour, table: str) -> dict:
    return {"ca_file": parlour["ca"], "cert_file": str(parlour["root"] / f"tables/{table}.crt"),
            "key_file": str(parlour["root"] / f"tables/{table}.key")}


def _staff(parlour, who: str, client_id: str) -> RawClient:
    client = RawClient(parlour["staff_url"], client_id, ca_file=parlour["ca"], username=f"staff.{who}",
                       password=PASSWORDS[f"staff.{who}"])
    assert client.connect() == (True, "Success")
    return client


def test_passwords_are_in_mosquittos_own_format(parlour):
    lines = dict(line.split(":", 1) for line in (parlour["root"] / "broker/passwd").read_text().splitlines())
    assert set(lines) == set(PASSWORDS) and all(h.startswith("$7$101$") for h in lines.values())
    assert check_password("tech-pw", lines["staff.technician"].strip())
    assert not check_password("view-pw", lines["staff.technician"].strip())
    for name in ("passwd", "acl", "credentials"):
        assert (parlour["root"] / "broker" / name).stat().st_mode & 0o777 == 0o600
    assert (parlour["root"] / "tables/t01.key").stat().st_mode & 0o777 == 0o600
    conf = (parlour["root"] / "broker/mosquitto.conf").read_text()
    assert "allow_anonymous false" in conf and "use_identity_as_username true" in conf
    assert "require_certificate true" in conf and "listener 1883" not in conf
    assert "\nmax_inflight_messages 0\n" in conf          # (Mosquitto 2.0.11's bridge after a crash: broker_config)


def test_a_table_with_its_certificate_publishes_its_subtree_and_staff_see_it(parlour, tmp_path):
    viewer = _staff(parlour, "viewer", "console-1")
    viewer.subscribe(f"mj/v1/{SITE}/#")
    table = TableProcess(tmp_path / "t01.db", "t01", parlour["tables_url"], tls=_table_tls(parlour, "t01"))
    try:
        wait_for(lambda: table.connected() and table.st()["published"] == 0, what="t01 connected over TLS")
        table.add_events("hand", [{"hand": 1}])
        wait_for(lambda: table.st()["acked"] == 1, what="the event acknowledged")
        assert table.st()["refused_by_broker"] == 0 and table.st()["last_error"] == ""
        wait_for(lambda: {m.topic.rsplit("/", 1)[-1] for m in viewer.messages} >= {"avail", "state", "hand"},
                 what="the viewer sees t01")
        assert viewer.publish(TableTopics(SITE, "t01").command("rebirth"), b"{}") == (False, "Not authorized")
    finally:
        table.close()
        viewer.close()


def test_a_table_is_refused_another_tables_subtree_and_commands(parlour):
    technician = _staff(parlour, "technician", "console-2")
    technician.subscribe(f"mj/v1/{SITE}/tbl/t02/#")
    intruder = RawClient(parlour["tables_url"], "t01", **_table_tls(parlour, "t01"))
    try:
        assert intruder.connect() == (True, "Success")
        t02 = TableTopics(SITE, "t02")
        assert intruder.publish(t02.leaf(Leaf.STATE), b"{}", retain=True) == (False, "Not authorized")
        assert intruder.publish(t02.event("hand"), b"{}") == (False, "Not authorized")
        granted = intruder.subscribe(t02.commands_filter)
        technician.publish(t02.command("ack"), b'{"forged": false}')
        own = intruder.subscribe(TableTopics(SITE, "t01").commands_filter)
        technician.publish(TableTopics(SITE, "t01").command("rebirth"), b"{}")
        wait_for(lambda: intruder.messages, what="t01's own command delivered")
        assert [m.topic for m in intruder.messages] == [TableTopics(SITE, "t01").command("rebirth")]
        assert own == [1] and (granted[0] >= 0x80 or granted == [1])     # refused at SUBACK or at delivery
        assert not [m for m in technician.messages if m.topic != t02.command("ack")]   # nothing of t01's reached t02
    finally:
        intruder.close()
        technician.close()


@pytest.mark.parametrize("who", ["no certificate", "another CA", "anonymous staff", "wrong password"])
def test_strangers_are_refused(parlour, who, tmp_path):
    if who == "another CA":
        make_ca(tmp_path / "evil", utc_now(), site=SITE)
        make_table_cert(tmp_path / "evil", "t01", tmp_path / "evil", utc_now())
        settings = dict(_table_tls(parlour, "t01"), cert_file=str(tmp_path / "evil/t01.crt"),
                        key_file=str(tmp_path / "evil/t01.key"))
        client = RawClient(parlour["tables_url"], "t01", **settings)
    elif who == "no certificate":
        client = RawClient(parlour["tables_url"], "t01", ca_file=parlour["ca"])
    elif who == "anonymous staff":
        client = RawClient(parlour["staff_url"], "anon", ca_file=parlour["ca"])
    else:
        client = RawClient(parlour["staff_url"], "anon", ca_file=parlour["ca"], username="staff.viewer",
                           password="guess")
    try:
        ok, reason = client.connect()
        assert not ok and reason, reason
    finally:
        client.close()


def test_commands_through_the_broker_are_authenticated_end_to_end(parlour, tmp_path, caplog):
    key = load_signing_key(parlour["root"] / "keys/hall1-cmd.hmac")
    acks = []

    def on_command(verb, args, issuer):
        acks.append((args["code"], issuer))
        return {"acknowledged": args["code"]}

    table = TableProcess(tmp_path / "t01.db", "t01", parlour["tables_url"], tls=_table_tls(parlour, "t01"),
                         keys=[key], on_command=on_command)
    technician = _staff(parlour, "technician", "console-3")
    t01 = TableTopics(SITE, "t01")
    replies = t01.response("console-3")
    technician.subscribe(replies)

    def send(verb: str, body: bytes, n: int) -> dict:
        props = PublishProperties(response_topic=replies, correlation_data=f"c{n}".encode(), message_expiry_s=30)
        assert technician.publish(t01.command(verb), body, properties=props) == (True, "Success")
        answer = wait_for(lambda: [m for m in technician.messages if m.correlation_data == f"c{n}".encode()],
                          what=f"the answer to command {n}")
        return messages.decode(answer[0].payload)

    try:
        wait_for(table.connected, what="t01 connected")
        wait_for(lambda: technician.subscribed, what="subscribed")
        good = sign_command(key, site=SITE, table="t01", verb="ack", args={"code": "E41"}, issuer="anna",
                            issued_at=time.time())
        assert send("ack", good, 1)["result"] == {"acknowledged": "E41"} and acks == [("E41", "anna")]
        assert "replayed" in send("ack", good, 2)["error"]
        expired = sign_command(key, site=SITE, table="t01", verb="ack", args={"code": "E41"}, issuer="anna",
                               issued_at=time.time() - 200, ttl_s=100)
        assert "expired" in send("ack", expired, 3)["error"]
        other = sign_command(key, site=SITE, table="t02", verb="ack", args={"code": "E41"}, issuer="anna",
                             issued_at=time.time())
        assert "addressed to table 't02'" in send("ack", other, 4)["error"]
        forged = json.loads(sign_command(key, site=SITE, table="t01", verb="ack", args={"code": "E41"},
                                         issuer="anna", issued_at=time.time()))
        forged["issuer"] = "mallory"
        assert send("ack", json.dumps(forged).encode(), 5)["error"] == "bad signature"
        latched = sign_command(key, site=SITE, table="t01", verb="ack", args={"code": "E31"}, issuer="anna",
                               issued_at=time.time())
        assert "acknowledged at the table" in send("ack", latched, 6)["error"]
        assert acks == [("E41", "anna")]
        assert caplog.text.count("refused") >= 5
        assert table.st()["commands_refused"] == 5 and table.st()["commands_done"] == 1
    finally:
        table.close()
        technician.close()


def _watch(parlour, tmp_path, capsys, *extra: str, password: str | None = None) -> tuple[int, str, float]:
    from firmware.cli.main import main

    argv = ["fleet", "watch", "--broker", parlour["staff_url"], "--ca", parlour["ca"], "--once", *extra]
    if password is not None:
        (tmp_path / "pw").write_text(password + "\n")
        argv += ["--password-file", str(tmp_path / "pw")]
    started = time.monotonic()
    code = main(argv)
    return code, capsys.readouterr().err, time.monotonic() - started


def test_watch_says_at_once_what_to_do_when_the_broker_refuses_the_account(parlour, tmp_path, capsys):
    code, err, took_s = _watch(parlour, tmp_path, capsys, "--site", SITE, "--user", "staff.viewer",
                               password="guess")
    assert code == 1 and took_s < 4.0, err              # (not 5 s of retries)
    assert "the broker refused staff.viewer: Not authorized: check --user staff.viewer and --password-file" in err
    code, err, _ = _watch(parlour, tmp_path, capsys, "--site", SITE)
    assert code == 1 and "this listener wants an account: give --user (e.g. staff.viewer) and --password-file" in err


def test_watch_of_a_site_the_account_may_not_read_says_why_it_shows_no_table(parlour, tmp_path, capsys):
    table = TableProcess(tmp_path / "t01.db", "t01", parlour["tables_url"], tls=_table_tls(parlour, "t01"))
    try:
        wait_for(table.connected, what="t01 connected")
        code, err, _ = _watch(parlour, tmp_path, capsys, "--site", "hall2", "--user", "staff.viewer",
                              password=PASSWORDS["staff.viewer"])
        assert code == 0 and "no table of site hall2 reached staff.viewer: none has published, or the broker's " \
                             "ACL does not let staff.viewer read site hall2" in err, err
        code, err, _ = _watch(parlour, tmp_path, capsys, "--site", SITE, "--user", "staff.viewer",
                              password=PASSWORDS["staff.viewer"])
        assert code == 0 and "no table" not in err, err
    finally:
        table.close()


def test_send_says_what_to_do_when_the_broker_refuses_the_account(parlour, tmp_path, capsys):
    from firmware.cli.main import main

    (tmp_path / "pw").write_text("guess\n")
    code = main(["fleet", "send", "--broker", parlour["staff_url"], "--ca", parlour["ca"], "--site", SITE, "--table",
                 "t01", "--user", "staff.technician", "--password-file", str(tmp_path / "pw"), "--sign-key",
                 str(parlour["root"] / "keys/hall1-cmd.hmac"), "rebirth"])
    err = capsys.readouterr().err
    assert code == 1 and "connect refused: Not authorized (check --user staff.technician and --password-file" in err


# -- a simulated parlour on the parlour's broker: a certificate per simulated table -------------------------------
def _sim(*argv: str) -> tuple[int, str, str, float]:
    import contextlib
    import io

    from firmware.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["sim", "--quiet", "--hands", "1", "--seed", "4", *argv])
    return code, out.getvalue(), err.getvalue(), time.monotonic() - started


@pytest.fixture(scope="module")
def sim_certs(parlour):
    from firmware.cli.main import main

    assert main(["fleet", "certs", "table", "t001", "t002", "--ca", str(parlour["root"] / "ca"), "--out",
                 str(parlour["root"] / "sim")]) == 0
    return ["--ca", parlour["ca"], "--certs", str(parlour["root"] / "sim")]


def test_a_simulated_parlour_reaches_the_parlours_broker_each_table_with_its_certificate(parlour, sim_certs):
    viewer = _staff(parlour, "viewer", "console-sim")
    viewer.subscribe(f"mj/v1/{SITE}/#")
    try:
        code, out, err, _ = _sim("--fleet", "2", "--broker", parlour["tables_url"], "--site", SITE, *sim_certs)
        assert code == 0 and "fleet: 2 tables, 2 hands" in out and "outbox depth 0" in out, err
        wait_for(lambda: {m.topic for m in viewer.messages} >= {f"mj/v1/{SITE}/tbl/{t}/evt/hand"
                                                                 for t in ("t001", "t002")}, what="both hands")
    finally:
        viewer.close()


def test_a_simulated_parlour_refused_by_the_broker_stops_at_once_saying_what_to_do(parlour, sim_certs, caplog):
    code, out, err, took_s = _sim("--fleet", "2", "--broker", parlour["plain_url"], "--site", SITE)
    assert code == 1 and took_s < 20 and "fleet: 2 tables" in out
    line = [line for line in err.splitlines() if line.startswith("mjtable sim:")]
    assert len(line) == 1 and f"{parlour['plain_url']} refused the simulated tables (t00" in line[0], err
    assert "connect refused: Not authorized): that listener does not take tables. A simulated table is known by its " \
           "certificate, as a table is: make them (mjtable fleet certs table $(seq -f 't%03g' 2) --ca parlour/ca " \
           "--out parlour/sim) and use the tables' TLS listener: --broker mqtts://HOST:8883" in line[0]
    assert "trying again" not in err and len([r for r in caplog.records if "again" in r.getMessage()]) <= 2
    code, out, err, _ = _sim("--fleet", "2", "--broker", parlour["tables_url"], "--site", "hall2", *sim_certs)
    assert code == 1 and "the broker refused a message: Not authorized): its ACL lets a table write only under " \
                         "mj/v1/<its site>/tbl/<its certificate's CN>/: is --site hall2 the broker's site" in err, err


def test_a_simulated_tables_certificate_is_checked_first(parlour, sim_certs, tmp_path):
    other = tmp_path / "certs"
    other.mkdir()
    for name in ("t001.crt", "t001.key"):
        (other / name).write_bytes((parlour["root"] / "sim" / name).read_bytes())
    (other / "t002.crt").write_bytes((parlour["root"] / "sim/t001.crt").read_bytes())
    (other / "t002.key").write_bytes((parlour["root"] / "sim/t001.key").read_bytes())
    for certs, words in ((other, f"--certs: {other}/t002.crt: its CN is 't001', not the table_id 't002'"),
                         (tmp_path / "none", f"--certs: {tmp_path}/none/t001.crt: cannot be read (No such file or "
                                             f"directory) (make them: mjtable fleet certs table $(seq -f 't%03g' 2)")):
        code, _, err, _ = _sim("--fleet", "2", "--broker", parlour["tables_url"], "--site", SITE, "--ca",
                               parlour["ca"], "--certs", str(certs))
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_a_refused_fleet_does_not_wait_out_its_drain(parlour):
    from firmware.fleet.link_settings import LinkSettings
    from sim.fleet_run import FleetSim

    fleet = FleetSim(1, parlour["plain_url"], SITE, hands=1, seed=4,
                     settings=LinkSettings(first_connect_spread_s=0.0, backoff_min_s=0.1, backoff_max_s=0.5))
    try:
        assert fleet.run(timeout_s=120)                  # (the tables play whatever the broker says)
        started = time.monotonic()
        assert fleet.drain(30.0) is False and time.monotonic() - started < 15
        assert fleet.refusal() == ("t001", "connect refused: Not authorized")
    finally:
        fleet.close()
