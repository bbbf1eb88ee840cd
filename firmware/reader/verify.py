"""Verify a wall map against the tile set before the walls may rise.

Every tile exactly once, no unknown UIDs, no tile of the other set, no face
the rule set does not play with, the right count per side.  Each problem
names the tile and where it lies, so the players or the technician can take
it out.  Set defects are E82; positions whose TAG was lost are E83.  Any
problem rejects an enrolled set: a wall is dealt only when every one of its
tiles was read (a tile the deal would not know is never guessed; the set
is shuffled and read again).

A set that is declared but not enrolled (or a table with no set enrolled)
has tags that name no tile: its walls are *counted only*
(:func:`count_wall`): each side's count, TAGs that matched no counted tile
and tiles counted but not read are checked as for any set, but no UID,
face, duplicate or missing tile is, and the result says so
(``verified`` False) so that nobody takes the wall for a verified one.
"""

from __future__ import annotations

import enum
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from firmware.faults import FaultCode
from firmware.reader.registry import TileRegistry
from firmware.reader.wall_map import WallMap
from firmware.tiles.sets import TileSet
from firmware.tiles.tile import code
from firmware.tiles.wall import BOTTOM, TOP, Position, Wall, position_at


class Defect(enum.Enum):
    UNREAD = "unread"               # counted, but its TAG was lost (E83)
    UNKNOWN = "unknown"             # a UID in no registry
    FOREIGN = "foreign"             # a tile of another registered set
    DUPLICATE = "duplicate"         # one UID at two positions
    NOT_IN_SET = "not_in_set"       # a face this tile set does not have (a flower in a 136 game)
    MISSING = "missing"             # a tile of the set that is nowhere in the walls
    SIDE_COUNT = "side_count"       # a side holds more or fewer tiles than its wall should
    STRAY = "stray"                 # a TAG that matched no counted tile

    @property
    def code(self) -> FaultCode:
        return FaultCode.E83 if self is Defect.UNREAD else FaultCode.E82


@dataclass(frozen=True)
class Problem:
    defect: Defect
    text: str
    positions: tuple[Position, ...] = ()
    uid: bytes | None = None

    def __str__(self) -> str:
        where = ", ".join(str(p) for p in self.positions)
        return f"{self.defect.value}: {self.text}" + (f" at {where}" if where else "")


@dataclass
class Verification:
    may_rise: bool
    problems: list[Problem]
    wall: Wall                          # faces by position (None where unknown)
    warnings: list[str] = field(default_factory=list)
    verified: bool = True               # False: counted only (the set is not enrolled; no tile was named)

    @property
    def mode(self) -> str:
        """``verified`` (every tile checked against the set's registry) or ``counted`` (counted only)."""
        return "verified" if self.verified else "counted"

    @property
    def all_read(self) -> bool:
        """Every counted tile's TAG was read (no E83)."""
        return not any(p.defect is Defect.UNREAD for p in self.problems)

    @property
    def fault_code(self) -> FaultCode | None:
        """E82 for any set defect, else E83 for unread positions, else None."""
        codes = {p.defect.code for p in self.problems}
        return FaultCode.E82 if FaultCode.E82 in codes else (FaultCode.E83 if codes else None)

    def summary(self) -> str:
        if not self.problems:
            return "verified, every tile present exactly once" if self.verified else \
                "counted only (the set is not enrolled): every side holds its tiles, no tile verified"
        counts = Counter(p.defect.value for p in self.problems)
        return ("" if self.verified else "counted only: ") + \
            ("accepted with warnings: " if self.may_rise else "rejected: ") + \
            ", ".join(f"{n} {name}" for name, n in sorted(counts.items()))


