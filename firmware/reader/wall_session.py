"""Read one set's walls while it is stacked, then verify them: the reader's part of a cycle.

``start()`` before the stacking cycle starts: the session streams TAGs from
the four head antennas (taking those that come after the board's answer to
its STREAM_START: the TAGs of this cycle), and its owner hands it every counted tile
(``tile_counted``, a direct call from the stacking cycle).  ``finish(done)``
after the cycle: it stops the stream (whose reply
tells how many TAGs the board sent, so a last loss is caught), builds the
wall map, verifies it against the registry and the tile set, publishes
``wall.verified`` (and E82 / E83 with every problem when there are any), and
calls ``done(verification)``.  A set that is not enrolled is counted only
(:func:`firmware.reader.verify.verify_wall` decides); ``wall.verified``
then says ``verified`` False, mode ``counted``.
"""

from __future__ import annotations

from collections import Counter

import logging
from typing import Callable

from firmware.faults import Fault, FaultReporter
from firmware.reader.codec import Status
from firmware.listeners import Listening
from firmware.loop import Loop
from firmware.reader.driver import ReaderDriver, Reply
from firmware.reader.registry import TileRegistry
from firmware.reader.verify import Verification, verify_wall
from firmware.reader.wall_map import HEAD_ANTENNAS, WallMap, WallRead
from firmware.tiles.sets import TileSet

log = logging.getLogger(__name__)

HEAD_MASK = sum(1 << a for a in HEAD_ANTENNAS)
STREAMING = (Status.OK, Status.ANTENNA_ERROR)      # the board's answers to STREAM_START after which it streams


