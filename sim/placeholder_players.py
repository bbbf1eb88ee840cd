"""PLACEHOLDER players: people at the simulated table who do not play mahjong yet.

Until the simulated players of the game issue exist, a "hand" here is a
timed placeholder: the dealer throws the dice when the table asks, nobody
draws or discards, and after ``hand_s`` someone presses a lift key to end
it.  What they do is what the table needs from people: pour the sets in at
the start, push the used set into the open centre, add a missing tile when
the table asks (E62), resume after a hold, and a technician acknowledges
latched faults.  Used only by the simulator and its tests.
"""

from __future__ import annotations

import logging

from firmware.controller.states import TableState
from firmware.events import Event
from sim.world import TableWorld

log = logging.getLogger(__name__)

S = TableState


class PlaceholderPlayers:
    def __init__(self, world: TableWorld, hands: int, sets: tuple[str, ...] = ("A", "B"), hand_s: float | None = 60.0,
                 reaction_s: float = 2.0, push_s: float = 6.0, auto_ack_s: float | None = 60.0) -> None:
        self.world = world
        self.loop = world.loop
        self.hands_wanted = hands
        self.to_pour = list(sets)
        self.hand_s = hand_s
        self.reaction_s = reaction_s
        self.push_s = push_s
        self.auto_ack_s = auto_ack_s
        self.hands_started = 0
        self.hands_ended = 0
        self.dealer = 0
        self.finished = False
        self.state = S.BOOT
        self._gen = 0                 # invalidates reactions to an older state
        self.technician_visits = 0
        self.enter_dice = None        # the controller's enter_dice, set by the run

    def on_event(self, event: Event) -> None:
        if event.topic == "controller.state":
            self.state = TableState(event.data["state"])
            self._gen += 1
            self._react(self.state)
        elif event.topic == "deal":
            self.hands_started = event.data["hand"]
            self.dealer = event.data["dealer"]
        elif event.topic == "dice.waiting":
            self._later(self.reaction_s, self._read_dice)

    def _later(self, delay_s: float, fn, *args) -> None:
        gen = self._gen
        self.loop.call_later(delay_s, lambda: fn(*args) if gen == self._gen else None)

    def _react(self, state: TableState) -> None:
        if state is S.IDLE:
            if self.to_pour:
                self._later(self.reaction_s, self._press, "key_lift0")
        elif state is S.READY:
            if self.hands_started < self.hands_wanted:
                self._later(self.reaction_s, self._press, "key_lift0")
        elif state is S.OPEN:
            self._later(self.push_s, self._fill_center)
        elif state is S.DICE:
            self._later(self.reaction_s, lambda: self._press(f"key_dice{self._dealer_side()}"))
        elif state is S.IN_PLAY and self.hand_s is not None:
            self._later(self.hand_s, self._end_hand)
        elif state is S.HOLD:
            self._later(self.reaction_s * 3, self._resume_after_hold)
        elif state is S.LATCHED and self.auto_ack_s is not None:
            self._later(self.auto_ack_s, self._technician_ack)

    def _read_dice(self) -> None:
        if self.world.dice.result is not None and self.enter_dice is not None:
            self.enter_dice(self.world.dice.result)

    def _dealer_side(self) -> int:
        lamps = [s for s in range(4) if self.world.lamps.get(f"led_dealer{s}")]
        return lamps[0] if len(lamps) == 1 else self.dealer

    def _press(self, key: str) -> None:
        self.world.press(key)

    def _fill_center(self) -> None:
        if not self.world.center_is_up():
            return
        pushed = self.world.push_table_into_center()
        # A new set goes in only onto an empty disk (people do not pour one set onto another).
        if not pushed and self.to_pour and not self.world.turntable.hopper:
            self.world.pour(self.to_pour.pop(0))
        self._later(self.reaction_s, self._press, "key_lift0")

    def finish_hand(self) -> None:
        """The hand was played out (a win or a drawn hand): someone presses a lift key."""
        self._later(self.reaction_s, self._end_hand)

    def _end_hand(self) -> None:
        self.hands_ended = self.hands_started
        if self.hands_started >= self.hands_wanted:
            self.finished = True
            return
        self._press("key_lift0")

    def _resume_after_hold(self) -> None:
        # E62: the players find the missing tile and put it back through the centre first.
        missing = getattr(self.world, "removed_tiles", [])
        if missing:
            self.world.turntable.load([missing.pop(0)])
        self._press("key_lift0")

    def _technician_ack(self) -> None:
        self.world.repair()
        self.technician_visits += 1
        self.world.keys["key_lift0"].set(True)
        self.world.keys["key_lift1"].set(True)
        self.loop.call_later(0.3, self.world.keys["key_lift0"].set, False)
        self.loop.call_later(0.3, self.world.keys["key_lift1"].set, False)
