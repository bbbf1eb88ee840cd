"""Where every simulated tile is, kept next to the table database so a later run finds the table as it was.

A real table keeps its tiles when the controller restarts: the walls stay
on the table top, a stacked set in the grooves, a set being stacked on the
disk and in the feed tracks.  ``mjtable sim --state FILE`` resumes the
controller from FILE; this module does the same for the simulated table,
in ``FILE.world.json``: the walls, the grooves, the feed tracks, the disk,
the boxes of sets not yet poured in, and the tiles people hold aside.
Mechanisms are at rest between runs (the controller homes them anyway).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sim.tileset import SimTile

VERSION = 1


def world_file(state_path: Path) -> Path:
    return state_path.with_name(state_path.name + ".world.json")


def _tile(t: SimTile) -> list:
    return [t.uid.hex(), t.set_id, t.kind]


def _untile(row: list) -> SimTile:
    return SimTile(bytes.fromhex(row[0]), row[1], int(row[2]))


def _stacks(stacks) -> list:
    return [[_tile(t) for t in stack] for stack in stacks]


def _unstacks(rows: list) -> list[tuple[SimTile, ...]]:
    return [tuple(_untile(t) for t in stack) for stack in rows]


def save_world(world, players, path: Path) -> None:
    data: dict[str, Any] = {
        "version": VERSION,
        "tile_set": world.tile_set.size,
        "walls": [_stacks(side) for side in world.walls],
        "grooves": [_stacks(head.groove) for head in world.heads],
        "tracks": [[_tile(t) for t in head.track] for head in world.heads],
        "disk": [_tile(t) for t in world.turntable.hopper],
        "boxes": {set_id: [_tile(t) for t in tiles] for set_id, tiles in world.sets.items()},
        "to_pour": list(players.to_pour),
        "removed": [_tile(t) for t in world.removed_tiles],
        "found": [_tile(t) for t in world.found],
        "set_aside": [_tile(t) for t in world.set_aside],
    }
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    tmp.replace(path)


def restore_world(world, players, path: Path) -> None:
    """Put every tile back where ``save_world`` found it (the file must match this table model)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("version") != VERSION or len(data["walls"]) != len(world.walls):
        raise ValueError(f"{path}: not a saved simulated table of this model (delete it to start afresh)")
    if data.get("tile_set") != world.tile_set.size:
        raise ValueError(f"{path}: the saved table plays {data.get('tile_set')}-tile sets, this run "
                         f"{world.tile_set.size} (another rule set?): use another --state file")
    world.walls = [_unstacks(side) for side in data["walls"]]
    for head, groove, track in zip(world.heads, data["grooves"], data["tracks"]):
        head.groove = _unstacks(groove)
        head.track.clear()
        head.track.extend(_untile(t) for t in track)
        head.settle()
    world.turntable.hopper[:] = [_untile(t) for t in data["disk"]]
    world.sets = {set_id: [_untile(t) for t in tiles] for set_id, tiles in data["boxes"].items()}
    players.to_pour = list(data["to_pour"])
    world.removed_tiles = [_untile(t) for t in data["removed"]]
    world.found = [_untile(t) for t in data["found"]]
    world.set_aside = [_untile(t) for t in data["set_aside"]]
