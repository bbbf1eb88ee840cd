"""Where every simulated tile is, kept inside the table database so that a run killed at any instant resumes.

A real table keeps its tiles when the controller restarts: the walls stay
on the table top, a stacked set in the grooves, a set being stacked on the
disk and in the feed tracks.  ``mjtable sim --state FILE`` resumes the
controller from FILE; the simulated table is kept in FILE too, written in
every transaction the controller commits (:class:`WorldRows`, a hook before
each commit), so the tiles and the controller's knowledge are always of the
same instant: a ``kill -9`` anywhere leaves a pair that resumes.  Kept: the
walls, the grooves, the feed tracks, the disk, the boxes of sets not yet
poured in, the tiles people hold aside, and where each cam, the centre
island and the disk stopped (a cam caught mid-turn is finished by the
controller's homing, pushing its stack).

Tiles are written as numbers into a table of the run's tiles (written again
only when a tile the table has not seen appears: an injected extra tile), so
that a commit writes one small row.  A ``FILE.world.json`` left by an older
release is read once (:func:`restore_world`) and then kept in the database.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from array import array
from pathlib import Path
from typing import Any

from sim.tileset import SimTile

VERSION = 1            # the JSON file of older releases
ROWS_VERSION = 2       # the rows kept in the table database
WORLD_TABLE = "sim_world"   # id 1: where the tiles are; id 2: the run's tiles
BOXES = ("A", "B")          # the sets' boxes, in the order they are written


def world_file(state_path: Path) -> Path:
    """The world file an older release kept beside the table database."""
    return state_path.with_name(state_path.name + ".world.json")


class WorldFileError(ValueError):
    """A saved simulated table that does not fit this run; the message names the file and why."""


# -- the rows in the table database ---------------------------------------------------------------------------
class WorldRows:
    """Writes the world into the table database in the transaction being committed (``write(db)``)."""

    def __init__(self, world, players) -> None:
        self.world, self.players = world, players
        self._index: dict[int, int] = {}            # id(tile) -> its number
        self._tiles: list[SimTile] = []             # (kept alive, so that their ids stay theirs)
        self._written = 0                           # tiles in the table as last written
        self._opened: sqlite3.Connection | None = None

    def _numbers(self, tiles) -> list[int]:
        """The tiles' numbers (a tile not seen before gets the next one)."""
        try:
            return list(map(self._index.__getitem__, map(id, tiles)))
        except KeyError:
            for tile in tiles:
                if id(tile) not in self._index:
                    self._index[id(tile)] = len(self._tiles)
                    self._tiles.append(tile)
            return list(map(self._index.__getitem__, map(id, tiles)))

    def positions(self) -> bytes:
        """Every place's tiles as numbers, as 16-bit words: first the shape (for the walls and the grooves of
        each side its stacks and each stack's tiles; then how many tiles each track, the disk, each box and the
        tiles people hold aside have), then every tile's number in that order."""
        w = self.world
        shape: list[int] = []
        tiles: list[SimTile] = []
        for stacks in (*w.walls, *(head.groove for head in w.heads)):
            shape.append(len(stacks))
            for stack in stacks:
                shape.append(len(stack))
                tiles.extend(stack)
        for place in (*(head.track for head in w.heads), w.turntable.hopper,
                      *(w.sets.get(set_id, ()) for set_id in BOXES), w.removed_tiles, w.found, w.set_aside):
            shape.append(len(place))
            tiles.extend(place)
        words = array("H", shape)
        words.extend(self._numbers(tiles))
        if sys.byteorder == "big":
            words.byteswap()                        # (kept little-endian: a database moves between machines)
        return words.tobytes()

    def header(self) -> str:
        w = self.world
        return json.dumps({"version": ROWS_VERSION, "tile_set": w.tile_set.size, "sides": len(w.walls),
                           "boxes": [set_id for set_id in BOXES if set_id in w.sets],
                           "to_pour": list(self.players.to_pour), **_mechanisms(w)}, separators=(",", ":"))

    def write(self, db: sqlite3.Connection) -> None:
        if db is not self._opened:          # (once per connection: the table, and every tile again)
            db.execute(f"CREATE TABLE IF NOT EXISTS {WORLD_TABLE} (id INTEGER PRIMARY KEY, doc TEXT NOT NULL, "
                       f"places BLOB)")
            self._opened, self._written = db, -1
        places = self.positions()
        if len(self._tiles) != self._written:
            tiles = json.dumps([[t.uid.hex(), t.set_id, t.kind] for t in self._tiles], separators=(",", ":"))
            db.execute(f"INSERT OR REPLACE INTO {WORLD_TABLE} (id, doc) VALUES (2, ?)", (tiles,))
            self._written = len(self._tiles)
        db.execute(f"INSERT OR REPLACE INTO {WORLD_TABLE} (id, doc, places) VALUES (1, ?, ?)",
                   (self.header(), places))


