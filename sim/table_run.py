"""A whole simulated session: the real controller, the simulated table, the people and the players.

``SimRun`` wires the controller (firmware) to a :class:`~sim.world.TableWorld`
through the simulated backend, with a table database on disk, and lets the
people of :mod:`sim.table_people` use the table for a number of hands; with
``play`` the simulated players of :mod:`sim.game_runner` play each hand (else
a hand is a timed wait).  A power cut (``power_cut`` or the ``power-cut@T`` fault)
kills every firmware object and timer at that instant; power returns after
``off_s`` and a new controller starts from the database, as on a table.
With ``fleet`` (a table model with a ``[fleet]`` section) each boot wires
the fleet link too; a power cut drops its connection without a word.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from firmware.config import TableConfig, default_table_path, load_table_config
from firmware.controller.controller import Controller
from firmware.game.session import TableSession
from firmware.controller.states import TableState
from firmware.events import Event, EventBus
from firmware.rules.registry import load_ruleset
from firmware.rules.ruleset import RuleSet
from firmware.store.score_rows import ScoreRows
from firmware.root.table import SIM_EPOCH_S, Profile, build_table
from sim.storage import scratch_dir
from sim.shuffle_bias import ShuffleBias, inject_bias
from sim.wear import apply_wear
from sim.faults import FaultSpec, apply_faults
from sim.game_runner import GameRunner
from sim.interlock_watch import InterlockWatch
from sim.run_record import RunRecord
from sim.table_people import TablePeople
from sim.virtual_loop import ScopedLoop, SimTimeout, VirtualLoop
from sim.world import TableWorld
from sim.world_state import WorldRows, read_world_rows, restore_world, restore_world_data, world_file

if TYPE_CHECKING:
    from firmware.fleet.table_link import FleetPlug, TableLink


class SimRun:
    def __init__(self, cfg: TableConfig | None = None, rules: RuleSet | str = "mcr", seed: int = 1,
                 faults: list[FaultSpec] | None = None, hands: int = 16, state_path: str | Path | None = None,
                 sets: tuple[str, ...] | None = None, hand_s: float = 60.0, auto_ack_s: float | None = 60.0,
                 cut_in_states: set[str] | None = None, play: bool = False, service: bool = False,
                 fit_tile_set: bool = True,
                 fleet: Callable[[], tuple[FleetPlug, Callable[[], None]]] | None = None,
                 observers: list[Callable[[Event], None]] | None = None, keep_world: bool | None = None,
                 await_assignments: bool = False, wall_epoch_s: float = SIM_EPOCH_S,
                 hands_in_all: bool = False, shuffle_bias: ShuffleBias | None = None,
                 wear: list[tuple[str, float]] | None = None) -> None:
        """With a ``state_path`` the simulated tiles are kept in the table database itself, written in every
        transaction the controller commits, so that a process killed at any instant leaves the tiles and the
        controller's knowledge at the same commit (:mod:`sim.world_state`); an existing database resumes both.
        ``fleet()`` gives each boot its fleet plug and what cuts that boot's link at a power cut
        (:mod:`sim.fleet_run`).
        ``observers`` hear every event of every boot, from the first (a campaign watches the table through
        power cuts).  ``keep_world``: write the tiles (by default when there is a ``state_path`` to resume; False
        for a benchmark of the controller's own writes to its card).  ``await_assignments``: the people play only
        the hall's tournament rounds (:mod:`firmware.game.rounds`): they press the key at ``ready`` while a round
        is in play or one waits, and play on until stopped.  The table's wall clock (a round's ``ends_at``) is
        ``wall_offset_s`` + the loop's time, ``wall_epoch_s`` at its start (:mod:`sim.fleet_run` keeps it on the
        real time while the table waits for a round).  ``hands_in_all``: ``hands`` counts the hands of the
        database, earlier runs' too (``sim --fleet --state-dir``: the same command resumes and plays what is left;
        a hand a killed run left in play is ended void, the last one too)."""
        self.cfg = cfg or load_table_config(default_table_path())
        self.rules = load_ruleset(rules) if isinstance(rules, str) else rules
        if fit_tile_set and self.rules.tile_set != self.cfg.table.tile_set:
            # the rule set decides which tiles are on the table (辽宁 136, 锦州 112)
            self.cfg = self.cfg.model_copy(update={"table": self.cfg.table.model_copy(
                update={"tile_set": self.rules.tile_set})})
        self.seed = seed
        self.loop = VirtualLoop()
        self.wall_offset_s = wall_epoch_s
        self.await_assignments = await_assignments
        self.world = TableWorld(self.cfg, self.loop, seed)
        faults = faults or []
        sets = sets if sets is not None else (("A", "B") if self.cfg.table.double_set else ("A",))
        self.players = TablePeople(self.world, hands, sets, hand_s=None if play else hand_s,
                                   auto_ack_s=auto_ack_s)
        if await_assignments:
            self.players.want_hand = self.wants_round
        self.world_rows = WorldRows(self.world, self.players)
        self.keep_world = state_path is not None if keep_world is None else keep_world
        self._imported: Path | None = None      # an older release's world file, read once (then kept in the database)
        if state_path is not None and Path(state_path).exists():
            saved = read_world_rows(Path(state_path))
            if saved is not None:
                restore_world_data(self.world, self.players, saved, str(state_path))
            elif world_file(Path(state_path)).exists():
                self._imported = world_file(Path(state_path))
                restore_world(self.world, self.players, self._imported)
        apply_faults(self.world, faults)
        self.shuffle_bias = shuffle_bias
        self.wear = wear or []
        inject_bias(self.world, shuffle_bias, self.rules.deal_rules, seed)
        self.world.wear = apply_wear(self.world, self.wear)
        self.interlocks = InterlockWatch(self.world)      # motor time while an interlock is active (must be 0)
        self._tmp = None
        if state_path is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="mjtable-", dir=scratch_dir())
            state_path = Path(self._tmp.name) / "table.db"
        self.state_path = Path(state_path)
        self.record = RunRecord()
        self.events = self.record.events            # the most recent events (bounded)
        self.game = GameRunner(self, seed) if play else None
        self.boots = 0
        self.controller: Controller | None = None
        self.session: TableSession | None = None      # the table's front door (None while the power is off)
        self.fleet = fleet
        self.link: TableLink | None = None
        self.links: list[TableLink] = []            # every boot's (their counters add up)
        self._cut_link: Callable[[], None] | None = None
        self.cut_in_states: set[str] = set(cut_in_states or ())   # cut the power once in each of these states
        self.cut_states: list[str] = []
        for spec in faults:
            if spec.kind == "power-cut":
                if spec.at_s is not None:
                    self.loop.call_at(spec.at_s, self.power_cut, spec.duration_s or 2.0)
                elif spec.event is not None:
                    # (the event is announced from inside the controller: the power goes right after that step)
                    self.world.on_event(spec.event[0], spec.event[1],
                                        lambda s=spec: self.loop.call_later(0.0, self.power_cut, s.duration_s or 2.0))
        if service:
            # a technician holds both lift keys while the table is switched on: service mode
            for key in ("key_lift0", "key_lift1"):
                self.world.keys[key].set(True)
                self.loop.call_later(1.0, self.world.keys[key].set, False)
        self.faults_before = 0
        self.observers = list(observers or ())
        self._boot()
        # A run on an existing database goes on from where that table is: ``hands`` more hands, and a
        # hand that was in play when the last run stopped is ended by the players (its tiles are gone).
        self.start_hand = self.controller.book.hand
        self.players.hands_wanted = (10**12 if await_assignments else max(hands, self.start_hand) if hands_in_all
                                     else self.start_hand + hands)
        book = self.controller.book
        if hands_in_all and not await_assignments and self.start_hand >= hands and not (
                book.hand_open and not ScoreRows(self.store).has_result(book.hand)):
            self.players.finished = True        # (every hand played, the last one's result recorded)
        elif book.hand_open:
            self.players.stale_hand = self.start_hand
            self.players.look_again()

    # -- the firmware side ------------------------------------------------------
    def _boot(self) -> None:
        self.boots += 1
        self.fw_loop = ScopedLoop(self.loop)
        plug, self._cut_link = self.fleet() if self.fleet is not None else (None, None)
        wired = build_table(self.cfg, self.rules, Profile.SIM, self.fw_loop, self.state_path, world=self.world,
                            table_rng=random.Random(self.seed * 7 + self.boots),
                            controller_rng=random.Random(self.seed * 13 + self.boots),
                            listen=self._listen, on_store=self._opened, fleet=plug, wall_clock_s=self.wall_clock_s)
        self.wired = wired
        self.bus, self.table, self.store, self.session = wired.bus, wired.table, wired.store, wired.session
        self.backend, self.controller, self.link = wired.backend, wired.controller, wired.link
        self.safety = self.table.safety
        self.players.enter_dice = self.tell_controller(Controller.enter_dice)
        if self.session.rules.name != self.rules.name:      # (the table plays the rule set it switched to)
            self.rules = self.session.rules
            if self.game is not None:
                self.game.use_rules(self.rules)
        if self.link is not None:
            self.links.append(self.link)
        wired.start()

    def _listen(self, bus: EventBus) -> None:
        bus.subscribe("", self.record)
        for observer in self.observers:
            bus.subscribe("", observer)
        bus.subscribe("", self.players.on_event)
        bus.subscribe("controller.stacking", lambda e: self.world.event("stacking"))
        bus.subscribe("deal", lambda e: self.world.event("hand"))
        bus.subscribe("staff.rules", self._rules_switched)
        if self.game is not None:
            bus.subscribe("deal", self.game.on_deal)
            bus.subscribe("hand.settled", self.game.on_settled)
        bus.subscribe("controller.state", self._maybe_cut)

    def _rules_switched(self, event: Event) -> None:
        """The table switched its rule set between games: the simulated players play it too."""
        self.rules = load_ruleset(event.data["rules"])
        if self.game is not None:
            self.game.use_rules(self.rules)

    def _opened(self, store) -> None:
        if self.keep_world:
            store.before_commit.append(self.world_rows.write)
        if self.boots == 1:
            self.faults_before = store.last_fault_id()     # (a resumed table's earlier faults are not this run's)
            if self._imported is not None:
                with store.batch("the simulated table, from its older world file"):
                    pass
                if not store.failing:
                    self._imported.unlink()
                    self._imported = None

    def tell_controller(self, method):
        """A call from the people at the table into the controller, as the real table gets it: an input
        handled on the controller's loop (under its exception policy), dropped while the power is off."""
        def call(*args) -> None:
            if self.controller is not None:
                self.fw_loop.post(method, self.controller, *args)
        return call

    def _maybe_cut(self, event: Event) -> None:
        state = event.data["state"]
        if state in self.cut_in_states and state not in self.cut_states:
            self.cut_states.append(state)
            self.loop.call_later(0.1, self.power_cut, 2.0)

    def power_cut(self, off_s: float = 2.0) -> None:
        """The controller dies now (relays drop, every firmware timer is gone) and restarts after ``off_s``."""
        if self.controller is None:
            return                      # the power is already off
        self.record(Event("power.cut", self.loop.now(), {"off_s": off_s}))
        self.fw_loop.kill()
        self.wired.power_off()
        self.link = None
        if self._cut_link is not None:
            self._cut_link()            # (the connection drops without a word: the broker publishes the Will)
        self.controller = self.session = None
        self.players.enter_dice = None
        self.loop.call_later(off_s, self._boot)

    def wall_clock_s(self) -> float:
        """The simulated table's wall clock (Unix seconds)."""
        return self.wall_offset_s + self.loop.now()

    def wants_round(self) -> bool:
        """A tournament round is in play here or one waits (the people press the key at ready)."""
        rounds = self.session.rounds if self.session is not None else None
        return rounds is not None and rounds.wants_play()

    # -- running ------------------------------------------------------------------
    @property
    def table_id(self) -> str:
        """The table's fleet id (its ``[fleet]`` section), else its model's name."""
        return self.cfg.fleet.table_id if self.cfg.fleet is not None else self.cfg.table.name

    @property
    def state(self) -> TableState | None:
        return self.controller.table_state if self.controller else None

    def run(self, timeout_s: float = 7200.0) -> bool:
        """Run until the people have had their hands; False on timeout."""
        try:
            self.loop.run_until(lambda: self.players.finished, timeout_s)
        except SimTimeout:
            return False
        return True

    def run_until(self, done, timeout_s: float) -> None:
        self.loop.run_until(done, timeout_s)

    def settle(self, timeout_s: float = 60.0) -> None:
        """If the run ended with the power off (a cut near its end), let the controller come back."""
        if self.controller is None:
            try:
                self.loop.run_until(lambda: self.controller is not None, timeout_s)
            except SimTimeout:
                pass

    def serve_diag(self, path, group: str | None = None):
        """Open the technician's socket for this simulated table (``mjtable diag --socket PATH``):
        requests are answered on the virtual loop by whichever controller is powered now."""
        from firmware.diagnostics import log_ring
        from firmware.diagnostics.commands import DiagCommands
        from firmware.diagnostics.socket.server import DiagSocketServer
        from hal.runtime import HOST_CLOCK

        log_ring.install()              # (the process's log, for diag log and the page)

        def handle(request: dict, reply) -> None:
            if self.controller is None:
                reply({"ok": False, "error": "the table is switched off (power cut)"})
            else:
                self.fw_loop.post(DiagCommands(self.session).handle, request, reply)

        server = DiagSocketServer(path, self.loop.post, handle, group=group, clock=HOST_CLOCK)
        server.start()
        return server

    def faults(self) -> list:
        return list(self.record.faults)

    def close(self) -> None:
        if self.controller is not None:
            self.wired.close()
        else:
            self.backend.close()        # (the power is off: only the table's pins are left)
        if self._tmp is not None:
            self._tmp.cleanup()
