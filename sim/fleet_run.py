"""A simulated parlour: N simulated tables in one process, each its own controller, database and client id.

:class:`FleetSim` builds N :class:`~sim.table_run.SimRun` (table ``t001`` ...
with seed ``seed + i``, the table model given a ``[fleet]`` section naming
the broker, the site and the table, and for a TLS broker the table's own
certificate and key, as a parlour's table has), one
:class:`~hal.mqtt_paho.MqttNetwork` thread for all their clients and one
:class:`~sim.link_clock.LinkClock` for all their links.  :meth:`FleetSim.run`
steps the tables' virtual loops round-robin, a slice each (as fast as
possible, or paced to ``speed`` times real time), and runs the links'
real-time clock between slices; when every table has played its hands it
waits, in real time, until every outbox is drained (or a deadline).  The
tables are deterministic for their seeds: the network only ever reaches the
links, which read the tables and their outboxes.  A simulated power cut of
one table drops its connection without a word (the broker publishes its
Will); the next boot is a new link on the same database.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from firmware.config import FleetSection, TableConfig, default_table_path, load_table_config
from firmware.fleet.link import LinkSettings
from firmware.fleet.table_link import FleetPlug
from hal.fleet_runtime import shared_plug
from hal.mqtt_paho import MqttNetwork, PahoAdapter
from sim.link_clock import LinkClock, ScopedClock
from sim.table_run import SimRun

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


def table_ids(tables: int) -> list[str]:
    """The simulated tables' ids: ``t001`` ..."""
    return [f"t{i + 1:03d}" for i in range(tables)]


class FleetSim:
    def __init__(self, tables: int, broker_url: str, site: str = "sim", *, rules: str = "mcr", hands: int = 16,
                 seed: int = 1, speed: float | None = None, cfg: TableConfig | None = None,
                 settings: LinkSettings | None = None, folder: Path | None = None,
                 on_run: Callable[[SimRun], None] | None = None, tls: tuple[Path, Path] | None = None) -> None:
        """``folder``: keep the tables' databases there (``t001.db`` ...; default: temporary ones); ``on_run``
        sees each table's run once it is built (tests cut its power); ``tls`` (an mqtts:// broker): the
        parlour's ``ca.crt`` and the folder with each table's ``<table>.crt`` and ``<table>.key``."""
        base = cfg or load_table_config(default_table_path())
        self.speed = speed
        self.hands = hands
        self.clock = LinkClock()
        self.network = MqttNetwork("mqtt-fleet").start()
        self.adapters: dict[str, list[PahoAdapter]] = {}
        self.runs: list[SimRun] = []
        self.stalled: set[str] = set()     # tables with nothing left to do before their hands were played
        self.settings = settings
        self.refused: tuple[str, str] | None = None
        try:
            for i, table_id in enumerate(table_ids(tables)):
                files = {}
                if tls is not None:
                    ca_file, certs = (Path(p).resolve() for p in tls)
                    files = {"ca_file": str(ca_file), "cert_file": str(certs / f"{table_id}.crt"),
                             "key_file": str(certs / f"{table_id}.key")}
                section = FleetSection(broker_url=broker_url, site=site, table_id=table_id,
                                       first_connect_spread_s=min(10.0, 0.05 * tables), **files)
                table_cfg = base.model_copy(update={"fleet": section})
                state = folder / f"{table_id}.db" if folder is not None else None
                run = SimRun(table_cfg, rules=rules, seed=seed + i, hands=hands, play=True, state_path=state,
                             fleet=self._plug_for(table_id))
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

            return shared_plug(self.network, scope, self.settings, made, self._refused), cut
        return boot

    # -- running ------------------------------------------------------------------------------------------
    def _playing(self, run: SimRun) -> bool:
        return not run.players.finished and run.table_id not in self.stalled

    def step(self) -> bool:
        """One slice of every table still playing, then the links' clock; False when every table is done."""
        busy = False
        target = None if self.speed is None else self.clock.now() * self.speed
        for run in self.runs:
            if not self._playing(run):
                continue
            busy = True
            loop = run.loop
            for _ in range(SLICE_STEPS):
                if not loop.step(loop.now() + HAND_TIMEOUT_S if target is None else target):
                    if target is None:          # nothing due for a whole hand's time: this table is stuck
                        log.error("fleet: table %s has nothing left to do at t=%.0f s (state %s)", run.table_id,
                                  loop.now(), run.state.value if run.state else "off")
                        self.stalled.add(run.table_id)
                    break
                if run.players.finished:
                    break
        if self.speed is not None and busy:
            self.clock.wait(0.02)
        else:
            self.clock.run_due()
        return busy

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

    def drain(self, timeout_s: float = 30.0) -> bool:
        """Wait (real time) until every link has its outbox acknowledged; False at the deadline, or as soon as the
        broker refused a table (:meth:`refusal`)."""
        deadline = self.clock.now() + timeout_s
        while self.clock.now() < deadline and self.refused is None:
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
            out.append(TableSummary(run.table_id, hands, events,
                                    counts["published"], counts["acked"], depth, counts["reconnects"], run.boots,
                                    run.players.finished))
        return out

    def close(self) -> None:
        for run in self.runs:
            run.close()
        self.clock.run_due()
        self.network.stop()


def summary_lines(rows: list[TableSummary], wall_s: float, verbose: bool = False) -> list[str]:
    """The fleet summary: one line per table (all with ``verbose`` or up to 20 tables), then the totals."""
    lines = []
    if verbose or len(rows) <= 20:
        lines.append(f"{'table':6} {'hands':>5} {'events':>6} {'published':>9} {'acked':>6} {'outbox':>6} "
                     f"{'reconnects':>10} {'boots':>5}")
        for r in rows:
            lines.append(f"{r.table:6} {r.hands:5d} {r.events:6d} {r.published:9d} {r.acked:6d} {r.outbox_depth:6d} "
                         f"{r.reconnects:10d} {r.boots:5d}{'' if r.completed else '  (did not finish)'}")
    hands = sum(r.hands for r in rows)
    depth = sum(max(0, r.outbox_depth) for r in rows)
    per_table = [r.hands for r in rows] or [0]
    lines.append(f"fleet: {len(rows)} tables, {hands} hands ({min(per_table)}-{max(per_table)} per table) in "
                 f"{wall_s:.1f} s wall ({hands / wall_s if wall_s > 0 else 0:.1f} hands/s); "
                 f"{sum(r.events for r in rows)} events written, {sum(r.published for r in rows)} published, "
                 f"{sum(r.acked for r in rows)} acknowledged; outbox depth {depth}; "
                 f"{sum(r.reconnects for r in rows)} reconnects")
    return lines
