"""A table's releases as a staged update over the fleet takes them: the same install as ``mjtable install``.

A signed ``cmd/update`` names a bundle on the hall's server (its URL, its
SHA-256, its version).  :class:`TableInstaller` is the table's
:class:`~firmware.fleet.update_desk.Installer`: it fetches the bundle
(:func:`~firmware.release.fetch.fetch_bundle`: the bytes against the hash),
opens it against the release key the table trusts
(``/etc/mjtable/release-key.pub``, written by ``mjtable install --trust``: a
table that trusts none refuses updates over the network), checks that it
carries wheels for this machine and is the version the command names, then
installs it with :class:`~firmware.release.releases.Releases` exactly as a
local install does (its own virtualenv, no network, the new release's
self-test against the table's configuration and a copy of its database) and
makes it current *on trial*.  The running service cannot become the new
release: the update desk then asks the service to restart, systemd starts it
again through the start guard (:mod:`firmware.release.launcher`), and a
release that never gets READY is rolled back by the guard after three starts,
as after a local install.

What was asked is written in the releases' state file (``releases.json``,
key ``fleet``: the verb, the version, who asked, the rollout and its wave)
before the switch, so that the release that starts next can say how it went
(:meth:`TableInstaller.outcome`): ``installed`` when the new release is the
one running, ``failed`` (with the guard's line from the history) when the
guard put the previous one back; after a rollback, ``rolled back``.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from firmware.faults import TableError
from firmware.release.launcher import read_state, write_state
from firmware.release.releases import ETC, Releases

log = logging.getLogger(__name__)

TRUSTED_KEY = ETC / "release-key.pub"        # (written by mjtable install --trust)
STATE_KEY = "fleet"
DEFAULT_SELFTEST_S = 3.0


class TableInstaller:
    """The installer of a table's service (see the module): ``releases`` under the install root, ``running`` the
    version of the code that runs, ``rules`` the rule set the service plays (the self-test checks against it)."""

    def __init__(self, releases: Releases, running: str, rules: str,
                 selftest_seconds: float = DEFAULT_SELFTEST_S) -> None:
        self.releases = releases
        self.running = running
        self.rules = rules
        self.selftest_seconds = selftest_seconds

    @property
    def trusted_key(self) -> Path:
        return self.releases.root / TRUSTED_KEY

    def current(self) -> str | None:
        """The version running now (the release ``current`` names may already be the next one)."""
        return self.running

    def _check_installed(self) -> None:
        if not self.releases.folder.is_dir() or self.releases.current() is None:
            raise TableError(f"no releases under {self.releases.base}: this table was not installed with mjtable "
                             f"install, so it cannot be updated over the fleet")
        if not (os.access(self.releases.base, os.W_OK) and os.access(self.releases.folder, os.W_OK)):
            raise TableError(f"the service may not write {self.releases.base} and its releases/ (a table updated over "
                             f"the fleet: chown mjtable: {self.releases.base} {self.releases.folder}, docs/fleet.md)")
        if not self.trusted_key.is_file():
            raise TableError(f"this table trusts no release key ({self.trusted_key} is missing: mjtable install "
                             f"--trust KEY.pub): a bundle from the network is not installed unsigned")

    def install(self, url: str, sha256: str, version: str, tag: dict[str, Any]) -> str:
        """(a worker thread) Fetch, check, install with the self-test, make current on trial (see the module)."""
        from firmware.release.bundle import host_platform, open_bundle
        from firmware.release.fetch import fetch_bundle

        self._check_installed()
        with tempfile.TemporaryDirectory(prefix="fleet-update-", dir=self.releases.base) as tmp:
            bundle_file = fetch_bundle(url, sha256, Path(tmp) / "bundle.tar")
            (Path(tmp) / "open").mkdir()
            bundle = open_bundle(bundle_file, Path(tmp) / "open", self.trusted_key)
            if bundle.version != version:
                raise TableError(f"the bundle is release {bundle.version}, the command says {version}: refused")
            platforms = bundle.manifest.get("platforms") or []
            if host_platform() not in platforms:
                raise TableError(f"the bundle holds wheels for {', '.join(platforms) or 'no platform'}; this table "
                                 f"is {host_platform()}: refused")
            extras = f"[{bundle.manifest['extras']}]" if bundle.manifest.get("extras") else ""
            bundle_file.unlink()                 # (the card holds the unpacked wheels only while they install)
            log.warning("fleet update: release %s fetched and its signature good; installing with its self-test",
                        version)
            self.releases.install(bundle.wheels, version, extras,
                                  ["--rules", self.rules, "--sim-seconds", f"{self.selftest_seconds:g}"])
        self._remember("update", version, tag)
        self.releases.activate(version)         # (on trial: the guard puts the previous back if it never gets READY)
        try:
            removed = self.releases.prune()
        except OSError as exc:                  # (the new release is current: an old one left is no failure)
            log.warning("fleet update: old releases not removed: %s", exc)
        else:
            if removed:
                log.info("fleet update: old releases removed: %s", ", ".join(removed))
        return version

    def rollback(self, version: str, tag: dict[str, Any]) -> str | None:
        """(a worker thread) The previous release made current again, if ``version`` is the one running."""
        self._check_installed()
        if self.running != version:
            return self.running
        if self.releases.current() != version:
            raise TableError(f"release {version} runs but {self.releases.current()} is current already; "
                             f"restart the service")
        self._remember("rollback", version, tag)
        return self.releases.rollback()

    def _remember(self, verb: str, version: str, tag: dict[str, Any]) -> None:
        state = read_state(self.releases.base)
        state[STATE_KEY] = {"verb": verb, "target": version, "from": self.running, **tag}
        write_state(self.releases.base, state)

    def outcome(self) -> dict | None:
        """The last update's or rollback's outcome, as the release that now runs sees it (None: none asked)."""
        try:
            state = read_state(self.releases.base)
        except OSError:
            return None
        asked = state.get(STATE_KEY)
        if not isinstance(asked, dict) or not isinstance(asked.get("target"), str):
            return None
        tag = {k: asked[k] for k in ("by", "rollout", "wave") if k in asked}
        target = asked["target"]
        if asked.get("verb") == "rollback":
            state_name = "rolled back" if self.running != target else "rollback failed"
            return {"target": target, "state": state_name, **tag}
        if self.running == target:
            return {"target": target, "state": "installed", **tag}
        if self.running != asked.get("from"):
            return None                          # (a release made current by hand since)
        why = next((f"{h['what']} {h.get('version')}" for h in reversed(state["history"])
                    if str(h.get("what", "")).startswith(f"rolled back from {target} ")), None)
        return {"target": target, "state": "failed", **tag,
                "error": why or f"release {target} is not the release that started"}
