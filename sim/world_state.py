"""Where every simulated tile is, kept next to the table database so a later run finds the table as it was.

A real table keeps its tiles when the controller restarts: the walls stay
on the table top, a stacked set in the grooves, a set being stacked on the
disk and in the feed tracks.  ``mjtable sim --state FILE`` resumes the
controller from FILE; this module does the same for the simulated table,
in ``FILE.world.json``: the walls, the grooves, the feed tracks, the disk,
the boxes of sets not yet poured in, the tiles people hold aside, and where
each cam, the centre island and the disk stopped (a cam caught mid-turn by a
power cut is finished by the controller's homing, pushing its stack).
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


def world_json(world, players) -> str:
    """Where every tile is (and what the people still hold), as JSON text."""
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
        # where the mechanisms stopped: a cam caught mid-turn by a power cut finishes its turn at the homing
        "stacker_cams": [round(head.cam.phase, 6) for head in world.heads],
        "lift_cams": [round(lift.phase, 6) for lift in world.lifts],
        "center": round(world.center.position, 6),
        "disk_angle": round(world.turntable.angle, 6),
    }
    return json.dumps(data)


def save_world(world, players, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(world_json(world, players), encoding="utf-8")
    tmp.replace(path)


def restore_world(world, players, path: Path) -> None:
    """Put every tile back where ``save_world`` found it (the file must match this table model)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise WorldFileError(f"{path}: cannot read ({exc.strerror})") from None
    restore_world_json(world, players, text, str(path))


class WorldFileError(ValueError):
    """A saved simulated table that does not fit this run; the message names the file and why."""


def restore_world_json(world, players, text: str, where: str) -> None:
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("version") != VERSION or len(data["walls"]) != len(world.walls):
            raise WorldFileError(f"{where}: not a saved simulated table of this model (delete it to start afresh)")
        if data.get("tile_set") != world.tile_set.size:
            raise WorldFileError(f"{where}: the saved table plays {data.get('tile_set')}-tile sets, this run "
                                 f"{world.tile_set.size} (another rule set?): use another --state file")
        walls = [_unstacks(side) for side in data["walls"]]
        grooves = [_unstacks(groove) for groove in data["grooves"]]
        tracks = [[_untile(t) for t in track] for track in data["tracks"]]
        disk = [_untile(t) for t in data["disk"]]
        boxes = {set_id: [_untile(t) for t in tiles] for set_id, tiles in data["boxes"].items()}
        extra = {k: [_untile(t) for t in data[k]] for k in ("removed", "found", "set_aside")}
        to_pour = list(data["to_pour"])
        stacker_cams = [float(x) for x in data.get("stacker_cams", [0.0] * len(world.heads))]
        lift_cams = [float(x) for x in data.get("lift_cams", [0.0] * len(world.lifts))]
        center = float(data.get("center", 0.0))
        disk_angle = float(data.get("disk_angle", 0.0))
    except WorldFileError:
        raise
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise WorldFileError(f"{where}: damaged ({type(exc).__name__}: {exc})") from None
    world.walls = walls
    for head, groove, track in zip(world.heads, grooves, tracks):
        head.groove = groove
        head.track.clear()
        head.track.extend(track)
        head.settle()
    world.turntable.hopper[:] = disk
    for head, phase in zip(world.heads, stacker_cams):
        head.cam.place(phase)
    for lift, phase in zip(world.lifts, lift_cams):
        lift.place(phase)
    world.center.place(center)
    world.turntable.angle = disk_angle % 1.0
    world.sets = boxes
    players.to_pour = to_pour
    world.removed_tiles, world.found, world.set_aside = extra["removed"], extra["found"], extra["set_aside"]
