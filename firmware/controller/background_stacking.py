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
from typing import TYPE_CHECKING, Callable, Protocol

from firmware.controller.bookkeeping import UNKNOWN_SET, StackingProgress
from firmware.controller.states import SetLocation
from firmware.faults import Fault, FaultCode
from firmware.listeners import Listening
from firmware.loop import Handle
from firmware.reader.driver import LinkState, Reply
from firmware.reader.messages import InventoryPart, PayloadError
from firmware.reader.registry import TileRegistry
from firmware.reader.verify import Verification
from firmware.reader.wall_map import HEAD_ANTENNAS, WallRead
from firmware.reader.wall_session import WallSession
from firmware.stacking import CycleResult, StackingCycle
from firmware.table import Table
from firmware.tiles.sets import TileSet, tile_set

if TYPE_CHECKING:
    from firmware.controller.record import TableRecord
    from firmware.controller.wall_seal import WallSealer

log = logging.getLogger(__name__)
READER_WAIT_S = 5.0         # after a restart: how long to wait for the reader to find the tiles in the tracks
READER_RETRY_S = 2.0        # a stream that did not start is asked for again this often (and when the link is up)
READER_HOLD_S = 15.0        # a reader that has not streamed for this long holds the table (E84)


class StackingOutcomes(Protocol):
    """What the controller hears of a stacking cycle's end."""

    def set_stacked(self, set_id: str, may_rise: bool) -> None:
        """A set's walls are complete and verified (``may_rise``: they may be dealt)."""

    def disk_empty(self) -> None:
        """The centre was opened but nothing was poured in: nothing to stack."""


