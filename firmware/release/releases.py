"""A table's releases side by side under ``/opt/mjtable``: install one from a bundle, switch, roll back, list.

Layout under the install root ``R`` (``/`` on a table)::

    R/opt/mjtable/releases/<version>/   a virtualenv with that version and its dependencies
    R/opt/mjtable/current -> releases/<version>   the one the service runs (switched by one rename)
    R/opt/mjtable/releases.json         current, previous, the release on trial, history
    R/opt/mjtable/bin/mjtable-start     the start guard (:mod:`hal.start_guard`, the unit runs it)
    R/opt/mjtable/bin/mjtable_launcher.py   what it runs (:mod:`firmware.release.launcher`)
    R/etc/mjtable/                      the table's configuration: never inside a release
    R/var/lib/mjtable/table.db          the table database: never inside a release

A new release is installed beside the others from the bundle's wheels with
no network (``pip --no-index``), checks itself (``mjtable selftest`` run by
the new release's own interpreter, against the table's configuration and a
copy of its database) and only then becomes current, on trial until the
service reports READY.  A release that fails its self-test is removed and
the table keeps what it had.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from firmware.faults import TableError
from firmware.i18n import N_, Phrase, worded
from firmware.ports.clock import Clock
from firmware.release.launcher import note, read_state, roll_back, switch_current, write_state

log = logging.getLogger(__name__)

OPT = Path("opt") / "mjtable"
ETC = Path("etc") / "mjtable"
DATA = Path("var") / "lib" / "mjtable"
SELFTEST_TIMEOUT_S = 300.0
KEPT_OLD = 2                  # releases kept besides the current and the previous one


@dataclass(frozen=True)
class Release:
    version: str
    current: bool
    previous: bool
    on_trial: bool
    failed: bool

    def line(self) -> str:
        marks = [m for m, on in (("current", self.current), ("previous", self.previous),
                                 ("on trial", self.on_trial), ("rolled back", self.failed)) if on]
        return f"{self.version:12} {', '.join(marks)}".rstrip()


class Releases:
    """The releases installed under ``root``; ``clock`` times the switches in the history."""

    def __init__(self, root: Path, clock: Clock) -> None:
        self.root = root
        self.clock = clock
        self.base = root / OPT
        self.folder = self.base / "releases"

    # -- reading ----------------------------------------------------------------
    def state(self) -> dict:
        return read_state(self.base)

    def current(self) -> str | None:
        return self.state()["current"]

    def installed(self) -> list[Release]:
        state = self.state()
        trial = (state["trial"] or {}).get("version")
        versions = sorted((p.name for p in self.folder.iterdir() if p.is_dir() and not p.name.endswith(".new")),
                          key=_version_key) if self.folder.is_dir() else []
        return [Release(v, v == state["current"], v == state["previous"], v == trial, v in state["failed"])
                for v in versions]

    # -- changing -----------------------------------------------------------------
    def install(self, wheels: Path, version: str, extras: str = "", selftest_args: list[str] | None = None,
                python: str | None = None) -> Path:
        """Install ``version`` from the folder of wheels, self-test it, and keep it (not yet current).

        Raises TableError, leaving nothing behind, when the install or the
        self-test fails."""
        self.folder.mkdir(parents=True, exist_ok=True)
        staging = self.folder / f"{version}.new"
        if staging.exists():
            shutil.rmtree(staging)
        final = self.folder / version
        try:
            # (the release gets its own pip, from the interpreter's ensurepip: the next update needs no other)
            _run([python or _base_python(), "-m", "venv", str(staging)], N_("creating the virtualenv"))
            _run([str(staging / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                  "--no-index", "--find-links", str(wheels), "--no-cache-dir", f"mjtable{extras}=={version}"],
                 N_("installing the wheels (no network)"))
            _fix_scripts(staging, final)
            # (-P, and a folder of its own: the release's modules, never a checkout's in the current folder)
            selftest = [str(staging / "bin" / "python"), "-P", "-m", "firmware.cli.main", "selftest",
                        "--config-dir", str(self.root / ETC), "--state", str(self.root / DATA / "table.db"),
                        *(selftest_args or [])]
            result = subprocess.run(selftest, capture_output=True, text=True, timeout=SELFTEST_TIMEOUT_S, cwd=staging)
            if result.returncode != 0:
                raise worded(TableError, "release %(version)s failed its self-test; the table keeps its "
                             "release:\n%(output)s", version=version, output=(result.stdout + result.stderr).strip())
            log.info("release %s passed its self-test:\n%s", version, result.stdout.strip())
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        if final.exists():
            if self.current() == version:
                raise worded(TableError, "release %(version)s is the current one; install another version, or activate "
                             "another release before replacing it", version=version)
            shutil.rmtree(final)
        staging.rename(final)
        return final

    def activate(self, version: str, trial: bool = True) -> None:
        """Make ``version`` current (atomically); the release it replaces becomes the previous one."""
        if not (self.folder / version / "bin" / "mjtable").exists():
            raise worded(TableError, "no release %(version)s under %(folder)s", version=version, folder=self.folder)
        state = self.state()
        if state["current"] == version:
            return
        switch_current(self.base, version)
        state.update(previous=state["current"], current=version,
                     trial={"version": version, "starts": 0} if trial else None)
        if version in state["failed"]:
            state["failed"].remove(version)
        note(state, "activated", version, self.clock)
        write_state(self.base, state)

    def rollback(self) -> str:
        state = self.state()
        back = roll_back(self.base, state, "asked for", self.clock)
        if back is None:
            raise worded(TableError, "no previous release to roll back to")
        return back

    def prune(self, keep: int = KEPT_OLD) -> list[str]:
        """Remove old releases beyond the ``keep`` newest, never the current or the previous one (a table
        updated for years keeps a bounded number of virtualenvs on its card)."""
        state = self.state()
        protected = {state["current"], state["previous"]}
        old = [r.version for r in self.installed() if r.version not in protected]
        gone = old[:-keep] if keep and len(old) > keep else ([] if keep else old)
        for version in gone:
            shutil.rmtree(self.folder / version)
        return gone


def install_launcher(base: Path, guard: ModuleType, python: str | None = None) -> Path:
    """Copy the start guard to ``base/bin/mjtable-start``, run by the system's Python: ``guard``'s file (the
    script, :mod:`hal.start_guard`, with the host's clock), and beside it, under the name ``guard.LAUNCHER``, the
    launcher whose state functions it runs."""
    from firmware.release import launcher

    folder = base / "bin"
    folder.mkdir(parents=True, exist_ok=True)
    _replace(folder / guard.LAUNCHER, Path(launcher.__file__).read_text(encoding="utf-8"), 0o644)
    target = folder / "mjtable-start"
    _replace(target, f"#!{python or _base_python()}\n{Path(guard.__file__).read_text(encoding='utf-8')}", 0o755)
    return target


def _replace(path: Path, text: str, mode: int) -> None:
    """Write ``path`` whole in one rename (a start meanwhile finds the old file or the new one)."""
    tmp = path.with_name(path.name + ".new")
    tmp.write_text(text, encoding="utf-8")
    tmp.chmod(mode)
    tmp.replace(path)


def _version_key(version: str) -> tuple:
    return tuple(int(p) if p.isdigit() else 0 for p in version.replace("-", ".").split("."))


def _base_python() -> str:
    """The system's interpreter (not a virtualenv's): the one releases and the start guard run on."""
    return getattr(sys, "_base_executable", None) or sys.executable


def _fix_scripts(staging: Path, final: Path) -> None:
    """Scripts written in ``<v>.new`` name their interpreter by that path; point them at the final folder."""
    for script in (staging / "bin").iterdir():
        if script.is_file() and not script.is_symlink():
            try:
                text = script.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            if str(staging) in text:
                script.write_text(text.replace(str(staging), str(final)), encoding="utf-8")
    cfg = staging / "pyvenv.cfg"
    if cfg.exists() and str(staging) in cfg.read_text(encoding="utf-8"):
        cfg.write_text(cfg.read_text(encoding="utf-8").replace(str(staging), str(final)), encoding="utf-8")


def _run(command: list[str], what: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise worded(TableError, "%(what)s failed: %(output)s", what=Phrase(what),
                     output=(result.stderr or result.stdout).strip()[-2000:])
