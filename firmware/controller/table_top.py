"""The table top's moves and what they do to the bookkeeping: walls rising, the centre opening and closing.

The four wall lifts turn once and the set stacked underneath is up (walls
that verification rejected rise too, the only way out of the table, but are
never dealt); at a hand's end the centre rises and the hand is over (its row
ended, written with the bookkeeping); when the centre closes the used set has
gone in through it (rejected walls are shuffled and read again) and, after a
hand, the dealer moves on by the rule set.  Each move is a job on the loop
(:mod:`firmware.controller.jobs`); its outcome names the controller's next
trigger (``fire``).
"""

from __future__ import annotations

from typing import Callable

from firmware.controller import jobs
from firmware.controller.deal import HandKeeper
from firmware.controller.pipeline import Pipeline
from firmware.controller.record import TableRecord
from firmware.controller.states import SetLocation
from firmware.faults import Fault
from firmware.mechanisms.center_lift import LiftStop
from firmware.rules.ruleset import Dealership, RuleSet
from firmware.table import Table


class TableTop:
    def __init__(self, table: Table, record: TableRecord, rules: RuleSet, hand: HandKeeper, pipeline: Pipeline,
                 fire: Callable[[str], None]) -> None:
        """``fire(trigger)``: the controller's trigger that follows a move."""
        self.table, self.record, self.rules, self.hand = table, record, rules, hand
        self.pipeline, self.fire = pipeline, fire

    def raise_walls(self) -> jobs.Job:
        """The lifts turn once: the set stacked underneath rises (``raised``, or ``reject`` for rejected walls)."""
        self.pipeline.rising()
        self.table.panel.lamp("led_ready", False)
        self.record.book.raising = True
        self.record.persist()
        return jobs.raise_walls(self.table, self._raised)

    def _raised(self, fault: Fault | None) -> None:
        if fault is not None:
            return
        book = self.record.book
        book.raised()
        self.record.persist()
        self.fire("reject" if book.rejected_on_table() else "raised")   # rejected walls are never dealt

    def open_centre(self) -> jobs.Job:
        """The centre rises (``opened``); at a hand's end the hand is over first."""
        b, store = self.record.book, self.record.store
        if b.hand_open:
            b.hand_ended()
            on_table = b.sets_at(SetLocation.TABLE)
            counted = bool(on_table) and b.wall_mode(on_table[0]) == "counted"
            with store.batch("end of hand"):
                store.end_hand(b.hand, self.table.loop.now(),
                               {"result": "ended", **({"wall": "counted"} if counted else {})})
                self.record.persist()
            self.table.bus.publish("hand.over", hand=b.hand)
        return jobs.move_center(self.table, LiftStop.UP, lambda fault: self.fire("opened") if fault is None else None)

    def close_centre(self) -> jobs.Job:
        """The centre goes down (``closed``): the walls on the table went in; after a hand the dealer moves on."""
        return jobs.move_center(self.table, LiftStop.DOWN, self._closed)

    def _closed(self, fault: Fault | None) -> None:
        if fault is not None:
            return
        b = self.record.book
        nxt = self.rules.next_dealer(Dealership(b.dealer, b.dealer_streak, b.long_hair), self.hand.outcome()) \
            if b.hand_over else None
        b.centre_closed(nxt)
        self.pipeline.closed()
        self.record.persist()
        self.fire("closed")
