"""What the controller must know after a power cut: where each set is, and how far things got.

Plain data, written to the table database as one JSON document after every
change and read back through its typed model
(:class:`firmware.controller.records.BookRecord`, whose fields are these).
Positions of a stacked set's walls are kept as faces per position (from
the verified wall map), so a restarted controller can still deal.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from firmware.controller.records import BookRecord
from firmware.controller.states import SetLocation
from firmware.tiles.wall import Position, Wall


@dataclass
class StackingProgress:
    set_id: str | None                 # None until the tags say which set it is
    counted: list[int]
    stacked: list[int]
    uids: list[list[str | None]]       # per side, in count order (hex; None unknown)


UNKNOWN_SET = "?"       # a stacked set none of whose tags could be read (it is named at its next stacking)


@dataclass
class Bookkeeping:
    sets: dict[str, str] = field(default_factory=dict)          # set id -> SetLocation value
    unknown_on_disk: bool = False      # tiles poured in that no tag has named yet
    stacking: StackingProgress | None = None
    walls: dict[str, list] = field(default_factory=dict)        # set id -> [[side, stack, level, kind|None], ...]
    hand: int = 0                      # hands started
    dealer: int = 0                    # physical side of the dealer
    dealer_streak: int = 0             # hands the dealer has kept the seat
    long_hair: int = 0                 # 辽宁 长毛 carried over from 黄庄
    last_winner: int | None = None     # physical side that won the hand just played (None: drawn)
    hand_open: bool = False            # a hand is being played
    hand_over: bool = False            # a hand ended; its set still has to go into the centre
    raising: bool = False              # the wall lifts were turning (a restart repeats the raise)
    players_waited_s: float = 0.0
    cycles: int = 0
    rejected: dict[str, list[str]] = field(default_factory=dict)  # set id -> why its walls may not be played

    def rejected_on_table(self) -> list[str]:
        """Sets whose walls are up although verification rejected them: they are not dealt."""
        return [s for s in self.sets_at(SetLocation.TABLE) if s in self.rejected]

    def where(self, set_id: str) -> SetLocation:
        return SetLocation(self.sets.get(set_id, SetLocation.NONE.value))

    def put(self, set_id: str, location: SetLocation) -> None:
        self.sets[set_id] = location.value

    def sets_at(self, location: SetLocation) -> list[str]:
        return sorted(s for s, where in self.sets.items() if where == location.value)

    def to_dict(self) -> dict:
        """Everything but the walls (written once per stacked set, see ``walls``), shallowly."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("walls", "stacking")}
        out["stacking"] = dict(vars(self.stacking)) if self.stacking else None
        return out

    @classmethod
    def from_record(cls, record: BookRecord | None, walls: dict | None = None) -> "Bookkeeping":
        """The bookkeeping as the table database holds it (a new table's when there is none yet)."""
        book = cls()
        if record is not None:
            data = record.model_dump()
            stacking = data.pop("stacking")
            book = cls(**data)
            book.stacking = StackingProgress(**stacking) if stacking else None
        book.walls = {set_id: [list(row) for row in rows] for set_id, rows in (walls or {}).items()}
        return book

    def store_wall(self, set_id: str, wall: Wall) -> None:
        self.walls[set_id] = [[p.side, p.stack, p.level, wall[p]] for p in wall.positions()]

    def wall(self, set_id: str) -> Wall | None:
        rows = self.walls.get(set_id)
        if not rows:
            return None
        sides: list[list[tuple]] = [[] for _ in range(4)]
        by_pos = {Position(s, st, lv): kind for s, st, lv, kind in rows}
        stacks = max(p.stack for p in by_pos)
        for side in range(4):
            for stack in range(1, stacks + 1):
                bottom = by_pos.get(Position(side, stack, "bottom"))
                top = Position(side, stack, "top")
                sides[side].append((bottom, by_pos[top]) if top in by_pos else (bottom,))
        return Wall.from_sides(sides)
