"""A staged update to a table's service as a parlour gets it: a release installed with ``mjtable install`` into a
root outside the checkout, its service started as systemd starts it (the start guard, READY, the restarts) on the
simulated table, ``mjtable fleet release`` over a real Mosquitto, the bundle on an HTTP server as the hall's.

A bundle signed with another key and a release that fails its self-test are refused by the table, which keeps its
release and says why in its ``meta``; a good release is installed, the service restarts into it (exit 75) and
reports it, and the earlier rollout's retained ``failed`` of the same version does not halt the new rollout.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import shutil
import tarfile
import threading
from pathlib import Path

import pytest

from firmware.cli.main import main
from firmware.release.bundle import host_platform, make_key_pair
from tests.firmware.release.test_release import _broken_build, _source
from tests.support.fleet_rig import SITE, Watcher, wait_for
from tests.support.mosquitto_broker import Mosquitto, free_port, plain_conf
from tests.support.systemd_unit import UnitRunner

pytestmark = pytest.mark.slow
TABLE = "t07"
SECRET = bytes(range(40, 80))


def _bundle(tmp: Path, version: str, sign: Path, out: Path, patch=None, wheels: Path | None = None) -> Path:
    args = ["bundle", "--project", str(_source(tmp / version / out.name, version, patch)), "--out", str(out),
            "--platform", host_platform(), "--sign", str(sign)]
    if wheels is not None:
        args += ["--wheels", str(wheels)]
    assert main(args) == 0
    return out / f"mjtable-{version}.bundle.tar"


class Parlour:
    """The broker, the hall's HTTP server, the command key; the table installed under ``root``."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        folder = tmp / "broker"
        folder.mkdir()
        port = free_port()
        self.broker = Mosquitto(folder, plain_conf(port, folder), port).start()
        self.www = tmp / "www"
        self.www.mkdir()
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(self.www))
        handler.log_message = lambda *a: None
        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        self.cmd_key = tmp / "cmd.hmac"
        self.cmd_key.write_text("hmac-sha256:" + SECRET.hex() + "\n")

    def url(self, bundle: Path) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}/{bundle.relative_to(self.www)}"

    def release(self, bundle: Path, capsys) -> tuple[int, str]:
        code = main(["fleet", "release", "--bundle", str(bundle), "--url", self.url(bundle), "--broker",
                     self.broker.url, "--site", SITE, "--tables", TABLE, "--waves", "1", "--soak-s", "1",
                     "--sign-key", str(self.cmd_key), "--settle-s", "0.5", "--report-timeout-s", "300"])
        out = capsys.readouterr()
        return code, out.out + out.err

    def close(self) -> None:
        self.http.shutdown()
        self.broker.stop()


def _join_the_fleet(root: Path, parlour: Parlour) -> None:
    """The technician's step after the install: the table model's [fleet] section and the parlour's command key."""
    shutil.copyfile(parlour.cmd_key, root / "etc/mjtable/cmd.key")
    model = root / "etc/mjtable/tables/table.toml"
    model.write_text(model.read_text() + f'\n[fleet]\nbroker_url = "{parlour.broker.url}"\nsite = "{SITE}"\n'
                     f'table_id = "{TABLE}"\ncommand_key_file = "../cmd.key"\nfirst_connect_spread_s = 0\n')


def _releases(root: Path) -> dict:
    return json.loads((root / "opt/mjtable/releases.json").read_text())


def _rollout_id(out: str) -> str:
    found = re.search(r"^rollout (\S+): release", out, re.M)
    assert found, out
    return found.group(1)


@pytest.fixture
def parlour(tmp_path):
    p = Parlour(tmp_path)
    yield p
    p.close()


def test_a_table_service_takes_a_staged_update_refuses_bad_bundles_and_restarts_into_a_good_one(
        tmp_path, parlour, capsys):
    root = tmp_path / "root"
    root.mkdir()
    make_key_pair(tmp_path / "release.pem", tmp_path / "release.pub")
    make_key_pair(tmp_path / "other.pem", tmp_path / "other.pub")
    v1 = _bundle(tmp_path, "1.0.0", tmp_path / "release.pem", tmp_path / "dist")
    assert main(["install", "--bundle", str(v1), "--root", str(root), "--trust", str(tmp_path / "release.pub"),
                 "--selftest-seconds", "1"]) == 0, capsys.readouterr()
    capsys.readouterr()
    with tarfile.open(v1) as tar:
        tar.extractall(tmp_path / "v1", filter="data")
    wheels = tmp_path / "v1/mjtable-1.0.0/wheels"
    # the bundles the hall serves: 1.1.0 signed with a key the table does not trust, 1.2.0 that fails its
    # self-test, 1.1.0 signed with the parlour's release key
    wrong = _bundle(tmp_path, "1.1.0", tmp_path / "other.pem", parlour.www / "wrong", wheels=wheels)
    broken = _bundle(tmp_path, "1.2.0", tmp_path / "release.pem", parlour.www / "broken", _broken_build, wheels)
    good = _bundle(tmp_path, "1.1.0", tmp_path / "release.pem", parlour.www / "good", wheels=wheels)
    _join_the_fleet(root, parlour)

    unit = UnitRunner(root, tmp_path, ["--sim", "--release-root", str(root), "--diag-socket", "none"]).start()
    watcher = Watcher(parlour.broker.url)
    try:
        def meta() -> dict:
            view = watcher.view(TABLE)
            return dict(view.meta) if view is not None and view.online else {}

        wait_for(lambda: meta().get("firmware") == "1.0.0", 120, "the table's service on 1.0.0 online")

        # a bundle the table's release key did not sign: refused, the table keeps 1.0.0 and says why
        code, out = parlour.release(wrong, capsys)
        assert code == 1 and "update failed" in out, out
        release = meta()["release"]
        assert release["state"] == "failed" and "signature" in release["error"], release
        assert release["rollout"] == _rollout_id(out) and release["wave"] == 1 and release["target"] == "1.1.0"
        stale = release["rollout"]

        # a release that fails its self-test: refused with the self-test's words, nothing of it left
        code, out = parlour.release(broken, capsys)
        assert code == 1, out
        release = meta()["release"]
        assert release["state"] == "failed" and "self-test" in release["error"], release
        assert "v3: a broken build" in release["error"] and release["rollout"] == _rollout_id(out)
        assert meta()["firmware"] == "1.0.0" and unit.exits == []            # the service never stopped
        assert _releases(root)["current"] == "1.0.0"
        assert sorted(p.name for p in (root / "opt/mjtable/releases").iterdir()) == ["1.0.0"]

        # the good one: installed, the service exits 75 at rest, systemd starts it into 1.1.0, which reports it;
        # the retained "failed" of 1.1.0 from the first rollout does not count for this one
        code, out = parlour.release(good, capsys)
        assert code == 0, out + unit.log()[-3000:]
        rollout = _rollout_id(out)
        assert rollout != stale and "done" in out
        release = meta()["release"]
        assert meta()["firmware"] == "1.1.0", meta()
        assert release == {"target": "1.1.0", "state": "installed", "by": "rollout", "rollout": rollout, "wave": 1}
        assert unit.exits == [75] and unit.readies == 2 and not unit.gave_up
        state = _releases(root)
        assert state["current"] == "1.1.0" and state["previous"] == "1.0.0" and state["trial"] is None
        assert "the service restarts into the release now current once the table is at rest" in unit.log()
    finally:
        watcher.close()
        unit.stop()
