"""A staged update's plan and decisions: waves, the gate between them, the soak time, halt and roll back.

Pure: no broker, no clock (every call is given ``now``, seconds on any
monotonic clock), no I/O.  ``mjtable fleet release`` (:mod:`firmware.cli.fleet_release`)
feeds it what the hall sees of each table (its retained ``meta`` and ``faults``
leaves and its ``avail``, :class:`Observation`) and carries out the
:class:`Action` s it returns (signed ``update`` and ``rollback`` commands).

* **Waves.** ``1,25%,100%``: the first wave is one table (the canary), the
  second brings the tables updated to a quarter of the fleet, the last to
  all of it (:func:`wave_sizes`: cumulative counts, each wave at least one
  new table, a wave that adds none is dropped).  The tables are taken in the
  order given.
* **The gate.** A table is *healthy* once it reports the new version
  (``meta.firmware`` is the version and ``meta.release.state`` is
  ``installed``: its self-test passed), is online, and has raised no fault it
  did not have before the rollout (``faults`` codes beyond its baseline) for
  ``soak_s`` since it reported the version.  The next wave is sent only when
  every table of the waves so far is healthy.
* **This rollout's reports only.** A rollout has an id, sent with every
  ``update`` and ``rollback`` and carried back in the table's
  ``meta.release.rollout``: a report without it (a retained ``meta`` from
  before the rollout, an earlier rollout's ``failed`` of the same version)
  counts neither as installed nor as failed for this one.
* **Halt.** A table whose update fails (``meta.release.state`` ``failed``:
  the download, the hash, the signature or the self-test), that raises a new
  fault while it soaks, or that does not report within ``report_timeout_s``
  halts the rollout: no table is sent an update again, and every table
  this rollout touched is sent a ``rollback`` to the release it had (the
  command names the new version, so a table that never switched keeps what
  it has).  A table seen running the new version after the halt (an update
  that was in flight) is sent a rollback too.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any, Iterable

from firmware.i18n import worded

DEFAULT_SOAK_S = 600.0
DEFAULT_REPORT_TIMEOUT_S = 900.0


def wave_sizes(spec: str, tables: int) -> list[int]:
    """Cumulative table counts per wave from ``1,25%,100%`` (a count or a percentage each, rounded up); ValueError
    naming what is wrong.  The last wave always reaches every table."""
    if tables < 1:
        raise ValueError("a rollout needs at least one table")
    sizes: list[int] = []
    for part in (p.strip() for p in spec.split(",")):
        try:
            if part.endswith("%"):
                share = float(part[:-1])
                if not 0 < share <= 100 or not math.isfinite(share):
                    raise ValueError
                count = math.ceil(tables * share / 100 - 1e-9)
            else:
                if not part.isdigit() or int(part) < 1:
                    raise ValueError
                count = int(part)
        except ValueError:
            raise worded(ValueError, "--waves %(spec)r: %(part)r is not a count (1, 2, ...) or a share (25%%) of "
                                     "the tables", spec=spec, part=part) from None
        count = min(max(count, 1), tables)
        if sizes and count < sizes[-1]:
            raise worded(ValueError, "--waves %(spec)r: the waves are cumulative and must not shrink (%(part)s)",
                         spec=spec, part=part)
        if not sizes or count > sizes[-1]:
            sizes.append(count)
    if sizes[-1] < tables:
        sizes.append(tables)
    return sizes


@dataclass(frozen=True)
class Observation:
    """What the hall sees of one table (its retained leaves): online, its firmware version, the ``release`` field
    of its ``meta`` (``{"target", "state", "error"}``), the codes of its active faults."""

    online: bool = False
    firmware: str | None = None
    release: dict = field(default_factory=dict)
    faults: frozenset[str] = frozenset()

    @classmethod
    def of_view(cls, online: bool, meta: dict, faults: Iterable[Any]) -> "Observation":
        codes = frozenset(str(f.get("code")) for f in faults if isinstance(f, dict) and f.get("code"))
        release = meta.get("release") if isinstance(meta.get("release"), dict) else {}
        firmware = meta.get("firmware") if isinstance(meta.get("firmware"), str) else None
        return cls(bool(online), firmware, dict(release), codes)


class Phase(str, enum.Enum):
    WAITING = "waiting"              # not yet sent
    UPDATING = "updating"            # sent; no report yet
    SOAKING = "soaking"              # reports the new version; watched for soak_s
    HEALTHY = "healthy"
    FAILED = "failed"
    ROLLING_BACK = "rolling back"    # sent a rollback
    ROLLED_BACK = "rolled back"      # back on another release


# why a rollout halts: a code, and its English (the values: table, version and the code's own)
HALTS = {
    "update_failed": "{table}: update failed: {error}",
    "new_fault": "{table}: new fault {faults} on {version}",
    "not_running": "{table}: no longer runs {version} ({firmware}, {release})",
    "no_report": "{table}: no report of {version} within {seconds} s",
    "offline_after_soak": "{table}: offline at the end of its soak",
}


@dataclass(frozen=True)
class Action:
    verb: str                        # "update" or "rollback"
    table: str


@dataclass
class TableTrack:
    table: str
    wave: int
    phase: Phase = Phase.WAITING
    baseline: frozenset[str] = frozenset()
    since: float = 0.0               # when it entered its phase
    seen: Observation = field(default_factory=Observation)
    why: str = ""


class Rollout:
    """One release of ``version`` to ``tables`` in waves (cumulative counts, :func:`wave_sizes`)."""

    def __init__(self, tables: list[str], waves: list[int], version: str, soak_s: float = DEFAULT_SOAK_S,
                 report_timeout_s: float = DEFAULT_REPORT_TIMEOUT_S, rollout_id: str | None = None) -> None:
        if len(set(tables)) != len(tables) or not tables:
            raise ValueError("a rollout needs distinct tables, at least one")
        if not waves or waves[-1] != len(tables) or any(b <= a for a, b in zip([0] + waves, waves)):
            raise ValueError(f"waves {waves}: cumulative counts that grow to {len(tables)}")
        self.version = version
        self.rollout_id = rollout_id       # (None: any report of the version counts, as before rollouts had ids)
        self.soak_s = soak_s
        self.report_timeout_s = report_timeout_s
        self.waves = list(waves)
        self.tracks = {t: TableTrack(t, next(i for i, n in enumerate(waves) if k < n)) for k, t in enumerate(tables)}
        self.order = list(tables)
        self.wave = -1                     # the wave under way
        self.state = "ready"               # ready, running, done, halted
        self.reason = ""                   # why it halted, in English (the log's, the hall's)
        self.halt: dict[str, str] | None = None     # the same as a code and its values (a console words it)
        self.started_at: float | None = None

    # -- events ----------------------------------------------------------------------------------------------
    def start(self, now: float) -> list[Action]:
        if self.state != "ready":
            return []
        self.state = "running"
        self.started_at = now
        return self._next_wave(now)

    def observe(self, table: str, seen: Observation, now: float) -> list[Action]:
        """What the hall now sees of ``table``."""
        track = self.tracks.get(table)
        if track is None:
            return []
        before, track.seen = track.seen, seen
        if track.phase is Phase.WAITING:
            track.baseline = seen.faults        # (the faults it had before the rollout are not the update's)
            return []
        if self.state == "halted":
            return self._after_halt(track, before, now)
        if track.phase is Phase.UPDATING:
            if self._reports_failure(seen):
                return self._halt(track, now, "update_failed", error=seen.release.get("error") or "no reason")
            if self._installed(seen) and seen.online:
                track.phase, track.since = Phase.SOAKING, now
        if track.phase in (Phase.SOAKING, Phase.HEALTHY) and self.state == "running":
            new = sorted(seen.faults - track.baseline)
            if new:
                return self._halt(track, now, "new_fault", faults=", ".join(new))
            if self._reports_failure(seen) or (seen.firmware is not None and seen.firmware != self.version):
                return self._halt(track, now, "not_running", firmware=str(seen.firmware),
                                  release=str(seen.release.get("state", "?")))
        return self.tick(now)

    def tick(self, now: float) -> list[Action]:
        """Time passed: soaks end, reports are overdue, a wave completes; after a halt, tables are seen back."""
        if self.state == "halted":
            for track in self.tracks.values():
                if track.phase is Phase.ROLLING_BACK and self._back(track.seen):
                    track.phase, track.since = Phase.ROLLED_BACK, now
            return []
        if self.state != "running":
            return []
        for track in self._sent():
            if track.phase is Phase.UPDATING and now - track.since > self.report_timeout_s:
                return self._halt(track, now, "no_report", seconds=f"{self.report_timeout_s:g}")
            if track.phase is Phase.SOAKING and now - track.since >= self.soak_s:
                if track.seen.online and self._installed(track.seen):
                    track.phase, track.since = Phase.HEALTHY, now
                elif now - track.since > self.report_timeout_s:
                    return self._halt(track, now, "offline_after_soak")
        if all(t.phase is Phase.HEALTHY for t in self._sent()):
            if self.wave + 1 >= len(self.waves):
                self.state = "done"
                return []
            return self._next_wave(now)
        return []

    # -- the decisions -----------------------------------------------------------------------------------------
    def _ours(self, seen: Observation) -> bool:
        """A report of this rollout (not a retained one from before it)."""
        return self.rollout_id is None or seen.release.get("rollout") == self.rollout_id

    def _installed(self, seen: Observation) -> bool:
        """It reports the new version current, its self-test passed, for this rollout."""
        if self.rollout_id is not None and not self._ours(seen):
            return False
        return seen.firmware == self.version and seen.release.get("state", "installed") == "installed"

    def _runs_new(self, seen: Observation) -> bool:
        return seen.firmware == self.version

    def _reports_failure(self, seen: Observation) -> bool:
        return seen.release.get("target") == self.version and seen.release.get("state") == "failed" \
            and self._ours(seen)

    def command_args(self, action: Action) -> dict[str, Any]:
        """The rollout's arguments of an action's command (with ``url`` and ``sha256`` added for an update)."""
        args: dict[str, Any] = {"version": self.version}
        if self.rollout_id is not None:
            args.update(rollout=self.rollout_id, wave=self.tracks[action.table].wave + 1)
        return args

    def _sent(self) -> list[TableTrack]:
        return [t for t in self.tracks.values() if t.wave <= self.wave]

    def _next_wave(self, now: float) -> list[Action]:
        self.wave += 1
        actions = []
        for table in self.order:
            track = self.tracks[table]
            if track.wave == self.wave:
                track.phase, track.since = Phase.UPDATING, now
                actions.append(Action("update", table))
        return actions

    def _halt(self, culprit: TableTrack, now: float, code: str, **params: str) -> list[Action]:
        self.halt = {"code": code, "table": culprit.table, "version": self.version, **params}
        why = HALTS[code].format(**self.halt)
        self.state, self.reason = "halted", why
        culprit.why = why
        actions = []
        for track in self._sent():
            if track is culprit and self._reports_failure(track.seen):
                track.phase, track.since = Phase.FAILED, now  # (its update failed: it kept its release)
                continue
            track.phase, track.since = Phase.ROLLING_BACK, now
            actions.append(Action("rollback", track.table))
        return actions

    def _after_halt(self, track: TableTrack, before: Observation, now: float) -> list[Action]:
        if track.phase not in (Phase.ROLLING_BACK, Phase.ROLLED_BACK):
            return []
        if self._installed(track.seen) and not self._installed(before):
            track.phase, track.since = Phase.ROLLING_BACK, now     # (an update in flight at the halt arrived)
            return [Action("rollback", track.table)]
        if track.phase is Phase.ROLLING_BACK and self._back(track.seen):
            track.phase, track.since = Phase.ROLLED_BACK, now
        return []

    def _back(self, seen: Observation) -> bool:
        """Online on another release than the new one, and not switching."""
        return seen.online and not self._runs_new(seen) and seen.firmware is not None \
            and seen.release.get("state") not in ("installing", "rolling back", "restarting")

    # -- the hall's view -----------------------------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        """Done, or halted with every table it touched back on another release (or failed without switching)."""
        if self.state == "done":
            return True
        return self.state == "halted" and not any(
            t.phase in (Phase.ROLLING_BACK, Phase.UPDATING) for t in self.tracks.values())

    def progress(self, now: float) -> dict[str, Any]:
        """The rollout as the hall shows it (published retained on the site's ``rollout`` topic)."""
        tables = []
        for table in self.order:
            t = self.tracks[table]
            entry: dict[str, Any] = {"table": table, "wave": t.wave + 1, "phase": t.phase.value,
                                     "firmware": t.seen.firmware}
            if t.phase is Phase.SOAKING:
                entry["soak_left_s"] = round(max(0.0, self.soak_s - (now - t.since)), 1)
            if t.why:
                entry["why"] = t.why
            tables.append(entry)
        return {"version": self.version, "rollout": self.rollout_id, "state": self.state, "reason": self.reason,
                "halt": self.halt,
                "wave": self.wave + 1, "waves": len(self.waves), "wave_sizes": self.waves, "soak_s": self.soak_s,
                "healthy": sum(1 for t in self.tracks.values() if t.phase is Phase.HEALTHY),
                "tables": tables}
