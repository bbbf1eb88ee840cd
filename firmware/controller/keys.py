"""The panel's key map: what a key press means in each state, as a table.

Players know the gestures of real tables: a lift key opens or closes the
centre and ends a hand whose result is recorded (before that it is refused:
a beep); both lift keys end a hand in play anyway, recorded as a void hand;
both lift keys while stacking pause it to add tiles
(one key resumes); both lift keys acknowledge a latched fault; a lift key
releases a hold; only the dealer's dice key rolls.  A key acts when it
comes up again (a click, :meth:`firmware.mechanisms.panel.Panel.on_click`):
a key that sticks down never acts, and a stuck key makes no chord.  The
reset key is not here: it is an interlock (:mod:`firmware.safety`) and
stops the table in any state the moment it goes down.
"""

from __future__ import annotations

import enum

from firmware.controller.states import TableState

S = TableState
LIFT_KEYS = ("key_lift0", "key_lift1")


class Press(enum.Enum):
    LIFT = "one lift key"
    BOTH_LIFTS = "both lift keys"
    DEALER_DICE = "the dealer's dice key"


# (state, press) -> the controller's action
KEY_MAP: dict[tuple[TableState, Press], str] = {
    (S.LATCHED, Press.BOTH_LIFTS): "ack",
    (S.STACKING, Press.BOTH_LIFTS): "pause",
    (S.PAUSED, Press.LIFT): "resume",
    (S.HOLD, Press.LIFT): "release_hold",
    (S.HOLD, Press.BOTH_LIFTS): "release_hold",
    (S.IN_PLAY, Press.LIFT): "end_hand",
    (S.IN_PLAY, Press.BOTH_LIFTS): "void_hand",
    (S.REJECTED, Press.LIFT): "end_hand",
    (S.REJECTED, Press.BOTH_LIFTS): "end_hand",
    (S.OPEN, Press.LIFT): "close_center",
    (S.OPEN, Press.BOTH_LIFTS): "close_center",
    (S.READY, Press.LIFT): "open_center",       # closing again raises the ready set (a second set may go in)
    (S.READY, Press.BOTH_LIFTS): "open_center",
    (S.IDLE, Press.LIFT): "open_center",
    (S.IDLE, Press.BOTH_LIFTS): "open_center",
    (S.SERVICE, Press.LIFT): "leave_service",
    (S.DICE, Press.DEALER_DICE): "roll_dice",
}


def press_of(name: str, dealer: int, both_lifts: bool) -> Press | None:
    """What a click is (``both_lifts``: the other lift key was down with it, and neither is stuck)."""
    if name in LIFT_KEYS:
        return Press.BOTH_LIFTS if both_lifts else Press.LIFT
    if name == f"key_dice{dealer}":
        return Press.DEALER_DICE
    return None


def action_for(state: TableState, press: Press | None) -> str | None:
    return None if press is None else KEY_MAP.get((state, press))
