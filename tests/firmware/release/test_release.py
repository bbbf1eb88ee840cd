"""Releases on a table, as a technician gets them: a bundle built from the checkout, installed with no network
into a root outside the checkout, updated, refused, rolled back, with the table database surviving every step.

The service's starts are driven as systemd drives them: the unit's ExecStartPre guard, the ExecStart command
with a real NOTIFY_SOCKET (READY=1 read from it), and the ExecStartPost that ends a trial only after READY.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import sqlite3
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from firmware.cli.main import main
from firmware.release.bundle import TABLE_PLATFORM, host_platform

CHECKOUT = Path(__file__).resolve().parents[3]
SOURCES = ("firmware", "hal", "sim", "parlour", "config", "setup.cfg", "setup.py", "README.md")


def _source(tmp: Path, version: str, patch=None) -> Path:
    """A copy of the checkout at another version (with a defect where a test wants one)."""
    src = tmp / f"src-{version}"
    for name in SOURCES:
        if (CHECKOUT / name).is_dir():
            shutil.copytree(CHECKOUT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copyfile(CHECKOUT / name, src / name)
    init = src / "firmware" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "', f'__version__ = "{version}"  # was "'))
    if patch:
        patch(src)
    return src


def _bundle(tmp: Path, version: str, patch=None, wheels: Path | None = None, platforms=None) -> Path:
    src = _source(tmp, version, patch)
    args = ["bundle", "--project", str(src), "--out", str(tmp / "dist")]
    for plat in platforms or [host_platform()]:
        args += ["--platform", plat]
    if wheels:
        args += ["--wheels", str(wheels)]
    assert main(args) == 0
    return tmp / "dist" / f"mjtable-{version}.bundle.tar"


def _install(root: Path, bundle: Path, capsys) -> tuple[int, str]:
    code = main(["install", "--bundle", str(bundle), "--root", str(root), "--selftest-seconds", "1"])
    out = capsys.readouterr()
    return code, out.out + out.err


def _state(root: Path) -> dict:
    return json.loads((root / "opt/mjtable/releases.json").read_text())


def _unit_commands(root: Path, state: Path) -> dict[str, list[str]]:
    """The unit's commands, pointed into the test root (and at the simulated table: there are no pins here)."""
    text = (root / "etc/systemd/system/mjtable.service").read_text()
    lines = dict(line.split("=", 1) for line in text.splitlines() if line.startswith("Exec"))
    pre = shlex.split(lines["ExecStartPre"].lstrip("+"))
    post = shlex.split(lines["ExecStartPost"].lstrip("+"))
    start = shlex.split(lines["ExecStart"])
    assert pre[0] == post[0] == "/opt/mjtable/bin/mjtable-start" and start[0] == "/opt/mjtable/current/bin/mjtable"
    start = [str(root) + start[0], *(a.replace("/etc/mjtable", str(root / "etc/mjtable")) for a in start[1:])]
    start = [a if a != "/var/lib/mjtable/table.db" else str(state) for a in start]
    return {"pre": [sys.executable, str(root) + pre[0], *pre[1:]],
            "start": start + ["--sim", "--seconds", "1.5", "--diag-socket", "none"],
            "post": [sys.executable, str(root) + post[0], *post[1:]]}


