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
from functools import lru_cache
from itertools import product
from typing import Callable

from firmware.hands import group_info as gi
from firmware.hands import shapes as sp
from firmware.hands.suit_tables import PUNG, blocks, completers, splits
from firmware.tile_constants import PLAYABLE, TERMINALS_AND_HONOURS

PARTS_KEPT = 2048       # combined tables of the first and last groups of a hand remembered (the players' discards)


class Shape(enum.Enum):
    __hash__ = object.__hash__      # (a member is compared by identity: hashed so in C, not by name in Python)
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

# Shapes as bits, so the hot paths test an int rather than hash an enum member.
_BIT = {shape: 1 << i for i, shape in enumerate(Shape)}
STD, PAIRS7, ORPHANS13, HONOURS_KNIT, KNIT_STRAIGHT, UNRELATED14 = (_BIT[s] for s in (
    Shape.STANDARD, Shape.SEVEN_PAIRS, Shape.THIRTEEN_ORPHANS, Shape.HONOURS_KNITTED, Shape.KNITTED_STRAIGHT,
    Shape.FOURTEEN_UNRELATED))
_MASKS: dict[frozenset[Shape], int] = {}


def _mask(shapes: frozenset[Shape]) -> int:
    mask = _MASKS.get(shapes)
    if mask is None:
        mask = _MASKS[shapes] = sum(_BIT[s] for s in shapes)
    return mask


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

