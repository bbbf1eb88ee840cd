"""Physical tiles of the simulated table: each with its set (A/B), face and tag UID.

UIDs are ISO 15693 style, 8 bytes starting 0xE0; the simulator generates
them from the set letter and the tile's canonical index, so a generated
registry (UID -> set, face) always matches the tiles in the hopper.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from firmware.tiles.sets import TileSet
from firmware.tiles.tile import code

MAKER = 0x04  # chip maker byte of the simulated tags


@dataclass(frozen=True)
class SimTile:
    uid: bytes
    set_id: str     # "A", "B", or "X" for a tile of no registry
    kind: int

    def __repr__(self) -> str:
        return f"{code(self.kind)}/{self.set_id}:{self.uid.hex()}"


def make_uid(set_id: str, index: int) -> bytes:
    return bytes([0xE0, MAKER, ord(set_id), 0x00, 0x00, 0x00, (index >> 8) & 0xFF, index & 0xFF])


def physical_set(tile_set: TileSet, set_id: str) -> list[SimTile]:
    """Every tile of a set, in canonical order, with generated UIDs."""
    return [SimTile(make_uid(set_id, i), set_id, kind) for i, kind in enumerate(tile_set.all_tiles())]


def shuffled(tiles: list[SimTile], rng: random.Random) -> list[SimTile]:
    out = list(tiles)
    rng.shuffle(out)
    return out