def verify_wall(wall_map: WallMap, registry: TileRegistry, set_id: str, tile_set: TileSet,
                competition: bool = False) -> Verification:
    """Check the wall map of ``set_id`` tile by tile, or count it only when the registry cannot name the set's
    tiles (:meth:`TileRegistry.counted_only`: the set is not enrolled)."""
    if registry.counted_only(set_id):
        return count_wall(wall_map, set_id, competition)
    problems: list[Problem] = []
    by_uid: dict[bytes, list[Position]] = defaultdict(list)
    faces: dict[Position, int | None] = {}
    for position, uid in sorted(wall_map.uids.items()):
        faces[position] = None
        if uid is None:
            continue
        by_uid[uid].append(position)
        entry = registry.lookup(uid)
        if entry is None:
            problems.append(Problem(Defect.UNKNOWN, f"tile with unregistered UID {uid.hex()}", (position,), uid))
        elif entry.set_id != set_id:
            problems.append(Problem(Defect.FOREIGN, f"{code(entry.kind)} of set {entry.set_id} in set {set_id}",
                                    (position,), uid))
        elif tile_set.copies[entry.kind] == 0:
            problems.append(Problem(Defect.NOT_IN_SET, f"{code(entry.kind)} is not in the {tile_set.size}-tile set",
                                    (position,), uid))
        else:
            faces[position] = entry.kind
    for uid, positions in by_uid.items():
        if len(positions) > 1:
            problems.append(Problem(Defect.DUPLICATE, f"UID {uid.hex()} read {len(positions)} times",
                                    tuple(positions), uid))
    problems += _count_problems(wall_map)
    unread = wall_map.unread
    problems += _missing(registry, set_id, tile_set, set(by_uid), len(unread))
    return Verification(not problems, problems, _wall(faces, wall_map.tiles_per_side))


def count_wall(wall_map: WallMap, set_id: str, competition: bool = False) -> Verification:
    """Counting-only verification of a set that is not enrolled: only what the counts and the pairing of TAGs
    with counted tiles tell (a side's count off, a stray TAG, tiles counted but not read); every face stays
    unknown, so the deal does not know the tiles and the result is not ``verified``."""
    problems = _count_problems(wall_map)
    faces: dict[Position, int | None] = {position: None for position in wall_map.uids}
    return Verification(_may_rise(problems, competition), problems, _wall(faces, wall_map.tiles_per_side),
                        [f"set {set_id} is not enrolled: its walls are counted, not verified"], verified=False)


def _count_problems(wall_map: WallMap) -> list[Problem]:
    """What counting tells of any wall: sides holding the wrong number of tiles, TAGs that matched no
    counted tile, and tiles counted whose TAG was lost."""
    problems = []
    for side, counted in enumerate(wall_map.counted):
        if counted != wall_map.tiles_per_side:
            problems.append(Problem(Defect.SIDE_COUNT, f"side {side} holds {counted} tiles, its wall takes "
                                    f"{wall_map.tiles_per_side}"))
    for side, uid in wall_map.stray_tags:
        problems.append(Problem(Defect.STRAY, f"side {side}: TAG {uid.hex()} matched no counted tile", (), uid))
    unread = wall_map.unread
    if unread:
        problems.append(Problem(Defect.UNREAD, f"{len(unread)} tiles counted but not read", tuple(unread)))
    return problems


def _may_rise(problems: list[Problem], competition: bool) -> bool:
    """A counted-only wall: no problem, or (in casual mode) only positions whose TAG was lost (no face of it is
    known either way)."""
    return not problems or (all(p.defect is Defect.UNREAD for p in problems) and not competition)


def _missing(registry: TileRegistry, set_id: str, tile_set: TileSet, seen: set[bytes], unread: int) -> list[Problem]:
    """Tiles of the set read nowhere.  With unread positions they may be there: then only an
    excess over the unread count is certain, and the tiles are named as 'not seen'."""
    wanted_left = list(tile_set.copies)
    absent = []
    for entry in registry.sets.get(set_id, []):
        if wanted_left[entry.kind] == 0:
            continue
        wanted_left[entry.kind] -= 1
        if entry.uid not in seen:
            absent.append(entry)
    if len(absent) <= unread:
        return []
    names = " ".join(code(e.kind) for e in absent)
    text = f"{names} not in the walls" if not unread else f"{len(absent)} tiles not seen ({names}), " \
        f"only {unread} positions unread"
    return [Problem(Defect.MISSING, text, (), absent[0].uid if len(absent) == 1 else None)]


def _wall(faces: dict[Position, int | None], tiles_per_side: int) -> Wall:
    stacks = (tiles_per_side + 1) // 2
    sides = []
    for side in range(4):
        side_stacks = []
        for stack in range(1, stacks + 1):
            bottom = faces.get(position_at(side, stack, BOTTOM))
            top = position_at(side, stack, TOP)
            if top in faces:
                side_stacks.append((bottom, faces[top]))
            else:
                side_stacks.append((bottom,))
        sides.append(side_stacks)
    return Wall.from_sides(sides)