# Packed per-pattern summaries (firmware.hands.group_info), kept in LRUs of a measured size (the scoring
# benchmark prints their hit rates and memory; an entry is ~0.2 KB).  Honour patterns are at most 5^7.
INFOS_KEPT = 16384
_suit_info = lru_cache(maxsize=INFOS_KEPT)(gi.suited_info)
_honour_info = lru_cache(maxsize=INFOS_KEPT // 4)(gi.honours_info)


def _infos(counts: list[int]) -> tuple[int, int, int, int]:
    """The four groups' packed summaries."""
    suit_info = _suit_info
    return (suit_info(tuple(counts[0:9])), suit_info(tuple(counts[9:18])), suit_info(tuple(counts[18:27])),
            _honour_info(tuple(counts[27:34])))


def _standard(infos: tuple[int, int, int, int], tiles: int, declared: int) -> bool:
    """Four groups complete, exactly one with the pair, and the right number of tiles."""
    a, b, c, h = infos
    # Each status is 1 or 2 when complete: the product is 2 exactly when one group holds the pair.
    return tiles == 14 - 3 * declared and (a & 3) * (b & 3) * (c & 3) * (h & 3) == 2


def is_standard_win(counts: list[int], declared: int = 0) -> bool:
    infos = _infos(counts)
    return _standard(infos, sum(infos) >> gi.TOTAL_SHIFT & 255, declared)


def group_summaries(counts: list[int]) -> tuple[int, int, int, int]:
    """The packed per-group summaries of a hand (see :mod:`firmware.hands.group_info`)."""
    return _infos(counts)


def group_summary(pattern: tuple[int, ...]) -> int:
    """The packed summary of one group: a suit's nine counts, or the seven honours' (kept like a hand's)."""
    return _suit_info(pattern) if len(pattern) == 9 else _honour_info(pattern)


def win_shapes(counts: list[int], declared: int = 0, shapes: frozenset[Shape] = MCR_SHAPES,
               infos: tuple[int, int, int, int] | None = None) -> list[Shape]:
    """The shapes this hand completes (empty: not a win); ``infos`` if already known."""
    mask = _mask(shapes)
    infos = infos or _infos(counts)
    tiles = sum(infos) >> gi.TOTAL_SHIFT & 255
    found = []
    if mask & STD and _standard(infos, tiles, declared):
        found.append(Shape.STANDARD)
    if mask & ~STD:
        found.extend(_special_shapes(counts, infos, tiles, declared, mask))
    return found


def is_win(counts: list[int], declared: int = 0, shapes: frozenset[Shape] = MCR_SHAPES) -> bool:
    mask = _MASKS.get(shapes) or _mask(shapes)
    infos = _infos(counts)
    tiles = sum(infos) >> gi.TOTAL_SHIFT & 255
    if mask & STD and _standard(infos, tiles, declared):
        return True
    return bool(mask & ~STD) and bool(_special_shapes(counts, infos, tiles, declared, mask))


def _special_shapes(counts: list[int], infos: tuple[int, int, int, int], tiles: int, declared: int,
                    mask: int) -> list[Shape]:
    """The special shapes (of those in ``mask``) this hand completes; the group summaries decide
    every shape but 组合龙 outright, and rule 组合龙 out for all but a few hands."""
    found: list[Shape] = []
    if tiles != 14 - 3 * declared:
        return found
    a, b, c, h = infos
    every = a & b & c & h
    if declared == 0:
        if every & gi.EVEN and mask & PAIRS7:
            found.append(Shape.SEVEN_PAIRS)
        if every & gi.ORPHANS and mask & ORPHANS13:
            found.append(Shape.THIRTEEN_ORPHANS)
        if every & gi.SINGLES:
            if mask & HONOURS_KNIT and gi.KNITTED_BY_BITS[gi.run_bits((a, b, c), gi.SUB_SHIFT)]:
                found.append(Shape.HONOURS_KNITTED)
            if mask & UNRELATED14 and every & gi.SPACED:
                found.append(Shape.FOURTEEN_UNRELATED)
    if mask & KNIT_STRAIGHT and declared <= 1 and a & gi.KNIT_ANY and b & gi.KNIT_ANY and c & gi.KNIT_ANY \
            and _knitted_straight(counts, infos, declared):
        found.append(Shape.KNITTED_STRAIGHT)
    return found


def _knitted_straight(counts: list[int], infos: tuple[int, int, int, int], declared: int) -> list[int]:
    """Arrangements (indices of KNITTED) whose 9 tiles plus the rest make a win."""
    found = []
    for i in gi.KNITTED_BY_BITS[gi.run_bits(infos[:3], gi.KNIT_SHIFT)]:
        rest = list(counts)
        for k in sp.KNITTED[i]:
            rest[k] -= 1
        if is_standard_win(rest, declared + 3):
            found.append(i)
    return found


def decompositions(counts: list[int], declared: int = 0,
                   shapes: frozenset[Shape] = MCR_SHAPES) -> list[Decomposition]:
    """Every reading of the concealed tiles as a win (the scorers choose among them)."""
    out: list[Decomposition] = []
    infos = _infos(counts)
    tiles = sum(infos) >> gi.TOTAL_SHIFT & 255
    mask = _mask(shapes)
    if mask & STD and _standard(infos, tiles, declared):
        out.extend(_standard_decompositions(counts))
    for shape in _special_shapes(counts, infos, tiles, declared, mask):
        if shape is Shape.THIRTEEN_ORPHANS:
            pair = next(k for k in TERMINALS_AND_HONOURS if counts[k] == 2)
            out.append(Decomposition(shape, pair=pair))
        elif shape is Shape.KNITTED_STRAIGHT:
            for i in _knitted_straight(counts, infos, declared):
                rest = list(counts)
                for k in sp.KNITTED[i]:
                    rest[k] -= 1
                for d in _standard_decompositions(rest):
                    out.append(Decomposition(shape, d.pair, d.sets, sp.KNITTED[i]))
        else:
            out.append(Decomposition(shape))
    return out


def _standard_decompositions(counts: list[int]) -> list[Decomposition]:
    per_group = []
    for g_index, (g, suited) in enumerate(zip(_groups(counts), _SUITED)):
        base = g_index * 9
        options: list[tuple[int | None, tuple[tuple[str, int], ...]]] = []
        for pair, sets in splits(g, suited):
            options.append((None if pair < 0 else base + pair,
                            tuple((PUNG_SET if kind == PUNG else CHOW, base + r) for kind, r in sets)))
        per_group.append(options)
    out = []
    for combo in product(*per_group):
        pairs = [p for p, _ in combo if p is not None]
        if len(pairs) != 1:
            continue
        all_sets = tuple(s for _, group_sets in combo for s in group_sets)
        out.append(Decomposition(Shape.STANDARD, pairs[0], all_sets))
    return out


def waits(counts: list[int], declared: int = 0, shapes: frozenset[Shape] = MCR_SHAPES) -> list[int]:
    """Kinds that complete a ready hand (13 - 3 x declared tiles).

    A kind whose four copies are all in the hand is not a wait.
    """
    mask = _MASKS.get(shapes) or _mask(shapes)
    infos = _infos(counts)
    summed = sum(infos)
    if summed >> gi.TOTAL_SHIFT & 255 != 13 - 3 * declared:
        return []
    found = _standard_waits(counts, infos) if mask & STD else []
    if mask & ~STD and _may_be_special(infos, summed, declared, mask):
        special = frozenset(s for s in shapes if s is not Shape.STANDARD)
        result = set(found)
        for kind in range(PLAYABLE):
            if kind in result or counts[kind] >= 4:
                continue
            counts[kind] += 1
            try:
                if win_shapes(counts, declared, special):
                    result.add(kind)
            finally:
                counts[kind] -= 1
        return sorted(result)
    return found


def _standard_waits(counts: list[int], infos: tuple[int, ...], fifth: bool = False) -> list[int]:
    """Standard-shape waits, ascending.

    With 13 tiles at most one group can be incomplete, and then only it can take the
    winning tile; when all four are complete (two of them hold a pair) any group can.
    """
    statuses = [i & 3 for i in infos]
    incomplete = statuses.count(0)
    if incomplete > 1:
        return []
    pairs = statuses.count(2)
    found: list[int] = []
    for g in ((statuses.index(0),) if incomplete else range(4)):
        other_pairs = pairs - (statuses[g] == 2)
        if other_pairs > 1:
            continue
        base = g * 9
        comp = completers(tuple(counts[base:base + 9]), g < 3, fifth)
        found.extend([base + r for r in comp[0 if other_pairs == 1 else 1]])
    return found


def wait_kinds_with_held(counts: list[int], declared: int = 0,
                         infos: tuple[int, ...] | None = None) -> list[int]:
    """Standard and seven-pairs waits of a ready hand, counting kinds whose four copies are
    all held already (the MCR 独听 test: such a wait still makes the hand not a single wait).
    ``infos``: the hand's group summaries, if already known."""
    infos = infos or _infos(counts)
    summed = sum(infos)
    if summed >> gi.TOTAL_SHIFT & 255 != 13 - 3 * declared:
        return []
    found = _standard_waits(counts, infos, fifth=True)
    if declared == 0 and summed >> gi.PAIRS_SHIFT & 127 == 6:
        odd = next((k for k in range(PLAYABLE) if counts[k] & 1), None)
        if odd is not None and odd not in found:
            found = sorted(found + [odd])
    return found


def _may_be_special(infos: tuple[int, int, int, int], summed: int, declared: int, mask: int) -> bool:
    """Cheap necessary conditions: could one more tile make a special shape?"""
    a, b, c, h = infos
    if declared == 0:
        if mask & PAIRS7 and summed >> gi.PAIRS_SHIFT & 127 >= 6:
            return True
        if mask & ORPHANS13 and summed >> gi.ORPHAN_TILES_SHIFT == 13:
            return True
        if a & b & c & h & gi.SINGLES:
            if mask & HONOURS_KNIT and gi.KNITTED_BY_BITS[gi.run_bits((a, b, c), gi.SUB_SHIFT)]:
                return True
            if mask & UNRELATED14 and a & b & c & gi.SPACED:
                return True
    if mask & KNIT_STRAIGHT and declared <= 1 and a & gi.RUN_ANY and b & gi.RUN_ANY and c & gi.RUN_ANY:
        return gi.one_short_of_knitted((a, b, c))
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


Table = dict[tuple[int, int], int]       # (sets, pair) -> the most partial sets that reach them


def _with(most: Table, options: tuple[tuple[int, int, int], ...]) -> Table:
    """The table after one more group split by one of ``options`` (sets, partial sets, pair)."""
    after: Table = {}
    for (m, p), t in most.items():
        for bm, bt, bp in options:
            q = p + bp
            if q > 1:
                continue
            sets = m + bm
            key = (sets if sets < 4 else 4, q)        # (min(sets, 4) without the call: the players' inner loop)
            if after.get(key, -1) < t + bt:
                after[key] = t + bt
    return after


def _joined(left: Table, right: Table) -> Table:
    return _with(left, tuple((m, t, p) for (m, p), t in right.items()))


def _table_shanten(most: Table) -> int:
    return min(8 - 2 * m - min(t, 4 - m) - p for (m, p), t in most.items())


def _shanten_with(most: Table, options: tuple[tuple[int, int, int], ...]) -> int:
    """``_table_shanten(_with(most, options))`` without building the table (the players' inner loop)."""
    best = 8
    for (m, p), t in most.items():
        for bm, bt, bp in options:
            q = p + bp
            if q > 1:
                continue
            sets = m + bm
            if sets > 4:
                sets = 4
            partial, room = t + bt, 4 - sets
            value = 8 - 2 * sets - (partial if partial < room else room) - q
            if value < best:
                best = value
    return best


def _standard_shanten(counts: list[int], declared: int) -> int:
    """4 sets and a pair: over the groups, the most partial sets for each (sets, pair) reached.

    Shanten is 8 - 2 sets - partial sets (up to the room left) - pair, so for a
    given number of sets (capped at 4) and pair the most partial sets is best:
    a small table of at most ten entries carried from group to group."""
    most: Table = {(min(declared, 4), 0): 0}
    for g, suited in zip(_groups(counts), _SUITED):
        most = _with(most, blocks(g, suited))
    return _table_shanten(most)


def discard_shanten(counts: list[int], declared: int = 0, shapes: frozenset[Shape] = MCR_SHAPES) -> dict[int, int]:
    """Shanten after discarding one tile of each kind held: what a player weighs before every discard.

    The groups a discard does not touch are combined once (the tables of the
    groups before and after it), so each candidate costs one group, not four."""
    groups = _groups(counts)
    special = bool(declared == 0 and shapes - {Shape.STANDARD})
    standard = Shape.STANDARD in shapes or not shapes
    specials = _special_discards(counts, shapes) if special else None
    others: dict[int, Table] = {}           # every group but one, combined once
    # per group: the shanten with every other group for each split of it met so far (the discards of one
    # group share most of their splits: each is weighed against the other groups once)
    weighed: dict[int, dict[tuple[int, int, int], int]] = {}
    out: dict[int, int] = {}
    for kind in range(34):
        if not counts[kind]:
            continue
        i, r = divmod(kind, 9) if kind < 27 else (3, kind - 27)
        g = groups[i]
        less = g[:r] + (g[r] - 1,) + g[r + 1:]
        best = 8
        if standard:
            known = weighed.get(i)
            if known is None:
                others[i] = _all_but(declared, groups, i)
                known = weighed[i] = {}
            for split in blocks(less, _SUITED[i]):
                value = known.get(split)
                if value is None:
                    value = known[split] = _shanten_with(others[i], (split,))
                if value < best:
                    best = value
        if specials is not None:
            best = min(best, specials(kind))
        out[kind] = best
    return out


@lru_cache(maxsize=PARTS_KEPT)
def _before(declared: int, groups: tuple[tuple[int, ...], ...]) -> Table:
    """The table of the declared sets and ``groups`` (the first few of a hand)."""
    if not groups:
        return {(min(declared, 4), 0): 0}
    return _with(_before(declared, groups[:-1]), blocks(groups[-1], _SUITED[len(groups) - 1]))


@lru_cache(maxsize=PARTS_KEPT)
def _after(groups: tuple[tuple[int, ...], ...]) -> Table:
    """The table of the last few groups of a hand (``groups`` ends with the honours)."""
    if not groups:
        return {(0, 0): 0}
    return _with(_after(groups[1:]), blocks(groups[0], _SUITED[4 - len(groups)]))


def _all_but(declared: int, groups: tuple[tuple[int, ...], ...], i: int) -> Table:
    """Every group of the hand but group ``i``, combined (cached by the groups around it:
    from one turn to the next a player's hand changes in one or two groups)."""
    return _joined(_before(declared, groups[:i]), _after(groups[i + 1:]))


def _special_discards(counts: list[int], shapes: frozenset[Shape]) -> Callable[[int], int]:
    """For a concealed hand, ``f(kind)``: the best special-shape shanten after discarding
    one ``kind`` (same figures as ``shanten`` on the smaller hand, by difference)."""
    pairs7 = Shape.SEVEN_PAIRS in shapes
    orphans = Shape.THIRTEEN_ORPHANS in shapes
    knit = Shape.HONOURS_KNITTED in shapes
    pairs = sum(c // 2 for c in counts)
    th_kinds = sum(1 for k in TERMINALS_AND_HONOURS if counts[k])
    th_pairs = sum(1 for k in TERMINALS_AND_HONOURS if counts[k] >= 2)
    honours = sum(1 for k in range(27, 34) if counts[k])
    knitted = [sum(1 for k in tiles if counts[k]) for tiles in sp.KNITTED]
    most_knitted = max(knitted)             # (what a discard leaves when the kind is still held after it)

    def after(kind: int) -> int:        # (the smallest kept without calling min: asked of every discard)
        c = counts[kind]
        best = 8
        if pairs7:
            left = pairs - (c % 2 == 0)
            value = 6 - (left if left < 7 else 7)
            if value < best:
                best = value
        if orphans:
            if kind in _TERMINAL_OR_HONOUR:
                k, p = th_kinds - (c == 1), th_pairs - (c == 2)
            else:
                k, p = th_kinds, th_pairs
            value = 13 - k - (1 if p else 0)
            if value < best:
                best = value
        if knit:
            gone = c == 1
            h = honours - (gone and kind >= 27)
            kn = max(n - (kind in tiles) for n, tiles in zip(knitted, _KNITTED_SETS)) if gone else most_knitted
            value = 13 - (h + kn if h + kn < 14 else 14)
            if value < best:
                best = value
        return best
    return after


_TERMINAL_OR_HONOUR = frozenset(TERMINALS_AND_HONOURS)


def caches() -> dict[str, object]:
    """The hand analysis's bounded caches by name (each has ``cache_info`` and ``cache_clear``), for the
    benchmarks.  (``_MASKS`` is bounded by design: one entry per set of shapes a rule set names.)"""
    from firmware.hands import suit_tables as st

    return {"hands.suit_info": _suit_info, "hands.honour_info": _honour_info, "hands.one_short": gi.one_short,
            "hands.splits": st.splits, "hands.completers": st.completers,
            "hands.blocks": st.blocks, "hands.reach": st._reach, "hands.before": _before, "hands.after": _after}
_KNITTED_SETS = tuple(frozenset(tiles) for tiles in sp.KNITTED)
