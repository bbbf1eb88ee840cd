"""Light tables: a chain's scale on one machine: the real fleet client and outbox per table, fed generated hands.

A light table is what a table is to the fleet and nothing more: its table
database's outbox (SQLite, one file per table), its
:class:`~firmware.fleet.link.FleetLink` and its MQTT client, publishing the
hands a generator writes into the outbox (a hand's event of the size and
shape a played hand's is) instead of the hands of a simulated controller.
Many light tables share one loop thread and one network thread
(:class:`LightFleet`), so a test or a benchmark can bring up hundreds of
tables across several parlour brokers.  A table's power cut
(:meth:`LightFleet.power_cut`) drops its connection without a word and
reopens its outbox from the file, as a table after the power came back:
what was not acknowledged is published again.

The tables' time (their loop, their wall clock) is the ``clock`` given, the
host's by default; a :class:`~sim.sped_clock.SpedClock` runs it faster, so
that :meth:`LightFleet.play_over` plays minutes of a parlour (a hand every
so many seconds, the link's 60 s counters, its state) in seconds, while the
MQTT network thread, the sockets and the brokers keep real time.
"""

from __future__ import annotations

import logging
import random
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from firmware.fleet.command_auth import CommandRefused, CommandVerifier, VerifyKey
from firmware.fleet.link import FleetLink
from firmware.fleet.link_settings import LinkSettings
from firmware.fleet.mqtt.client import ClientSettings, PahoAdapter
from firmware.fleet.mqtt.network import MqttNetwork
from firmware.fleet.update_desk import Installer, UpdateDesk
from firmware.loop import RealTimeLoop
from firmware.ports.broker import parse_broker_url
from firmware.ports.clock import Clock
from firmware.store.outbox import SqliteOutbox
from hal.runtime import HOST_CLOCK

log = logging.getLogger(__name__)

FAST = LinkSettings(state_min_interval_s=1.0, counters_period_s=60.0, first_connect_spread_s=0.0,
                    backoff_min_s=0.2, backoff_max_s=2.0, connect_timeout_s=5.0, mark_delay_s=0.1, poll_s=0.5)


def generated_hand(rng: random.Random, hand: int) -> dict[str, Any]:
    """A hand's event as a played hand's looks (winner, fans, payments by side, chips), drawn at random."""
    winner = rng.randrange(4)
    amount = rng.choice((8, 9, 10, 12, 16, 24, 32, 48, 64, 88))
    payers = [s for s in range(4) if s != winner]
    payments = [{"side": winner, "amount": 3 * (amount + 8), "reason": "win"}]
    payments += [{"side": s, "amount": -(amount + 8), "reason": "win"} for s in payers]
    return {"hand": hand, "dealer": hand % 4, "winners": [winner], "self_drawn": True,
            "fans": [["平和", 2], ["门前清", 2], ["自摸", 1], ["花牌", 1]][: rng.randint(1, 4)],
            "payments": payments, "generated": True}


@dataclass
class LightTable:
    site: str
    table: str
    db_path: Path
    broker_url: str
    hands: int = 0
    status: dict = field(default_factory=lambda: {"state": "playing", "hand": 0, "dealer": 0,
                                                  "chips": [0, 0, 0, 0], "faults": []})
    db: sqlite3.Connection | None = None
    adapter: PahoAdapter | None = None
    link: FleetLink | None = None
    outbox: SqliteOutbox | None = None
    installer: Installer | None = None    # its releases, for staged updates (cmd/update, cmd/rollback)
    desk: UpdateDesk | None = None


