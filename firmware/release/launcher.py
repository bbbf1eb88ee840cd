"""The service's start guard: counts a new release's starts and puts the previous one back when it never gets READY.

A table's releases live side by side under ``/opt/mjtable/releases/<version>``
and ``/opt/mjtable/current`` links to the one that runs.  An update switches
the link only after the new release has checked itself (``mjtable
selftest``), but some failures show only in the service itself: it crashes
before READY, or hangs until systemd's start timeout kills it.  So a freshly
switched release is *on trial*.  The unit runs the guard (:func:`main`, by
``mjtable-start``) as root before every start (``ExecStartPre=+...
guard``): it counts the trial's starts in ``/opt/mjtable/releases.json``
and, once a trial has started ``START_LIMIT`` times without getting READY,
switches ``current`` back to the previous release, which the ``ExecStart``
that follows then runs.
systemd runs ``ExecStartPost=+... ready`` only once the Type=notify service
has sent READY=1, and that ends the trial.  ``Restart=on-failure`` brings
the service back after each failure, so a bad release costs a table a few
restarts, never its service.

This file is copied to ``/opt/mjtable/bin/mjtable_launcher.py`` at install,
beside the script the unit runs, ``/opt/mjtable/bin/mjtable-start``
(:mod:`hal.start_guard`), which hands :func:`main` the host's clock (the
history's times); both run with the system's Python and import only the
standard library, never the release they guard.
:mod:`firmware.release.releases` uses the same state functions, with the
clock its caller gives it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:                   # (only the standard library at run time: this file runs outside the release)
    from firmware.ports.clock import Clock

START_LIMIT = 3                     # starts of a release on trial before it is rolled back
STATE_FILE = "releases.json"
HISTORY_KEPT = 20                   # switches remembered in the state file


def read_state(base: Path) -> dict:
    """The releases' state under ``base`` (``/opt/mjtable``); an empty state where there is none."""
    try:
        state = json.loads((base / STATE_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        state = {}
    except (OSError, ValueError) as exc:
        print(f"mjtable-start: {base / STATE_FILE} unreadable ({exc})", file=sys.stderr)
        state = {}
    state.setdefault("current", None)
    state.setdefault("previous", None)
    state.setdefault("trial", None)
    state.setdefault("failed", [])
    state.setdefault("history", [])
    return state


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_state(base: Path, state: dict) -> None:
    """Replace the state file atomically and durably (a power cut leaves the old or the new one)."""
    state["history"] = state["history"][-HISTORY_KEPT:]
    tmp = base / (STATE_FILE + ".new")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(state, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, base / STATE_FILE)
    _fsync_dir(base)


def switch_current(base: Path, version: str) -> None:
    """Point ``current`` at ``releases/<version>`` in one atomic rename."""
    tmp = base / "current.new"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    os.symlink(Path("releases") / version, tmp)
    os.replace(tmp, base / "current")
    _fsync_dir(base)


def note(state: dict, what: str, version: str | None, clock: Clock) -> None:
    """Add a switch to the history, at ``clock``'s wall time (local time, to the second)."""
    at = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(clock.wall_s()))
    state["history"].append({"at": at, "what": what, "version": version})


def roll_back(base: Path, state: dict, why: str, clock: Clock) -> str | None:
    """Make the previous release current again; returns it (None when there is none to go back to)."""
    failed, previous = state["current"], state["previous"]
    if not previous or not (base / "releases" / previous).is_dir():
        return None
    switch_current(base, previous)
    if failed and failed not in state["failed"]:
        state["failed"].append(failed)
    state.update(current=previous, previous=None, trial=None)
    note(state, f"rolled back from {failed} ({why}); now", previous, clock)
    write_state(base, state)
    return previous


def guard_start(base: Path, clock: Clock) -> str | None:
    """Count this start of a release on trial, rolling back first when it has had its chances.
    Returns the release that is to start (None when nothing is installed)."""
    state = read_state(base)
    trial = state["trial"]
    if trial and trial.get("version") == state["current"]:
        if trial.get("starts", 0) >= START_LIMIT:
            back = roll_back(base, state, f"no READY in {START_LIMIT} starts", clock)
            if back is not None:
                print(f"mjtable-start: release {trial['version']} did not get READY in {START_LIMIT} starts; "
                      f"rolled back to {back}", file=sys.stderr)
                return back
        else:
            trial["starts"] = trial.get("starts", 0) + 1
            write_state(base, state)
    return state["current"]


def trial_ready(base: Path, clock: Clock) -> bool:
    """The service of the current release reported READY: a trial ends. True when one did."""
    state = read_state(base)
    trial = state["trial"]
    if not trial or trial.get("version") != state["current"]:
        return False
    state["trial"] = None
    note(state, "ready", state["current"], clock)
    write_state(base, state)
    return True


def main(argv: list[str], clock: Clock) -> int:
    """``mjtable-start guard`` (the unit's ExecStartPre) or ``mjtable-start ready`` (its ExecStartPost,
    which systemd runs once a Type=notify service has sent READY=1), under the folder above this file's."""
    base = Path(__file__).resolve().parent.parent
    if argv == ["guard"]:
        if guard_start(base, clock) is None:
            print(f"mjtable-start: no release installed under {base}", file=sys.stderr)
            return 1
        return 0
    if argv == ["ready"]:
        trial_ready(base, clock)
        return 0
    print("usage: mjtable-start guard|ready", file=sys.stderr)
    return 2
