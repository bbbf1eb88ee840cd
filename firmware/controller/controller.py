"""The table controller: the state machine that runs a double-set table through its cycle.

One ``transitions.Machine`` (enum states, ``auto_transitions=False``,
``queued=True``, ``send_event=True``) with the transition table of
:mod:`firmware.controller.states`.  Entering a state starts an operation on
the loop (:mod:`firmware.controller.jobs`); the operation's outcome fires the
next trigger.  Stacking the used set is a background job
(:mod:`firmware.controller.background_stacking`); keys mean what
:mod:`firmware.controller.keys` says; faults are decided by
:mod:`firmware.controller.fault_policy`, which every part calls directly, and
an exception anywhere in the controller's code latches E99 with every output
safe (the loop's and the machine's exception policy).  Every change of
state or bookkeeping is written to the table database before anything else
happens, related writes in one transaction, so a power cut at any instant
restarts from the last committed step.
"""

from __future__ import annotations

import json
import logging
import random
from typing import Any, Callable

from transitions import EventData, Machine, MachineError

from firmware.controller import jobs
from firmware.controller.background_stacking import BackgroundStacking
from firmware.controller.bookkeeping import Bookkeeping
from firmware.controller.dice_roll import DiceRoll
from firmware.controller.fault_policy import FaultPolicy
from firmware.controller.keys import LIFT_KEYS, action_for, press_of
from firmware.controller.lamps import DealerLamps
from firmware.controller.next_step import NextStep, next_step
from firmware.controller.service_test import ServiceTest
from firmware.controller.states import TRANSITIONS, SetLocation, TableState
from firmware.controller.store import TableStore
from firmware.faults import Fault, FaultCode
from firmware.controller.hand_in_play import HandInPlay
from firmware.game.scoreboard import Scoreboard
from firmware.mechanisms.center_lift import LiftStop
from firmware.reader.registry import TileRegistry
from firmware.rules.config import table_conflicts
from firmware.rules.ruleset import Dealership, RuleSet
from firmware.stacking import StackingCycle
from firmware.table import Table
from firmware.tiles.dealing import deal
from firmware.tiles.sets import tile_set
from firmware.tiles.tile import code

log = logging.getLogger(__name__)

S = TableState
Reply = Callable[[dict[str, Any]], None]
NOMINAL_EVERY_HANDS = 10      # learned movement times are written this often (and after 'diag learn')


