"""The four walls on the table: sides x stacks x top/bottom, as a technician names them.

Physical sides are numbered 0..3 counter-clockwise from the side with the
service connector.  Each side's wall has ``stacks`` stacks (墩) numbered
1.. from the right-hand end *as the side's owner sees it*; each stack has a
top and a bottom tile (the 108 set's last stack has only a bottom tile).
Walking from stack 1 towards the last stack goes clockwise round the table,
and past a wall's left end continues at stack 1 of the wall of the side
before it (side - 1, the owner's 上家).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

from firmware.frozen import quick_init
from firmware.tiles.tile import code

SIDES = 4
TOP, BOTTOM = "top", "bottom"


@quick_init
@dataclass(frozen=True, order=True)
class Position:
    side: int
    stack: int      # 1-based, from the owner's right
    level: str      # "top" or "bottom"

    def __str__(self) -> str:
        return f"side {self.side} stack {self.stack} {self.level}"


POSITIONS_KEPT = 4096       # positions made once and shared (a table's walls have a few hundred)
_POSITIONS: dict[tuple[int, int, str], Position] = {}


def position_at(side: int, stack: int, level: str) -> Position:
    """``Position(side, stack, level)``, made once and shared (it is frozen): a deal, a wall's reading and the
    players' wall look up positions some 1,800 times a hand, and a shared one is not made again and is found
    in a dict by identity."""
    key = (side, stack, level)
    found = _POSITIONS.get(key)
    if found is None:
        if len(_POSITIONS) >= POSITIONS_KEPT:
            _POSITIONS.clear()              # (bounded, whatever a caller asks for)
        found = _POSITIONS[key] = Position(side, stack, level)
    return found


class Wall:
    """Tiles (kinds, or None where unknown) at every position of the four walls."""

    def __init__(self, stacks_per_side: int, tiles_per_side: int) -> None:
        self.stacks_per_side = stacks_per_side
        self.tiles_per_side = tiles_per_side
        self._tiles: dict[Position, int | None] = {}

    @classmethod
    def from_sides(cls, sides: list[list[tuple[int | None, ...]]]) -> "Wall":
        """Build from each side's stacks, stack 1 first, each stack (bottom, top) or (bottom,)."""
        stacks = max(len(s) for s in sides)
        wall = cls(stacks, sum(len(stack) for stack in sides[0]))
        for side, side_stacks in enumerate(sides):
            for i, stack in enumerate(side_stacks):
                wall._tiles[position_at(side, i + 1, BOTTOM)] = stack[0]
                if len(stack) > 1:
                    wall._tiles[position_at(side, i + 1, TOP)] = stack[1]
        return wall

    @classmethod
    def from_sequence(cls, tiles: list[int], stacks_per_side: int) -> "Wall":
        """Lay tiles side by side, stack by stack, bottom then top (for shuffled test walls)."""
        per_side = len(tiles) // SIDES
        sides = []
        for side in range(SIDES):
            chunk = tiles[side * per_side:(side + 1) * per_side]
            sides.append([tuple(chunk[i:i + 2]) for i in range(0, len(chunk), 2)])
        return cls.from_sides(sides)

    def __getitem__(self, position: Position) -> int | None:
        return self._tiles[position]

    def __contains__(self, position: Position) -> bool:
        return position in self._tiles

    def __len__(self) -> int:
        return len(self._tiles)

    def positions(self) -> Iterator[Position]:
        return iter(sorted(self._tiles))

    def stack_levels(self, side: int, stack: int) -> list[str]:
        """Levels present in a stack, in drawing order (top first)."""
        return [lv for lv in (TOP, BOTTOM) if position_at(side, stack, lv) in self._tiles]

    def render(self, labels: Callable[[int, str], str] | None = None) -> str:
        """Two lines per side: the walls as a technician would read them, stack 1 first (``labels``: a line's
        head for a side and level, ``side 0 top    `` by default)."""
        lines = []
        for side in range(SIDES):
            tops, bottoms = [], []
            for stack in range(1, self.stacks_per_side + 1):
                top = self._tiles.get(Position(side, stack, TOP))
                bottom = self._tiles.get(Position(side, stack, BOTTOM))
                tops.append(_cell(top, Position(side, stack, TOP) in self._tiles))
                bottoms.append(_cell(bottom, Position(side, stack, BOTTOM) in self._tiles))
            head = labels or (lambda side, level: f"side {side} {level:<7}")
            lines.append(head(side, TOP) + " ".join(tops))
            lines.append(head(side, BOTTOM) + " ".join(bottoms))
        return "\n".join(lines)


def _cell(kind: int | None, present: bool) -> str:
    if not present:
        return "  "
    return "??" if kind is None else code(kind).rjust(2)
