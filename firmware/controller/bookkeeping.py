"""What the controller must know after a power cut: where each set is, and how far things got.

Plain data, written to the table database as one JSON document after every
change and read back through its typed model
(:class:`firmware.store.records.BookRecord`, whose fields are these).
Positions of a stacked set's walls are kept as faces per position (from
the verified wall map), so a restarted controller can still deal.  A wall
none of whose faces is known was counted, not verified (its set is not
enrolled, or no tag of it was read): :meth:`Bookkeeping.wall_mode`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from firmware.controller.states import SetLocation
from firmware.rules.ruleset import Dealership
from firmware.store.records import BookRecord
from firmware.tiles.wall import Wall, position_at


@dataclass
class StackingProgress:
    """A stacking cycle under way.  Only ``set_id`` and ``cycle`` are in the bookkeeping document; the
    counts and UIDs are the cycle's progress rows (one per side, written per stack), read back after a restart."""

    set_id: str | None                 # None until the tags say which set it is
    cycle: int                         # the cycle's number (its rows in the table database)
    counted: list[int]
    stacked: list[int]
    uids: list[list[bytes | None]]     # per side, in count order (None: not read)
    counts_known: bool = False         # counted and uids are this process's own (no power cut since)

    @classmethod
    def new(cls, set_id: str | None, cycle: int) -> "StackingProgress":
        return cls(set_id, cycle, [0] * 4, [0] * 4, [[] for _ in range(4)])

    def set_side(self, side: int, stacked: int, counted: int, uids: list[bytes | None]) -> None:
        """A side's progress: tiles stacked and counted, and the UIDs of the counted tiles in count order
        (as far as they are known: the rest are not read yet)."""
        self.stacked[side], self.counted[side] = stacked, max(counted, stacked)
        self.uids[side] = list(uids)[:self.counted[side]]


UNKNOWN_SET = "?"       # a stacked set none of whose tags could be read (it is named at its next stacking)


@dataclass
class Bookkeeping:
    sets: dict[str, str] = field(default_factory=dict)          # set id -> SetLocation value
    unknown_on_disk: bool = False      # tiles poured in that no tag has named yet
    stacking: StackingProgress | None = None
    walls: dict[str, list] = field(default_factory=dict)        # set id -> sides -> stacks -> [bottom, top]
    hand: int = 0                      # hands started
    dealer: int = 0                    # physical side of the dealer
    dealer_streak: int = 0             # hands the dealer has kept the seat
    long_hair: int = 0                 # 辽宁 长毛 carried over from 黄庄
    last_winner: int | None = None     # physical side that won the hand just played (None: drawn)
    last_followed: bool = False        # the dealer's first discard of that hand was followed (跟庄)
    last_discarder: int | None = None  # that hand's first win was several on one discard (一炮多响): the discarder
    hand_open: bool = False            # a hand is being played
    hand_over: bool = False            # a hand ended; its set still has to go into the centre
    raising: bool = False              # the wall lifts were turning (a restart repeats the raise)
    players_waited_s: float = 0.0
    cycles: int = 0
    rejected: dict[str, list[str]] = field(default_factory=dict)  # set id -> why its walls may not be played

    # -- the sets as they move ----------------------------------------------------------------------------
    def raised(self) -> None:
        """The wall lifts finished their turn: the stacked sets are up, on the table."""
        for set_id in self.sets_at(SetLocation.STACKED):
            self.put(set_id, SetLocation.TABLE)
        self.raising = False

    def below(self) -> bool:
        """A set is (partly) on the disk, to be stacked underneath."""
        return bool(self.stacking or self.sets_at(SetLocation.DISK) or self.unknown_on_disk)

    def hand_ended(self) -> None:
        self.hand_open = False
        self.hand_over = True

    def centre_closed(self, dealership: Dealership | None) -> None:
        """The centre closed: the walls on the table went in (rejected walls are shuffled and read again); after
        a hand the dealer moves on to ``dealership``; opened to load, a set may have been poured in."""
        for set_id in self.sets_at(SetLocation.TABLE):
            self.put(set_id, SetLocation.DISK)
            self.rejected.pop(set_id, None)
        if self.hand_over:
            assert dealership is not None
            self.hand_over = False
            self.dealer, self.dealer_streak, self.long_hair = dealership.dealer, dealership.streak, \
                dealership.long_hair
            self.last_winner, self.last_followed, self.last_discarder = None, False, None
        else:
            self.unknown_on_disk = True

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
        """Everything but the walls (written once per stacked set, see ``walls``) and a cycle's progress
        (its stack rows), shallowly."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("walls", "stacking")}
        out["stacking"] = {"set_id": self.stacking.set_id, "cycle": self.stacking.cycle} if self.stacking else None
        return out

    @classmethod
    def from_record(cls, record: BookRecord | None, walls: dict | None = None,
                    stacks: list[tuple[int, int, int, list[bytes | None]]] | None = None) -> "Bookkeeping":
        """The bookkeeping as the table database holds it (a new table's when there is none yet); ``stacks``:
        the progress rows of the cycle under way, one per side."""
        book = cls()
        if record is not None:
            data = record.model_dump()
            stacking = data.pop("stacking")
            book = cls(**data)
            if stacking:
                book.stacking = StackingProgress.new(stacking["set_id"], stacking["cycle"])
                for side, stacked, counted, uids in stacks or []:
                    book.stacking.set_side(side, stacked, counted, uids)
        book.walls = {set_id: [[list(stack) for stack in side] for side in sides]
                      for set_id, sides in (walls or {}).items()}
        return book

    def store_wall(self, set_id: str, wall: Wall) -> None:
        """Keep a verified set's wall as sides of stacks, stack 1 first, each [bottom, top] (or [bottom])."""
        self.walls[set_id] = [[[wall[position_at(side, stack, level)] for level in ("bottom", "top")
                                if position_at(side, stack, level) in wall]
                               for stack in range(1, wall.stacks_per_side + 1)] for side in range(4)]

    def wall_mode(self, set_id: str) -> str:
        """``verified`` when the set's wall names at least one face, else ``counted``: nothing in the wall was
        checked tile by tile (a set not enrolled is counted only), so the deal knows none of its tiles."""
        sides = self.walls.get(set_id) or []
        named = any(face is not None for side in sides for stack in side for face in stack)
        return "verified" if named else "counted"

    def wall(self, set_id: str) -> Wall | None:
        sides = self.walls.get(set_id)
        if not sides or not any(sides):
            return None
        return Wall.from_sides([[tuple(stack) for stack in side] for side in sides])
