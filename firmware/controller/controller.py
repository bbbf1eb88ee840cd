"""The table controller: the state machine that runs a double-set table through its cycle.

One ``transitions.Machine`` (enum states, ``auto_transitions=False``,
``queued=True``) with the transition table of :mod:`.states`.  Entering a
state starts an operation on the loop (:mod:`.jobs`) whose outcome fires the
next trigger.  Its parts each get the few things they use: the bookkeeping
and its database (:mod:`.record`), the fault policy (:mod:`.fault_policy`),
the set stacked underneath (:mod:`.background_stacking`), the double-set
pipeline (:mod:`.pipeline`), the deal (:mod:`.deal`) and, through its
:class:`HandKeeper` port, the game's hand in play; keys mean what
:mod:`.keys` says.  Every change is written before anything else happens, so
a power cut at any instant restarts from the last committed step.
"""

from __future__ import annotations

import logging
import random
from typing import Any, Callable

from transitions import EventData, Machine, MachineError

from firmware.controller import jobs
from firmware.controller.background_stacking import BackgroundStacking
from firmware.controller.bookkeeping import Bookkeeping
from firmware.controller.deal import HandKeeper, deal_hand
from firmware.controller.dice_roll import DiceRoll
from firmware.controller.fault_policy import FaultPolicy
from firmware.controller.keys import LIFT_KEYS, action_for, press_of
from firmware.controller.lamps import DealerLamps
from firmware.controller.next_step import NextStep, next_step
from firmware.controller.pipeline import Pipeline
from firmware.controller.record import TableRecord
from firmware.controller.rejected_walls import rejected_fault
from firmware.controller.service_test import ServiceTestSlot
from firmware.controller.states import TRANSITIONS, SetLocation, TableState
from firmware.controller.table_top import TableTop
from firmware.controller.table_watch import TableWatch
from firmware.controller.wall_seal import WallSealer
from firmware.faults import Fault, FaultCode
from firmware.mechanisms.center_lift import LiftStop
from firmware.reader.registry import TileRegistry
from firmware.rules.config import table_conflicts
from firmware.rules.ruleset import RuleSet
from firmware.table import Table

log = logging.getLogger(__name__)

S = TableState
Reply = Callable[[dict[str, Any]], None]


