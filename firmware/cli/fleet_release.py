"""``mjtable fleet release``: a signed release bundle rolled out to a parlour's tables in waves.

The bundle's SHA-256 and version are read here (its manifest checked, and
its signature when ``--trusted-key`` is given); the tables fetch it from
``--url`` (the hall's HTTP server) on a signed ``cmd/update``.  What each
table reports (its retained ``meta``: ``firmware`` and ``release``; its
``faults``; its ``avail``) is read with the fleet's consumer and fed to the
planner (:class:`firmware.fleet.rollout.Rollout`), whose actions are sent as
signed commands.  The progress is printed and published retained on
``mj/v1/<site>/rollout`` for the hall.  The planner's clock is the loop's
(the host's monotonic clock).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from firmware.cli.words import N_, _, ngettext
from firmware.cli.error_words import said
from firmware.faults import TableError
from firmware.fleet.rollout import Observation, Rollout, wave_sizes
from firmware.fleet.topics import TableTopics, check_id, rollout_topic

TICK_S = 0.5


def bundle_facts(path: Path, trusted_key: Path | None) -> tuple[str, str]:
    """(sha256, version) of the bundle, its files checked against its manifest (and its signature)."""
    from firmware.release.bundle import open_bundle

    if not path.is_file():
        raise TableError(_("--bundle %(path)s: no such file") % {"path": path})
    with tempfile.TemporaryDirectory(prefix="mjtable-release-") as tmp:
        version = open_bundle(path, Path(tmp), trusted_key).version
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest(), version


class Driver:
    """The rollout on the loop: the consumer's changes in, signed commands and the progress out."""

    def __init__(self, args: argparse.Namespace, loop: Any, adapter: Any, rollout: Rollout, url: str,
                 sha256: str, key: Any, wall_s: Any) -> None:
        from firmware.fleet.consumer import ConsumerClient, FleetConsumer

        self.args, self.loop, self.adapter, self.rollout = args, loop, adapter, rollout
        self.url, self.sha256, self.key, self.wall_s = url, sha256, key, wall_s
        self.consumer = FleetConsumer(args.site)
        self.client = ConsumerClient(loop, adapter, self.consumer, wall_clock_s=wall_s, on_change=self._change,
                                     name="release")
        self.started = False
        self.last_progress: str = ""
        self.code = 1

    def start(self) -> None:
        self.client.start()
        self.loop.call_later(self.args.settle_s, self._begin)

    def _observation(self, table: str) -> Observation:
        view = self.consumer.tables.get(table)
        if view is None:
            return Observation()
        return Observation.of_view(view.status(self.wall_s()) == "online", view.meta, view.faults)

    def _change(self, change: Any) -> None:
        if change.table not in self.rollout.tracks or change.what in ("event", "duplicate", "bad", "misnamed"):
            return
        self._act(self.rollout.observe(change.table, self._observation(change.table), self.loop.now()))

    def _begin(self) -> None:
        if not self.client.subscribed:
            print("mjtable: " + _("no subscription to the broker yet (%(error)s); waiting")
                  % {"error": self.client.last_error or _("connecting")}, file=sys.stderr)
            self.loop.call_later(self.args.settle_s, self._begin)
            return
        now = self.loop.now()
        for table in self.rollout.order:
            self.rollout.observe(table, self._observation(table), now)
        self.started = True
        self._act(self.rollout.start(now))
        self._tick()

    def _tick(self) -> None:
        self._act(self.rollout.tick(self.loop.now()))
        if self.rollout.finished:
            self.code = 0 if self.rollout.state == "done" else 1
            self._publish_progress(final=True)
            self.loop.call_later(1.0, self.loop.stop)     # (the retained progress on its way first)
            return
        self.loop.call_later(TICK_S, self._tick)

    def _act(self, actions: list) -> None:
        from firmware.fleet.command_auth import sign_command
        from firmware.ports.broker import PublishProperties

        for action in actions:
            fields = self.rollout.command_args(action)
            if action.verb == "update":
                fields.update(url=self.url, sha256=self.sha256)
            payload = sign_command(self.key, site=self.args.site, table=action.table, verb=action.verb, args=fields,
                                   issuer=self.args.issuer, issued_at=self.wall_s(), ttl_s=self.args.ttl_s)
            topic = TableTopics(self.args.site, action.table).command(action.verb)
            self.adapter.publish(topic, payload, 1, False, PublishProperties(message_expiry_s=int(self.args.ttl_s)))
            print(_(SENT[action.verb]) % {"table": action.table, "version": self.rollout.version}
                  if action.verb in SENT else f"{action.table}: {action.verb} {self.rollout.version}", flush=True)
        if self.started:
            self._publish_progress()

    def _publish_progress(self, final: bool = False) -> None:
        progress = self.rollout.progress(self.loop.now())
        text = json.dumps({k: v for k, v in progress.items() if k != "tables"}
                          | {"tables": [(t["table"], t["phase"]) for t in progress["tables"]]}, sort_keys=True)
        if text == self.last_progress and not final:
            return
        self.last_progress = text
        payload = json.dumps({"v": 1, "kind": "rollout", "site": self.args.site, "ts": self.wall_s(),
                              "data": progress}, separators=(",", ":"), ensure_ascii=False).encode()
        self.adapter.publish(rollout_topic(self.args.site), payload, 1, True)
        if self.args.json:
            print(json.dumps(progress, ensure_ascii=False), flush=True)
        else:
            print(progress_line(progress), flush=True)