class BackgroundStacking:
    def __init__(self, table: Table, registry: TileRegistry, record: "TableRecord", outcomes: StackingOutcomes,
                 read_whole: Callable[[], None], uncounted: Callable[[str], None]) -> None:
        """``read_whole()``: a set's walls were read with every tile (the fault policy counts the sets that were
        not); ``uncounted(hint)``: a track held tiles its counter missed (what to check if E62 comes back)."""
        self.table, self.registry, self.record, self.outcomes = table, registry, record, outcomes
        self.read_whole, self.uncounted = read_whole, uncounted
        self.tile_set: TileSet = tile_set(table.cfg.table.tile_set)     # the set being stacked
        self.next_tile_set = self.tile_set       # a change of tile set applies from the next cycle
        self.cycle: StackingCycle | None = None
        self.session: WallSession | None = None
        self._resuming: _TrackSearch | None = None
        self._pause_wanted = False      # the players paused before the reader answered (the cycle starts paused)
        self._reader_wait: tuple[Listening, Handle] | None = None     # waiting for the reader to stream
        self._reader_hold: Handle | None = None                       # ... for this long: E84
        self.sealer: "WallSealer | None" = None  # seals verified walls before the dice (set by the controller)

    def set_tile_count(self, tiles: int) -> None:
        """A change of tile set applies from the next stacking cycle."""
        self.next_tile_set = tile_set(tiles)

    @property
    def running(self) -> bool:
        return self.cycle is not None or self._resuming is not None

    def start(self) -> None:
        """Stack the set on the disk, or go on with the interrupted cycle of the bookkeeping."""
        b = self.record.book
        progress = b.stacking
        if progress is None:
            candidates = b.sets_at(SetLocation.DISK)
            set_id = candidates[0] if candidates else None
            if set_id == UNKNOWN_SET:
                b.sets.pop(UNKNOWN_SET)         # a set no tag named yet: this cycle's tags will name it
                set_id = None
            self.tile_set = self.next_tile_set
            progress = StackingProgress.new(set_id, b.cycles + 1)
            b.stacking = progress
            b.unknown_on_disk = False
            if set_id is not None:
                b.put(set_id, SetLocation.STACKING)
            self._begin(progress)
        elif any(progress.counted) or not progress.counts_known:
            # tiles may wait in the tracks: counted before a stop, or (after a power cut) counted since the last
            # stack was written, or before the first; the reader's inventory of each head finds them
            self._resuming = _TrackSearch(self, progress)
            self._resuming.start()
        else:
            self._begin(progress)

    def _begin(self, progress: StackingProgress) -> None:
        t, b = self.table, self.record.book
        self._resuming = None
        per_side = self.tile_set.size // 4
        cfg = t.cfg
        read = WallRead(per_side, cfg.wall, cfg.reader.match_tolerance_s)
        read.restore(progress.uids)
        unplaced = [s for s in sorted(self.registry.sets) if b.where(s) is SetLocation.NONE]
        self.session = WallSession(t.loop, t.faults, t.reader, self.registry, progress.set_id, self.tile_set,
                                   read, cfg.reader.rejects_any_defect,
                                   candidates=tuple(unplaced))
        self.cycle = StackingCycle(t, per_side, self._stacked, list(zip(progress.counted, progress.stacked)),
                                   probe=progress.set_id is None, on_tile=self._tile, on_stack=self._stack)
        self._pause_wanted = False
        self.record.persist()
        t.bus.publish("controller.stacking", set_id=progress.set_id, resumed=any(progress.counted))
        # The motors wait for the reader's answer to STREAM_START: a tile that reached an antenna before the
        # board streamed would be counted and never read, and a wall with a tile not read is never dealt.  A
        # stream that does not start (the reader down: E80) keeps the motors still until it does.
        session, cycle = self.session, self.cycle
        session.start(lambda ok: self._streaming(session, cycle, ok))

    def _streaming(self, session: WallSession, cycle: StackingCycle, ok: bool) -> None:
        if self.session is not session or self.cycle is not cycle:
            return                      # stopped (a fault, the reset key) while the reader answered
        if not ok:
            self._wait_for_reader(session, cycle)
            return
        self._quiet_reader_wait()
        if not cycle.start():
            self.stop()                 # refused (an interlock, a stopped table): the progress says where to go on
        elif self._pause_wanted:
            cycle.pause()

    def _wait_for_reader(self, session: WallSession, cycle: StackingCycle) -> None:
        """The reader did not start streaming: ask again when its link is up (or every ``READER_RETRY_S``, for a
        board that is up but refused), the motors still."""
        t = self.table
        if self._reader_hold is None:
            log.warning("stacking waits for the tile reader (its stream did not start): nothing moves until it "
                        "streams")
            t.bus.publish("stacking.waiting", reason="reader")
            self._reader_hold = t.loop.call_later(READER_HOLD_S, self._reader_still_down)
        self._quiet_reader_wait(keep_hold=True)

        def again(*_args) -> None:
            if self.session is session and self.cycle is cycle and t.reader.state is LinkState.UP:
                self._quiet_reader_wait(keep_hold=True)
                session.start(lambda ok: self._streaming(session, cycle, ok))
        self._reader_wait = (t.reader.on_link.add(again), t.loop.call_later(READER_RETRY_S, again))

    def _reader_still_down(self) -> None:
        """The reader has not streamed for ``READER_HOLD_S``: the table holds with E84 so that people see it
        (the lamps blink 84; the history has the reader's own E80 / E81)."""
        self._reader_hold = None
        reader = self.table.reader
        self.table.faults.report(Fault(FaultCode.E84, self.table.loop.now(), "stacking",
                                   {"link": reader.state.value, "faulty_antennas": sorted(reader.faulty_antennas)}))

    def _quiet_reader_wait(self, keep_hold: bool = False) -> None:
        if self._reader_wait is not None:
            listening, timer = self._reader_wait
            listening.cancel()
            timer.cancel()
        self._reader_wait = None
        if not keep_hold and self._reader_hold is not None:
            self._reader_hold.cancel()
            self._reader_hold = None

    def stop(self) -> None:
        """Stop now (a fault stopped the table); the progress says where to go on from (in memory the tags read
        so far too, for a resume without a power cut)."""
        if self._resuming is not None:
            self._resuming.cancel()
            self._resuming = None
        self._quiet_reader_wait()
        progress = self.record.book.stacking
        if self.cycle is not None:
            self.cycle.abort()
            if progress is not None:
                progress.counted = [counted for counted, _ in self.cycle.counts()]
                progress.counts_known = True
            self.cycle = None
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
        if progress is None or self.record.book.stacking is not progress or self.session is not None:
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
        progress = self.record.book.stacking
        if progress is not None:
            progress.counted[side] = count          # (in memory: the track is searched after a restart)

    def _stack(self, side: int, stacked: int) -> None:
        """A cam has left home: its stack counts from now (one row: a power cut from here on finishes the turn
        at the homing)."""
        progress = self.record.book.stacking
        if progress is None or self.cycle is None:
            return
        known = self.session.read.side_progress(side) if self.session is not None else []
        progress.set_side(side, stacked, self.table.heads[side].counted, known)
        self.record.store.save_side(progress.cycle, side, stacked, progress.counted[side], progress.uids[side])

    # -- the outcome ----------------------------------------------------------------------
    def _stacked(self, result: CycleResult) -> None:
        self.cycle = None
        if result.empty:
            # The centre was opened but nothing was poured in: nothing to stack.
            if self.session is not None:
                self.session.abandon()
                self.session = None
            self.record.book.stacking = None
            self.record.persist()
            self.table.bus.publish("controller.disk_empty")
            self.outcomes.disk_empty()
            return
        if not result.ok:
            return                              # the fault policy decides (hold, latch)
        session, self.session = self.session, None
        if session is not None:
            session.finish(lambda verification: self._verified(session, verification))

    def _verified(self, session: WallSession, verification: Verification) -> None:
        b = self.record.book
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
        if verification.all_read:
            self.read_whole()
        commitment = None
        with self.record.store.batch(f"walls of set {set_id}"):      # the wall and its seal together
            if self.sealer is not None:
                commitment = self.sealer.seal(set_id)
            self.record.persist(wall_of=set_id)
        if self.sealer is not None and commitment is not None and not self.record.store.failing:
            self.sealer.announce(set_id, commitment)
        self.outcomes.set_stacked(set_id, verification.may_rise)


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
        self.reader = owner.table.reader
        self.found: dict[int, list[bytes] | None] = {}
        self._link: Listening | None = None
        self._timer: Handle | None = None
        self._cancelled = False

    def start(self) -> None:
        if self.reader.state is LinkState.UP:
            self._ask()
            return
        self._link = self.reader.on_link.add(self._link_changed)
        self._timer = self.owner.table.loop.call_later(READER_WAIT_S, self._give_up)

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
        store = self.owner.record.store
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
                    store.save_side(p.cycle, side, in_groove, p.counted[side], p.uids[side])
                continue
            # After a power cut: the stacks begun (each written as its cam left home) are in the groove, the
            # tiles in the track come next, in the order they were counted.
            p.uids[side] = p.uids[side][:p.stacked[side]] + track_order(p.uids[side][p.stacked[side]:], uids)
            p.counted[side] = p.stacked[side] + track
            if uids:
                unknown = p.uids[side][p.stacked[side]:].count(None)
                log.info("side %d: %d tiles found waiting in the track%s", side, track,
                         f" ({unknown} of them in an order not known)" if unknown else " (their order known)")
        for side in range(len(p.counted)):
            p.uids[side] = (p.uids[side] + [None] * p.counted[side])[:p.counted[side]]
        p.counts_known = False
        self.owner._begin(p)

    def _uncounted(self, side: int, tiles: int) -> None:
        """More tiles wait in a track than its counter counted: the optic misses tiles (they are counted now)."""
        hint = (f"side {side}: {tiles} tiles in the feed track that its tile counter (tile_in) did not count: "
                f"clean or replace side {side}'s counter optic")
        log.warning("%s", hint)
        self.owner.uncounted(hint)
        self.owner.table.bus.publish("tiles.uncounted", side=side, tiles=tiles)


def track_order(written: list[bytes | None], found: list[bytes]) -> list[bytes | None]:
    """The tiles waiting in a feed track, in the order they will be stacked, after a power cut.

    ``written``: the UIDs the last progress row kept for the tiles counted after the side's last stack (in
    count order; None where the TAG had not come yet); ``found``: what the head antenna's inventory finds in
    the track now (no order).  A track is first in, first out, so the tiles written come first, in their
    order; tiles counted after the row was written follow.  A place whose tile is not certain stays None
    (never guessed): one tile left over for one place is certain, two for two are not.  If what was written
    does not agree with what is found (a tile written that is not in the track), no place is trusted.
    """
    found_set = set(found)
    places: list[bytes | None] = list(written[:len(found)]) + [None] * max(0, len(found) - len(written))
    if any(uid is not None and uid not in found_set for uid in places) or len(written) > len(found):
        return [None] * len(found)
    left = [uid for uid in found if uid not in set(places)]
    if len(left) == 1 and places.count(None) == 1:
        places[places.index(None)] = left[0]
    return places
