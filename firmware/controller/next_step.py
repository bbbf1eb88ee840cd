"""What the table does next, decided from the set bookkeeping alone (after every step, and after a restart).

The controller passes through IDLE between operations and after every
power-on; there it looks only at the persisted bookkeeping (where each set
is, whether a hand is open or over, whether a raise was interrupted), never
at memory that a power cut would lose.  This module is that decision, as a
pure function so that each case can be tested on its own.
"""

from __future__ import annotations

import enum

from firmware.controller.bookkeeping import Bookkeeping
from firmware.controller.states import SetLocation


class NextStep(enum.Enum):
    """Each value is the controller's trigger for that step (None: wait for a key)."""

    RAISE = "raise_walls"
    REJECTED = "resume_rejected"
    PLAY = "resume_play"
    DICE = "resume_dice"
    STACK = "stack"
    OPEN = "open_center"
    READY = "set_ready"
    WAIT = None


def next_step(book: Bookkeeping, just_closed: bool) -> NextStep:
    """``just_closed``: the centre closed a moment ago (a set may have been poured in or pushed in)."""
    on_table = book.sets_at(SetLocation.TABLE)
    stacked = book.sets_at(SetLocation.STACKED)
    pending = bool(book.stacking or book.sets_at(SetLocation.DISK) or book.unknown_on_disk)
    if book.raising:
        return NextStep.RAISE            # interrupted: one more turn finishes it (empty grooves raise nothing)
    if book.rejected_on_table() and not book.hand_open and not book.hand_over:
        return NextStep.REJECTED         # rejected walls wait for the players (the set below keeps stacking)
    if pending and not stacked:
        # A set is (partly) on the disk: nothing may go into the centre before it is stacked.
        if on_table and not book.hand_over:
            # the set below carries on stacking while the hand is (about to be) played
            return NextStep.PLAY if book.hand_open else NextStep.DICE
        return NextStep.STACK
    if book.hand_over:
        return NextStep.OPEN
    if on_table:
        return NextStep.PLAY if book.hand_open else NextStep.DICE     # walls up: the hand, or its dice
    if stacked:
        # the centre just closed (or a hand was played before): the ready set rises; else wait, ready
        return NextStep.RAISE if book.hand > 0 or just_closed else NextStep.READY
    return NextStep.WAIT