class Controller:
    def __init__(self, table: Table, store: TableStore, registry: TileRegistry, rules: RuleSet,
                 dice_rng: random.Random, store_problem: dict[str, str] | None = None) -> None:
        self.table = table
        self.loop = table.loop
        self.bus = table.bus
        self.faults = table.faults
        self.safety = table.safety
        self.store = store
        self.registry = registry
        self.enrol_hint = registry.enrol_hint()       # "" when every declared set is enrolled
        self.rules = rules
        self.cfg = table.cfg
        self.store_problem = store_problem            # the database was moved aside at power-on (E98)
        self.policy = FaultPolicy(self)
        store.on_failure = self.policy.storage_failed
        store.on_recovered = self.policy.storage_ok
        self.tile_set = tile_set(self.cfg.table.tile_set)
        self.next_tile_set = self.tile_set
        record = store.book()
        self.book = Bookkeeping.from_record(record, store.walls(),
                                            store.sides(record.stacking.cycle) if record and record.stacking else None)
        self._book_written = json.dumps(self.book.to_dict(), sort_keys=True) if record is not None else ""
        self.scoreboard = Scoreboard(store, rules, first_hand=self.book.hand + 1)
        self.hand = HandInPlay(self)
        self.state: str = S.BOOT.value
        self.machine = Machine(model=self, states=[s.value for s in S], transitions=TRANSITIONS,
                               initial=S.BOOT.value, auto_transitions=False, queued=True, send_event=True,
                               after_state_change="_state_changed", on_exception="_machine_exception")
        self.fault: Fault | None = None
        self.latched_from: str | None = None          # the state a latched fault stopped (service returns there)
        self.pending_stop: str | None = None          # "hold" / "latch" queued, not yet entered
        self.stacker = BackgroundStacking(self)
        self.service_test: ServiceTest | None = None
        self._job: jobs.Job | None = None
        self.lamps = DealerLamps(table.panel, self.loop)
        self.missing_tiles: list[str] = []     # what E62 asked the players to look for
        self.check_hint = ""                    # what to check when E62 keeps coming back
        self._wait_started_s: float | None = None
        self._after_close = False
        self._open_when_stacked = False
        self.dice = DiceRoll(table.dice, dice_rng, self.bus, self.cfg.dice.electronic, rules.throws, self._deal)
        self._restore_nominal()
        table.panel.on_key(self._key)
        table.faults.attach(self.policy.handle)
        self.loop.on_error = self.policy.software_error

    # -- life cycle -----------------------------------------------------------
    def start(self, service: bool = False) -> None:
        """Power on: service mode when both lift keys are held (or ``service``: the technician's own
        process, ``mjtable diag --direct``); else check the interlocks, home and carry on."""
        self.table.reader.start()
        self.hand.restore()
        if self.enrol_hint:
            log.warning("%s", self.enrol_hint)          # once per start: the technician's next job
        self.bus.publish("controller.boot", book=self.book.to_dict())
        if self.store_problem is not None:
            self.faults.report(Fault(FaultCode.E98, self.loop.now(), "store", dict(self.store_problem)))
            return
        open_latched = self.store.open_latched()
        if open_latched:
            # A power cycle is not an acknowledge: the table stays latched until a technician says so.
            last = open_latched[-1]
            self.fault = Fault(FaultCode(last["code"]), self.loop.now(), last["source"], last["detail"])
            self.latched_from = last["state"]
            self.safety.shut_down(self.fault)
            self.lamps.blink(self.fault.code.number)
            self.pending_stop = "latch"
            self.latch()
        elif service or self.table.panel.held(*LIFT_KEYS):
            self.service()
        elif self.safety.check("power-on") is None:
            self.power_on()

    @property
    def table_state(self) -> TableState:
        return TableState(self.state)

    @property
    def stacking(self) -> StackingCycle | None:
        """The stacking cycle under way, if any."""
        return self.stacker.cycle

    def set_tile_count(self, tiles: int) -> None:
        """A change of tile set applies from the next stacking cycle."""
        self.next_tile_set = tile_set(tiles)

    # -- state entry ------------------------------------------------------------
    def _state_changed(self, _event: EventData) -> None:
        self.persist()
        self.bus.publish("controller.state", state=self.state)

    def _machine_exception(self, event: EventData) -> None:
        trigger = event.event.name if event.event else "?"
        if isinstance(event.error, MachineError) and self.state in (S.HOLD.value, S.LATCHED.value):
            # a step queued during a transition was overtaken by a stop queued in the same breath: the stop wins
            log.info("step %r dropped: the table stopped first (%s)", trigger, self.state)
            return
        self.policy.software_error(event.error, f"state {event.state.name if event.state else '?'}, "
                                                f"trigger {trigger}")

    def on_enter_homing(self, _event: EventData) -> None:
        self.lamps.stop()
        problems = table_conflicts(self.rules, self.next_tile_set.size, str(self.cfg.source or "the table model"))
        if problems:
            # each file is valid on its own, but together they cannot run a game: nothing moves
            self.faults.report(Fault(FaultCode.E03, self.loop.now(), "config", {"problems": problems}))
            return
        if self.safety.check("homing") is not None:
            return
        self._job = jobs.home_all(self.table, self._homed)

    def _homed(self, fault: Fault | None) -> None:
        if fault is None and self.state == S.HOMING.value:
            self.homed()

    def on_enter_idle(self, _event: EventData) -> None:
        """Decide the next step from the bookkeeping alone (this is also the restart path)."""
        step = next_step(self.book, self._after_close)
        self._after_close = False
        if step is NextStep.WAIT:
            self.table.panel.lamp("led_status", False)
        else:
            getattr(self, step.value)()

    def on_enter_stacking(self, _event: EventData) -> None:
        if self.book.hand > 0 and self._wait_started_s is None:
            self._wait_started_s = self.loop.now()
        if not self.stacker.running:
            self.stacker.start()

    def on_enter_ready(self, _event: EventData) -> None:
        self.table.panel.lamp("led_ready", True)

    def on_enter_paused(self, _event: EventData) -> None:
        self.stacker.pause()
        self._job = jobs.move_center(self.table, LiftStop.UP, lambda fault: None)

    def on_exit_paused(self, event: EventData) -> None:
        if event.transition is not None and event.transition.dest == S.STACKING.value:
            self._job = jobs.move_center(self.table, LiftStop.DOWN, self._resumed)

    def _resumed(self, fault: Fault | None) -> None:
        if fault is None:
            self.stacker.resume()

    def on_enter_raising(self, _event: EventData) -> None:
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
        self.persist()
        self._job = jobs.raise_walls(self.table, self._raised)

    def _raised(self, fault: Fault | None) -> None:
        if fault is not None:
            return
        for set_id in self.book.sets_at(SetLocation.STACKED):
            self.book.put(set_id, SetLocation.TABLE)
        self.book.raising = False
        self.persist()
        if self.book.rejected_on_table():
            self.reject()               # never dealt: the players take the named tiles out first
        else:
            self.raised()
        b = self.book
        if not self.stacker.running and (b.sets_at(SetLocation.DISK) or b.unknown_on_disk or b.stacking):
            self.stacker.start()        # the used set, under the table, while the hand is played

    def on_enter_dice(self, _event: EventData) -> None:
        self.dice.reset()
        self._dealer_lamps()
        self._continue_below()

    def on_enter_in_play(self, _event: EventData) -> None:
        self._continue_below()

    def on_enter_rejected(self, _event: EventData) -> None:
        """Walls are up that must not be played: say why, blink E82, keep stacking the set below."""
        for set_id in self.book.rejected_on_table():
            problems = self.book.rejected[set_id]
            log.warning("%s set %s walls rejected, not dealt: %s; take those tiles out, then a lift key opens "
                        "the centre to restack the set", FaultCode.E82.value, set_id, "; ".join(problems))
            self.bus.publish("walls.rejected", set_id=set_id, problems=problems)
        self.fault = Fault(FaultCode.E82, self.loop.now(), "controller", {"rejected": self.book.rejected_on_table()})
        self.lamps.blink(FaultCode.E82.number)
        self._continue_below()

    def on_exit_rejected(self, _event: EventData) -> None:
        self._open_when_stacked = False
        if self.fault is not None and self.fault.code is FaultCode.E82 and self.fault.source == "controller":
            self.fault = None           # (a fault that ends this state keeps its own code)
            self._dealer_lamps()

    def _continue_below(self) -> None:
        """After a restart with walls up: the set on the disk goes on stacking underneath."""
        b = self.book
        if not self.stacker.running and not b.sets_at(SetLocation.STACKED) and (
                b.stacking or b.sets_at(SetLocation.DISK) or b.unknown_on_disk):
            self.stacker.start()

    def on_exit_in_play(self, _event: EventData) -> None:
        self._open_when_stacked = False

    def on_enter_center_up(self, _event: EventData) -> None:
        if self.book.hand_open:
            self.book.hand_open = False
            self.book.hand_over = True
            on_table = self.book.sets_at(SetLocation.TABLE)
            counted = bool(on_table) and self.book.wall_mode(on_table[0]) == "counted"
            with self.store.batch("end of hand"):
                self.store.end_hand(self.book.hand, self.loop.now(),
                                    {"result": "ended", **({"wall": "counted"} if counted else {})})
                self.persist()
            self.bus.publish("hand.over", hand=self.book.hand)
        self._job = jobs.move_center(self.table, LiftStop.UP, self._center_moved("opened"))

    def on_enter_center_down(self, _event: EventData) -> None:
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
            nxt = self.rules.next_dealer(Dealership(b.dealer, b.dealer_streak, b.long_hair), self.hand.outcome())
            b.dealer, b.dealer_streak, b.long_hair = nxt.dealer, nxt.streak, nxt.long_hair
            b.last_winner, b.last_followed = None, False
        else:
            b.unknown_on_disk = True          # opened to load: maybe a set was poured in
        self._after_close = True
        self.persist()
        self.closed()

    def _center_moved(self, trigger: str) -> Callable[[Fault | None], None]:
        def done(fault: Fault | None) -> None:
            if fault is None:
                getattr(self, trigger)()
        return done

    def on_enter_hold(self, _event: EventData) -> None:
        self.pending_stop = None
        self.stop_motion()
        self.lamps.blink(self.fault.code.number if self.fault else 0)

    def on_enter_latched(self, _event: EventData) -> None:
        self.pending_stop = None
        self.stop_motion()
        self.lamps.blink(self.fault.code.number if self.fault else 0)

    def on_enter_service(self, _event: EventData) -> None:
        self.lamps.stop()
        self.table.panel.lamp("led_status", True)

    # -- stacking outcomes (from the background stacking) --------------------------------
    def set_stacked(self, set_id: str, may_rise: bool) -> None:
        """A set's walls are complete and verified (``may_rise``: they may be dealt)."""
        self.table.panel.lamp("led_ready", True)
        self.table.panel.beep()
        self.bus.publish("controller.set_ready", set_id=set_id, may_rise=may_rise)
        if self.state in (S.LATCHED.value, S.HOLD.value) or self.pending_stop is not None:
            return                              # (E82/E83 latch in competition mode: the fault policy)
        if self._open_when_stacked and self.state in (S.IN_PLAY.value, S.REJECTED.value):
            self._open_when_stacked = False
            self.open_center()
            return
        if self.state == S.STACKING.value:
            self._after_close = self.book.hand > 0
            self.stacking_over()        # IDLE decides: open for the used set, raise, or wait ready

    # -- dice and the deal -----------------------------------------------------------
    def enter_dice(self, faces: tuple[int, int]) -> None:
        """What the physical dice show, as the players (or a dice camera) report it."""
        if self.state == S.DICE.value:
            self.dice.enter(faces)

    def roll_dice(self) -> None:
        self.dice.start()

    def _deal(self, dice: tuple[int, ...]) -> None:
        b = self.book
        on_table = b.sets_at(SetLocation.TABLE)
        set_id = on_table[0] if on_table else "?"
        wall = b.wall(set_id)
        b.hand += 1
        b.hand_open = True              # (kept with the hand's row: a restart goes on playing this hand)
        hands: dict[int, list[str]] = {}
        first: list[str] = []
        if wall is not None:
            d = deal(wall, self.rules.deal_rules, dice, b.dealer)
            hands = {side: [code(k) if k is not None else "?" for k in d.hand_tiles(wall, side)] for side in d.hands}
            first = [str(p) for p in d.live[:4]]
        with self.store.batch(f"deal of hand {b.hand}"):
            self.store.start_hand(b.hand, set_id, b.dealer, list(dice), self.loop.now())
            self.hand.open(hands)
            self.persist()
            if b.hand % NOMINAL_EVERY_HANDS == 1:
                self.save_nominal()     # what the mechanisms learned (their medians move slowly)
        self.bus.publish("deal", hand=b.hand, set_id=set_id, dealer=b.dealer, dice=dice, hands=hands,
                         first_draws=first, wall=b.wall_mode(set_id))
        self.dealt()

    # -- keys -----------------------------------------------------------------------------
    def _key(self, name: str, pressed: bool) -> None:
        panel = self.table.panel
        if not pressed or name in panel.stuck:
            return
        both = all(panel.is_down(k) for k in LIFT_KEYS)
        action = action_for(self.table_state, press_of(name, self.book.dealer, both))
        if action is not None:
            getattr(self, action)()

    def end_hand(self) -> None:
        """A lift key in play: the hand is over; the centre opens (once the set below is stacked)."""
        if self.stacker.running:
            # The other set is still on the disk: the centre may not open before it is stacked.
            self._open_when_stacked = True
            self.table.panel.beep(0.1)
        else:
            self.open_center()

    def release_hold(self) -> None:
        """A lift key in a hold: resume, but only once the cause is gone (the lamps show what remains)."""
        if self.state != S.HOLD.value:
            return
        cause = self.safety.check("release")
        if cause is not None:
            self.fault = cause
            self.lamps.blink(cause.code.number)
            self.table.panel.beep(0.1)
            self.bus.publish("hold.kept", code=cause.code.value, reason=cause.detail.get("interlock"))
            return
        self.fault = None
        self.safety.resume()
        self.release()

    def ack(self) -> str | None:
        """A technician acknowledges a latched fault (both lift keys, or ``mjtable diag ack``).  Refused,
        with the reason returned, while an interlock is still there (the supply low, the lid open) or while
        the table runs without its database (it could not be opened at power-on)."""
        if self.state != S.LATCHED.value:
            return f"nothing to acknowledge (state {self.state})"
        if self.store.path == ":memory:" and self.store_problem is not None:
            # nothing would be kept: a table never plays on with scores that a power cut would lose
            return (f"refused: the table database could not be opened ({self.store_problem['reason']}); fix the "
                    f"card or the path, then restart the table")
        cause = self.safety.check("acknowledge")
        if cause is not None:
            self.lamps.blink(cause.code.number)
            why = f"{cause.detail.get('interlock', cause.code.text)} ({cause.code.value})"
            self.bus.publish("controller.ack_refused", code=cause.code.value, reason=why)
            return f"refused: {why}"
        self.policy.acknowledged()          # (the rows and the fleet's event)
        self.bus.publish("controller.acknowledged", at_s=self.loop.now())
        back_to_service = self.latched_from == S.SERVICE.value
        self.fault = None
        self.latched_from = None
        self.safety.resume()
        if back_to_service:
            self.acknowledge_service()
        else:
            self.acknowledge()
        return None

    # -- service tests --------------------------------------------------------------------
    def begin_service_test(self, reply: Reply) -> Reply:
        """A service test starts: its answer goes through here, so that a fault can stop it and answer."""
        test = ServiceTest(reply, self._service_test_done)
        self.service_test = test
        self.lamps.stop()               # (an interlock's code blinked until now: nothing is in the way any more)
        return test.answer

    def _service_test_done(self, test: ServiceTest) -> None:
        if self.service_test is test:
            self.service_test = None

    def service_test_stopped(self, fault: Fault) -> None:
        """A fault stopped the table during a service test: the test's own answer if it has one by the
        end of this tick (a jam in one of its mechanisms), else the fault and its reason."""
        if self.service_test is not None:
            self.loop.call_later(0.0, self.service_test.stop, fault)

    # -- stopping ------------------------------------------------------------------------------
    def stop_motion(self) -> None:
        """Every operation abandoned and every output safe (a fault stopped the table)."""
        if self._job is not None:
            self._job.cancel()
            self._job = None
        self.stacker.stop()
        self.dice.reset()
        self.table.safe_stop_all()

    # -- lamps -----------------------------------------------------------------------------------
    def _dealer_lamps(self) -> None:
        self.lamps.show_dealer(self.book.dealer, self.book.dealer_streak)

    # -- persistence -----------------------------------------------------------------------------
    def persist(self, wall_of: str | None = None) -> None:
        """Write the bookkeeping if it changed since it was last written (with the state it was written in),
        and the wall of a set just stacked (``wall_of``): an SD card is written only when there is news."""
        book = self.book.to_dict()
        text = json.dumps(book, sort_keys=True)
        with self.store.batch("bookkeeping"):
            if text != self._book_written:
                self.store.put_book(self.state, book)
            if wall_of is not None:
                self.store.put_wall(wall_of, self.book.walls[wall_of])
        if not self.store.failing:
            self._book_written = text

    def save_nominal(self) -> None:
        """Write the learned nominal times to the table database now (after ``mjtable diag learn``)."""
        self.store.put(nominal=self._nominal_samples())

    def _nominal_samples(self) -> dict[str, list[float]]:
        return {m.name: list(m.nominal.samples) for m in self.table.mechanisms()}

    def _restore_nominal(self) -> None:
        saved = self.store.nominal()
        for mechanism in self.table.mechanisms():
            if saved.get(mechanism.name):
                mechanism.nominal.restore(saved[mechanism.name])