class LightFleet:
    """Light tables on one loop thread and one network thread; see the module."""

    def __init__(self, parlours: list[tuple[str, str]], tables_per_parlour: int, folder: Path, *,
                 settings: LinkSettings = FAST, keys: list[VerifyKey] | None = None, seed: int = 1,
                 installer: Callable[[LightTable], Installer] | None = None, clock: Clock = HOST_CLOCK) -> None:
        """``parlours``: (site, broker URL) each; tables ``<site>-t001`` ... per parlour, their databases in
        ``folder``; ``keys``: the command keys the tables accept (``resend_since`` from the chain, ``update`` and
        ``rollback`` of a staged update); ``installer(table)``: the table's releases (None: no updates);
        ``clock``: the tables' time (``settings`` are in its seconds; a ``speed`` attribute: it runs that many
        times faster than real time)."""
        self.folder = Path(folder)
        self.settings = settings
        self.keys = keys or []
        self.rng = random.Random(seed)
        self.clock = clock
        self.loop = RealTimeLoop(clock.monotonic_s, speed=getattr(clock, "speed", 1.0))
        self._to_play = 0              # (hands :meth:`play_over` has yet to write)
        self.thread = threading.Thread(target=self.loop.run_forever, name="light-fleet", daemon=True)
        self.thread.start()
        self.network = MqttNetwork("light-fleet", connect_workers=8, clock=HOST_CLOCK).start()
        self.tables = [LightTable(site, f"{site}-t{i:03d}", self.folder / f"{site}-t{i:03d}.db", url)
                       for site, url in parlours for i in range(1, tables_per_parlour + 1)]
        if installer is not None:
            for t in self.tables:
                t.installer = installer(t)
        for t in self.tables:
            self.call(self._start, t)

    # -- the loop thread
    def call(self, fn: Callable[..., Any], *args: Any, timeout_s: float = 30.0) -> Any:
        """Run ``fn(*args)`` on the fleet's loop and return what it returns."""
        done, box = threading.Event(), {}

        def run() -> None:
            try:
                box["value"] = fn(*args)
            except BaseException as exc:         # (handed to the caller)
                box["error"] = exc
            done.set()

        self.loop.post(run)
        if not done.wait(timeout_s):
            raise TimeoutError(f"the light fleet's loop did not run {fn} within {timeout_s} s")
        if "error" in box:
            raise box["error"]
        return box.get("value")

    def _start(self, t: LightTable) -> None:
        t.db = sqlite3.connect(str(t.db_path), isolation_level=None, check_same_thread=False)
        t.db.execute("PRAGMA journal_mode=WAL")
        t.db.execute("PRAGMA synchronous=NORMAL")
        t.outbox = SqliteOutbox(t.db)
        t.adapter = PahoAdapter(self.network, self.loop.post, ClientSettings(t.table, parse_broker_url(t.broker_url)))
        verifier = (CommandVerifier(t.site, t.table, self.keys, self.clock.wall_s, boot_wall_s=self.clock.wall_s())
                    if self.keys else None)
        firmware = (t.installer.current() if t.installer is not None else None) or "light"
        t.link = FleetLink(self.loop, t.adapter, t.outbox, lambda: t.status, lambda *a: self._command(t, *a),
                           site=t.site, table=t.table,
                           meta={"firmware": firmware, "model": "light table", "rules": "mcr"},
                           wall_clock_s=self.clock.wall_s, verifier=verifier, settings=self.settings)
        t.link.start()

    def _command(self, t: LightTable, verb: str, args: dict, issuer: str) -> Any:
        """(the loop) ``update`` and ``rollback`` to the table's update desk."""
        if t.installer is None or verb not in ("update", "rollback"):
            raise CommandRefused(f"this light table does not take {verb} over the fleet")
        if t.desk is None:
            def report(firmware: str | None, release: dict) -> None:
                t.link.set_meta(dict(t.link.meta, firmware=firmware or t.link.meta.get("firmware"), release=release))
            t.desk = UpdateDesk(t.installer, self.loop.post, report)
        return t.desk.handle(verb, args, issuer)

    def raise_fault(self, t: LightTable, code: str, text: str = "a simulated fault") -> None:
        """The table reports a fault (its retained ``faults`` leaf)."""
        def raise_() -> None:
            t.status = dict(t.status, faults=[*t.status["faults"], {"code": code, "tier": "recoverable",
                                                                    "text": text, "hint": ""}])
            t.link.notify()
        self.call(raise_)

    def _play(self, t: LightTable, count: int) -> None:
        for _ in range(count):
            t.hands += 1
            t.outbox.add("hand", generated_hand(self.rng, t.hands))
        t.status = dict(t.status, hand=t.hands, dealer=t.hands % 4)
        t.link.outbox_changed()
        t.link.notify()

    def play(self, hands_per_table: int = 1, tables: list[LightTable] | None = None) -> int:
        """Each table (or those given) writes ``hands_per_table`` hands now; the number written."""
        chosen = tables if tables is not None else self.tables
        for t in chosen:
            self.call(self._play, t, hands_per_table)
        return hands_per_table * len(chosen)

    def play_over(self, duration_s: float, hand_every_s: float, tables: list[LightTable] | None = None) -> int:
        """Each table (or those given) plays a hand every ``hand_every_s`` of the fleet's clock for the next
        ``duration_s`` of it, the tables' hands spread evenly over the interval; the number of hands it will write
        (:meth:`to_play` counts down to 0 as they are written)."""
        chosen = tables if tables is not None else self.tables
        if hand_every_s <= 0 or duration_s < 0:
            raise ValueError("a hand every so many seconds (> 0), over a duration (>= 0)")
        plan = []
        for i, t in enumerate(chosen):
            at_s = hand_every_s * (i + 1) / len(chosen)
            while at_s <= duration_s:
                plan.append((at_s, t))
                at_s += hand_every_s

        def schedule() -> None:
            self._to_play += len(plan)
            for at_s, t in plan:
                self.loop.call_later(at_s, self._play_planned, t)
        self.call(schedule)
        return len(plan)

    def _play_planned(self, t: LightTable) -> None:
        self._to_play -= 1
        self._play(t, 1)

    def to_play(self) -> int:
        """Hands :meth:`play_over` has planned and not yet written."""
        return self.call(lambda: self._to_play)

    def power_cut(self, t: LightTable) -> None:
        """The table loses power: no word to the broker; on power-up its outbox is read again from the file."""
        def cut() -> None:
            t.link.abandon()
            t.adapter.close()
            t.db.close()
            self._start(t)
        self.call(cut)

    def connected(self) -> int:
        return sum(1 for t in self.tables if self.call(t.link.status)["state"] in ("connected", "draining"))

    def outbox_depth(self) -> int:
        return sum(max(0, self.call(t.link.status)["outbox_depth"]) for t in self.tables)

    def close(self) -> None:
        for t in self.tables:
            try:
                self.call(t.link.stop, timeout_s=5.0)
            except (TimeoutError, RuntimeError):
                pass
        self.loop.stop()
        self.thread.join(timeout=5.0)
        self.network.stop()
        for t in self.tables:
            if t.db is not None:
                t.db.close()
