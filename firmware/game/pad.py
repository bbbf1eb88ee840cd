"""Checking a win from a seat's reader pad: what a real table's referee sees.

A player who declares a win lays the hand on the pad in front of their
seat (reader antennas 4..7 = sides 0..3); the panel says how the tile came
(self-drawn, or whose discard) and which tile it was.  The pad's inventory
gives the tags, the registry the faces; the referee then judges the hand
like any other.  A tag in no registry, or a tile of the wrong set, makes the
read unusable (the table asks for the tiles again) rather than guessed; so
does a set that is not enrolled (its tags name no tile: the hand cannot be
verified, only judged by the people at the table).
Sets the player had exposed are read with the rest; the referee names them
(``parse_melds``), since the pad cannot tell exposed tiles from concealed ones.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable

from firmware.reader.driver import ReaderDriver, Reply
from firmware.reader.messages import InventoryPart
from firmware.reader.registry import TileRegistry
from firmware.rules.win import Meld, MeldKind, Win
from firmware.tiles.tile import TileError, code, is_flower, parse

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
    if set_id is not None and registry.counted_only(set_id):
        done(PadRead(problem=f"set {set_id} is not enrolled: the pad cannot name its tiles ({registry.enrol_hint()})"))
        return

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


def parse_melds(text: str) -> tuple[Meld, ...]:
    """Exposed sets as a referee names them: ``c123p`` a chow, ``p5m`` a pung, ``k7s`` a melded kong,
    ``K9s`` a concealed kong; separated by spaces or commas."""
    melds = []
    for token in text.replace(",", " ").split():
        kind, tiles = token[0], token[1:]
        try:
            kinds = parse(tiles)
        except TileError as exc:
            raise ValueError(f"meld {token!r}: {exc}") from None
        if kind == "c" and len(kinds) == 3 and kinds == [kinds[0], kinds[0] + 1, kinds[0] + 2] and kinds[0] < 27 \
                and kinds[0] % 9 <= 6:
            melds.append(Meld(MeldKind.CHOW, kinds[0], "left"))
        elif kind in "pkK" and len(kinds) == 1:
            source = None if kind == "K" else "left"          # (who fed it does not change the score)
            melds.append(Meld(MeldKind.PUNG if kind == "p" else MeldKind.KONG, kinds[0], source))
        else:
            raise ValueError(f"meld {token!r}: use c123p (chow), p5m (pung), k7s (melded kong), K9s (concealed kong)")
    return tuple(melds)


def win_from_pad(read: PadRead, win_tile: int, self_drawn: bool, seat_wind: int, round_wind: int,
                 melds: tuple[Meld, ...] = ()) -> Win:
    """The declared win as the pad shows it: every tile on the pad, the winning tile among them; the
    tiles of ``melds`` (the sets the player had exposed) are on the pad too and are taken out of the
    concealed hand."""
    counts = Counter(read.kinds)
    for meld in melds:
        for k in meld.tiles:
            if counts[k] == 0:
                raise ValueError(f"the exposed set {meld.kind.value} {code(meld.tile)} is not on the pad")
            counts[k] -= 1
    if counts[win_tile] == 0:
        raise ValueError(f"the winning tile {code(win_tile)} is not on the pad")
    hand = [k for k in sorted(counts) for _ in range(counts[k])]
    hand.remove(win_tile)
    return Win(tuple(hand), tuple(melds), win_tile, self_drawn, False, False, False, seat_wind, round_wind,
               read.flowers)
