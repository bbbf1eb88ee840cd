"""Staged updates over a real broker: light tables whose releases are simulated (sim/release_sim.py: the real fetch,
hash and signature checks, a stand-in install), a bundle served by an HTTP server as the hall's, and ``mjtable fleet
release`` driving the waves.  Nothing sleeps: waiting polls against deadlines."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import tarfile
import threading
import time
from pathlib import Path

import pytest

from firmware.cli.main import main
from firmware.fleet.command_auth import hmac_key, sign_command
from firmware.fleet.topics import TableTopics, rollout_topic
from firmware.release.bundle import _sign, make_key_pair
from hal.runtime import HOST_CLOCK
from sim.light_fleet import LightFleet, LightTable
from sim.release_sim import SimInstaller
from tests.support.fleet_rig import wait_for
from tests.support.mosquitto_broker import Mosquitto, free_port, plain_conf

pytestmark = pytest.mark.slow
SITE = "p1"
SECRET = bytes(range(90, 122))
KEY = hmac_key(SECRET)


def _bundle(folder: Path, version: str, sign_key: Path) -> Path:
    """A small signed bundle (format 1): its manifest, a file, the signature."""
    top = folder / f"src-{version}" / f"mjtable-{version}"
    (top / "wheels").mkdir(parents=True)
    (top / "wheels" / "README").write_text(f"release {version}\n")
    files = {"wheels/README": hashlib.sha256((top / "wheels" / "README").read_bytes()).hexdigest()}
    (top / "MANIFEST.json").write_text(json.dumps({"format": 1, "name": "mjtable", "version": version,
                                                   "files": files}))
    (top / "MANIFEST.json.sig").write_bytes(_sign(sign_key, (top / "MANIFEST.json").read_bytes()))
    out = folder / "www" / f"mjtable-{version}.bundle.tar"
    out.parent.mkdir(exist_ok=True)
    with tarfile.open(out, "w") as tar:
        tar.add(top, arcname=top.name)
    return out


class Rig:
    def __init__(self, tmp: Path, tables: int, failing: tuple[str, ...] = ()) -> None:
        folder = tmp / "broker"
        folder.mkdir()
        port = free_port()
        self.broker = Mosquitto(folder, plain_conf(port, folder), port).start()
        make_key_pair(tmp / "release.pem", tmp / "release.pub")
        self.bundle = _bundle(tmp, "2.0.0", tmp / "release.pem")
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(self.bundle.parent))
        handler.log_message = lambda *a: None
        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/{self.bundle.name}"
        (tmp / "cmd.hmac").write_text("hmac-sha256:" + SECRET.hex() + "\n")
        self.sign_key = tmp / "cmd.hmac"

        def installer(t: LightTable) -> SimInstaller:
            return SimInstaller(tmp / "roots" / t.table, "1.0.0", HOST_CLOCK, trusted_key=tmp / "release.pub",
                                selftest_fails=t.table in failing)

        (tmp / "tables").mkdir()
        self.fleet = LightFleet([(SITE, self.broker.url)], tables, tmp / "tables", keys=[KEY.verify_key()],
                                installer=installer)
        wait_for(lambda: self.fleet.connected() == tables, 20, "every table connected")
        self.names = [t.table for t in self.fleet.tables]

    def table(self, name: str) -> LightTable:
        return next(t for t in self.fleet.tables if t.table == name)

    def release(self, *extra: str) -> int:
        return main(["fleet", "release", "--bundle", str(self.bundle), "--url", self.url, "--broker", self.broker.url,
                     "--site", SITE, "--tables", ",".join(self.names), "--sign-key", str(self.sign_key),
                     "--trusted-key", str(self.bundle.parent.parent / "release.pub"), "--settle-s", "0.5",
                     "--report-timeout-s", "20", *extra])

    def close(self) -> None:
        self.fleet.close()
        self.http.shutdown()
        self.broker.stop()


@pytest.fixture
def rig_of(tmp_path):
    made = []

    def make(tables: int, failing: tuple[str, ...] = ()) -> Rig:
        made.append(Rig(tmp_path, tables, failing))
        return made[-1]

    yield make
    for r in made:
        r.close()


def _retained_progress(rig: Rig) -> dict:
    import paho.mqtt.subscribe as subscribe

    port = int(rig.broker.url.rsplit(":", 1)[1])
    message = subscribe.simple(rollout_topic(SITE), hostname="127.0.0.1", port=port, retained=True)
    return json.loads(message.payload)["data"]


def test_a_rollout_goes_wave_by_wave_to_every_table(rig_of, capsys):
    rig = rig_of(5)
    assert rig.release("--waves", "1,40%,100%", "--soak-s", "0.5") == 0
    out = capsys.readouterr().out
    for t in rig.fleet.tables:
        assert t.installer.current() == "2.0.0" and t.installer.installs == 1
        assert t.link.meta["firmware"] == "2.0.0" and t.link.meta["release"]["state"] == "installed"
    sent = [line.split(":")[0] for line in out.splitlines() if line.endswith("update 2.0.0 sent")]
    assert sent == rig.names                                    # the canary first, then one, then three
    assert "wave 2/3" in out and "wave 3/3" in out
    for line in out.splitlines():            # (waves 1, 2 (40%), 5: each only once the earlier ones were healthy)
        if "p1-t002=updating" in line:
            assert "p1-t001=healthy" in line
        if "p1-t003=updating" in line:
            assert "p1-t001=healthy p1-t002=healthy" in line
    progress = _retained_progress(rig)
    assert progress["state"] == "done" and progress["healthy"] == 5


def test_a_canary_whose_self_test_fails_halts_the_rollout(rig_of, capsys):
    rig = rig_of(4, failing=("p1-t001",))
    assert rig.release("--soak-s", "0.5") == 1
    out = capsys.readouterr().out
    canary = rig.table("p1-t001")
    assert canary.installer.current() == "1.0.0" and canary.link.meta["release"]["state"] == "failed"
    assert "self-test" in canary.link.meta["release"]["error"]
    for t in rig.fleet.tables[1:]:                              # no further table touched
        assert t.installer.installs == 0 and t.installer.current() == "1.0.0" and "release" not in t.link.meta
    assert "update failed" in out and out.count("update 2.0.0 sent") == 1
    progress = _retained_progress(rig)
    assert progress["state"] == "halted" and progress["tables"][0]["phase"] == "failed"


def test_a_new_fault_within_the_soak_halts_and_the_canaries_roll_back(rig_of, capsys):
    rig = rig_of(4)
    canary, second = rig.table("p1-t001"), rig.table("p1-t002")
    done = {}
    runner = threading.Thread(target=lambda: done.update(code=rig.release("--waves", "2,100%", "--soak-s", "4")))
    runner.start()
    wait_for(lambda: second.installer.current() == "2.0.0" and canary.installer.current() == "2.0.0", 20,
             "both canaries on 2.0.0")
    rig.fleet.raise_fault(second, "E41", "side 0 starved")
    runner.join(30)
    assert done["code"] == 1
    out = capsys.readouterr().out
    assert "new fault E41" in out
    wait_for(lambda: canary.installer.current() == second.installer.current() == "1.0.0", 10, "rolled back")
    assert canary.link.meta["release"]["state"] == "rolled back"
    for t in rig.fleet.tables[2:]:
        assert t.installer.installs == 0
    assert _retained_progress(rig)["state"] == "halted"


def test_a_forged_or_unsigned_update_is_refused(rig_of):
    rig = rig_of(1)
    t = rig.fleet.tables[0]
    topic = TableTopics(SITE, t.table).command("update")
    digest = hashlib.sha256(rig.bundle.read_bytes()).hexdigest()
    args = {"url": rig.url, "sha256": digest, "version": "2.0.0"}
    forged = sign_command(hmac_key(b"not the parlour's key!!"), site=SITE, table=t.table, verb="update", args=args,
                          issuer="mallory", issued_at=time.time())
    unsigned = json.loads(sign_command(KEY, site=SITE, table=t.table, verb="update", args=args, issuer="mallory",
                                       issued_at=time.time()))
    unsigned["sig"] = ""
    import paho.mqtt.client as mqtt
    from paho.mqtt.properties import Properties
    from paho.mqtt.packettypes import PacketTypes

    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.connect("127.0.0.1", int(rig.broker.url.rsplit(":", 1)[1]))
    client.loop_start()
    props = Properties(PacketTypes.PUBLISH)
    props.MessageExpiryInterval = 60
    for payload in (forged, json.dumps(unsigned).encode()):
        client.publish(topic, payload, 1, properties=props).wait_for_publish(5)
    wait_for(lambda: rig.fleet.call(t.link.status)["commands_refused"] == 2, 10, "both refused")
    client.loop_stop()
    client.disconnect()
    assert t.installer.installs == 0 and t.installer.current() == "1.0.0"
