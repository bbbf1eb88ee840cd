"""Enrollment: learn a set's UIDs by reading its tiles one by one in canonical order.

The technician sorts the set (1m x4, 2m x4, ... as :func:`feeding_order`
prints it) and passes the tiles one at a time over one antenna.  Each new
UID gets the next face of the order; a tile passed twice is ignored (and
counted) rather than given a second face, so a slip of the hand does not
shift every later tile.  When every face is assigned the result is written
as the set's registry file.
"""

from __future__ import annotations

import logging
from itertools import groupby

from firmware.reader.messages import TagEvent
from firmware.tiles.sets import TileSet
from firmware.tiles.tile import code

log = logging.getLogger(__name__)


def feeding_order(tile_set: TileSet) -> str:
    """The order to feed tiles in, e.g. ``1m x4, 2m x4, ... 8f x1``."""
    return ", ".join(f"{code(kind)} x{len(list(group))}" for kind, group in groupby(tile_set.all_tiles()))


class Enrollment:
    def __init__(self, tile_set: TileSet, set_id: str, antenna: int) -> None:
        self.tile_set = tile_set
        self.set_id = set_id
        self.antenna = antenna
        self.order = tile_set.all_tiles()
        self.tiles: list[tuple[bytes, int]] = []
        self.repeats = 0
        self._seen: set[bytes] = set()

    @property
    def done(self) -> bool:
        return len(self.tiles) == len(self.order)

    @property
    def next_face(self) -> str | None:
        return None if self.done else code(self.order[len(self.tiles)])

    def tag(self, event: TagEvent) -> tuple[bytes, int] | None:
        """Take a TAG; returns the (UID, face) it enrolled, or None if it was ignored."""
        if event.antenna != self.antenna or self.done:
            return None
        if event.uid in self._seen:
            self.repeats += 1
            log.warning("tile %s passed again; ignored (next face is %s)", event.uid.hex(), self.next_face)
            return None
        self._seen.add(event.uid)
        entry = (event.uid, self.order[len(self.tiles)])
        self.tiles.append(entry)
        return entry
