"""The table's installer for a staged update over the fleet (firmware/release/fleet_install.py): what it refuses
before fetching anything, and what the release that starts after the restart reports.  (The whole path, from a
signed command over a broker to the service restarted into the new release, is tests/end_to_end/
test_fleet_update_table.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware.faults import TableError
from firmware.release.fleet_install import TRUSTED_KEY, TableInstaller
from firmware.release.launcher import guard_start, read_state, START_LIMIT
from firmware.release.releases import Releases
from hal.runtime import HOST_CLOCK

TAG = {"by": "anna", "rollout": "r9", "wave": 2}


def _release(releases: Releases, version: str) -> None:
    (releases.folder / version / "bin").mkdir(parents=True)
    (releases.folder / version / "bin" / "mjtable").write_text("#!/bin/sh\n")


def _table(root: Path, *versions: str, trusted: bool = True) -> Releases:
    releases = Releases(root, HOST_CLOCK)
    for version in versions:
        _release(releases, version)
    if versions:
        releases.activate(versions[0], trial=False)
    if trusted:
        (root / TRUSTED_KEY).parent.mkdir(parents=True, exist_ok=True)
        (root / TRUSTED_KEY).write_text("a public key\n")
    return releases


def test_a_table_not_installed_or_trusting_no_release_key_refuses_before_fetching(tmp_path):
    url, digest = "http://127.0.0.1:9/never-fetched.tar", "ab" * 32
    bare = TableInstaller(Releases(tmp_path / "bare", HOST_CLOCK), "1.0.0", "mcr")
    with pytest.raises(TableError, match="not installed with mjtable install"):
        bare.install(url, digest, "2.0.0", TAG)
    untrusting = TableInstaller(_table(tmp_path / "untrusting", "1.0.0", trusted=False), "1.0.0", "mcr")
    with pytest.raises(TableError, match="trusts no release key .* not installed unsigned"):
        untrusting.install(url, digest, "2.0.0", TAG)
    assert bare.outcome() is None and untrusting.outcome() is None       # (nothing was asked of either)


def test_a_bundle_that_cannot_be_fetched_is_refused_and_the_table_keeps_its_release(tmp_path):
    releases = _table(tmp_path, "1.0.0")
    installer = TableInstaller(releases, "1.0.0", "mcr")
    with pytest.raises(TableError, match="cannot fetch it"):
        installer.install("http://127.0.0.1:9/mjtable-2.0.0.bundle.tar", "ab" * 32, "2.0.0", TAG)
    assert releases.current() == "1.0.0" and installer.outcome() is None
    assert sorted(p.name for p in releases.folder.iterdir()) == ["1.0.0"]
    assert not [p for p in releases.base.iterdir() if p.name.startswith("fleet-update-")]   # (nothing left behind)


def test_after_the_restart_the_release_that_runs_says_how_the_update_went(tmp_path):
    releases = _table(tmp_path, "1.0.0", "2.0.0")
    old = TableInstaller(releases, "1.0.0", "mcr")
    old._remember("update", "2.0.0", TAG)
    releases.activate("2.0.0")                                   # (what install does once the self-test passed)
    # the new release started: it runs 2.0.0
    assert TableInstaller(releases, "2.0.0", "mcr").outcome() == {"target": "2.0.0", "state": "installed", **TAG}
    # ... or it never got READY: the start guard put 1.0.0 back, which reports the failure with the guard's words
    for _ in range(START_LIMIT + 1):
        guard_start(releases.base, HOST_CLOCK)
    assert read_state(releases.base)["current"] == "1.0.0"
    failed = TableInstaller(releases, "1.0.0", "mcr").outcome()
    assert failed["state"] == "failed" and failed["rollout"] == "r9" and failed["wave"] == 2
    assert failed["error"] == f"rolled back from 2.0.0 (no READY in {START_LIMIT} starts); now 1.0.0"


def test_a_rollback_over_the_fleet_is_reported_by_the_release_it_went_back_to(tmp_path):
    releases = _table(tmp_path, "1.0.0", "2.0.0")
    releases.activate("2.0.0", trial=False)
    running = TableInstaller(releases, "2.0.0", "mcr")
    assert running.rollback("3.0.0", TAG) == "2.0.0"             # (not the one running: nothing to do)
    assert running.rollback("2.0.0", TAG) == "1.0.0" and releases.current() == "1.0.0"
    assert running.outcome() == {"target": "2.0.0", "state": "rollback failed", **TAG}    # (still runs 2.0.0)
    assert TableInstaller(releases, "1.0.0", "mcr").outcome() == {"target": "2.0.0", "state": "rolled back", **TAG}


# The service as a table runs it unprivileged: a child process as ``nobody`` (setpriv drops root's rights, which
# would write anything) or, for a developer who is not root, as this user against folders it may not write.
_AS_SERVICE = """
import json, sys
from pathlib import Path
from firmware.fleet.update_desk import UpdateDesk
from firmware.release.fleet_install import TableInstaller
from firmware.release.releases import Releases
from hal.runtime import HOST_CLOCK