def new_rollout_id(version: str, wall_s: float) -> str:
    """A rollout's id: the version, the UTC minute it started and a random part (``2.0.0-20260612T2130-3f9a``)."""
    import secrets
    import time

    stamp = time.strftime("%Y%m%dT%H%M", time.gmtime(wall_s))
    return f"{version[:40].replace('+', '_')}-{stamp}-{secrets.token_hex(2)}"


def check_rollout_id(text: str) -> str:
    """``--rollout-id``: the form a table takes (ValueError saying which)."""
    from firmware.fleet.command_auth import ROLLOUT_RE

    if not ROLLOUT_RE.match(text):
        raise ValueError(_("%(id)r: a rollout id is letters, digits, '.', '_', '-' (at most 64, not starting "
                           "with a sign)") % {"id": text[:80]})
    return text


SENT = {"update": N_("%(table)s: update %(version)s sent"),
        "rollback": N_("%(table)s: rollback %(version)s sent")}
STATES = {"ready": N_("ready"), "running": N_("running"), "done": N_("done"), "halted": N_("halted")}
PHASES = {"waiting": N_("waiting"), "updating": N_("updating"), "soaking": N_("soaking"), "healthy": N_("healthy"),
          "failed": N_("failed"), "rolling back": N_("rolling back"), "rolled back": N_("rolled back")}
HALTS = {
    "update_failed": N_("%(table)s: update failed: %(error)s"),
    "new_fault": N_("%(table)s: new fault %(faults)s on %(version)s"),
    "not_running": N_("%(table)s: no longer runs %(version)s (%(firmware)s, %(release)s)"),
    "no_report": N_("%(table)s: no report of %(version)s within %(seconds)s s"),
    "offline_after_soak": N_("%(table)s: offline at the end of its soak"),
}


def halt_words(progress: dict) -> str:
    """Why the rollout halted, in this language (its code and values; the English reason for a code not known)."""
    halt = progress.get("halt")
    if isinstance(halt, dict) and halt.get("code") in HALTS:
        try:
            return _(HALTS[halt["code"]]) % halt
        except (KeyError, TypeError, ValueError):
            pass
    return str(progress.get("reason") or "")


def progress_line(progress: dict) -> str:
    """One line of a rollout's progress, as the console shows it (in this language)."""
    tables = " ".join(f"{t['table']}={_(PHASES[t['phase']]) if t['phase'] in PHASES else t['phase']}"
                      for t in progress["tables"])
    state = progress["state"]
    head = ngettext("release %(version)s: %(state)s, wave %(wave)s/%(waves)s, %(healthy)s/%(tables)s healthy",
                    "release %(version)s: %(state)s, wave %(wave)s/%(waves)s, %(healthy)s/%(tables)s healthy",
                    len(progress["tables"])) % {
        "version": progress["version"], "state": _(STATES[state]) if state in STATES else state,
        "wave": progress["wave"], "waves": progress["waves"], "healthy": progress["healthy"],
        "tables": len(progress["tables"])}
    if progress.get("reason"):
        head += _(" (halted: %(why)s)") % {"why": halt_words(progress)}
    return f"{head} | {tables}"


def release(args: argparse.Namespace) -> int:
    from firmware.cli.fleet_watch import client_settings
    from firmware.fleet.command_auth import load_signing_key
    from firmware.fleet.mqtt.client import PahoAdapter
    from firmware.fleet.mqtt.network import MqttNetwork
    from firmware.root.host import HOST_CLOCK, real_loop

    check_id(args.site, "--site")
    tables = [check_id(t.strip(), "--tables") for t in args.tables.replace(" ", ",").split(",") if t.strip()]
    if not tables or len(set(tables)) != len(tables):
        raise TableError(_("--tables: give distinct table ids, comma-separated"))
    try:
        waves = wave_sizes(args.waves, len(tables))
    except ValueError as exc:
        raise TableError(said(exc)) from None
    if not args.url.startswith(("http://", "https://")):
        raise TableError(_("--url %(url)s: the tables fetch the bundle over http:// or https://") % {"url": args.url})
    sha256, version = bundle_facts(args.bundle, args.trusted_key)
    try:
        key = load_signing_key(args.sign_key)
    except ValueError as exc:
        raise TableError(said(exc)) from None
    rollout_id = args.rollout_id or new_rollout_id(version, HOST_CLOCK.wall_s())
    rollout = Rollout(tables, waves, version, soak_s=args.soak_s, report_timeout_s=args.report_timeout_s,
                      rollout_id=rollout_id)
    print(ngettext("rollout %(id)s: release %(version)s (%(sha)s...) to %(tables)s table in waves of %(waves)s "
                   "(cumulative), soak %(soak)s s, from %(url)s",
                   "rollout %(id)s: release %(version)s (%(sha)s...) to %(tables)s tables in waves of %(waves)s "
                   "(cumulative), soak %(soak)s s, from %(url)s", len(tables))
          % {"id": rollout_id, "version": version, "sha": sha256[:12], "tables": len(tables), "waves": waves,
             "soak": f"{args.soak_s:g}", "url": args.url}, flush=True)
    settings = client_settings(args, prefix="release")
    loop = real_loop()
    network = MqttNetwork("release", clock=HOST_CLOCK).start()
    adapter = PahoAdapter(network, loop.post, settings)
    driver = Driver(args, loop, adapter, rollout, args.url, sha256, key, HOST_CLOCK.wall_s)
    try:
        loop.call_later(0.0, driver.start)
        loop.run_forever()
    finally:
        driver.client.stop()
        network.stop()
    return driver.code
