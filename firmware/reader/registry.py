"""The tile registry: which tag UID is which tile of which set.

Every tile of a table's sets carries an HF tag; enrollment (``mjtable diag
enroll``) reads them in canonical order and writes one CSV file per set::

    uid,set,tile
    e004410000000000,A,1m

UIDs are 16 hex digits, first byte E0 (ISO 15693).  Loading validates the
file as a technician would want: a malformed line, a UID twice (in one file
or across sets), a set letter other than the file's, or face counts that are
not exactly one of the standard sets (144, 136, 112, 108) is a
:class:`~firmware.faults.ConfigError` naming the file and line.

A set whose file does not exist yet is *declared but not enrolled* (a table
just installed: nobody has enrolled its sets): the registry still knows its
letter, so the controller tracks it like any set, but its tags name no
tile, so its walls can only be counted (:meth:`TileRegistry.counted_only`),
and :meth:`TileRegistry.enrol_hint` says how to enrol it.
"""

from __future__ import annotations

import csv
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from firmware.faults import ConfigError
from firmware.i18n import worded, worded_text
from firmware.reader.messages import is_tile_uid
from firmware.tiles.sets import TILE_SETS, TileSet
from firmware.tiles.tile import KINDS, TileError, code, parse_one

if TYPE_CHECKING:
    from firmware.config import TableConfig

HEADER = ["uid", "set", "tile"]


@dataclass(frozen=True)
class RegisteredTile:
    uid: bytes
    set_id: str
    kind: int

    def __str__(self) -> str:
        return f"{code(self.kind)} of set {self.set_id} (UID {self.uid.hex()})"


class TileRegistry:
    """UID -> (set, face) for every enrolled set; ``sets`` holds every declared set (no tiles until enrolled)."""

    def __init__(self) -> None:
        self.by_uid: dict[bytes, RegisteredTile] = {}
        self.sets: dict[str, list[RegisteredTile]] = {}
        self.sources: dict[str, str] = {}
        self.unenrolled_files: dict[str, str] = {}      # declared set -> the file its enrollment will write

    def declare(self, set_id: str, enrol_file: str) -> None:
        """A set the table model names whose enrollment file does not exist yet: known, but no tag names a tile."""
        if set_id in self.sets:
            raise worded(ConfigError, "%(file)s: set %(set)s is already registered (from %(source)s)", file=enrol_file,
                         set=set_id, source=self.sources[set_id])
        self.sets[set_id] = []
        self.sources[set_id] = enrol_file
        self.unenrolled_files[set_id] = enrol_file

    def enrolled(self, set_id: str) -> bool:
        """The set is declared and its tags are known (its walls can be verified tile by tile)."""
        return set_id in self.sets and set_id not in self.unenrolled_files

    @property
    def unenrolled(self) -> list[str]:
        """Declared sets not enrolled yet, in the table model's order."""
        return list(self.unenrolled_files)

    def counted_only(self, set_id: str) -> bool:
        """Walls of ``set_id`` can only be counted, not verified: the set is declared but not enrolled, or no
        set is enrolled at all (then no tag names a tile of any set)."""
        if not any(self.enrolled(s) for s in self.sets):
            return True
        return set_id in self.unenrolled_files

    def enrol_hint(self) -> str:
        """One line for the technician when some set is not enrolled, or none is declared ("" when every
        declared set is enrolled): which sets, what that means, and the command that enrols each."""
        missing = self.unenrolled
        if not self.sets:
            return worded_text("no tile set is enrolled (the table model's [reader.registry] names none): walls are "
                               "counted, not verified")
        if not missing:
            return ""
        commands = "; ".join(f"mjtable diag enroll --set {s} --antenna 0 --out {self.unenrolled_files[s]}"
                             for s in missing)
        if len(missing) > 1:
            return worded_text("tile sets %(sets)s not enrolled: walls are counted, not verified; enrol each set with: "
                               "%(commands)s", sets=", ".join(missing), commands=commands)
        return worded_text("tile set %(sets)s not enrolled: its walls are counted, not verified; enrol it with: "
                           "%(commands)s", sets=missing[0], commands=commands)

    def add_set(self, set_id: str, tiles: list[tuple[bytes, int]], source: str = "generated") -> None:
        """Register a whole set; raises ConfigError on a duplicate UID or a non-standard set."""
        if self.enrolled(set_id):
            raise worded(ConfigError, "%(file)s: set %(set)s is already registered (from %(source)s)", file=source,
                         set=set_id, source=self.sources[set_id])
        entries = []
        for uid, kind in tiles:
            if uid in self.by_uid:
                raise worded(ConfigError, "%(file)s: UID %(uid)s is registered twice (%(first)s)", file=source,
                             uid=uid.hex(), first=self.by_uid[uid])
            entry = RegisteredTile(uid, set_id, kind)
            self.by_uid[uid] = entry
            entries.append(entry)
        self.sets[set_id] = entries
        self.sources[set_id] = source
        self.unenrolled_files.pop(set_id, None)
        standard_set_of([kind for _, kind in tiles], source)

    def lookup(self, uid: bytes) -> RegisteredTile | None:
        return self.by_uid.get(uid)

    def set_size(self, set_id: str) -> int:
        return len(self.sets[set_id])

    def check_covers(self, set_id: str, tile_set: TileSet, source: str) -> None:
        """The physical set must hold at least the tiles the table plays with."""
        held = Counter(t.kind for t in self.sets[set_id])
        short = [f"{code(k)} ({held[k]} of {n})" for k, n in enumerate(tile_set.copies) if held[k] < n]
        if short:
            raise worded(ConfigError, "%(file)s: set %(set)s cannot make the %(size)s-tile set; short of %(short)s",
                         file=source, set=set_id, size=tile_set.size, short=", ".join(short))