releases = Releases(Path(sys.argv[1]), HOST_CLOCK)
installer = TableInstaller(releases, "1.0.0", "mcr")
reports = []
desk = UpdateDesk(installer, lambda fn, *a: fn(*a), lambda firmware, release: reports.append([firmware, release]),
                  spawn=lambda work: work())
answer = desk.handle("update", {"version": "2.0.0", "url": "http://127.0.0.1:9/never-fetched.tar",
                                "sha256": "ab" * 32, "rollout": "r9", "wave": 1}, "anna")
print(json.dumps({"answer": answer, "reports": reports, "current": releases.current(), "busy": desk.busy}))
"""


def test_a_service_that_may_not_write_the_release_root_refuses_the_update_and_keeps_its_release():
    import json
    import os
    import shutil
    import stat
    import subprocess
    import sys
    import tempfile

    # (a folder anyone may enter: pytest's own tmp_path is root's alone, and nobody could not read the table)
    root = Path(tempfile.mkdtemp(prefix="mjtable-unprivileged-", dir="/dev/shm" if Path("/dev/shm").is_dir()
                                 else None))
    try:
        root.chmod(0o755)
        releases = _table(root, "1.0.0")
        for folder in [root, *root.rglob("*")]:
            if folder.is_dir():
                folder.chmod(0o755)                     # (readable by all, writable by its owner alone)
            else:
                folder.chmod(0o644)
        before = read_state(releases.base)
        if os.geteuid() == 0:
            drop = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]
            if shutil.which("setpriv") is None:
                pytest.fail("setpriv (util-linux) is needed to run the service as nobody")
        else:                                           # (not root: this user is the service; root's folders)
            drop = []
            for folder in (releases.base, releases.folder):
                folder.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[3]))
        done = subprocess.run([*drop, sys.executable, "-c", _AS_SERVICE, str(root)], capture_output=True, text=True,
                              env=env, timeout=120, cwd="/")
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout.strip().splitlines()[-1])
        after = read_state(releases.base)
        kept = sorted(p.name for p in releases.folder.iterdir())
        left = [p.name for p in releases.base.iterdir() if p.name.startswith("fleet-update-")]
    finally:
        for folder in [root, *root.rglob("*")]:
            if folder.is_dir():
                folder.chmod(0o755)
        shutil.rmtree(root, ignore_errors=True)
    # the command was taken, the work refused at once, before fetching (the URL would have failed otherwise)
    assert result["answer"] == {"version": "2.0.0", "started": True, "current": "1.0.0"}
    (_, installing), (firmware, failed) = result["reports"]
    assert installing["state"] == "installing"
    assert failed["state"] == "failed" and failed["rollout"] == "r9" and failed["by"] == "anna"
    assert failed["error"] == (f"the service may not write {releases.base} and its releases/ (a table updated over "
                               f"the fleet: chown mjtable: {releases.base} {releases.folder}, docs/fleet.md)")
    # the table keeps running its release, nothing of the update written, and takes the next command
    assert firmware == "1.0.0" and result["current"] == "1.0.0" and result["busy"] is None
    assert after == before and kept == ["1.0.0"] and left == []
