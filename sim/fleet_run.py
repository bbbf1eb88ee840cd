"""A simulated parlour: N simulated tables in one process, each its own controller, database and client id.

:class:`FleetSim` builds N :class:`~sim.table_run.SimRun` (table ``t001`` ...
with seed ``seed + i``, the table model given a ``[fleet]`` section naming
the broker, the site and the table, and for a TLS broker the table's own
certificate and key, as a parlour's table has), one
:class:`~firmware.fleet.mqtt.network.MqttNetwork` thread for all their clients and one
:class:`~sim.link_clock.LinkClock` for all their links.  :meth:`FleetSim.run`
steps the tables' virtual loops round-robin, a slice each (as fast as
possible, or paced to ``speed`` times real time), and runs the links'
real-time clock between slices; when every table has played its hands it
waits, in real time, until every outbox is drained (or a deadline).  The
tables are deterministic for their seeds: the network only ever reaches the
links, which read the tables and their outboxes.  A simulated power cut of
one table drops its connection without a word (the broker publishes its
Will); the next boot is a new link on the same database.  Faults are
injected per table (``faults``: table id -> specs, as ``mjtable sim
--inject``) and acknowledged by each table's simulated technician after
``auto_ack_s``; a table still playing after ``hands`` x 900 + 600 simulated
seconds (as one table's run) is given up.  :meth:`FleetSim.report` is the
fleet's JSON report: each table's :func:`sim.report.build_report` with its
link's counters and its faults injected, and the totals.
"""

from __future__ import annotations

import gettext
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from firmware.config import FleetSection, TableConfig, default_table_path, load_table_config
from firmware.i18n import N_
from firmware.fleet.link_settings import LinkSettings
from firmware.fleet.mqtt.client import PahoAdapter
from firmware.fleet.mqtt.network import MqttNetwork
from firmware.fleet.runtime import shared_plug
from firmware.fleet.table_link import FleetPlug
from hal.runtime import HOST_CLOCK
from sim.faults import FaultSpec
from sim.link_clock import LinkClock, ScopedClock
from sim.table_run import SimRun
from firmware.controller.states import TableState
from firmware.root.table import SIM_EPOCH_S

log = logging.getLogger(__name__)

SLICE_STEPS = 200            # virtual-loop steps per table between two runs of the links' clock
HAND_TIMEOUT_S = 900.0       # simulated seconds a hand may take before a table is given up


@dataclass
class TableSummary:
    table: str
    hands: int
    events: int               # written to its outbox (the last seq)
    published: int
    acked: int
    outbox_depth: int
    reconnects: int
    boots: int
    completed: bool
    faults: int = 0           # faults the table raised (its fault history of this run)
    final_state: str = ""
    chips_conserved: bool = True
    motor_under_interlock: bool = False

    @property
    def latched(self) -> bool:
        return self.final_state == "latched"


def table_ids(tables: int) -> list[str]:
    """The simulated tables' ids: ``t001`` ..."""
    return [f"t{i + 1:03d}" for i in range(tables)]


