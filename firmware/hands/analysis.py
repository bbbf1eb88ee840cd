"""Hand analysis: legal winning shapes, every decomposition, waits and shanten.

A hand is given as a 34-entry count vector of its *concealed* tiles plus the
number of sets already declared (chow, pung, kong).  Standard hands are
answered from the per-suit tables of :mod:`firmware.hands.suit_tables`;
special shapes (:mod:`firmware.hands.shapes`) are tried only when the hand
could be one.  Which shapes count is the rule set's choice (``shapes``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from itertools import product

from firmware.hands import shapes as sp
from firmware.hands.suit_tables import PUNG, blocks, completers, splits, status
from firmware.tile_constants import PLAYABLE, TERMINALS_AND_HONOURS


class Shape(enum.Enum):
    STANDARD = "standard"
    SEVEN_PAIRS = "seven_pairs"
    THIRTEEN_ORPHANS = "thirteen_orphans"
    HONOURS_KNITTED = "honours_and_knitted"       # 全不靠 (七星不靠 is a special case)
    KNITTED_STRAIGHT = "knitted_straight"         # 组合龙 + one set + a pair
    FOURTEEN_UNRELATED = "fourteen_unrelated"     # 十四不靠 / 大乱


MCR_SHAPES = frozenset({Shape.STANDARD, Shape.SEVEN_PAIRS, Shape.THIRTEEN_ORPHANS, Shape.HONOURS_KNITTED,
                        Shape.KNITTED_STRAIGHT})
COMPETITION_SHAPES = frozenset({Shape.STANDARD, Shape.SEVEN_PAIRS, Shape.FOURTEEN_UNRELATED})
STANDARD_AND_PAIRS = frozenset({Shape.STANDARD, Shape.SEVEN_PAIRS})
STANDARD_ONLY = frozenset({Shape.STANDARD})

CHOW, PUNG_SET = "chow", "pung"


@dataclass(frozen=True)
class Decomposition:
    """One reading of the concealed tiles as a winning hand."""

    shape: Shape
    pair: int | None = None
    sets: tuple[tuple[str, int], ...] = ()      # ("chow", lowest kind) or ("pung", kind)
    knitted: tuple[int, ...] = ()               # the 9 tiles read as 组合龙

    def __str__(self) -> str:
        from firmware.tiles.tile import code
        parts = [f"{k % 9 + 1}{k % 9 + 2}{k % 9 + 3}{'mps'[k // 9]}" if kind == CHOW else _triple(k)
                 for kind, k in self.sets]
        if self.knitted:
            parts.insert(0, "knitted:" + "".join(code(k) for k in self.knitted))
        if self.pair is not None:
            pair = code(self.pair)
            parts.append(pair[0] * 2 + pair[1:] if self.pair < 27 else pair * 2)
        return f"{self.shape.value}[{' '.join(parts)}]"


def _triple(kind: int) -> str:
    from firmware.tiles.tile import code
    c = code(kind)
    return c[0] * 3 + c[1:] if kind < 27 else c * 3


def _groups(counts: list[int]) -> tuple[tuple[int, ...], ...]:
    return tuple(counts[0:9]), tuple(counts[9:18]), tuple(counts[18:27]), tuple(counts[27:34])


_SUITED = (True, True, True, False)


_SLICES = ((0, 9, True), (9, 18, True), (18, 27, True), (27, 34, False))


def is_standard_win(counts: list[int], declared: int = 0) -> bool:
    if sum(counts) != 14 - 3 * declared:
        return False
    pairs = 0
    for lo, hi, suited in _SLICES:
        key = tuple(counts[lo:hi])
        cache = _STATUS_SUITED if suited else _STATUS_HONOURS
        st = cache.get(key)
        if st is None:
            st = cache[key] = status(key, suited)
        if st == 0:
            return False
        if st == 2:
            pairs += 1
            if pairs > 1:
                return False
    return pairs == 1


_STATUS_SUITED: dict[tuple[int, ...], int] = {}
_STATUS_HONOURS: dict[tuple[int, ...], int] = {}


def win_shapes(counts: list[int], declared: int = 0, shapes: frozenset[Shape] = MCR_SHAPES) -> list[Shape]:
    """The shapes this hand completes (empty: not a win)."""
    found = []
    if Shape.STANDARD in shapes and is_standard_win(counts, declared):
        found.append(Shape.STANDARD)
    found.extend(_special_shapes(counts, declared, shapes))
    return found


def _special_shapes(counts: list[int], declared: int, shapes: frozenset[Shape]) -> list[Shape]:
    found: list[Shape] = []
    if len(shapes) == 1 and Shape.STANDARD in shapes:
        return found
    if declared == 0 and sum(counts) == 14:
        top = max(counts)
        if Shape.SEVEN_PAIRS in shapes and sp.seven_pairs(counts):
            found.append(Shape.SEVEN_PAIRS)
        if top == 2 and Shape.THIRTEEN_ORPHANS in shapes and sp.thirteen_orphans(counts):
            found.append(Shape.THIRTEEN_ORPHANS)
        if top == 1:
            if Shape.HONOURS_KNITTED in shapes and sp.honours_and_knitted(counts):
                found.append(Shape.HONOURS_KNITTED)
            if Shape.FOURTEEN_UNRELATED in shapes and sp.fourteen_unrelated(counts):
                found.append(Shape.FOURTEEN_UNRELATED)
    if Shape.KNITTED_STRAIGHT in shapes and declared <= 1 and _knitted_straight(counts, declared):
        found.append(Shape.KNITTED_STRAIGHT)
    return found


def is_win(counts: list[int], declared: int = 0, shapes: frozenset[Shape] = MCR_SHAPES) -> bool:
    if Shape.STANDARD in shapes and is_standard_win(counts, declared):
        return True
    return bool(_special_shapes(counts, declared, shapes))


def _holds_all(counts: list[int], tiles: tuple[int, ...]) -> bool:
    for k in tiles:
        if not counts[k]:
            return False
    return True


def _knitted_straight(counts: list[int], declared: int) -> list[int]:
    """Arrangements (indices of KNITTED) whose 9 tiles plus the rest make a win."""
    found = []
    for i, tiles in enumerate(sp.KNITTED):
        if _holds_all(counts, tiles):
            if sum(counts) != 14 - 3 * declared:
                return []
            rest = list(counts)
            for k in tiles:
                rest[k] -= 1
            if is_standard_win(rest, declared + 3):
                found.append(i)
    return found


def decompositions(counts: list[int], declared: int = 0,
                   shapes: frozenset[Shape] = MCR_SHAPES) -> list[Decomposition]:
    """Every reading of the concealed tiles as a win (the scorers choose among them)."""
    out: list[Decomposition] = []
    if Shape.STANDARD in shapes and is_standard_win(counts, declared):
        out.extend(_standard_decompositions(counts))
    if declared == 0:
        if Shape.SEVEN_PAIRS in shapes and sp.seven_pairs(counts):
            out.append(Decomposition(Shape.SEVEN_PAIRS))
        if Shape.THIRTEEN_ORPHANS in shapes and sp.thirteen_orphans(counts):
            pair = next(k for k in TERMINALS_AND_HONOURS if counts[k] == 2)
            out.append(Decomposition(Shape.THIRTEEN_ORPHANS, pair=pair))
        if Shape.HONOURS_KNITTED in shapes and sp.honours_and_knitted(counts):
            out.append(Decomposition(Shape.HONOURS_KNITTED))
        if Shape.FOURTEEN_UNRELATED in shapes and sp.fourteen_unrelated(counts):
            out.append(Decomposition(Shape.FOURTEEN_UNRELATED))
    if Shape.KNITTED_STRAIGHT in shapes and declared <= 1:
        for i in _knitted_straight(counts, declared):
            rest = list(counts)
            for k in sp.KNITTED[i]:
                rest[k] -= 1
            for d in _standard_decompositions(rest):
                out.append(Decomposition(Shape.KNITTED_STRAIGHT, d.pair, d.sets, sp.KNITTED[i]))
    return out


def _standard_decompositions(counts: list[int]) -> list[Decomposition]:
    per_group = []
    for g_index, (g, suited) in enumerate(zip(_groups(counts), _SUITED)):
        base = g_index * 9
        options = []
        for pair, sets in splits(g, suited):
            options.append((None if pair < 0 else base + pair,
                            tuple((PUNG_SET if kind == PUNG else CHOW, base + r) for kind, r in sets)))
        per_group.append(options)
    out = []
    for combo in product(*per_group):
        pairs = [p for p, _ in combo if p is not None]
        if len(pairs) != 1:
            continue
        sets = tuple(s for _, group_sets in combo for s in group_sets)
        out.append(Decomposition(Shape.STANDARD, pairs[0], sets))
    return out


def waits(counts: list[int], declared: int = 0, shapes: frozenset[Shape] = MCR_SHAPES) -> list[int]:
    """Kinds that complete a ready hand (13 - 3 x declared tiles).

    A kind whose four copies are all in the hand is not a wait.
    """
    if sum(counts) != 13 - 3 * declared:
        return []
    result: set[int] = set()
    if Shape.STANDARD in shapes:
        result.update(_standard_waits(counts))
    special = shapes - {Shape.STANDARD}
    if special and _may_be_special(counts, declared, special):
        for kind in range(PLAYABLE):
            if kind in result or counts[kind] >= 4:
                continue
            counts[kind] += 1
            if win_shapes(counts, declared, special):
                result.add(kind)
            counts[kind] -= 1
    return sorted(result)


def _standard_waits(counts: list[int]) -> list[int]:
    groups = _groups(counts)
    st = [status(g, s) for g, s in zip(groups, _SUITED)]
    found = []
    for gi, (g, suited) in enumerate(zip(groups, _SUITED)):
        others = st[:gi] + st[gi + 1:]
        if 0 in others:
            continue
        other_pairs = others.count(2)
        to_sets, to_pair = completers(g, suited)
        base = gi * 9
        if other_pairs == 1:
            found.extend(base + r for r in to_sets)
        elif other_pairs == 0:
            found.extend(base + r for r in to_pair)
    return [k for k in found if counts[k] < 4]


def _may_be_special(counts: list[int], declared: int, special: frozenset[Shape]) -> bool:
    """Cheap necessary conditions: could one more tile make a special shape?"""
    if declared == 0:
        top = max(counts)
        if Shape.SEVEN_PAIRS in special and sum(c >> 1 for c in counts) >= 6:
            return True
        if Shape.THIRTEEN_ORPHANS in special and sum(counts[k] for k in TERMINALS_AND_HONOURS) == 13:
            return True
        if top <= 1:
            if Shape.HONOURS_KNITTED in special:
                held = {k for k in range(27) if counts[k]}
                if any(held <= ks for ks in sp.KNITTED_SETS):
                    return True
            if Shape.FOURTEEN_UNRELATED in special and sp.spaced_suits(counts):
                return True
    if Shape.KNITTED_STRAIGHT in special and declared <= 1:
        for tiles in sp.KNITTED:
            missing = 0
            for k in tiles:
                if not counts[k]:
                    missing += 1
                    if missing > 1:
                        break
            if missing <= 1:
                return True
    return False


def shanten(counts: list[int], declared: int = 0, shapes: frozenset[Shape] = MCR_SHAPES) -> int:
    """Tiles away from ready: 0 = ready (waiting), -1 = complete, up to 8 (6 for 4 + pair)."""
    best = _standard_shanten(counts, declared) if Shape.STANDARD in shapes or not shapes else 8
    if declared == 0:
        if Shape.SEVEN_PAIRS in shapes:
            best = min(best, 6 - min(7, sum(c // 2 for c in counts)))
        if Shape.THIRTEEN_ORPHANS in shapes:
            kinds = sum(1 for k in TERMINALS_AND_HONOURS if counts[k])
            pair = any(counts[k] >= 2 for k in TERMINALS_AND_HONOURS)
            best = min(best, 13 - kinds - (1 if pair else 0))
        if Shape.HONOURS_KNITTED in shapes:
            honours = sum(1 for k in range(27, 34) if counts[k])
            knitted = max(sum(1 for k in tiles if counts[k]) for tiles in sp.KNITTED)
            best = min(best, 13 - min(14, honours + knitted))
    return best


def _standard_shanten(counts: list[int], declared: int) -> int:
    combos = {(declared, 0, 0)}
    for g, suited in zip(_groups(counts), _SUITED):
        options = blocks(g, suited)
        combos = {(m + bm, t + bt, min(1, p + bp)) for m, t, p in combos for bm, bt, bp in options if p + bp <= 1}
        combos = {c for c in combos if not any(o != c and o[0] >= c[0] and o[1] >= c[1] and o[2] >= c[2]
                                               for o in combos)}
    best = 8
    for m, t, p in combos:
        m = min(m, 4)
        t_used = min(t, 4 - m)
        best = min(best, 8 - 2 * m - t_used - p)
    return best
