"""Checking a win from a seat's reader pad: what a real table's referee sees.

A player who declares a win lays the hand on the pad in front of their
seat (reader antennas 4..7 = sides 0..3); the panel says how the tile came
(self-drawn, or whose discard) and which tile it was.  The pad's inventory
gives the tags, the registry the faces; the referee then judges the hand
like any other.  A tag in no registry, or a tile of the wrong set, makes the
read unusable (the table asks for the tiles again) rather than guessed.
Sets already exposed on the table are read with the rest and counted as
concealed here: the panel has no way yet to say which tiles were melded.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable

from firmware.reader.driver import ReaderDriver, Reply
from firmware.reader.messages import InventoryPart
from firmware.reader.registry import TileRegistry
from firmware.rules.win import Win
from firmware.tiles.tile import code, is_flower

PAD_ANTENNA_BASE = 4


@dataclass(frozen=True)
class PadRead:
    kinds: tuple[int, ...] = ()
    flowers: int = 0
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem


def read_pad(reader: ReaderDriver, side: int, registry: TileRegistry, set_id: str | None,
             done: Callable[[PadRead], None]) -> None:
    """Inventory the pad of ``side`` and name its tiles (``done`` gets the result)."""
    def got(reply: Reply) -> None:
        if not reply.ok:
            done(PadRead(problem=f"pad of side {side} not read: {reply.error or reply.status}"))
            return
        uids = [uid for frame in reply.frames for uid in InventoryPart.unpack(frame.payload).uids]
        kinds, flowers = [], 0
        for uid in uids:
            entry = registry.lookup(uid)
            if entry is None:
                done(PadRead(problem=f"unregistered tag {uid.hex()} on the pad of side {side}"))
                return
            if set_id is not None and entry.set_id != set_id:
                done(PadRead(problem=f"{code(entry.kind)} of set {entry.set_id} on the pad of side {side}"))
                return
            if is_flower(entry.kind):
                flowers += 1
            else:
                kinds.append(entry.kind)
        done(PadRead(tuple(sorted(kinds)), flowers))

    reader.inventory(PAD_ANTENNA_BASE + side, got)


def win_from_pad(read: PadRead, win_tile: int, self_drawn: bool, seat_wind: int, round_wind: int) -> Win:
    """The declared win as the pad shows it: every tile on the pad, the winning tile among them."""
    counts = Counter(read.kinds)
    if counts[win_tile] == 0:
        raise ValueError(f"the winning tile {code(win_tile)} is not on the pad")
    hand = list(read.kinds)
    hand.remove(win_tile)
    return Win(tuple(hand), (), win_tile, self_drawn, False, False, False, seat_wind, round_wind, read.flowers)
