"""The table controller: the state machine that runs a double-set table through its cycle.

One ``transitions.Machine`` (enum states, ``auto_transitions=False``,
``queued=True``; an exception in a callback latches the table) with the
transition table of :mod:`firmware.controller.states`.  Entering a state
starts an operation on the loop (:mod:`firmware.controller.jobs`); the
operation's outcome fires the next trigger.  Stacking the used set is a
background job that runs while a hand is played.  Keys come from the panel,
faults from the event bus; every change of state or bookkeeping is written
to the table database before anything else happens, so a power cut at any
instant restarts from the last committed step.
"""

from __future__ import annotations

import logging
import random

from transitions import Machine

from firmware.controller import jobs
from firmware.controller.bookkeeping import UNKNOWN_SET, Bookkeeping, StackingProgress
from firmware.controller.dice_roll import DiceRoll
from firmware.controller.lamps import DealerLamps
from firmware.controller.next_step import NextStep, next_step
from firmware.controller.states import TRANSITIONS, SetLocation, TableState
from firmware.controller.store import TableStore
from firmware.events import Event
from firmware.faults import Fault, FaultCode, FaultTier
from firmware.game.scoreboard import HandRecord, Scoreboard
from firmware.mechanisms.center_lift import LiftStop
from firmware.reader.registry import TileRegistry
from firmware.reader.verify import Verification
from firmware.reader.wall_map import WallRead
from firmware.reader.wall_session import WallSession
from firmware.rules.rotation import Dealership, next_dealer
from firmware.rules.ruleset import table_conflicts, RuleSetConfig
from firmware.safety import SafetySupervisor
from firmware.stacking import CycleResult, StackingCycle
from firmware.table import Table
from firmware.tiles.dealing import deal
from firmware.tiles.sets import tile_set
from firmware.tiles.tile import code

log = logging.getLogger(__name__)

S = TableState
LIFT_KEYS = ("key_lift0", "key_lift1")
# Recoverable faults that stop the table until the players (or a technician) act.
HOLDING = {FaultCode.E02, FaultCode.E04, FaultCode.E62, FaultCode.E63}