class FleetSim:
    def __init__(self, tables: int, broker_url: str, site: str = "sim", *, rules: str = "mcr", hands: int = 16,
                 seed: int = 1, speed: float | None = None, cfg: TableConfig | None = None,
                 settings: LinkSettings | None = None, folder: Path | None = None,
                 on_run: Callable[[SimRun], None] | None = None, tls: tuple[Path, Path] | None = None,
                 faults: dict[str, list[FaultSpec]] | None = None, auto_ack_s: float | None = 60.0,
                 await_assignments: bool = False, command_key: Path | None = None) -> None:
        """``folder``: keep the tables' databases there (``t001.db`` ...; default: temporary ones), each with its
        simulated table in it as one table's ``--state``, so that a fleet killed at any instant resumes on the same
        folder: ``hands`` then counts each database's hands, earlier runs' too (a hand left in play is ended void);
        ``on_run``
        sees each table's run once it is built (tests cut its power); ``tls`` (an mqtts:// broker): the
        parlour's ``ca.crt`` and the folder with each table's ``<table>.crt`` and ``<table>.key``; ``faults``:
        the specs injected into each table (by table id), acknowledged after ``auto_ack_s`` (None: never);
        ``await_assignments``: each table plays the hall's tournament rounds only, as they are assigned, until
        stopped (:meth:`run`'s ``stop``): while a table stands ready waiting for a round its wall clock is the
        real time and its loop runs no faster than real time; from the moment a round is assigned to it, its loop
        (and wall clock) runs as fast as the simulator can (or ``speed``), so a round's ``ends_at`` of real time + D
        is reached after D simulated seconds of the round; ``command_key``: the parlour's command key file
        the tables check commands and assignments with (as a table's ``command_key_file``)."""
        base = cfg or load_table_config(default_table_path())
        self.speed = speed
        self.hands = hands
        self.rules = rules
        self.await_assignments = await_assignments
        self.deadline_s = hands * HAND_TIMEOUT_S + 600.0 if not await_assignments else float("inf")
        self.timed_out: set[str] = set()
        self.current: str | None = None        # the table whose loop runs now (the console names it)
        self.clock = LinkClock()
        self.network = MqttNetwork("mqtt-fleet", clock=HOST_CLOCK).start()
        self.adapters: dict[str, list[PahoAdapter]] = {}
        self.runs: list[SimRun] = []
        self.stalled: set[str] = set()     # tables with nothing left to do before their hands were played
        self.settings = settings
        self.refused: tuple[str, str] | None = None
        self._paced_from: dict[str, tuple[float, float, bool]] = {}   # table -> (real s, loop s, waiting) of its pace
        try:
            for i, table_id in enumerate(table_ids(tables)):
                files = {}
                if tls is not None:
                    ca_file, certs = (Path(p).resolve() for p in tls)
                    files = {"ca_file": str(ca_file), "cert_file": str(certs / f"{table_id}.crt"),
                             "key_file": str(certs / f"{table_id}.key")}
                if command_key is not None:
                    files["command_key_file"] = str(Path(command_key).resolve())
                section = FleetSection(broker_url=broker_url, site=site, table_id=table_id,
                                       first_connect_spread_s=min(10.0, 0.05 * tables), **files)
                table_cfg = base.model_copy(update={"fleet": section})
                state = folder / f"{table_id}.db" if folder is not None else None
                self.current = table_id
                run = SimRun(table_cfg, rules=rules, seed=seed + i, hands=hands, play=True, state_path=state,
                             fleet=self._plug_for(table_id), faults=list((faults or {}).get(table_id, [])),
                             auto_ack_s=auto_ack_s, await_assignments=await_assignments,
                             wall_epoch_s=HOST_CLOCK.wall_s() if await_assignments else SIM_EPOCH_S,
                             hands_in_all=folder is not None)
                self.current = None
                self.runs.append(run)
                if on_run is not None:
                    on_run(run)
        except BaseException:
            self.close()
            raise

    def _plug_for(self, table_id: str) -> Callable[[], tuple[FleetPlug, Callable[[], None]]]:
        made = self.adapters.setdefault(table_id, [])

        def boot() -> tuple[FleetPlug, Callable[[], None]]:
            scope = ScopedClock(self.clock)
            first = len(made)

            def cut() -> None:
                scope.kill()
                for adapter in made[first:]:
                    adapter.close()

            return shared_plug(self.network, scope, self.settings, made, self._refused, clock=HOST_CLOCK), cut
        return boot

    # -- running ------------------------------------------------------------------------------------------
    def _playing(self, run: SimRun) -> bool:
        if self.await_assignments:
            return True
        if run.players.finished or run.table_id in self.stalled:
            return False
        if run.loop.now() >= self.deadline_s:
            log.error("fleet: table %s has not finished its hands after %.0f simulated s (state %s)", run.table_id,
                      run.loop.now(), run.state.value if run.state else "off")
            self.stalled.add(run.table_id)
            self.timed_out.add(run.table_id)
            return False
        return True

    def step(self) -> bool:
        """One slice of every table still playing, then the links' clock; False when every table is done."""
        busy = False
        real_s = self.clock.now()
        for run in self.runs:
            if not self._playing(run):
                continue
            busy = True
            loop = run.loop
            self.current = run.table_id
            waiting = self.await_assignments and not run.wants_round() and run.state is TableState.READY
            if waiting:                 # (between rounds: the table's wall clock is the real time)
                run.wall_offset_s = HOST_CLOCK.wall_s() - loop.now()
            paced = self._paced_from.get(run.table_id)
            if paced is None or paced[2] != waiting:     # (its pace counts from the moment it began or ended a round)
                paced = self._paced_from[run.table_id] = (real_s if paced else 0.0, loop.now() if paced else 0.0,
                                                          waiting)
            real_0, loop_0, _ = paced
            # waiting, its loop runs at real time; in a round (or its hands) at the speed, or as fast as it can
            target = loop_0 + (real_s - real_0) * (1.0 if waiting else self.speed) \
                if waiting or self.speed is not None else None
            for _ in range(SLICE_STEPS):
                until_s = min(loop.now() + HAND_TIMEOUT_S if target is None else target, self.deadline_s)
                if waiting:
                    if not loop.step(until_s):
                        break
                    if run.wants_round():
                        break
                    continue
                if not loop.step(until_s):
                    if target is None and until_s >= self.deadline_s:
                        break                   # (at the deadline: _playing gives it up)
                    if target is None:          # nothing due for a whole hand's time: this table is stuck
                        log.error("fleet: table %s has nothing left to do at t=%.0f s (state %s)", run.table_id,
                                  loop.now(), run.state.value if run.state else "off")
                        self.stalled.add(run.table_id)
                    break
                if run.players.finished:
                    break
            self.current = None
        if (self.speed is not None or self._all_waiting()) and busy:
            self.clock.wait(0.02)
        else:
            self.clock.run_due()
        return busy

    def _all_waiting(self) -> bool:
        return self.await_assignments and not any(run.wants_round() for run in self.runs)

    def run(self, timeout_s: float | None = None, stop: threading.Event | None = None) -> bool:
        """Play every table's hands (``timeout_s``: real seconds at most); False if some table did not finish."""
        started = self.clock.now()
        while self.step():
            if stop is not None and stop.is_set():
                return False
            if timeout_s is not None and self.clock.now() - started > timeout_s:
                log.error("fleet: not every table finished within %.0f s", timeout_s)
                return False
        for run in self.runs:
            run.settle()
        return True

    def _refused(self, table: str, why: str) -> None:
        """(the links' clock) The broker refused a table: kept, for the driver to say once for the fleet."""
        if self.refused is None:
            self.refused = (table, why)
        log.debug("fleet: the broker refused %s: %s", table, why)

    def refusal(self) -> tuple[str, str] | None:
        """(table, why) of the first table the broker refused (its connection or its messages), None if none."""
        return self.refused

    def outbox_depth(self) -> int:
        return sum(max(0, run.link.status()["outbox_depth"]) for run in self.runs if run.link is not None)

    def drain(self, timeout_s: float = 30.0, give_up: Callable[[], bool] | None = None) -> bool:
        """Wait (real time) until every link has its outbox acknowledged; False at the deadline, as soon as the
        broker refused a table (:meth:`refusal`) or when ``give_up()`` (a second SIGINT)."""
        deadline = self.clock.now() + timeout_s
        while self.clock.now() < deadline and self.refused is None and not (give_up is not None and give_up()):
            if self.outbox_depth() == 0 and all(run.link is None or run.link.status()["in_flight"] == 0
                                                for run in self.runs):
                return True
            self.clock.wait(0.05)
        return self.refused is None and self.outbox_depth() == 0

    # -- what happened --------------------------------------------------------------------------------------
    def summary(self) -> list[TableSummary]:
        out = []
        for run in self.runs:
            counts: dict[str, Any] = {"published": 0, "acked": 0, "reconnects": 0}
            for link in run.links:
                st = link.status()
                for key in counts:
                    counts[key] += st[key]
            events = run.store.event_outbox().meta().last_seq if run.controller is not None else 0
            depth = run.link.status()["outbox_depth"] if run.link is not None else -1
            hands = run.game.hands_recorded if run.game is not None else 0
            faults = len(run.controller.policy.history(after_id=run.faults_before)) if run.controller else 0
            scoreboard = run.session.scoreboard if run.session else None
            out.append(TableSummary(run.table_id, hands, events,
                                    counts["published"], counts["acked"], depth, counts["reconnects"], run.boots,
                                    run.players.finished or self.await_assignments, faults,
                                    run.state.value if run.state else "off",
                                    scoreboard.conserved() if scoreboard is not None else False,
                                    any(run.interlocks.finish().values())))
        return out

    def report(self, wall_s: float, faults: dict[str, list[FaultSpec]] | None = None, **about: Any) -> dict[str, Any]:
        """The fleet's report (``mjtable sim --fleet --report``): ``about`` (broker, site ...), each table's
        report of one run (:func:`sim.report.build_report`) with ``injected`` (its specs) and ``link`` (its
        link's counters over every boot), and the totals."""
        from sim.report import build_report

        rows = {r.table: r for r in self.summary()}
        tables = {}
        for run in self.runs:
            one = build_report(run, self.rules, self.hands, wall_s)
            row = rows[run.table_id]
            one.update(table_id=run.table_id, injected=[spec.text for spec in (faults or {}).get(run.table_id, [])],
                       completed=row.completed, link={"events": row.events, "published": row.published,
                                                      "acked": row.acked, "outbox_depth": row.outbox_depth,
                                                      "reconnects": row.reconnects, "boots": row.boots,
                                                      "log_lines_dropped": sum(link.link.log_lines_dropped()
                                                                               for link in run.links)})
            tables[run.table_id] = one
        codes: dict[str, int] = {}
        for one in tables.values():
            for fault in one["faults"]:
                codes[fault["code"]] = codes.get(fault["code"], 0) + 1
        return {"version": 1, "fleet": len(self.runs), "rules": self.rules, "hands_requested": self.hands, **about,
                "tables": tables,
                "totals": {"hands_played": sum(t["hands_played"] for t in tables.values()),
                           "faults_by_code": dict(sorted(codes.items())),
                           "tables_latched": sorted(t for t, one in tables.items() if one["final_state"] == "latched"),
                           "tables_unfinished": sorted(t for t, one in tables.items() if not one["completed"]),
                           "chips_conserved": all(one["chips_conserved"] for one in tables.values()),
                           "events": sum(r.events for r in rows.values()),
                           "acked": sum(r.acked for r in rows.values())},
                "wall_s": round(wall_s, 3)}

    def close(self) -> None:
        for run in self.runs:
            run.close()
        self.clock.run_due()
        self.network.stop()