def read_world_rows(path: Path) -> dict[str, Any] | None:
    """The world kept in a table database, in the JSON file's form, or None when it keeps none."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = {row[0]: row[1:] for row in db.execute(f"SELECT id, doc, places FROM {WORLD_TABLE}").fetchall()}
    except sqlite3.Error:
        return None
    finally:
        db.close()
    if 1 not in rows:
        return None
    try:
        header, places = json.loads(rows[1][0]), rows[1][1]
        tiles = [[str(u), str(s), int(k)] for u, s, k in json.loads(rows[2][0] if 2 in rows else "[]")]
        if not isinstance(header, dict) or header.get("version") != ROWS_VERSION or not isinstance(places, bytes):
            raise WorldFileError(f"{path}: the simulated table it keeps is of another release (give another "
                                 f"--state file to start afresh)")
        return _unpack(header, places, tiles)
    except WorldFileError:
        raise
    except (ValueError, TypeError, IndexError, KeyError, AttributeError, StopIteration) as exc:
        raise WorldFileError(f"{path}: the simulated table it keeps is damaged ({type(exc).__name__}: {exc})") \
            from None


def _unpack(header: dict, places: bytes, tiles: list) -> dict[str, Any]:
    """:meth:`WorldRows.positions` read back, in the JSON file's form (tiles as [uid hex, set, kind])."""
    words = array("H")
    words.frombytes(places)
    if sys.byteorder == "big":
        words.byteswap()
    shape = iter(words)
    sides = int(header["sides"])
    stacked = [[next(shape) for _ in range(next(shape))] for _ in range(2 * sides)]
    runs = [next(shape) for _ in range(sides + 1 + len(BOXES) + 3)]
    numbers = list(shape)
    taken = 0

    def take(n: int) -> list:
        nonlocal taken
        taken += n
        return [tiles[k] for k in numbers[taken - n:taken]]
    groups = [[take(n) for n in side] for side in stacked]
    places = [take(n) for n in runs]
    if taken != len(numbers):
        raise ValueError(f"{len(numbers) - taken} tile numbers more than places")
    out = dict(header, version=VERSION)
    out["walls"], out["grooves"] = groups[:sides], groups[sides:]
    out["tracks"], out["disk"] = places[:sides], places[sides]
    boxes = dict(zip(BOXES, places[sides + 1:sides + 1 + len(BOXES)]))
    out["boxes"] = {set_id: boxes[set_id] for set_id in header["boxes"]}
    out["removed"], out["found"], out["set_aside"] = places[-3:]
    return out


def _mechanisms(world) -> dict[str, Any]:
    # where the mechanisms stopped: a cam caught mid-turn by a power cut finishes its turn at the homing
    return {"stacker_cams": [round(head.cam.phase, 6) for head in world.heads],
            "lift_cams": [round(lift.phase, 6) for lift in world.lifts],
            "center": round(world.center.position, 6),
            "disk_angle": round(world.turntable.angle, 6)}


# -- putting the tiles back ----------------------------------------------------------------------------------------
def _untile(row: list) -> SimTile:
    return SimTile(bytes.fromhex(row[0]), row[1], int(row[2]))


def _unstacks(rows: list) -> list[tuple[SimTile, ...]]:
    return [tuple(_untile(t) for t in stack) for stack in rows]


def restore_world(world, players, path: Path) -> None:
    """Put every tile back where an older release's ``FILE.world.json`` says (it must match this table model)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise WorldFileError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise WorldFileError(f"{path}: damaged ({type(exc).__name__}: {exc})") from None
    restore_world_data(world, players, data, str(path))


def restore_world_data(world, players, data: Any, where: str) -> None:
    """Put every tile back where ``data`` (the JSON file's form, or :func:`read_world_rows`) says."""
    try:
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
