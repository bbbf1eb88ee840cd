"""Walls up that verification rejected: what the players are told, and the code the lamps blink."""

from __future__ import annotations

import logging

from firmware.controller.bookkeeping import Bookkeeping
from firmware.events import EventBus
from firmware.faults import Fault, FaultCode
from firmware.reader.verify import Defect

log = logging.getLogger(__name__)


def rejected_fault(book: Bookkeeping, bus: EventBus, now_s: float) -> Fault:
    """Say why each set on the table may not be played (the log, ``walls.rejected``) and give the fault its
    lamps show: E82 (take the tiles named out), or E83 when tiles were only not read (nothing to take out)."""
    code = FaultCode.E83
    for set_id in book.rejected_on_table():
        problems = book.rejected[set_id]
        unread_only = all(p.startswith(f"{Defect.UNREAD.value}:") for p in problems)
        code = code if unread_only else FaultCode.E82
        log.warning("%s set %s walls rejected, not dealt: %s; %s", FaultCode.E83.value if unread_only else
                    FaultCode.E82.value, set_id, "; ".join(problems),
                    "a lift key opens the centre to stack the set again" if unread_only else
                    "take those tiles out, then a lift key opens the centre to restack the set")
        bus.publish("walls.rejected", set_id=set_id, problems=problems)
    return Fault(code, now_s, "controller", {"rejected": book.rejected_on_table()})
