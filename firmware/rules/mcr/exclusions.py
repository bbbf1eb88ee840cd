"""The 不计 lists: fans a bigger fan already implies are not scored again.

``final_adjust`` applies every exclusion of the rule book to a fan table,
in an order where a fan that is itself excluded has already done its own
excluding (不重复原则, applied per instance: 三风刻 removes only its own
three 幺九刻).  The wind pungs come last (``wind_pungs``): 圈风刻 and 门风刻
each take their pung out of 幺九刻, unless a bigger fan already did.
"""

from __future__ import annotations

from operator import itemgetter

from firmware.rules.mcr.fans import Fan
from firmware.rules.mcr.fans import FanIndex as I

F = Fan

# (fan, the fans it excludes), applied in this order.
EXCLUDES: tuple[tuple[Fan, tuple[Fan, ...]], ...] = (
    (F.BIG_FOUR_WINDS, (F.ALL_PUNGS, F.PUNG_OF_TERMINALS_OR_HONORS)),
    (F.BIG_THREE_DRAGONS, (F.DRAGON_PUNG,)),
    (F.ALL_GREEN, (F.HALF_FLUSH, F.ONE_VOIDED_SUIT)),
    (F.FOUR_KONGS, (F.SINGLE_WAIT,)),
    (F.ALL_TERMINALS, (F.ALL_PUNGS, F.OUTSIDE_HAND, F.PUNG_OF_TERMINALS_OR_HONORS, F.NO_HONORS, F.DOUBLE_PUNG)),
    (F.LITTLE_FOUR_WINDS, (F.PUNG_OF_TERMINALS_OR_HONORS,)),
    (F.LITTLE_THREE_DRAGONS, (F.DRAGON_PUNG,)),
    (F.ALL_HONORS, (F.ALL_PUNGS, F.OUTSIDE_HAND, F.PUNG_OF_TERMINALS_OR_HONORS, F.ONE_VOIDED_SUIT)),
    (F.FOUR_CONCEALED_PUNGS, (F.ALL_PUNGS, F.CONCEALED_HAND)),       # and 不求人 becomes 自摸, below
    (F.PURE_TERMINAL_CHOWS, (F.FULL_FLUSH, F.ALL_CHOWS, F.NO_HONORS)),
    (F.FOUR_PURE_SHIFTED_PUNGS, (F.ALL_PUNGS,)),
    (F.ALL_TERMINALS_AND_HONORS, (F.ALL_PUNGS, F.OUTSIDE_HAND, F.PUNG_OF_TERMINALS_OR_HONORS)),
    (F.ALL_EVEN_PUNGS, (F.ALL_PUNGS, F.ALL_SIMPLES, F.NO_HONORS)),
    (F.UPPER_TILES, (F.NO_HONORS,)),
    (F.MIDDLE_TILES, (F.ALL_SIMPLES, F.NO_HONORS)),
    (F.LOWER_TILES, (F.NO_HONORS,)),
    (F.THREE_SUITED_TERMINAL_CHOWS, (F.ALL_CHOWS, F.NO_HONORS)),
    (F.ALL_FIVE, (F.ALL_SIMPLES, F.NO_HONORS)),
    (F.UPPER_FOUR, (F.NO_HONORS,)),
    (F.LOWER_FOUR, (F.NO_HONORS,)),
)
EXCLUDES_LATE: tuple[tuple[Fan, tuple[Fan, ...]], ...] = (
    (F.REVERSIBLE_TILES, (F.ONE_VOIDED_SUIT,)),
    (F.LAST_TILE_DRAW, (F.SELF_DRAWN,)),
    (F.OUT_WITH_REPLACEMENT_TILE, (F.SELF_DRAWN,)),
    (F.MELDED_HAND, (F.SINGLE_WAIT,)),
    (F.TWO_DRAGONS_PUNGS, (F.DRAGON_PUNG,)),
    (F.FULLY_CONCEALED_HAND, (F.SELF_DRAWN,)),
    (F.ALL_CHOWS, (F.NO_HONORS,)),
    (F.ALL_SIMPLES, (F.NO_HONORS,)),
)


_EXCLUDES = tuple((int(fan), tuple(int(o) for o in others)) for fan, others in EXCLUDES)
_EXCLUDES_LATE = tuple((int(fan), tuple(int(o) for o in others)) for fan, others in EXCLUDES_LATE)
# The fans that exclude others, read in one C-level call: most tables have none of them.
_EXCLUDERS = itemgetter(*[fan for fan, _ in _EXCLUDES], I.FOUR_CONCEALED_PUNGS, I.BIG_THREE_WINDS)
_LATE_EXCLUDERS = itemgetter(*(fan for fan, _ in _EXCLUDES_LATE))


def final_adjust(t: list[int]) -> None:
    if any(_EXCLUDERS(t)):
        for fan, excluded in _EXCLUDES:
            if t[fan]:
                for other in excluded:
                    t[other] = 0
        if t[I.FOUR_CONCEALED_PUNGS] and t[I.FULLY_CONCEALED_HAND]:
            t[I.FULLY_CONCEALED_HAND] = 0
            t[I.SELF_DRAWN] = 1
        # 三风刻: its own three pungs are not 幺九刻 (字一色 and 混幺九 already removed them all)
        if t[I.BIG_THREE_WINDS] and not t[I.ALL_HONORS] and not t[I.ALL_TERMINALS_AND_HONORS]:
            t[I.PUNG_OF_TERMINALS_OR_HONORS] = max(0, t[I.PUNG_OF_TERMINALS_OR_HONORS] - 3)
    if any(_LATE_EXCLUDERS(t)):
        for fan, excluded in _EXCLUDES_LATE:
            if t[fan]:
                for other in excluded:
                    t[other] = 0


def wind_pungs(tile: int, round_wind: int, seat_wind: int, t: list[int]) -> None:
    """圈风刻 / 门风刻 for a wind pung; each takes its pung out of 幺九刻 (once when both are the same wind),
    unless 三风刻, 混幺九, 字一色 or 小四喜 already took every wind pung out."""
    deducted = t[I.BIG_THREE_WINDS] or t[I.ALL_TERMINALS_AND_HONORS] or t[I.ALL_HONORS] or t[I.LITTLE_FOUR_WINDS]
    if tile == round_wind:
        t[I.PREVALENT_WIND] = 1
        if not deducted:
            t[I.PUNG_OF_TERMINALS_OR_HONORS] -= 1
    if tile == seat_wind:
        t[I.SEAT_WIND] = 1
        if seat_wind != round_wind and not deducted:
            t[I.PUNG_OF_TERMINALS_OR_HONORS] -= 1
