"""Stacking a set under the table while the players wait or play: the cycle, its wall read and its outcome.

A stacking cycle (:class:`firmware.stacking.StackingCycle`) shuffles the set
on the disk into four walls in the grooves; a wall session
(:class:`firmware.reader.wall_session.WallSession`) reads every tile's tag
as it passes its head.  This room keeps the two together: it continues an
interrupted cycle from the persisted progress (counts per side and the UIDs
read so far), hears of every counted tile and stack by a direct call (it
feeds the count to the wall read and persists the progress), and when the
walls are complete it has them verified, records where the set is and tells
the controller (ready, or rejected walls).  The controller stops it on any
stopping fault (:meth:`BackgroundStacking.stop`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from firmware.controller.bookkeeping import UNKNOWN_SET, StackingProgress
from firmware.controller.states import SetLocation, TableState
from firmware.reader.verify import Verification
from firmware.reader.wall_map import WallRead
from firmware.reader.wall_session import WallSession
from firmware.stacking import CycleResult, StackingCycle

if TYPE_CHECKING:
    from firmware.controller.controller import Controller

log = logging.getLogger(__name__)
S = TableState


class BackgroundStacking:
    def __init__(self, controller: "Controller") -> None:
        self.c = controller
        self.cycle: StackingCycle | None = None
        self.session: WallSession | None = None

    @property
    def running(self) -> bool:
        return self.cycle is not None

    def start(self) -> None:
        """Stack the set on the disk (or continue the interrupted cycle of the bookkeeping)."""
        c, b = self.c, self.c.book
        progress = b.stacking
        if progress is None:
            candidates = b.sets_at(SetLocation.DISK)
            set_id = candidates[0] if candidates else None
            if set_id == UNKNOWN_SET:
                b.sets.pop(UNKNOWN_SET)         # a set no tag named yet: this cycle's tags will name it
                set_id = None
            c.tile_set = c.next_tile_set
            progress = StackingProgress(set_id, [0] * 4, [0] * 4, [[] for _ in range(4)])
            b.stacking = progress
            b.unknown_on_disk = False
            if set_id is not None:
                b.put(set_id, SetLocation.STACKING)
        per_side = c.tile_set.size // 4
        cfg = c.cfg
        read = WallRead(per_side, cfg.wall, cfg.reader.match_tolerance_s)
        read.restore([[bytes.fromhex(u) if u else None for u in side] for side in progress.uids])
        unplaced = [s for s in sorted(c.registry.sets) if b.where(s) is SetLocation.NONE]
        self.session = WallSession(c.loop, c.table.faults, c.table.reader, c.registry, progress.set_id, c.tile_set,
                                   read, cfg.reader.verification == "competition",
                                   only_candidate=unplaced[0] if len(unplaced) == 1 else None)
        self.session.start()
        self.cycle = StackingCycle(c.table, per_side, self._stacked, list(zip(progress.counted, progress.stacked)),
                                   probe=progress.set_id is None, on_tile=self._tile, on_stack=self._stack)
        c.persist()
        c.bus.publish("controller.stacking", set_id=progress.set_id, resumed=any(progress.counted))
        if self.cycle is not None and not self.cycle.start():
            self.stop()                 # refused (an interlock, a stopped table): the progress says where to go on

    def stop(self) -> None:
        """Stop now (a fault stopped the table); the persisted progress says where to go on from."""
        if self.cycle is not None:
            self.cycle.abort()
            self.cycle = None
        if self.session is not None:
            self.session.abandon()
            self.session = None

    def pause(self) -> None:
        if self.cycle is not None:
            self.cycle.pause()

    def resume(self) -> None:
        if self.cycle is not None:
            self.cycle.resume()

    def missing_faces(self) -> tuple[list[int], int] | None:
        """E62: the faces the set lacks by the tags read so far, and how many counted tiles are unread."""
        return self.session.missing_faces() if self.session is not None else None

    # -- progress -------------------------------------------------------------------------
    def _tile(self, side: int, count: int, at_s: float) -> None:
        if self.session is not None:
            self.session.tile_counted(side, at_s)
        self._progress(side)

    def _stack(self, side: int, _stacked: int) -> None:
        self._progress(side)

    def _progress(self, side: int) -> None:
        progress = self.c.book.stacking
        if progress is None or self.cycle is None:
            return
        head = self.c.table.heads[side]
        progress.counted[side] = head.counted
        progress.stacked[side] = head.stacked_tiles
        if self.session is not None:
            known = self.session.read.progress()
            progress.uids = [([u.hex() if u else None for u in uids] + [None] * progress.counted[i])[
                :progress.counted[i]] for i, uids in enumerate(known)]
        self.c.persist(nominal=False)

    # -- the outcome ----------------------------------------------------------------------
    def _stacked(self, result: CycleResult) -> None:
        c = self.c
        self.cycle = None
        if result.empty:
            # The centre was opened but nothing was poured in: nothing to stack.
            if self.session is not None:
                self.session.abandon()
                self.session = None
            c.book.stacking = None
            c.persist()
            c.bus.publish("controller.disk_empty")
            if c.state == S.STACKING.value:
                c.stacking_over()
            return
        if not result.ok:
            return                              # the fault policy decides (hold, latch)
        session, self.session = self.session, None
        if session is not None:
            session.finish(lambda verification: self._verified(session, verification))

    def _verified(self, session: WallSession, verification: Verification) -> None:
        c, b = self.c, self.c.book
        set_id = session.set_id or UNKNOWN_SET
        if b.stacking and b.stacking.set_id and b.stacking.set_id != set_id:
            b.sets.pop(b.stacking.set_id, None)
        b.stacking = None
        b.put(set_id, SetLocation.STACKED)
        b.store_wall(set_id, verification.wall)
        b.cycles += 1
        if verification.may_rise:
            b.rejected.pop(set_id, None)
        else:
            b.rejected[set_id] = [str(p) for p in verification.problems]
        c.persist(walls=True)
        c.set_stacked(set_id, verification.may_rise)
