"""The wall map: which tag UID lies at every position of the walls stacked under the table.

Each head counts its tiles with the ``tile_in`` optic, and the reader's
antenna at the same head reports each tile's UID, so the n-th counted tile
of a side is the n-th TAG from that side's antenna.  How the n-th tile lands
in the wall (which end of the groove gets the first stack, whether the first
tile of a stack lies at the bottom) is the table model's ``[wall]`` section.

When every counted tile of a side has its TAG the two are paired in order.
When TAGs were lost (line noise, dropped frames, a link outage, a board
overflow), a side has fewer TAGs than counted tiles and pairing by order
would shift every later tile: then each TAG is paired with the counted tile
nearest in time (board clock mapped to host time), within
``match_tolerance_s``, and a counted tile with no TAG is left unknown (E83),
never guessed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from statistics import median

from firmware.config import SIDES, WallSection
from firmware.reader.messages import TagEvent
from firmware.tiles.wall import BOTTOM, TOP, Position, position_at

log = logging.getLogger(__name__)

HEAD_ANTENNAS = range(SIDES)     # antenna n is the head of physical side n


def groove_position(side: int, index: int, tiles_per_side: int, wall: WallSection) -> Position:
    """Where the ``index``-th tile (0-based) counted on ``side`` ends up in that side's wall."""
    stacks = (tiles_per_side + 1) // 2
    pushed = index // 2
    stack = pushed + 1 if wall.first_stack == "right" else stacks - pushed
    single = index == tiles_per_side - 1 and tiles_per_side % 2 == 1
    first = index % 2 == 0
    level = BOTTOM if single or first == (wall.first_tile == "bottom") else TOP
    return position_at(side, stack, level)


@dataclass
class WallMap:
    """UIDs by position (None: counted but not read), plus what did not fit."""

    tiles_per_side: int
    uids: dict[Position, bytes | None]
    counted: list[int]
    stray_tags: list[tuple[int, bytes]] = field(default_factory=list)   # (side, UID) matched to no tile
    events_lost: int = 0
    loss_reports: list[str] = field(default_factory=list)

    @property
    def unread(self) -> list[Position]:
        return sorted(p for p, uid in self.uids.items() if uid is None)

    @property
    def complete(self) -> bool:
        return not self.unread and all(n == self.tiles_per_side for n in self.counted)


class WallRead:
    """Collects one stacking cycle's counts and TAGs and builds the :class:`WallMap`.

    Feed it ``tile_counted(side, at_s)`` for every ``tile_in`` pulse,
    ``tag(event)`` for every TAG, and ``events_lost(count, why)`` for every
    loss the driver reports while the cycle runs.
    """

    def __init__(self, tiles_per_side: int, wall: WallSection, match_tolerance_s: float = 0.01) -> None:
        self.tiles_per_side = tiles_per_side
        self.wall = wall
        self.match_tolerance_s = match_tolerance_s
        self.pulses_s: list[list[float]] = [[] for _ in range(SIDES)]
        self.tags: list[list[TagEvent]] = [[] for _ in range(SIDES)]
        self.events_lost_count = 0
        self.loss_reports: list[str] = []
        self.prefix: list[list[bytes | None]] = [[] for _ in range(SIDES)]   # read before a restart

    def restore(self, prefix: list[list[bytes | None]]) -> None:
        """Continue a read interrupted by a power cut: these UIDs (None: unknown) come first."""
        self.prefix = [list(side) for side in prefix]

    def tile_counted(self, side: int, at_s: float) -> None:
        self.pulses_s[side].append(at_s)

    def tag(self, event: TagEvent) -> None:
        if event.antenna in HEAD_ANTENNAS:
            self.tags[event.antenna].append(event)

    def events_lost(self, count: int | None, why: str) -> None:
        self.events_lost_count += count or 0
        self.loss_reports.append(why)

    def build(self) -> WallMap:
        uids: dict[Position, bytes | None] = {}
        stray: list[tuple[int, bytes]] = []
        offset_s = self._board_offset_s()
        for side in range(SIDES):
            pulses, tags = self.pulses_s[side], self._fill_prefix(side)
            if len(tags) == len(pulses):
                paired: list[bytes | None] = [t.uid for t in tags]
            else:
                paired, unmatched = self._pair_by_time(pulses, tags, offset_s)
                stray += [(side, uid) for uid in unmatched]
                log.warning("side %d: %d tiles counted, %d tags read; paired by time, %d unknown", side,
                            len(pulses), len(tags), paired.count(None))
            paired = self.prefix[side] + paired
            for index, uid in enumerate(paired[: self.tiles_per_side]):
                uids[groove_position(side, index, self.tiles_per_side, self.wall)] = uid
        return WallMap(self.tiles_per_side, uids, [len(pre) + len(p) for pre, p in zip(self.prefix, self.pulses_s)],
                       stray,
                       self.events_lost_count, list(self.loss_reports))

    def progress(self) -> list[list[bytes | None]]:
        """What is known so far per side, in count order (for the table database)."""
        return [self.side_progress(side) for side in range(SIDES)]

    def side_progress(self, side: int) -> list[bytes | None]:
        """``progress()[side]``, the other sides left alone (a stack begun on one side writes that side's row)."""
        tags = [t.uid for t in self.tags[side]]
        known: list[bytes | None] = tags if not self.loss_reports else [None] * len(tags)
        known = (known + [None] * len(self.pulses_s[side]))[:len(self.pulses_s[side])]
        return self.prefix[side] + known

    def _fill_prefix(self, side: int) -> list[TagEvent]:
        """After a restart, TAGs that came before this side's first new count belong to the tiles
        counted before the cut whose TAGs were still on the line: they fill the prefix's unread tail."""
        prefix, tags = self.prefix[side], list(self.tags[side])
        first_pulse = self.pulses_s[side][0] if self.pulses_s[side] else float("inf")
        tail = len(prefix)
        while tail > 0 and prefix[tail - 1] is None:
            tail -= 1
        while tags and tail < len(prefix) and tags[0].received_s < first_pulse:
            prefix[tail] = tags.pop(0).uid
            tail += 1
        return tags

    def _board_offset_s(self) -> float | None:
        """Board time minus host time, from sides where counts and TAGs agree (else from receipt times)."""
        diffs = [t.board_ms / 1000 - p for side in range(SIDES) if len(self.tags[side]) == len(self.pulses_s[side])
                 for t, p in zip(self.tags[side], self.pulses_s[side])]
        if diffs:
            return median(diffs)
        # Receipt is never before the tile passed: board time minus receipt time is at most the offset.
        receipts = [t.board_ms / 1000 - t.received_s for side_tags in self.tags for t in side_tags]
        return max(receipts) if receipts else None

    def _pair_by_time(self, pulses: list[float], tags: list[TagEvent],
                      offset_s: float | None) -> tuple[list[bytes | None], list[bytes]]:
        paired: list[bytes | None] = [None] * len(pulses)
        unmatched: list[bytes] = []
        if offset_s is None:
            return paired, [t.uid for t in tags]
        next_free = 0
        for tag in tags:
            at_s = tag.board_ms / 1000 - offset_s
            best, best_gap = None, self.match_tolerance_s
            for i in range(next_free, len(pulses)):
                gap = abs(pulses[i] - at_s)
                if gap <= best_gap:
                    best, best_gap = i, gap
                elif pulses[i] > at_s + self.match_tolerance_s:
                    break
            if best is None:
                unmatched.append(tag.uid)
            else:
                paired[best] = tag.uid
                next_free = best + 1
        return paired, unmatched
