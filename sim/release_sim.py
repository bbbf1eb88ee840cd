"""A simulated table's releases for staged updates: the real fetch and checks, the install simulated.

:class:`SimInstaller` is a table's :class:`~firmware.fleet.update_desk.Installer`
for light tables (:mod:`sim.light_fleet`): it fetches the bundle from the
hall's server and checks its SHA-256 and its signature against the key the
table trusts exactly as a table does (:func:`~firmware.release.fetch.fetch_bundle`,
:func:`~firmware.release.bundle.open_bundle`), then, instead of building a
virtualenv from the wheels, installs a stand-in release folder under its own
release root (a temporary folder) and switches ``current`` there with
:class:`~firmware.release.releases.Releases`, the table's own code.  Its
self-test fails when the table is built to fail it (``selftest_fails``: a
table whose configuration the new release cannot take), and then, as on a
table, the release is removed and the table keeps what it had.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from firmware.faults import TableError
from firmware.ports.clock import Clock
from firmware.release.bundle import open_bundle
from firmware.release.fetch import fetch_bundle
from firmware.release.releases import Releases


class SimInstaller:
    def __init__(self, root: Path, version: str, clock: Clock, trusted_key: Path | None = None,
                 selftest_fails: bool = False) -> None:
        self.releases = Releases(root, clock)
        self.trusted_key = trusted_key
        self.selftest_fails = selftest_fails
        self.installs = 0                    # updates that reached the install step
        self._stand_in(version)
        self.releases.activate(version, trial=False)

    def _stand_in(self, version: str) -> Path:
        folder = self.releases.folder / version
        (folder / "bin").mkdir(parents=True, exist_ok=True)
        (folder / "bin" / "mjtable").write_text(f"#!/bin/sh\necho mjtable {version}\n", encoding="utf-8")
        return folder

    def current(self) -> str | None:
        return self.releases.current()

    def install(self, url: str, sha256: str, version: str, tag: dict[str, Any] | None = None) -> str:
        self.releases.folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="update-", dir=self.releases.base) as tmp:
            bundle = fetch_bundle(url, sha256, Path(tmp) / "bundle.tar")
            (Path(tmp) / "open").mkdir()
            opened = open_bundle(bundle, Path(tmp) / "open", self.trusted_key)
            if opened.version != version:
                raise TableError(f"the bundle is release {opened.version}, the command says {version}")
            self.installs += 1
            folder = self._stand_in(version)
            if self.selftest_fails:
                shutil.rmtree(folder)
                raise TableError(f"release {version} failed its self-test; the table keeps its release:\n"
                                 "FAILED configuration: this table's model does not suit the new release")
        self.releases.activate(version, trial=False)
        return version

    def rollback(self, version: str, tag: dict[str, Any] | None = None) -> str | None:
        if self.releases.current() == version:
            self.releases.rollback()
        return self.releases.current()

    def outcome(self) -> dict | None:
        return None                          # (a light table never restarts: its desk reported every outcome)