class Controller:
    def __init__(self, table: Table, record: TableRecord, hand: HandKeeper, registry: TileRegistry, rules: RuleSet,
                 dice_rng: random.Random) -> None:
        self.table, self.record, self.hand, self.rules = table, record, hand, rules
        record.state_of = lambda: self.state
        self.lamps = DealerLamps(table.panel, table.loop)
        self.policy = FaultPolicy(self, record, table.safety, self.lamps, table.faults, table.loop,
                                  table.safe_stop_all, table.cfg.reader.rejects_any_defect)
        record.store.on_failure = self.policy.storage_failed
        record.store.on_recovered = self.policy.storage_ok
        self.stacker = BackgroundStacking(table, registry, record, self, self.policy.wall_verified,
                                          self.policy.tiles_uncounted)
        self.sealer = WallSealer(record.store, record.book, dice_rng, table.cfg.dice.electronic, table.bus)
        self.stacker.sealer = self.sealer
        self.dice = DiceRoll(table.dice, dice_rng, table.bus, table.cfg.dice.electronic, rules.throws, self._deal,
                             self.sealer.dice_seed)
        self.state: str = S.BOOT.value
        self.machine = Machine(model=self, states=[s.value for s in S], transitions=TRANSITIONS,
                               initial=S.BOOT.value, auto_transitions=False, queued=True, send_event=True,
                               after_state_change="_state_changed", on_exception="_machine_exception")
        self.service_test = ServiceTestSlot(table.loop)
        self.pipeline = Pipeline(table.loop, table.bus, record.book)
        self.watch = TableWatch(table.bus, lambda: record.book.hand, lambda: record.book.cycles)
        self.watch.restore(record.store.fairness())
        self.top = TableTop(table, record, rules, hand, self.pipeline, self._fire)
        self._job: jobs.Job | None = None
        self._from_ready = False        # the centre was opened by a key at ready (the walls rise when it closes)
        self._said_closed = False       # "walls not raised: closed" was logged as a warning (then info lines)
        record.restore_nominal(table.mechanisms())
        table.panel.on_click(self._click)
        table.faults.attach(self.policy.handle)
        table.loop.on_error = self.policy.software_error

    # -- what the parts keep ----------------------------------------------------------------
    @property
    def book(self) -> Bookkeeping:
        return self.record.book

    @property
    def fault(self) -> Fault | None:
        """What the table is stopped for (held or latched), or shows (rejected walls)."""
        return self.policy.fault

    @property
    def table_state(self) -> TableState:
        return TableState(self.state)

    # -- life cycle -----------------------------------------------------------
    def start(self, service: bool = False) -> None:
        """Power on: service mode when both lift keys are held (or ``service``: the technician's own
        process, ``mjtable diag --direct``); else check the interlocks, home and carry on."""
        t = self.table
        t.reader.start()
        self.hand.restore()
        enrol = self.stacker.registry.enrol_hint()
        if enrol:
            log.warning("%s", enrol)                    # once per start: the technician's next job
        t.bus.publish("controller.boot", book=self.book.to_dict())
        if self.record.problem is not None:
            t.faults.report(Fault(FaultCode.E98, t.loop.now(), "store", dict(self.record.problem)))
        elif self.policy.resume_latched():
            pass                                        # a power cycle is not an acknowledge
        elif service or t.panel.held(*LIFT_KEYS):
            self.service()
        elif t.safety.check("power-on") is None:
            self.power_on()

    def use_rules(self, rules: RuleSet) -> None:
        """The table switched its rule set between games (a rule set of the same tile set: the table's session)."""
        self.rules = self.top.rules = rules
        self.dice.throws = rules.throws

    # -- state entry ------------------------------------------------------------
    def _state_changed(self, _event: EventData) -> None:
        self.record.persist()
        self.table.bus.publish("controller.state", state=self.state)

    def _machine_exception(self, event: EventData) -> None:
        trigger = event.event.name if event.event else "?"
        if isinstance(event.error, MachineError) and self.state in (S.HOLD.value, S.LATCHED.value):
            # a step queued during a transition was overtaken by a stop queued in the same breath: the stop wins
            log.info("step %r dropped: the table stopped first (%s)", trigger, self.state)
            return
        self.policy.software_error(event.error, f"state {event.state.name if event.state else '?'}, "
                                                f"trigger {trigger}")

    def on_enter_homing(self, _event: EventData) -> None:
        t = self.table
        self.lamps.stop()
        problems = table_conflicts(self.rules, self.stacker.next_tile_set.size, str(t.cfg.source or "the table model"))
        if problems:
            # each file is valid on its own, but together they cannot run a game: nothing moves
            t.faults.report(Fault(FaultCode.E03, t.loop.now(), "config", {"problems": problems}))
        elif t.safety.check("homing") is None:
            self._job = jobs.home_all(t, lambda fault: self.homed() if fault is None and self.state == S.HOMING.value
                                      else None)

    def on_enter_idle(self, _event: EventData) -> None:
        """Decide the next step from the bookkeeping alone (this is also the restart path)."""
        step = next_step(self.book, self.pipeline.take_closed())
        from_ready, self._from_ready = self._from_ready, False
        if step is NextStep.RAISE and not self.book.raising and not from_ready and not self.hand.may_raise():
            step = NextStep.READY            # (a round's game is over, or its players sit down: a key raises)
        closed = self.hand.closed() if step is NextStep.RAISE and not self.book.raising else None
        if closed is not None:
            if from_ready:                   # (a key at ready: no wall rises while the table is closed)
                (log.info if self._said_closed else log.warning)("walls not raised: %s", closed)
                self._said_closed = True
                self.table.panel.beep(0.1)
            step = NextStep.READY
        elif step is NextStep.RAISE:
            self._said_closed = False
        if step is NextStep.WAIT:
            self.table.panel.lamp("led_status", False)
        else:
            getattr(self, step.value)()

    def on_enter_stacking(self, _event: EventData) -> None:
        self.pipeline.waiting()
        if not self.stacker.running:
            self.stacker.start()

    def on_enter_ready(self, _event: EventData) -> None:
        self.table.panel.lamp("led_ready", True)

    def on_exit_ready(self, event: EventData) -> None:
        # a key at ready: the centre opens, and when it closes the walls rise, whatever a round says
        self._from_ready = event.transition is not None and event.transition.dest == S.CENTER_UP.value

    def on_enter_paused(self, _event: EventData) -> None:
        self.stacker.pause()
        self._job = jobs.move_center(self.table, LiftStop.UP, lambda fault: None)

    def on_exit_paused(self, event: EventData) -> None:
        if event.transition is not None and event.transition.dest == S.STACKING.value:
            self._job = jobs.move_center(self.table, LiftStop.DOWN,
                                         lambda fault: self.stacker.resume() if fault is None else None)

    def on_enter_raising(self, _event: EventData) -> None:
        if not self.book.raising:
            self.hand.before_raise()         # (a round's assignment waiting is taken as its walls rise)
        self._job = self.top.raise_walls()

    def on_enter_dice(self, _event: EventData) -> None:
        self.dice.reset()
        self._dealer_lamps()
        self._continue_below()

    def on_enter_in_play(self, _event: EventData) -> None:
        self._continue_below()

    def on_enter_rejected(self, _event: EventData) -> None:
        """Walls are up that must not be played: say why, blink the code, keep stacking the set below."""
        self.policy.fault = rejected_fault(self.book, self.table.bus, self.table.loop.now())
        self.lamps.blink(self.policy.fault.code.number)
        self._continue_below()

    def on_exit_rejected(self, _event: EventData) -> None:
        self.pipeline.open_when_stacked = False
        fault = self.policy.fault
        if fault is not None and fault.code in (FaultCode.E82, FaultCode.E83) and fault.source == "controller":
            self.policy.fault = None    # (a fault that ends this state keeps its own code)
            self._dealer_lamps()

    def _continue_below(self) -> None:
        """After a restart with walls up: the set on the disk goes on stacking underneath."""
        if not self.stacker.running and not self.book.sets_at(SetLocation.STACKED) and self.book.below():
            self.stacker.start()

    def on_exit_in_play(self, _event: EventData) -> None:
        self.pipeline.open_when_stacked = False

    def on_enter_center_up(self, _event: EventData) -> None:
        self._job = self.top.open_centre()

    def on_enter_center_down(self, _event: EventData) -> None:
        self._job = self.top.close_centre()

    def _fire(self, trigger: str) -> None:
        """A move of the table top ended: its trigger (after the walls rose, the set below goes on stacking)."""
        getattr(self, trigger)()
        if trigger in ("raised", "reject") and not self.stacker.running and self.book.below():
            self.stacker.start()        # the used set, under the table, while the hand is played

    def on_enter_hold(self, _event: EventData) -> None:
        self._stopped()

    def on_enter_latched(self, _event: EventData) -> None:
        self._stopped()

    def on_exit_hold(self, _event: EventData) -> None:
        self.policy.hold_cleared()

    def _stopped(self) -> None:
        self.policy.stopped()
        self.stop_motion()
        self.lamps.blink(self.fault.code.number if self.fault else 0)

    def on_enter_service(self, _event: EventData) -> None:
        self.lamps.stop()
        self.table.panel.lamp("led_status", True)

    # -- stacking outcomes (from the background stacking) --------------------------------
    def set_stacked(self, set_id: str, may_rise: bool) -> None:
        """A set's walls are complete and verified (``may_rise``: they may be dealt)."""
        panel = self.table.panel
        panel.lamp("led_ready", True)
        panel.beep()
        self.table.bus.publish("controller.set_ready", set_id=set_id, may_rise=may_rise)
        if self.state in (S.LATCHED.value, S.HOLD.value) or self.policy.pending_stop is not None:
            return                              # (E82/E83 latch in competition mode: the fault policy)
        trigger = self.pipeline.stacked(self.state)
        if trigger is not None:
            getattr(self, trigger)()

    def disk_empty(self) -> None:
        if self.state == S.STACKING.value:
            self.stacking_over()

    def missing_faces(self) -> tuple[list[int], int] | None:
        return self.stacker.missing_faces()

    # -- dice and the deal -----------------------------------------------------------
    def enter_dice(self, faces: tuple[int, int]) -> None:
        """What the physical dice show, as the players (or a dice camera) report it."""
        if self.state == S.DICE.value:
            self.dice.enter(faces)

    def roll_dice(self) -> None:
        self.dice.start()

    def _deal(self, dice: tuple[int, ...]) -> None:
        deal_hand(self.record, self.rules, self.hand, self.table.bus, dice, self.table.loop.now(), self.save_nominal,
                  self.sealer.on_table(), self.dice.thrown_by, self.watch)
        self.dealt()

    # -- keys -----------------------------------------------------------------------------
    def _click(self, name: str, chord: frozenset[str]) -> None:
        """A key went down and came up (a key that sticks down never acts); ``chord``: the keys down with it."""
        both = all(k == name or k in chord for k in LIFT_KEYS)
        action = action_for(self.table_state, press_of(name, self.book.dealer, both))
        if action is not None:
            getattr(self, action)()

    def end_hand(self) -> None:
        """A lift key in play: the hand is over once its result is recorded (before that the key is refused, with a
        beep: a hand is never ended without its result); the centre opens (once the set below is stacked)."""
        unrecorded = self.hand.unrecorded()
        if unrecorded is not None:
            why = (f"hand {unrecorded} has no result yet: record the win or the wall's end first "
                   "(both lift keys end it as a void hand)")
            log.warning("lift key refused: %s", why)
            self.table.panel.beep(0.1)
            self.table.bus.publish("hand.end_refused", hand=unrecorded, reason=why)
            return
        self._hand_over()

    def void_hand(self) -> None:
        """Both lift keys in play: the hand is over, a hand without its result recorded as a void hand."""
        unrecorded = self.hand.unrecorded()
        if unrecorded is not None:
            if not self.hand.void("both lift keys before the hand's result was recorded"):
                self.table.panel.beep(0.1)      # (not written: the card's own fault says why; the hand goes on)
                return
            log.warning("hand %d ended by both lift keys without a result: recorded as void", unrecorded)
        self._hand_over()

    def _hand_over(self) -> None:
        if self.stacker.running:
            # The other set is still on the disk: the centre may not open before it is stacked.
            self.pipeline.open_when_stacked = True
            self.table.panel.beep(0.1)
        else:
            self.open_center()

    def release_hold(self) -> None:
        """A lift key in a hold: resume, but only once the cause is gone (the lamps show what remains)."""
        if self.state != S.HOLD.value:
            return
        if self.policy.release_refusal() is not None:
            self.table.panel.beep(0.1)
        else:
            self.release()

    def ack(self) -> str | None:
        """A technician acknowledges a latched fault (both lift keys, or ``mjtable diag ack``); the reason it was
        refused (see :meth:`FaultPolicy.acknowledge`), or None."""
        why, back_to_service = self.policy.acknowledge()
        if why is None:
            self.acknowledge_service() if back_to_service else self.acknowledge()
        return why

    # -- service tests --------------------------------------------------------------------
    def begin_service_test(self, reply: Reply) -> Reply:
        """A service test starts: its answer goes through here, so that a fault can stop it and answer."""
        self.lamps.stop()               # (an interlock's code blinked until now: nothing is in the way any more)
        return self.service_test.begin(reply)

    def service_test_stopped(self, fault: Fault) -> None:
        self.service_test.stopped(fault)

    # -- stopping ------------------------------------------------------------------------------
    def stop_motion(self) -> None:
        """Every operation abandoned and every output safe (a fault stopped the table)."""
        if self._job is not None:
            self._job.cancel()
            self._job = None
        self.stacker.stop()
        self.dice.reset()
        self.table.safe_stop_all()

    def force_latched(self) -> None:
        self.machine.set_state(S.LATCHED.value)

    # -- lamps and what was learned ----------------------------------------------------------------
    def _dealer_lamps(self) -> None:
        self.lamps.show_dealer(self.book.dealer, self.book.dealer_streak)

    def save_nominal(self) -> None:
        """Write the learned nominal times to the table database now (after ``mjtable diag learn``)."""
        self.record.save_nominal(self.table.mechanisms())