def _systemd_start(root: Path, tmp: Path) -> bool:
    """One start of the service as systemd makes it; True when the service sent READY=1."""
    commands = _unit_commands(root, root / "var/lib/mjtable/table.db")
    if subprocess.run(commands["pre"], capture_output=True).returncode != 0:
        return False
    path = str(tmp / "notify.sock")
    if os.path.exists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(path)
    listener.settimeout(0.2)
    try:
        env = dict(os.environ, NOTIFY_SOCKET=path)
        service = subprocess.Popen(commands["start"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   env=env, cwd=tmp)
        ready = False
        while True:                                  # read as systemd does, while the service runs
            try:
                message = listener.recv(4096)
                ready = ready or b"READY=1" in message
            except (socket.timeout, BlockingIOError):
                if service.poll() is not None:
                    break
        returncode = service.wait(timeout=120)
    finally:
        listener.close()
    if ready:
        assert subprocess.run(commands["post"], capture_output=True).returncode == 0
    return ready and returncode == 0


def _scores(db: Path) -> list:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT * FROM hands ORDER BY 1").fetchall()


def _broken_build(src: Path) -> None:                       # v3: a module that does not import
    scorer = src / "firmware" / "rules" / "mcr" / "scorer.py"
    scorer.write_text(scorer.read_text() + '\nraise ImportError("v3: a broken build")\n')


def _service_fails(src: Path) -> None:                      # v4: passes its self-test, its service never starts
    run_cmd = src / "firmware" / "cli" / "run_cmd.py"
    text = run_cmd.read_text()
    marker = "def run(args: argparse.Namespace) -> int:\n"
    run_cmd.write_text(text.replace(marker, marker + '    raise SystemExit("v4: the service cannot start")\n'))


def test_bundle_install_update_refuse_and_roll_back(tmp_path, capsys):
    root = tmp_path / "root"
    root.mkdir()
    # v1: built for the table (aarch64) and this machine, from the network; installed with none
    v1 = _bundle(tmp_path, "1.0.0", platforms=[TABLE_PLATFORM, host_platform()])
    with tarfile.open(v1) as tar:
        names = tar.getnames()
        manifest = json.load(tar.extractfile("mjtable-1.0.0/MANIFEST.json"))
    assert manifest["version"] == "1.0.0" and TABLE_PLATFORM in manifest["platforms"]
    assert any("pydantic_core" in n and "aarch64" in n for n in names), "no wheel of the table's platform"
    assert any(n.startswith("mjtable-1.0.0/wheels/lgpio-") and "aarch64" in n for n in names)
    assert "mjtable-1.0.0/systemd/mjtable.service" in names and "mjtable-1.0.0/config/rules/mcr.toml" in names
    wheelhouse = tmp_path / "wheelhouse"
    with tarfile.open(v1) as tar:
        tar.extractall(tmp_path / "v1", filter="data")
    shutil.copytree(tmp_path / "v1/mjtable-1.0.0/wheels", wheelhouse)

    code, out = _install(root, v1, capsys)
    assert code == 0, out
    assert "release 1.0.0 passed its self-test and is current" in out and "not enrolled" in out
    current = root / "opt/mjtable/current/bin/mjtable"
    assert os.readlink(root / "opt/mjtable/current") == "releases/1.0.0"
    model = (root / "etc/mjtable/tables/table.toml").read_text()
    assert "sim-A.csv" not in model and '"../tiles/A.csv"' in model      # the table's own sets, not the simulator's

    # the installed release works from outside the checkout: a game, the scorer, config check, run --sim
    db = root / "var/lib/mjtable/table.db"
    elsewhere = dict(cwd=tmp_path, capture_output=True, text=True, timeout=300)
    game = subprocess.run([str(current), "sim", "--hands", "2", "--state", str(db)], **elsewhere)
    assert game.returncode == 0 and "hands: 2 of 2 played" in game.stdout, game.stdout + game.stderr
    hand = (Path(__file__).parents[2] / "data" / "mcr-random.jsonl").read_text().splitlines()[0] + "\n"
    scored = subprocess.run([str(current), "score"], input=hand, **elsewhere)
    assert scored.returncode == 0 and '"win": true' in scored.stdout, scored.stdout + scored.stderr
    check = subprocess.run([str(current), "config", "check", str(root / "etc/mjtable/tables/table.toml")],
                           **elsewhere)
    assert check.returncode == 0, check.stderr
    version = subprocess.run([str(current), "--version"], **elsewhere)
    assert version.stdout.strip() == "mjtable 1.0.0"
    scores = _scores(db)
    assert scores

    # v2, installed by the table's own mjtable (1.0.0), passes its self-test, becomes current on trial,
    # and its first start ends the trial
    update = subprocess.run([str(root / "usr/local/bin/mjtable"), "install", "--bundle",
                             str(_bundle(tmp_path, "1.1.0", wheels=wheelhouse)), "--root", str(root),
                             "--selftest-seconds", "1"], **elsewhere)
    assert update.returncode == 0, update.stdout + update.stderr
    assert "release 1.1.0 passed its self-test" in update.stdout and "system steps" not in update.stdout
    assert _state(root)["current"] == "1.1.0" and _state(root)["trial"] == {"version": "1.1.0", "starts": 0}
    assert _systemd_start(root, tmp_path)
    assert _state(root)["trial"] is None and _state(root)["previous"] == "1.0.0"
    assert _scores(db)[: len(scores)] == scores

    # v3 fails its self-test: refused, nothing of it left, the table keeps 1.1.0
    code, out = _install(root, _bundle(tmp_path, "1.2.0", _broken_build, wheels=wheelhouse), capsys)
    assert code == 2 and "release 1.2.0 failed its self-test" in out and "v3: a broken build" in out
    assert _state(root)["current"] == "1.1.0" and os.readlink(root / "opt/mjtable/current") == "releases/1.1.0"
    assert sorted(p.name for p in (root / "opt/mjtable/releases").iterdir()) == ["1.0.0", "1.1.0"]

    # v4 passes its self-test but its service never gets READY: after three starts the guard rolls back
    code, out = _install(root, _bundle(tmp_path, "1.3.0", _service_fails, wheels=wheelhouse), capsys)
    assert code == 0, out
    assert _state(root)["current"] == "1.3.0"
    assert [_systemd_start(root, tmp_path) for _ in range(3)] == [False, False, False]
    assert _state(root)["trial"] == {"version": "1.3.0", "starts": 3}
    assert _systemd_start(root, tmp_path)                  # the fourth start runs 1.1.0 again
    state = _state(root)
    assert state["current"] == "1.1.0" and "1.3.0" in state["failed"] and state["trial"] is None
    assert os.readlink(root / "opt/mjtable/current") == "releases/1.1.0"
    assert main(["release", "--root", str(root), "list"]) == 0
    listing = capsys.readouterr().out
    assert "1.1.0        current" in listing and "1.3.0        rolled back" in listing
    assert "rolled back from 1.3.0" in listing

    # by hand: activate an older release, roll back to the one before
    assert main(["release", "--root", str(root), "activate", "1.0.0"]) == 0
    assert os.readlink(root / "opt/mjtable/current") == "releases/1.0.0"
    assert main(["release", "--root", str(root), "rollback"]) == 0
    assert os.readlink(root / "opt/mjtable/current") == "releases/1.1.0"
    assert main(["release", "--root", str(root), "rollback"]) == 2          # nothing before that
    assert "no previous release" in capsys.readouterr().err
    assert _scores(db)[: len(scores)] == scores                             # the table's database survived
    assert (root / "etc/mjtable/tables/table.toml").read_text() == model    # and its configuration


def test_keys_are_never_overwritten_and_a_private_key_is_never_trusted(tmp_path, capsys):
    key = tmp_path / "parlour"
    assert main(["bundle", "--new-key", str(key)]) == 0
    before = key.with_suffix(".pem").read_bytes()
    assert main(["bundle", "--new-key", str(key)]) == 2                   # would lock every table out
    assert "exists" in capsys.readouterr().err and key.with_suffix(".pem").read_bytes() == before
    root = tmp_path / "root"
    for wrong in (key.with_suffix(".pem"), tmp_path / "missing.pub", Path(__file__)):
        assert main(["install", "--config-only", "--root", str(root), "--trust", str(wrong)]) == 2
        assert capsys.readouterr().err.count("\n") == 1
        assert not (root / "etc/mjtable/release-key.pub").exists() and not root.exists()


def _git_repo(folder: Path) -> Path:
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def test_new_key_goes_out_of_the_checkout_and_refuses_a_work_tree_that_would_not_ignore_it(tmp_path, monkeypatch,
                                                                                           capsys):
    """``bundle --new-key parlour`` wrote parlour.pem into the working folder (a checkout: untracked, not ignored,
    one ``git add .`` from published).  Now: a bare NAME goes to ~/.config/mjtable (XDG_CONFIG_HOME), a path in
    a work tree that does not ignore it is refused with nothing written, an ignored one is fine."""
    repo = _git_repo(tmp_path / "checkout")
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.chdir(repo)
    assert main(["bundle", "--new-key", "parlour"]) == 0
    out = capsys.readouterr().out
    private = config / "mjtable" / "parlour.pem"
    assert private.is_file() and (config / "mjtable" / "parlour.pub").is_file() and str(private) in out
    assert oct(os.stat(private).st_mode & 0o777) == "0o600" and oct(os.stat(private.parent).st_mode & 0o777) == "0o700"
    assert sorted(p.name for p in repo.iterdir()) == [".git"]                  # nothing in the checkout
    assert main(["bundle", "--new-key"]) == 0                                  # the default name
    assert (config / "mjtable" / "release-signing.pem").is_file()
    capsys.readouterr()
    for argv in (["--new-key", str(repo / "parlour")], ["--new-key", "./parlour"],
                 ["--new-key", "--key-out", str(repo / "keys.pem")], ["--new-key", "x", "--key-out", "sub/../k.pem"]):
        assert main(["bundle", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert f"inside the git work tree {repo}, not ignored by it" in err and err.count("\n") == 1, err
        assert sorted(p.name for p in repo.iterdir()) == [".git"]
    (repo / ".gitignore").write_text("*.pem\n")
    assert main(["bundle", "--new-key", "--key-out", str(repo / "keys.pem")]) == 0     # ignored: fine
    assert (repo / "keys.pem").is_file()
    assert main(["bundle", "--key-out", str(tmp_path / "k.pem")]) == 2
    assert "--key-out goes with --new-key" in capsys.readouterr().err


def test_the_projects_gitignore_keeps_private_keys_out():
    root = Path(__file__).resolve().parents[3]
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    for name in ("parlour.pem", "release-signing.pem", "parlour/ca/ca.key"):
        done = subprocess.run(["git", "-C", str(root), "check-ignore", "-q", "--no-index", name])
        assert done.returncode == 0, name


def test_a_damaged_or_unsigned_bundle_is_refused(tmp_path, capsys):
    key = tmp_path / "parlour"
    assert main(["bundle", "--new-key", str(key)]) == 0
    from firmware.release.bundle import open_bundle
    from firmware.faults import TableError

    folder = tmp_path / "mjtable-9.9.9"
    (folder / "wheels").mkdir(parents=True)
    (folder / "wheels" / "x.whl").write_bytes(b"wheel")
    import hashlib
    manifest = {"format": 1, "name": "mjtable", "version": "9.9.9", "platforms": [host_platform()],
                "files": {"wheels/x.whl": hashlib.sha256(b"wheel").hexdigest()}}
    (folder / "MANIFEST.json").write_text(json.dumps(manifest))

    def pack(name: str) -> Path:
        path = tmp_path / name
        with tarfile.open(path, "w") as tar:
            tar.add(folder, arcname=folder.name)
        return path

    assert open_bundle(pack("good.tar"), tmp_path / "o1").version == "9.9.9"
    with pytest.raises(TableError, match="not signed"):
        open_bundle(pack("unsigned.tar"), tmp_path / "o2", trusted_key=key.with_suffix(".pub"))
    from firmware.release.bundle import _sign
    (folder / "MANIFEST.json.sig").write_bytes(_sign(key.with_suffix(".pem"), (folder / "MANIFEST.json").read_bytes()))
    assert open_bundle(pack("signed.tar"), tmp_path / "o3", trusted_key=key.with_suffix(".pub")).signed
    other = tmp_path / "other"
    assert main(["bundle", "--new-key", str(other)]) == 0
    with pytest.raises(TableError, match="signature does not match"):
        open_bundle(pack("signed2.tar"), tmp_path / "o4", trusted_key=other.with_suffix(".pub"))
    (folder / "wheels" / "x.whl").write_bytes(b"tampered")
    with pytest.raises(TableError, match="does not match its checksum"):
        open_bundle(pack("tampered.tar"), tmp_path / "o5")
    (folder / "wheels" / "extra.whl").write_bytes(b"x")
    with pytest.raises(TableError, match="not in its manifest"):
        open_bundle(pack("extra.tar"), tmp_path / "o6")
    (tmp_path / "junk.tar").write_bytes(b"not a tar")
    with pytest.raises(TableError, match="not a release bundle"):
        open_bundle(tmp_path / "junk.tar", tmp_path / "o7")


def test_old_releases_are_pruned_but_never_the_current_or_the_previous(tmp_path):
    from firmware.release.releases import KEPT_OLD, Releases
    from hal.runtime import HOST_CLOCK

    releases = Releases(tmp_path, HOST_CLOCK)
    versions = ["1.0.0", "1.1.0", "1.2.0", "1.10.0", "2.0.0", "2.1.0"]
    for version in versions:
        program = releases.folder / version / "bin" / "mjtable"
        program.parent.mkdir(parents=True)
        program.write_text("")
    releases.activate("1.0.0")                     # an old one as previous: kept whatever its age
    releases.activate("2.1.0")
    gone = releases.prune()
    assert gone == ["1.1.0", "1.2.0"] and KEPT_OLD == 2      # (1.10.0 is newer than 1.2.0)
    left = [r.version for r in releases.installed()]
    assert left == ["1.0.0", "1.10.0", "2.0.0", "2.1.0"]
    assert releases.prune() == []


@pytest.mark.parametrize("argv", [["release", "--root", "{root}", "list"], ["release", "list", "--root", "{root}"],
                                  ["release", "--root", "/elsewhere", "list", "--root", "{root}"]],
                         ids=["before", "after", "after-wins"])
def test_release_root_is_taken_before_or_after_the_action(tmp_path, capsys, argv):
    """``release list --root R`` was "unrecognized arguments": the shared option goes on either side of the action
    (the one after it wins, as options do), for every action."""
    root = tmp_path / "r"
    root.mkdir()
    assert main([a.replace("{root}", str(root)) for a in argv]) == 1
    assert capsys.readouterr().out == f"no release installed under {root}/opt/mjtable/releases\n"
    for action in (["activate", "9.9.9"], ["rollback"]):
        assert main(["release", *action, "--root", str(root)]) == 2
        err = capsys.readouterr().err
        assert str(root) in err or "no previous release" in err, err
        assert "unrecognized" not in err
    from firmware.cli.main import build_parser

    assert build_parser().parse_args(["release", "list"]).root == Path("/")          # (the default root)