class Controller:
    def __init__(self, table: Table, store: TableStore, registry: TileRegistry, rules: RuleSetConfig,
                 safety: SafetySupervisor, dice_rng: random.Random) -> None:
        self.table = table
        self.loop = table.loop
        self.bus = table.bus
        self.store = store
        self.registry = registry
        self.rules = rules
        self.safety = safety
        self.cfg = table.cfg
        self.tile_set = tile_set(self.cfg.table.tile_set)
        self.next_tile_set = self.tile_set
        self.book = Bookkeeping.from_dict(store.get("book"), store.get("walls"))
        self.scoreboard = Scoreboard.load(store, rules.rules.name, rules.scoreboard.chips)
        self.state: str = S.BOOT.value
        self.machine = Machine(model=self, states=[s.value for s in S], transitions=TRANSITIONS,
                               initial=S.BOOT.value, auto_transitions=False, queued=True,
                               after_state_change="_state_changed", on_exception="_exception")
        self.fault: Fault | None = None
        self.stacking: StackingCycle | None = None
        self.session: WallSession | None = None
        self._job: jobs.Job | None = None
        self.lamps = DealerLamps(table.panel, self.loop)
        self.missing_tiles: list[str] = []     # what E62 asked the players to look for
        self.check_hint = ""                    # what to check when E62 keeps coming back
        self._e62_repeats, self._last_short = 0, None
        self._wait_started_s: float | None = None
        self._after_close = False
        self._open_when_stacked = False
        self.dice = DiceRoll(table.dice, dice_rng, self.bus, self.cfg.dice.electronic, rules.deal.throws, self._deal)
        self.verifications: list[Verification] = []
        self._restore_nominal()
        table.panel.on_key(self._key)
        self.bus.subscribe("fault", self._fault_event)
        self.bus.subscribe("stacking.tile", self._stacking_progress)
        self.bus.subscribe("stacking.stack", self._stacking_progress)

    # -- life cycle -----------------------------------------------------------
    def start(self, service: bool = False) -> None:
        """Power on: service mode when both lift keys are held (or ``service``: the technician's
        own process, ``mjtable diag --direct``), else home and carry on."""
        self.table.reader.start()
        self.bus.publish("controller.boot", book=self.book.to_dict())
        open_latched = [f for f in self.store.faults() if f["tier"] == "latched" and f["acknowledged_at_s"] is None]
        if open_latched:
            # A power cycle is not an acknowledge: the table stays latched until a technician says so.
            last = open_latched[-1]
            self.fault = Fault(FaultCode(last["code"]), self.loop.now(), last["source"], last["detail"])
            self.latch()
        elif service or all(self.table.panel.keys[k].active for k in LIFT_KEYS):
            self.service()
        else:
            self.power_on()

    @property
    def table_state(self) -> TableState:
        return TableState(self.state)

    def set_tile_count(self, tiles: int) -> None:
        """A change of tile set applies from the next stacking cycle."""
        self.next_tile_set = tile_set(tiles)

    # -- state entry ------------------------------------------------------------
    def _state_changed(self) -> None:
        self._persist()
        self.bus.publish("controller.state", state=self.state)

    def on_enter_homing(self) -> None:
        self._stop_blink()
        problems = table_conflicts(self.rules, self.next_tile_set.size, str(self.cfg.source or "the table model"))
        if problems:
            # each file is valid on its own, but together they cannot run a game: nothing moves
            self.bus.publish("fault", fault=Fault(FaultCode.E03, self.loop.now(), "config", {"problems": problems}))
            return
        self._job = jobs.home_all(self.table, self._homed)

    def _homed(self, fault: Fault | None) -> None:
        if fault is None and self.state == S.HOMING.value:
            self.homed()

    def on_enter_idle(self) -> None:
        """Decide the next step from the bookkeeping alone (this is also the restart path)."""
        step = next_step(self.book, self._after_close)
        self._after_close = False
        if step is NextStep.WAIT:
            self.table.panel.lamp("led_status", False)
        else:
            getattr(self, step.value)()

    def on_enter_stacking(self) -> None:
        if self.book.hand > 0 and self._wait_started_s is None:
            self._wait_started_s = self.loop.now()
        if self.stacking is None:
            self._start_stacking()

    def on_enter_ready(self) -> None:
        self.table.panel.lamp("led_ready", True)

    def on_enter_paused(self) -> None:
        if self.stacking is not None:
            self.stacking.pause()
        self._job = jobs.move_center(self.table, LiftStop.UP, lambda fault: None)

    def on_exit_paused(self) -> None:
        self._job = jobs.move_center(self.table, LiftStop.DOWN, self._resumed)

    def _resumed(self, fault: Fault | None) -> None:
        if fault is None and self.stacking is not None:
            self.stacking.resume()

    def on_enter_raising(self) -> None:
        waited_s = 0.0
        if self._wait_started_s is not None:
            waited_s = self.loop.now() - self._wait_started_s
            self.book.players_waited_s += waited_s
            self._wait_started_s = None
        if self.book.hand > 0:
            # zero when the double-set pipeline kept up: the next set was ready when the hand ended
            self.bus.publish("players.waited", waited_s=waited_s)
        self.table.panel.lamp("led_ready", False)
        self.book.raising = True
        self._persist()
        self._job = jobs.raise_walls(self.table, self._raised)

    def _raised(self, fault: Fault | None) -> None:
        if fault is not None:
            return
        for set_id in self.book.sets_at(SetLocation.STACKED):
            self.book.put(set_id, SetLocation.TABLE)
        self.book.raising = False
        self._persist()
        if self.book.rejected_on_table():
            self.reject()               # never dealt: the players take the named tiles out first
        else:
            self.raised()
        if self.stacking is None and (self.book.sets_at(SetLocation.DISK) or self.book.unknown_on_disk
                                      or self.book.stacking):
            self._start_stacking()      # the used set, under the table, while the hand is played

    def on_enter_dice(self) -> None:
        self.dice.reset()
        self._dealer_lamps()
        self._continue_below()

    def on_enter_in_play(self) -> None:
        self.book.hand_open = True
        self._persist()
        self._continue_below()

    def on_enter_rejected(self) -> None:
        """Walls are up that must not be played: say why, blink E82, keep stacking the set below."""
        for set_id in self.book.rejected_on_table():
            problems = self.book.rejected[set_id]
            log.warning("%s set %s walls rejected, not dealt: %s; take those tiles out, then a lift key opens "
                        "the centre to restack the set", FaultCode.E82.value, set_id, "; ".join(problems))
            self.bus.publish("walls.rejected", set_id=set_id, problems=problems)
        self.fault = Fault(FaultCode.E82, self.loop.now(), "controller", {"rejected": self.book.rejected_on_table()})
        self._start_blink()
        self._continue_below()

    def on_exit_rejected(self) -> None:
        self._open_when_stacked = False
        if self.fault is not None and self.fault.code is FaultCode.E82 and self.fault.source == "controller":
            self.fault = None           # (a fault that ends this state keeps its own code)
            self._stop_blink()
            self._dealer_lamps()

    def _continue_below(self) -> None:
        """After a restart with walls up: the set on the disk goes on stacking underneath."""
        b = self.book
        if self.stacking is None and not b.sets_at(SetLocation.STACKED) and (
                b.stacking or b.sets_at(SetLocation.DISK) or b.unknown_on_disk):
            self._start_stacking()

    def on_exit_in_play(self) -> None:
        self._open_when_stacked = False

    def on_enter_center_up(self) -> None:
        if self.book.hand_open:
            self.book.hand_open = False
            self.book.hand_over = True
            self.store.end_hand(self.book.hand, self.loop.now(), {"result": "ended"})
            self._persist()
            self.bus.publish("hand.over", hand=self.book.hand)
        self._job = jobs.move_center(self.table, LiftStop.UP, self._center_moved("opened"))

    def on_enter_center_down(self) -> None:
        self._job = jobs.move_center(self.table, LiftStop.DOWN, self._center_closed)

    def _center_closed(self, fault: Fault | None) -> None:
        if fault is not None:
            return
        b = self.book
        for set_id in b.sets_at(SetLocation.TABLE):
            b.put(set_id, SetLocation.DISK)   # the used set went in through the centre
            b.rejected.pop(set_id, None)      # (rejected walls are reshuffled and read again)
        if b.hand_over:
            b.hand_over = False
            nxt = next_dealer(self.rules.rules.name, Dealership(b.dealer, b.dealer_streak, b.long_hair),
                              b.last_winner)
            b.dealer, b.dealer_streak, b.long_hair = nxt.dealer, nxt.streak, nxt.long_hair
            b.last_winner = None
        else:
            b.unknown_on_disk = True          # opened to load: maybe a set was poured in
        self._after_close = True
        self._persist()
        self.closed()

    def _center_moved(self, trigger: str):
        def done(fault: Fault | None) -> None:
            if fault is None:
                getattr(self, trigger)()
        return done

    def on_enter_hold(self) -> None:
        self._stop_motion()
        self._start_blink()

    def on_enter_latched(self) -> None:
        self._stop_motion()
        self.table.safe_stop_all()
        self._start_blink()

    def on_enter_service(self) -> None:
        self.table.panel.lamp("led_status", True)

    # -- stacking ---------------------------------------------------------------------
    def _start_stacking(self) -> None:
        b = self.book
        progress = b.stacking
        if progress is None:
            candidates = b.sets_at(SetLocation.DISK)
            set_id = candidates[0] if candidates else None
            if set_id == UNKNOWN_SET:
                b.sets.pop(UNKNOWN_SET)         # a set no tag named yet: this cycle's tags will name it
                set_id = None
            self.tile_set = self.next_tile_set
            progress = StackingProgress(set_id, [0] * 4, [0] * 4, [[] for _ in range(4)])
            b.stacking = progress
            b.unknown_on_disk = False
            if set_id is not None:
                b.put(set_id, SetLocation.STACKING)
        per_side = self.tile_set.size // 4
        read = WallRead(per_side, self.cfg.wall, self.cfg.reader.match_tolerance_s)
        read.restore([[bytes.fromhex(u) if u else None for u in side] for side in progress.uids])
        unplaced = [s for s in sorted(self.registry.sets) if b.where(s) is SetLocation.NONE]
        self.session = WallSession(self.loop, self.bus, self.table.reader, self.registry, progress.set_id,
                                   self.tile_set, read, self.cfg.reader.verification == "competition",
                                   only_candidate=unplaced[0] if len(unplaced) == 1 else None)
        self.session.start()
        self.stacking = StackingCycle(self.table, per_side, self._stacked,
                                      list(zip(progress.counted, progress.stacked)), probe=progress.set_id is None)
        self._persist()
        self.bus.publish("controller.stacking", set_id=progress.set_id, resumed=any(progress.counted))
        self.stacking.start()

    def _stacking_progress(self, event: Event) -> None:
        progress = self.book.stacking
        if progress is None or self.stacking is None:
            return
        side = event.data["side"]
        head = self.table.heads[side]
        progress.counted[side] = head.counted
        progress.stacked[side] = head.stacked_tiles
        if self.session is not None:
            # (the session hears of this tile after us: pad every side to its count)
            known = self.session.read.progress()
            progress.uids = [([u.hex() if u else None for u in side] + [None] * progress.counted[i])[
                :progress.counted[i]] for i, side in enumerate(known)]
        self._persist(nominal=False)

    def _stacked(self, result: CycleResult) -> None:
        self.stacking = None
        if result.empty:
            # The centre was opened but nothing was poured in: nothing to stack.
            if self.session is not None:
                self.session.abandon()
                self.session = None
            self.book.stacking = None
            self._persist()
            self.bus.publish("controller.disk_empty")
            if self.state == S.STACKING.value:
                self.stacking_over()
            return
        if not result.ok:
            return                              # the fault path decides (hold, latch)
        session, self.session = self.session, None
        if session is None:
            return
        session.finish(lambda verification: self._verified(session, verification))

    def _verified(self, session: WallSession, verification: Verification) -> None:
        b = self.book
        set_id = session.set_id or UNKNOWN_SET
        if b.stacking and b.stacking.set_id and b.stacking.set_id != set_id:
            b.sets.pop(b.stacking.set_id, None)
        b.stacking = None
        b.put(set_id, SetLocation.STACKED)
        b.store_wall(set_id, verification.wall)
        self.store.put(walls=b.walls)
        b.cycles += 1
        self.verifications.append(verification)
        self._persist()
        self.table.panel.lamp("led_ready", True)
        self.table.panel.beep()
        if verification.may_rise:
            b.rejected.pop(set_id, None)
        else:
            b.rejected[set_id] = [str(p) for p in verification.problems]
            self._persist()
        self.bus.publish("controller.set_ready", set_id=set_id, may_rise=verification.may_rise)
        if not verification.may_rise and self.cfg.reader.verification == "competition":
            return                              # E82/E83 latch in competition mode (fault path)
        if self._open_when_stacked and self.state in (S.IN_PLAY.value, S.REJECTED.value):
            self._open_when_stacked = False
            self.open_center()
            return
        if self.state == S.STACKING.value:
            self._after_close = b.hand > 0
            self.stacking_over()        # IDLE decides: open for the used set, raise, or wait ready

    # -- dice and the deal -----------------------------------------------------------
    def enter_dice(self, faces: tuple[int, int]) -> None:
        """What the physical dice show, as the players (or a dice camera) report it."""
        if self.state == S.DICE.value:
            self.dice.enter(faces)

    def _deal(self, dice: tuple[int, ...]) -> None:
        b = self.book
        on_table = b.sets_at(SetLocation.TABLE)
        set_id = on_table[0] if on_table else "?"
        wall = b.wall(set_id)
        b.hand += 1
        self.store.start_hand(b.hand, set_id, b.dealer, list(dice), self.loop.now())
        hands = {}
        if wall is not None:
            d = deal(wall, self.rules.deal_rules, dice, b.dealer)
            hands = {side: [code(k) if k is not None else "?" for k in d.hand_tiles(wall, side)] for side in d.hands}
            first = [str(p) for p in d.live[:4]]
        else:
            first = []
        self._persist()
        self.bus.publish("deal", hand=b.hand, set_id=set_id, dealer=b.dealer, dice=dice, hands=hands,
                         first_draws=first)
        self.dealt()

    # -- keys -----------------------------------------------------------------------------
    def _key(self, name: str, pressed: bool) -> None:
        if not pressed:
            return
        state = self.state
        both = all(self.table.panel.pressed[k] for k in LIFT_KEYS)
        if name == "key_reset":
            return                                   # the safety supervisor stops everything (E02)
        if name in LIFT_KEYS:
            if state == S.LATCHED.value:
                if both:
                    self.ack()
            elif state == S.STACKING.value and both:
                self.pause()
            elif state == S.PAUSED.value and not both:
                self.resume()
            elif state == S.HOLD.value:
                self.release()
            elif state in (S.IN_PLAY.value, S.REJECTED.value):
                if self.stacking is not None:
                    # The other set is still on the disk: the centre may not open before it is stacked.
                    self._open_when_stacked = True
                    self.table.panel.beep(0.1)
                else:
                    self.open_center()
            elif state == S.OPEN.value:
                self.close_center()
            elif state == S.READY.value:
                self.open_center()      # closing again raises the ready set (a second set may be poured in)
            elif state == S.IDLE.value:
                self.open_center()
            elif state == S.SERVICE.value:
                self.leave_service()
        elif name == f"key_dice{self.book.dealer}" and state == S.DICE.value:
            self.dice.start()

    def hand_result(self, winner: int | None, record: HandRecord | None = None) -> None:
        """The referee's verdict on the hand in play: the winning side (None for a drawn hand) and
        the hand's payments, written to the scoreboard in the same breath as the bookkeeping."""
        self.book.last_winner = winner
        if record is not None and all(h.hand != record.hand for h in self.scoreboard.history):
            self.scoreboard.record(record)
            self.scoreboard.save(self.store)
            self.bus.publish("scoreboard", chips=list(self.scoreboard.chips), hand=record.hand)
        self._persist()

    def ack(self) -> None:
        """A technician acknowledges a latched fault (both lift keys, or ``mjtable diag ack``)."""
        if self.state != S.LATCHED.value:
            return
        self.store.acknowledge_faults(self.loop.now())
        self.bus.publish("controller.acknowledged", at_s=self.loop.now())
        self.fault = None
        self.acknowledge()

    # -- faults ------------------------------------------------------------------------------
    def _fault_event(self, event: Event) -> None:
        fault: Fault = event.data["fault"]
        self.store.add_fault(fault.code.value, fault.tier.value, fault.at_s, self.state, fault.source, fault.detail)
        latched = fault.tier is FaultTier.LATCHED or (
            fault.code is FaultCode.E82 and self.cfg.reader.verification == "competition")
        if latched:
            if self.state != S.LATCHED.value:
                self.fault = fault
                self.latch()
        elif fault.code in HOLDING and self.state not in (S.HOLD.value, S.LATCHED.value):
            self.fault = fault
            if fault.code is FaultCode.E62:
                self._short_again(fault)
                if self.session is not None:
                    self._say_what_is_missing()
            self.hold()

    def _short_again(self, fault: Fault) -> None:
        """The same sides short by the same count after the players resumed: not a lost tile but,
        most likely, a side that does not count what it gets."""
        short = fault.detail.get("missing_per_side")
        self._e62_repeats = self._e62_repeats + 1 if short is not None and short == self._last_short else 0
        self._last_short = short
        if self._e62_repeats >= 2 and short:
            sides = ", ".join(str(s) for s in sorted(short))
            self.check_hint = (f"side {sides} short by the same count again: check that side's tile counter "
                               f"(tile_in) and feed ramp")
            log.warning("%s %s", FaultCode.E62.value, self.check_hint)
            self.bus.publish("tiles.short_again", sides=sorted(short), times=self._e62_repeats + 1)

    def _say_what_is_missing(self) -> None:
        """E62: name the tiles to look for, from the tags read so far."""
        assert self.session is not None
        missing, unread = self.session.missing_faces()
        faces = [code(k) for k in missing]
        if len(faces) > 8:
            return                          # not a few lost tiles: the set itself is short or elsewhere
        self.missing_tiles = faces
        log.warning("%s look for: %s%s", FaultCode.E62.value, " ".join(faces) or "(unknown)",
                    f" ({unread} tiles counted but not read: it may be one of those)" if unread else "")
        self.bus.publish("tiles.missing", faces=faces, unread=unread)

    def _exception(self, event_data) -> None:
        error = event_data.error
        log.exception("controller error in %s: %s", self.state, error)
        fault = Fault(FaultCode.E03 if isinstance(error, ValueError) else FaultCode.E90, self.loop.now(),
                      "controller", {"error": repr(error)})
        self.table.safe_stop_all()
        self.bus.publish("fault", fault=fault)

    def _stop_motion(self) -> None:
        if self._job is not None:
            self._job.cancel()
            self._job = None
        if self.stacking is not None:
            self.stacking.abort()
            self.stacking = None
        if self.session is not None:
            self.session.abandon()
            self.session = None
        self.table.safe_stop_all()

    # -- lamps -----------------------------------------------------------------------------------
    def _dealer_lamps(self) -> None:
        self.lamps.show_dealer(self.book.dealer, self.book.dealer_streak)

    def _start_blink(self) -> None:
        self.lamps.blink(self.fault.code.number if self.fault else 0)

    def _stop_blink(self) -> None:
        self.lamps.stop()

    # -- persistence -----------------------------------------------------------------------------
    def _persist(self, nominal: bool = True) -> None:
        if nominal:
            self.store.put(book=self.book.to_dict(), state=self.state, nominal=self._nominal_samples())
        else:
            self.store.put(book=self.book.to_dict())

    def save_nominal(self) -> None:
        """Write the learned nominal times to the table database now (after ``mjtable diag learn``)."""
        self.store.put(nominal=self._nominal_samples())

    def _nominal_samples(self) -> dict[str, list[float]]:
        return {m.name: list(m.nominal.samples) for m in self.table.mechanisms()}

    def _restore_nominal(self) -> None:
        saved = self.store.get("nominal", {}) or {}
        for mechanism in self.table.mechanisms():
            if saved.get(mechanism.name):
                mechanism.nominal.restore(saved[mechanism.name])