# the summary's columns, in words (N_: translated where shown) and their least widths (the English ones')
COLUMNS = (N_("table"), N_("hands"), N_("events"), N_("published"), N_("acked"), N_("outbox"), N_("reconnects"),
           N_("boots"), N_("faults"))
WIDTHS = (6, 5, 6, 9, 6, 6, 10, 5, 6)
ENGLISH = gettext.NullTranslations()


def _widths(heads: list[str]) -> list[int]:
    return [max(w, _display_width(h)) for w, h in zip(WIDTHS, heads)]


def _display_width(text: str) -> int:
    """Columns a text takes in a terminal (a Chinese character takes two)."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def _pad(text: str, width: int, left: bool = False) -> str:
    room = " " * max(0, width - _display_width(text))
    return text + room if left else room + text


def summary_lines(rows: list[TableSummary], wall_s: float, verbose: bool = False,
                  tr: gettext.NullTranslations = ENGLISH) -> list[str]:
    """The fleet summary: one line per table (all with ``verbose`` or up to 20 tables), then the totals; in the
    words of ``tr`` (the command line's catalogue; English without one)."""
    _, ngettext = tr.gettext, tr.ngettext
    lines = []
    if verbose or len(rows) <= 20:
        heads = [_(h) for h in COLUMNS]
        lines.append(" ".join(_pad(h, w, left=i == 0) for i, (h, w) in enumerate(zip(heads, _widths(heads)))))
        widths = _widths(heads)
        for r in rows:
            cells = [r.table, r.hands, r.events, r.published, r.acked, r.outbox_depth, r.reconnects, r.boots, r.faults]
            line = " ".join(_pad(str(c), w, left=i == 0) for i, (c, w) in enumerate(zip(cells, widths)))
            lines.append(line + ("" if r.completed else _("  (did not finish)")) + (_("  (latched)") if r.latched
                                                                                    else ""))
    hands = sum(r.hands for r in rows)
    depth = sum(max(0, r.outbox_depth) for r in rows)
    per_table = [r.hands for r in rows] or [0]
    lines.append(
        ngettext("fleet: %(tables)s table, %(hands)s hands (%(least)s-%(most)s per table) in %(wall)s s wall "
                 "(%(rate)s hands/s); ", "fleet: %(tables)s tables, %(hands)s hands (%(least)s-%(most)s per table) in "
                 "%(wall)s s wall (%(rate)s hands/s); ", len(rows))
        % {"tables": len(rows), "hands": hands, "least": min(per_table), "most": max(per_table),
           "wall": f"{wall_s:.1f}", "rate": f"{hands / wall_s if wall_s > 0 else 0:.1f}"}
        + _("%(events)s events written, %(published)s published, %(acked)s acknowledged; outbox depth %(depth)s; "
            "%(reconnects)s reconnects; %(faults)s faults")
        % {"events": sum(r.events for r in rows), "published": sum(r.published for r in rows),
           "acked": sum(r.acked for r in rows), "depth": depth, "reconnects": sum(r.reconnects for r in rows),
           "faults": sum(r.faults for r in rows)})
    return lines