def standard_set_of(kinds: list[int], source: str) -> TileSet:
    """The standard set these faces make exactly, or a ConfigError saying how they differ."""
    counted = Counter(kinds)
    copies = tuple(counted.get(k, 0) for k in range(KINDS))
    for tile_set in TILE_SETS.values():
        if tile_set.copies == copies:
            return tile_set
    closest = min(TILE_SETS.values(), key=lambda s: sum(abs(a - b) for a, b in zip(s.copies, copies)))
    diffs = [f"{code(k)} {copies[k]} (expected {closest.copies[k]})" for k in range(KINDS)
             if copies[k] != closest.copies[k]]
    raise worded(ConfigError, "%(file)s: %(tiles)s tiles are not a standard set; against the %(size)s-tile set: "
                              "%(diffs)s", file=source, tiles=len(kinds), size=closest.size,
                 diffs=", ".join(diffs[:8]) + (" ..." if len(diffs) > 8 else ""))


def load_registry(files: dict[str, Path]) -> TileRegistry:
    """Load one CSV per set (``{"A": path, ...}``) into a registry; a set whose file does not exist is declared,
    not enrolled (a file that exists but cannot be read or is malformed is a ConfigError)."""
    registry = TileRegistry()
    for set_id, given in files.items():
        path = _plain(given)
        if not path.exists():
            registry.declare(set_id, str(path))
            continue
        registry.add_set(set_id, read_set_file(path, set_id), str(path))
    return registry


def _plain(path: Path) -> Path:
    """The path as a technician names it (``/etc/mjtable/tiles/A.csv``, not ``tables/../tiles/A.csv``), where
    that is the same file (a symlinked folder can make ``..`` lead elsewhere)."""
    plain = Path(os.path.normpath(path))
    return plain if os.path.realpath(plain) == os.path.realpath(path) else Path(path)


def read_set_file(path: Path, set_id: str) -> list[tuple[bytes, int]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise worded(ConfigError, "%(file)s: cannot read the tile registry: %(problem)s", file=path,
                     problem=exc.strerror or exc) from None
    rows = list(csv.reader(text.splitlines()))
    if not rows or [c.strip().lower() for c in rows[0]] != HEADER:
        raise worded(ConfigError, "%(file)s: line 1: expected the header %(header)s", file=path,
                     header=",".join(HEADER))
    tiles: list[tuple[bytes, int]] = []
    first_line: dict[bytes, int] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not row or not "".join(row).strip():
            continue
        if len(row) != 3:
            raise worded(ConfigError, "%(file)s: line %(line)s: expected uid,set,tile; got %(fields)s fields",
                         file=path, line=number, fields=len(row))
        uid_text, row_set, face = (c.strip() for c in row)
        try:
            uid = bytes.fromhex(uid_text)
        except ValueError:
            raise worded(ConfigError, "%(file)s: line %(line)s: UID %(uid)r is not hex", file=path, line=number,
                         uid=uid_text) from None
        if not is_tile_uid(uid):
            raise worded(ConfigError, "%(file)s: line %(line)s: UID %(uid)s is not an ISO 15693 tag (8 bytes, E0...)",
                         file=path, line=number, uid=uid_text)
        if row_set != set_id:
            raise worded(ConfigError, "%(file)s: line %(line)s: set %(row)r, but this file is set %(set)s", file=path,
                         line=number, row=row_set, set=set_id)
        try:
            kind = parse_one(face)
        except TileError as exc:
            raise worded(ConfigError, "%(file)s: line %(line)s: %(problem)s", file=path, line=number,
                         problem=exc) from None
        if uid in first_line:
            raise worded(ConfigError, "%(file)s: line %(line)s: UID %(uid)s already on line %(first)s", file=path,
                         line=number, uid=uid_text, first=first_line[uid])
        first_line[uid] = number
        tiles.append((uid, kind))
    return tiles


def write_set_file(path: Path, set_id: str, tiles: list[tuple[bytes, int]]) -> None:
    """Write a set's registry file (enrollment), replacing any earlier one atomically."""
    lines = [",".join(HEADER)] + [f"{uid.hex()},{set_id},{code(kind)}" for uid, kind in tiles]
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)


def load_table_registry(cfg: "TableConfig") -> TileRegistry:
    """The registry a table model names, checked to hold the tile set the table plays."""
    from firmware.tiles.sets import tile_set

    registry = load_registry(cfg.registry_files())
    for set_id in registry.sets:
        if registry.enrolled(set_id):
            registry.check_covers(set_id, tile_set(cfg.table.tile_set), registry.sources[set_id])
    return registry
