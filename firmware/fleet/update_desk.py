"""The table's side of a staged update: ``cmd/update`` and ``cmd/rollback``, carried out off the table's loop.

The command has been authenticated (:mod:`firmware.fleet.command_auth`: the
parlour's signature, expiry, nonce, the arguments' form).  The work itself
(fetching the bundle from the hall's server, checking its hash and its
signature as ``mjtable install`` does, installing it as a new release with
its self-test, switching) takes minutes and is the :class:`Installer`'s, an
object the composition root or the simulator hands in: this module knows
nothing of releases.  It runs on a worker thread; the loop is only posted
the outcome.

The outcome is reported in the ``meta`` leaf (retained, so the hall reads it
whenever it looks): its ``firmware`` is the release running (a light table's:
the one now current) and its
``release`` field says ``{"target": version, "state": ..., "error": ..., "by":
issuer}`` (with the ``rollout`` and ``wave`` the command named, so that the
hall never counts a report from before a rollout as one for it) with the state
``installing``, ``installed`` (the self-test passed and the release is current),
``failed`` (the table keeps its release; the error says why), ``rolling back``,
``rolled back``, ``rollback failed`` or ``kept`` (a rollback from a version that
is not current: nothing to do).  The command's answer says only that the work
started.  One update or rollback at a time: another is refused while one runs.

A table's service cannot swap its own code while it runs: given ``restart``,
the desk reports ``restarting`` once the new release is current (or the
previous one is back) and calls ``restart()`` on the loop; the service then
ends and is started again by systemd into the release now current, whose
installer reports the outcome (:meth:`Installer.outcome`) in its first
``meta``.  Until then the desk stays busy.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Protocol

from firmware.fleet.command_auth import CommandRefused

log = logging.getLogger(__name__)


class Installer(Protocol):
    """A table's releases, as a staged update needs them (every call but ``current`` blocks: a worker thread's)."""

    def current(self) -> str | None:
        """The version running now (None: unknown)."""

    def install(self, url: str, sha256: str, version: str, tag: dict[str, Any]) -> str:
        """Fetch, check, install, self-test and make ``version`` current; the version now current.  Raises an
        exception whose text says why when any step fails (the table keeps its release).  ``tag``: who asked,
        and the rollout and wave (kept for :meth:`outcome` after a restart)."""

    def rollback(self, version: str, tag: dict[str, Any]) -> str | None:
        """Make the previous release current if ``version`` is the current one; the version now current."""

    def outcome(self) -> dict | None:
        """The ``release`` field of the last update or rollback carried out before this start (None: none)."""


Spawn = Callable[[Callable[[], None]], None]


def _thread(work: Callable[[], None]) -> None:
    threading.Thread(target=work, name="mjtable-update", daemon=True).start()


class UpdateDesk:
    """``update`` and ``rollback`` for one table (see the module): ``post`` runs a call on the link's loop,
    ``report(firmware, release)`` publishes them in the ``meta`` leaf, ``spawn`` runs the work off the loop."""

    def __init__(self, installer: Installer, post: Callable[..., None],
                 report: Callable[[str | None, dict], None], spawn: Spawn = _thread,
                 restart: Callable[[], None] | None = None) -> None:
        self.installer = installer
        self.post = post
        self.report = report
        self.spawn = spawn
        self.restart = restart
        self.busy: str | None = None

    def handle(self, verb: str, args: dict, issuer: str) -> dict[str, Any]:
        """(the link's loop) Start the work; CommandRefused when another is under way."""
        if self.busy is not None:
            raise CommandRefused(f"{verb}: busy ({self.busy}); try again when it is done")
        version = args["version"]
        current = self.installer.current()
        tag = {"by": issuer, **{k: args[k] for k in ("rollout", "wave") if k in args}}
        if verb == "update":
            if current == version:
                self.report(current, {"target": version, "state": "installed", **tag})
                return {"version": version, "started": False, "current": current}
            self._start(f"update to {version}", version, "installing", tag,
                        lambda: self.installer.install(args["url"], args["sha256"], version, tag), "installed")
            return {"version": version, "started": True, "current": current}
        if verb == "rollback":
            if current != version:          # (it never switched, or is back already: said, so the hall knows)
                self.report(current, {"target": version, "state": "kept", **tag})
                return {"version": version, "started": False, "current": current}
            self._start(f"rollback from {version}", version, "rolling back", tag,
                        lambda: self.installer.rollback(version, tag), "rolled back")
            return {"version": version, "started": True, "current": current}
        raise CommandRefused(f"{verb}: not a release command")

    def _start(self, what: str, version: str, state: str, tag: dict, work: Callable[[], str | None],
               done_state: str) -> None:
        self.busy = what
        self.report(self.installer.current(), {"target": version, "state": state, **tag})
        log.warning("fleet: %s, asked by %s", what, tag["by"])

        def run() -> None:
            try:
                now = work()
                self.post(self._done, what, version, done_state, tag, now, None)
            except Exception as exc:          # noqa: BLE001 (any failure is the outcome reported)
                failed = "failed" if done_state == "installed" else "rollback failed"
                self.post(self._done, what, version, failed, tag, None, str(exc) or type(exc).__name__)

        self.spawn(run)

    def _done(self, what: str, version: str, state: str, tag: dict, now: str | None, error: str | None) -> None:
        release: dict[str, Any] = {"target": version, "state": state, **tag}
        if error is not None:
            self.busy = None
            release["error"] = _bounded(error)
            log.error("fleet: %s failed: %s", what, error)
        elif self.restart is not None:   # (the service restarts into the release now current; busy until it ends)
            self.busy = f"{what}: restarting"
            log.warning("fleet: %s done: %s is current; the service restarts into it", what, now)
            self.report(self.installer.current(), dict(release, state="restarting", current=now))
            self.restart()
            return
        else:
            self.busy = None
            log.warning("fleet: %s done: %s is current", what, now)
        self.report(now if now is not None else self.installer.current(), release)


def _bounded(error: str, limit: int = 2000) -> str:
    """An error for the ``meta`` leaf: its beginning (what failed) and its end (the cause), at most ``limit``."""
    if len(error) <= limit:
        return error
    return f"{error[: limit // 4]} [...] {error[-(limit - limit // 4 - 7):]}"
