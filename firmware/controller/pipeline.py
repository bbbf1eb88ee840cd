"""The double-set pipeline: when the centre may open, what a set just stacked leads to, how long players waited.

While one set is played the other is stacked underneath.  A hand that ends
while the set below is still on the disk opens the centre only once that set
is stacked (the sets would mix); a set stacked while the players wait ends
the wait (IDLE decides: open for the used set, raise, or wait ready); the
time from the players beginning to wait for walls to the walls rising is
what the pipeline failed to hide (zero when it kept up).  The controller
asks this room and fires the trigger it names.
"""

from __future__ import annotations

from firmware.controller.bookkeeping import Bookkeeping
from firmware.controller.states import TableState
from firmware.events import EventBus
from firmware.loop import Loop

S = TableState


class Pipeline:
    def __init__(self, loop: Loop, bus: EventBus, book: Bookkeeping) -> None:
        self.loop, self.bus, self.book = loop, bus, book
        self.just_closed = False            # the centre closed a moment ago (a set may have been poured in)
        self.open_when_stacked = False      # the hand ended while the set below was still stacking
        self._wait_started_s: float | None = None

    def waiting(self) -> None:
        """The players wait for a set to be stacked (not at the first load)."""
        if self.book.hand > 0 and self._wait_started_s is None:
            self._wait_started_s = self.loop.now()

    def rising(self) -> None:
        """The walls rise: the players' wait is over (counted in the bookkeeping and published)."""
        waited_s = 0.0
        if self._wait_started_s is not None:
            waited_s = self.loop.now() - self._wait_started_s
            self.book.players_waited_s += waited_s
            self._wait_started_s = None
        if self.book.hand > 0:
            # zero when the double-set pipeline kept up: the next set was ready when the hand ended
            self.bus.publish("players.waited", waited_s=waited_s)

    def closed(self) -> None:
        self.just_closed = True

    def take_closed(self) -> bool:
        """Whether the centre closed just before this decision (asked once)."""
        closed, self.just_closed = self.just_closed, False
        return closed

    def stacked(self, state: str) -> str | None:
        """A set was stacked in ``state``: the trigger that follows (None: nothing)."""
        if self.open_when_stacked and state in (S.IN_PLAY.value, S.REJECTED.value):
            self.open_when_stacked = False
            return "open_center"
        if state == S.STACKING.value:
            self.just_closed = self.book.hand > 0
            return "stacking_over"      # IDLE decides: open for the used set, raise, or wait ready
        return None