class WallSession:
    def __init__(self, loop: Loop, faults: FaultReporter, reader: ReaderDriver, registry: TileRegistry,
                 set_id: str | None,
                 tile_set: TileSet, read: WallRead, competition: bool, candidates: tuple[str, ...] = ()) -> None:
        """``set_id`` None: the set is recognised from its tags (the set most of them belong to), else it is
        one of ``candidates`` (the registered sets that are nowhere else): the only one, or a set not enrolled
        (whose tags name no tile)."""
        self.loop = loop
        self.faults = faults
        self.bus = faults.bus
        self.reader = reader
        self.registry = registry
        self.set_id = set_id
        self.tile_set = tile_set
        self.read = read
        self.competition = competition
        self.candidates = tuple(candidates)
        self.wall_map: WallMap | None = None
        self.verification: Verification | None = None
        self._listening: list[Listening] = []
        self._streaming: Callable[[bool], None] | None = None
        self._stream_ok: bool | None = None     # the board's answer to STREAM_START (None: none yet)

    def start(self, streaming: Callable[[bool], None] | None = None) -> None:
        """Ask the board to stream the head antennas, and listen from its answer on; ``streaming(ok)`` when it
        answered (False: it refused or the link is down: the owner asks again before anything moves).

        Only what comes after the board's answer is this cycle's: the board sends its frames in order, so a TAG
        before the answer was sent for an earlier stream (another set's cycle whose STREAM_STOP was lost with the
        link, its frames held in the port's buffer while the link was down and read when it came back)."""
        self._streaming = streaming
        self.reader.stream_start(HEAD_MASK, self._stream_started)

    def missing_faces(self) -> tuple[list[int], int]:
        """The faces the set lacks according to the tags read so far, and how many counted tiles are
        unread (each of those could be one of the missing faces).  For E62: which tile to look for."""
        uids = [u for side in self.read.progress() for u in side]
        unread = sum(1 for u in uids if u is None)
        entries = [self.registry.lookup(u) for u in uids if u is not None]
        set_id = self.set_id or _majority_of(e.set_id for e in entries if e is not None)
        have = Counter(e.kind for e in entries if e is not None and e.set_id == set_id)
        missing = [k for k in self.tile_set.kinds for _ in range(max(0, self.tile_set.copies[k] - have[k]))]
        return missing, unread

    def _stream_started(self, reply: Reply) -> None:
        if reply.status in STREAMING and not self._listening:
            # (a stream asked for again after one that did not start, or one the driver resumed after a
            # reconnect, is the same cycle's: listening already)
            self._listening = [self.reader.on_tag.add(self.read.tag),
                               self.reader.on_events_lost.add(self.read.events_lost)]
        if not reply.ok:
            # Without a stream no tile of this cycle is read; the map will say which.
            log.warning("wall read: stream did not start (%s)", reply.error or reply.status)
        self._stream_ok = reply.ok
        if self._streaming is not None:
            self._streaming(reply.ok)

    def tile_counted(self, side: int, at_s: float) -> None:
        """A head's optic counted a tile at ``at_s`` (its tag is paired with it by order, or by time)."""
        self.read.tile_counted(side, at_s)

    def finish(self, done: Callable[[Verification], None]) -> None:
        self.reader.stream_stop(lambda reply: self._stopped(done))

    def abandon(self) -> None:
        """Stop listening without a verdict (the cycle was aborted)."""
        self._stop_listening()

    def suspend(self, done: Callable[[], None]) -> None:
        """The cycle stopped (a fault): stop the stream, and stop listening only when the board has answered.

        A tile counted just before the motors stopped passed its antenna then, but its TAG can still be on the
        line (the board's UART is slower than the loop); the board sends its frames in order, so by its answer
        to STREAM_STOP every TAG of a tile counted before the stop is in ``read``.  ``done()`` then (at once when
        the link is down: a TAG lost with it is one the driver reported lost)."""
        self.reader.stream_stop(lambda reply: self._suspended(done))

    def _suspended(self, done: Callable[[], None]) -> None:
        self._stop_listening()
        done()

    def _stop_listening(self) -> None:
        for listening in self._listening:
            listening.cancel()
        self._listening = []

    def _stopped(self, done: Callable[[Verification], None]) -> None:
        self._stop_listening()
        self.wall_map = self.read.build()
        if self.set_id is None:
            self.set_id = _recognise(self.registry, self.wall_map, self.candidates)
        result = verify_wall(self.wall_map, self.registry, self.set_id, self.tile_set, self.competition)
        self.verification = result
        self.bus.publish("wall.verified", set_id=self.set_id, may_rise=result.may_rise, summary=result.summary(),
                         problems=[str(p) for p in result.problems], verified=result.verified, mode=result.mode)
        code = result.fault_code
        if code is not None:
            self.faults.report(Fault(code, self.loop.now(), "reader", {
                "set": self.set_id, "problems": [str(p) for p in result.problems][:12],
                "accepted": result.may_rise, "tag_events_lost": self.read.events_lost_count,
                "stream_started": self._stream_ok}))
        log.info("set %s: %s", self.set_id, result.summary())
        done(result)


def _majority_of(set_ids) -> str | None:
    votes = Counter(set_ids)
    return votes.most_common(1)[0][0] if votes else None


def _recognise(registry: TileRegistry, wall_map: WallMap, candidates: tuple[str, ...]) -> str:
    """The set a wall whose set was not known is: the set most of its tags belong to; or, when most tags
    are of no enrolled set, a candidate set not enrolled; or the only candidate; else ``?``."""
    not_enrolled = [s for s in candidates if not registry.enrolled(s)]
    majority = _majority_set(registry, wall_map)
    if not_enrolled:
        read = [uid for uid in wall_map.uids.values() if uid is not None]
        named = sum(1 for uid in read if registry.lookup(uid) is not None)
        if majority is None or len(read) - named > named:
            return not_enrolled[0]
    if majority is not None:
        return majority
    return candidates[0] if len(candidates) == 1 else "?"


def _majority_set(registry: TileRegistry, wall_map: WallMap) -> str | None:
    votes: dict[str, int] = {}
    for uid in wall_map.uids.values():
        entry = registry.lookup(uid) if uid is not None else None
        if entry is not None:
            votes[entry.set_id] = votes.get(entry.set_id, 0) + 1
    return max(votes, key=lambda s: votes[s]) if votes else None
