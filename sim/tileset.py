"""Physical tiles of the simulated table: each with its set (A/B), face and tag UID.

The simulator's sets are generated registries: UIDs are ISO 15693 style,
8 bytes starting 0xE0, made from the set letter and the tile's index in the
canonical order of the full 144-tile set, so ``python -m sim.tileset``
writes registry files that match the simulated tiles exactly (the shipped
``config/tiles/sim-A.csv`` and ``sim-B.csv`` are made this way).  A table
playing a smaller set takes, kind by kind, the first copies of the full set.
A set the table model declares but nobody enrolled (its file does not exist)
still has tiles on the simulated table: :func:`physical_registry` makes them
from the seed (the controller does not know their tags and counts the walls).
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from pathlib import Path

from firmware.config_paths import shipped_dir
from firmware.reader.registry import TileRegistry, write_set_file
from firmware.tiles.sets import TILE_SETS, TileSet
from firmware.tiles.tile import code

MAKER = 0x04  # chip maker byte of the simulated tags


SPARE = "spare"     # the set_id of a spare copy of a registered tile (its tag is that tile's): kept aside once found


@dataclass(frozen=True)
class SimTile:
    uid: bytes
    set_id: str     # "A", "B", "X" for a tile of no registry, or SPARE
    kind: int

    def __repr__(self) -> str:
        return f"{code(self.kind)}/{self.set_id}:{self.uid.hex()}"


def make_uid(set_id: str, index: int) -> bytes:
    return bytes([0xE0, MAKER, ord(set_id), 0x00, 0x00, 0x00, (index >> 8) & 0xFF, index & 0xFF])


def generated_set(set_id: str) -> list[tuple[bytes, int]]:
    """(UID, kind) of every tile of a full 144-tile set, canonical order."""
    return [(make_uid(set_id, i), kind) for i, kind in enumerate(TILE_SETS[144].all_tiles())]


def generated_registry(set_ids: tuple[str, ...] = ("A", "B")) -> TileRegistry:
    registry = TileRegistry()
    for set_id in set_ids:
        registry.add_set(set_id, generated_set(set_id), f"generated set {set_id}")
    return registry


def seeded_set(set_id: str, tile_set: TileSet, seed: int, taken: set[bytes]) -> list[tuple[bytes, int]]:
    """(UID, kind) of a set nobody enrolled, canonical order: ISO 15693 style UIDs (E0, the maker, six bytes
    drawn from ``seed`` and the set letter), none in ``taken`` (which gets them)."""
    rng = random.Random(f"mjtable-sim-tiles:{seed}:{set_id}")
    tiles = []
    for kind in tile_set.all_tiles():
        uid = bytes([0xE0, MAKER]) + rng.randbytes(6)
        while uid in taken:
            uid = bytes([0xE0, MAKER]) + rng.randbytes(6)
        taken.add(uid)
        tiles.append((uid, kind))
    return tiles


def physical_registry(registry: TileRegistry, set_ids: tuple[str, ...], tile_set: TileSet,
                      seed: int) -> TileRegistry:
    """Every tag on the simulated table: the enrolled sets of ``registry`` (the controller's), and for each of
    ``set_ids`` that is not enrolled a set of ``tile_set`` made from ``seed``.  ``registry`` itself when
    every set is enrolled."""
    unenrolled = [s for s in set_ids if not registry.enrolled(s)]
    if not unenrolled:
        return registry
    physical = TileRegistry()
    for set_id, entries in registry.sets.items():
        if registry.enrolled(set_id):
            physical.add_set(set_id, [(e.uid, e.kind) for e in entries], registry.sources[set_id])
    taken = set(registry.by_uid)
    for set_id in unenrolled:
        physical.add_set(set_id, seeded_set(set_id, tile_set, seed, taken), f"set {set_id} made from seed {seed}")
    return physical


def physical_set(registry: TileRegistry, tile_set: TileSet, set_id: str) -> list[SimTile]:
    """The tiles of ``set_id`` a table playing ``tile_set`` carries: the first copies of each kind."""
    left = list(tile_set.copies)
    tiles = []
    for entry in registry.sets[set_id]:
        if left[entry.kind]:
            left[entry.kind] -= 1
            tiles.append(SimTile(entry.uid, set_id, entry.kind))
    return tiles


def shuffled(tiles: list[SimTile], rng: random.Random) -> list[SimTile]:
    out = list(tiles)
    rng.shuffle(out)
    return out


def write_generated(folder: Path, set_ids: tuple[str, ...] = ("A", "B")) -> list[Path]:
    paths = []
    for set_id in set_ids:
        path = folder / f"sim-{set_id}.csv"
        write_set_file(path, set_id, generated_set(set_id))
        paths.append(path)
    return paths


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else shipped_dir() / "tiles"
    for written in write_generated(target):
        print(f"written: {written}")
