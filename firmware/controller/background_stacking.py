"""Stacking a set under the table while the players wait or play: the cycle, its wall read and its outcome.

A stacking cycle (:class:`firmware.stacking.StackingCycle`) shuffles the set
on the disk into four walls in the grooves; a wall session
(:class:`firmware.reader.wall_session.WallSession`) reads every tile's tag
as it passes its head.  This room keeps the two together.  It hears of every
counted tile and every stack by a direct call: a tile's count goes to the
wall read, and each stack (a cam turn) updates the side's one tiny row in
the table database as the cam leaves home (how many tiles the groove will
hold): an SD card is written once per stack, one page, not once per tile
with the whole bookkeeping.  The tags read are kept in memory (a stop and a
resume without a power cut keep them); a power cut during the cycle loses
them, and those places stay unread (E83: a competition table reads the set
again).  The tiles counted since a side's last stack wait in its feed track;
after a power cut they are found there by an inventory of the head's
antenna before the cycle goes on (if the reader cannot answer, the counts of
the last stack are used and the verification of the walls catches what is
off).  When the walls are complete it has them verified, records where the
set is and tells the controller.  The controller stops it on any stopping
fault (:meth:`BackgroundStacking.stop`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from firmware.controller.bookkeeping import UNKNOWN_SET, StackingProgress
from firmware.controller.states import SetLocation, TableState
from firmware.listeners import Listening
from firmware.loop import Handle
from firmware.reader.driver import LinkState, Reply
from firmware.reader.messages import InventoryPart, PayloadError
from firmware.reader.verify import Verification
from firmware.reader.wall_map import HEAD_ANTENNAS, WallRead
from firmware.reader.wall_session import WallSession
from firmware.stacking import CycleResult, StackingCycle

if TYPE_CHECKING:
    from firmware.controller.controller import Controller

log = logging.getLogger(__name__)
S = TableState
READER_WAIT_S = 5.0         # after a restart: how long to wait for the reader to find the tiles in the tracks


class BackgroundStacking:
    def __init__(self, controller: "Controller") -> None:
        self.c = controller
        self.cycle: StackingCycle | None = None
        self.session: WallSession | None = None
        self._resuming: _TrackSearch | None = None
        self._pause_wanted = False      # the players paused before the reader answered (the cycle starts paused)

    @property
    def running(self) -> bool:
        return self.cycle is not None or self._resuming is not None

    def start(self) -> None:
        """Stack the set on the disk, or go on with the interrupted cycle of the bookkeeping."""
        c, b = self.c, self.c.book
        progress = b.stacking
        if progress is None:
            candidates = b.sets_at(SetLocation.DISK)
            set_id = candidates[0] if candidates else None
            if set_id == UNKNOWN_SET:
                b.sets.pop(UNKNOWN_SET)         # a set no tag named yet: this cycle's tags will name it
                set_id = None
            c.tile_set = c.next_tile_set
            progress = StackingProgress.new(set_id, b.cycles + 1)
            b.stacking = progress
            b.unknown_on_disk = False
            if set_id is not None:
                b.put(set_id, SetLocation.STACKING)
            self._begin(progress)
        elif any(progress.counted):
            self._resuming = _TrackSearch(self, progress)
            self._resuming.start()
        else:
            self._begin(progress)

    def _begin(self, progress: StackingProgress) -> None:
        c, b = self.c, self.c.book
        self._resuming = None
        per_side = c.tile_set.size // 4
        cfg = c.cfg
        read = WallRead(per_side, cfg.wall, cfg.reader.match_tolerance_s)
        read.restore(progress.uids)
        unplaced = [s for s in sorted(c.registry.sets) if b.where(s) is SetLocation.NONE]
        self.session = WallSession(c.loop, c.table.faults, c.table.reader, c.registry, progress.set_id, c.tile_set,
                                   read, cfg.reader.rejects_any_defect,
                                   candidates=tuple(unplaced))
        self.cycle = StackingCycle(c.table, per_side, self._stacked, list(zip(progress.counted, progress.stacked)),
                                   probe=progress.set_id is None, on_tile=self._tile, on_stack=self._stack)
        self._pause_wanted = False
        c.persist()
        c.bus.publish("controller.stacking", set_id=progress.set_id, resumed=any(progress.counted))
        # The motors wait for the reader's answer to STREAM_START: a tile that reached an antenna before the
        # board streamed would be counted and never read (an E83 that no cable explains).  A stream that
        # does not start (the reader down) does not stop the table: the map names the tiles not read.
        session, cycle = self.session, self.cycle
        session.start(lambda ok: self._streaming(session, cycle))

    def _streaming(self, session: WallSession, cycle: StackingCycle) -> None:
        if self.session is not session or self.cycle is not cycle:
            return                      # stopped (a fault, the reset key) while the reader answered
        if not cycle.start():
            self.stop()                 # refused (an interlock, a stopped table): the progress says where to go on
        elif self._pause_wanted:
            cycle.pause()

    def stop(self) -> None:
        """Stop now (a fault stopped the table); the progress says where to go on from (in memory the tags read
        so far too, for a resume without a power cut)."""
        if self._resuming is not None:
            self._resuming.cancel()
            self._resuming = None
        progress = self.c.book.stacking
        if self.cycle is not None:
            self.cycle.abort()
            self.cycle = None
            if progress is not None:
                progress.counted = [h.counted for h in self.c.table.heads]
                progress.counts_known = True
        if self.session is not None:
            session, self.session = self.session, None
            if progress is not None:
                progress.uids = [list(side) for side in session.read.progress()]
            # The TAGs of the tiles counted last may still be on the line: the session listens until the board
            # has sent them (else those tiles stay unread, an E83 that only the stop caused)
            session.suspend(lambda: self._suspended(session, progress))

    def _suspended(self, session: WallSession, progress: StackingProgress | None) -> None:
        """The TAGs that were on the line when the cycle stopped are in: the progress takes them, unless the
        cycle went on already (a new session) or the set is no longer being stacked."""
        if progress is None or self.c.book.stacking is not progress or self.session is not None:
            return
        progress.uids = [list(side) for side in session.read.progress()]

    def pause(self) -> None:
        self._pause_wanted = True
        if self.cycle is not None:
            self.cycle.pause()

    def resume(self) -> None:
        self._pause_wanted = False
        if self.cycle is not None:
            self.cycle.resume()

    def missing_faces(self) -> tuple[list[int], int] | None:
        """E62: the faces the set lacks by the tags read so far, and how many counted tiles are unread."""
        return self.session.missing_faces() if self.session is not None else None

    # -- progress -------------------------------------------------------------------------
    def _tile(self, side: int, count: int, at_s: float) -> None:
        if self.session is not None:
            self.session.tile_counted(side, at_s)
        progress = self.c.book.stacking
        if progress is not None:
            progress.counted[side] = count          # (in memory: the track is searched after a restart)

    def _stack(self, side: int, stacked: int) -> None:
        """A cam has left home: its stack counts from now (one row: a power cut from here on finishes the turn
        at the homing)."""
        progress = self.c.book.stacking
        if progress is None or self.cycle is None:
            return
        known = self.session.read.progress()[side] if self.session is not None else []
        progress.set_side(side, stacked, self.c.table.heads[side].counted, (known + [None] * stacked)[:stacked])
        self.c.store.save_side(progress.cycle, side, stacked, progress.counted[side])

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
        cycle = b.stacking.cycle if b.stacking else b.cycles + 1
        if b.stacking and b.stacking.set_id and b.stacking.set_id != set_id:
            b.sets.pop(b.stacking.set_id, None)
        b.stacking = None
        b.put(set_id, SetLocation.STACKED)
        b.store_wall(set_id, verification.wall)
        b.cycles = max(b.cycles + 1, cycle)
        if verification.may_rise:
            b.rejected.pop(set_id, None)
        else:
            b.rejected[set_id] = [str(p) for p in verification.problems]
        c.persist(wall_of=set_id)
        c.set_stacked(set_id, verification.may_rise)


class _TrackSearch:
    """After a restart: which tiles wait in each feed track (counted before the cut, not yet stacked)?

    The reader's inventory of each head antenna lists the tiles in its
    field, the feed track; the side then goes on from its last stack plus
    those.  Their order in the track is not known, so their places in the
    wall are left unread (the verification says so).  Without the reader
    within ``READER_WAIT_S`` the counts of the last stack stand.
    """

    def __init__(self, owner: BackgroundStacking, progress: StackingProgress) -> None:
        self.owner = owner
        self.progress = progress
        self.reader = owner.c.table.reader
        self.found: dict[int, list[bytes] | None] = {}
        self._link: Listening | None = None
        self._timer: Handle | None = None
        self._cancelled = False

    def start(self) -> None:
        if self.reader.state is LinkState.UP:
            self._ask()
            return
        self._link = self.reader.on_link.add(self._link_changed)
        self._timer = self.owner.c.loop.call_later(READER_WAIT_S, self._give_up)

    def cancel(self) -> None:
        self._cancelled = True
        self._quiet()

    def _quiet(self) -> None:
        if self._link is not None:
            self._link.cancel()
            self._link = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _link_changed(self, state: LinkState) -> None:
        if state is LinkState.UP:
            self._quiet()
            self._ask()

    def _give_up(self) -> None:
        self._timer = None
        log.warning("restart during stacking: the reader did not answer; going on from the last stacks")
        self._quiet()
        self._done()

    def _ask(self) -> None:
        for antenna in HEAD_ANTENNAS:
            self.reader.inventory(antenna, lambda reply, side=antenna: self._got(side, reply))

    def _got(self, side: int, reply: Reply) -> None:
        uids: list[bytes] | None = None
        if reply.ok:
            try:
                uids = [uid for frame in reply.frames for uid in InventoryPart.unpack(frame.payload).uids]
            except PayloadError:
                uids = None
        self.found[side] = uids
        if len(self.found) == len(HEAD_ANTENNAS):
            self._done()

    def _done(self) -> None:
        if self._cancelled:
            return
        p = self.progress
        c = self.owner.c
        for side, uids in self.found.items():
            if uids is None:
                continue
            track = len(uids)
            if p.counts_known:
                # No power cut: every tile this side counted is in its groove or its track, so the groove holds
                # counted - track (a turn stopped before it left home pushed nothing, a cam moved by a stuck
                # sensor pushed its stack at the homing).  Fewer than the stacks begun: the counter missed tiles.
                in_groove = p.counted[side] - track
                if in_groove < p.stacked[side]:
                    self._uncounted(side, p.stacked[side] - in_groove)
                    p.counted[side] = p.stacked[side] + track
                    p.uids[side] = p.uids[side][:p.stacked[side]] + [None] * track
                elif in_groove != p.stacked[side]:
                    p.stacked[side] = in_groove
                    c.store.save_side(p.cycle, side, in_groove, p.counted[side])
                continue
            # After a power cut: the stacks begun (each written as its cam left home) are in the groove, the
            # tiles in the track come next; their order there is not known, so their places stay unread.
            p.counted[side] = p.stacked[side] + track
            p.uids[side] = p.uids[side][:p.stacked[side]] + [None] * track
            if uids:
                log.info("side %d: %d tiles found waiting in the track (their order there is not known)", side, track)
        for side in range(len(p.counted)):
            p.uids[side] = (p.uids[side] + [None] * p.counted[side])[:p.counted[side]]
        p.counts_known = False
        self.owner._begin(p)

    def _uncounted(self, side: int, tiles: int) -> None:
        """More tiles wait in a track than its counter counted: the optic misses tiles (they are counted now)."""
        c = self.owner.c
        c.check_hint = (f"side {side}: {tiles} tiles in the feed track that its tile counter (tile_in) did not count: "
                        f"clean or replace side {side}'s counter optic")
        log.warning("%s", c.check_hint)
        c.bus.publish("tiles.uncounted", side=side, tiles=tiles)
