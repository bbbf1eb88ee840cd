"""The physical tile sets a table can carry, and checks against them.

======  ===============================  =========================
set     tiles                            used by
======  ===============================  =========================
144     136 + 8 flowers                  MCR / 国粹, 中国竞技麻将
136     suits + winds + dragons          辽宁
112     108 suits + 4 红中               锦州
108     suits only                       四川 (血战到底)
======  ===============================  =========================
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from firmware.i18n import worded
from firmware.tiles.tile import FLOWER_BASE, KINDS, PLAYABLE, RED_DRAGON, SUITED, TileError, code


@dataclass(frozen=True)
class TileSet:
    """How many copies of each kind a set holds."""

    size: int
    copies: tuple[int, ...]  # per kind, KINDS entries

    @property
    def kinds(self) -> list[int]:
        return [k for k in range(KINDS) if self.copies[k]]

    def has_flowers(self) -> bool:
        return any(self.copies[FLOWER_BASE:])

    def all_tiles(self) -> list[int]:
        """Every tile of the set, in canonical order (kind by kind)."""
        return [k for k in range(KINDS) for _ in range(self.copies[k])]

    def check_counts(self, kinds: list[int] | tuple[int, ...], complete: bool = False) -> None:
        """Raise :class:`TileError` for a fifth copy or a tile not in this set.

        With ``complete`` the tiles must be exactly the set.
        """
        counted = Counter(kinds)
        for kind, n in sorted(counted.items()):
            if not 0 <= kind < KINDS:
                raise worded(TileError, "unknown tile kind %(kind)s", kind=kind)
            if self.copies[kind] == 0:
                raise worded(TileError, "%(tile)s is not in the %(size)s-tile set", tile=code(kind), size=self.size)
            if n > self.copies[kind]:
                raise worded(TileError, "%(count)s copies of %(tile)s: the %(size)s-tile set has %(copies)s", count=n,
                             tile=code(kind), size=self.size, copies=self.copies[kind])
        if complete:
            missing = [code(k) for k in range(KINDS) if counted.get(k, 0) < self.copies[k]]
            if missing:
                raise worded(TileError, "missing from the %(size)s-tile set: %(missing)s", size=self.size,
                         missing=" ".join(missing))


def _make(size: int, suits: bool, honours: tuple[int, ...], flowers: bool) -> TileSet:
    copies = [0] * KINDS
    if suits:
        for k in range(SUITED):
            copies[k] = 4
    for k in honours:
        copies[k] = 4
    if flowers:
        for k in range(FLOWER_BASE, KINDS):
            copies[k] = 1
    ts = TileSet(size, tuple(copies))
    assert sum(copies) == size, (size, sum(copies))
    return ts


TILE_SETS: dict[int, TileSet] = {
    144: _make(144, True, tuple(range(SUITED, PLAYABLE)), True),
    136: _make(136, True, tuple(range(SUITED, PLAYABLE)), False),
    112: _make(112, True, (RED_DRAGON,), False),
    108: _make(108, True, (), False),
}


def tile_set(size: int) -> TileSet:
    try:
        return TILE_SETS[size]
    except KeyError:
        raise worded(TileError, "no %(size)s-tile set; sets are %(sets)s", size=size,
                     sets=str(sorted(TILE_SETS))) from None
