"""MCR scoring of a declared win: every reading of the hand scored, the best one kept.

1. Correct the way-of-winning flags by what the tiles prove (a winning tile
   that is also standing cannot be 和绝张; a tile whose melded pung shows the
   other three is; 杠上开花 needs a kong, 抢杠和 a tile seen nowhere else).
2. Special shapes: seven pairs, 全不靠 / 七星不靠, 十三幺, 组合龙 (+ a set and
   a pair, one meld allowed), 九莲宝灯.
3. Regular readings (four sets and a pair; also for seven pairs, which a
   regular reading may beat): each scored by :mod:`~firmware.rules.mcr.regular`,
   the highest total kept (就高不就低).  On a tie the first reading in a fixed
   order wins, except that a reading with 一色三同顺 or 三同刻, or any regular
   reading over seven pairs, is preferred (the reference tables do the same).

Flowers are added last: they count towards the total but not towards the
8-fan minimum.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from itertools import compress

from firmware.hands import group_info as gi
from firmware.hands.analysis import MCR_SHAPES, Shape, wait_kinds_with_held, win_shapes
from firmware.hands.suit_tables import PUNG as SPLIT_PUNG
from firmware.hands.suit_tables import splits
from firmware.rules.mcr import special
from firmware.rules.mcr.fans import FAN_COUNT, POINTS, Fan
from firmware.rules.mcr.fans import FanIndex as I
from firmware.rules.mcr.regular import CHOW, KONG, PAIR, PUNG, HandFacts, Pack, score_division, total
from firmware.rules.mcr.tiles import BAMBOO, CHARACTERS, CODE, DOTS, GREEN, HONORS, REVERSIBLE, WINDS, is_honor
from firmware.rules.win import MeldKind, Win

MINIMUM = 8
FANS: tuple[Fan, ...] = tuple(Fan)
_STANDARD_SHAPE, _SEVEN_PAIRS, _HONOURS_KNITTED, _THIRTEEN_ORPHANS, _KNITTED_STRAIGHT = (
    Shape.STANDARD, Shape.SEVEN_PAIRS, Shape.HONOURS_KNITTED, Shape.THIRTEEN_ORPHANS, Shape.KNITTED_STRAIGHT)
_STANDARD = [Shape.STANDARD]
_FAN_INDICES = range(FAN_COUNT)
_NONE: list[Shape] = []


@dataclass
class MCRScore:
    win: bool
    fans: list[tuple[Fan, int]] = field(default_factory=list)    # (fan, count), rule-book order
    total: int = 0                       # flowers included
    flowers: int = 0
    reason: str = ""

    @property
    def total_without_flowers(self) -> int:
        return self.total - self.flowers

    @property
    def meets_minimum(self) -> bool:
        return self.win and self.total_without_flowers >= MINIMUM


def score(win: Win) -> MCRScore:
    """Score a declared win; ``win`` must be valid (:meth:`Win.validate`)."""
    counts = [0] * 34
    for kind in win.hand:
        counts[kind] += 1
    counts[win.win_tile] += 1
    melds = win.melds
    fixed_cnt = len(melds)
    w = win.win_tile
    kongs = 0
    if melds:
        merged = list(counts)
        for meld in melds:
            if meld.kind is MeldKind.CHOW:
                k = meld.tile
                merged[k] += 1
                merged[k + 1] += 1
                merged[k + 2] += 1
            elif meld.kind is MeldKind.PUNG:
                merged[meld.tile] += 3
            else:
                merged[meld.tile] += 4
                kongs += 1
        in_melds = merged[w] - counts[w]
    else:
        merged, in_melds = counts, 0
    self_drawn = win.self_drawn
    last_of_kind = win.last_of_kind and counts[w] == 1 or in_melds == 3
    kong_win = win.kong_win and (kongs > 0 if self_drawn else in_melds == 0 and counts[w] == 1)
    flag_fans = _FLAG_FANS[self_drawn | last_of_kind << 1 | kong_win << 2 | win.last_tile << 3]
    # one look-up per group (suit or honours): its summary, its readings, its tiles' properties
    e0 = _GROUPS[0].get(k0 := tuple(counts[0:9])) or _group_entry(0, k0)
    e1 = _GROUPS[1].get(k1 := tuple(counts[9:18])) or _group_entry(1, k1)
    e2 = _GROUPS[2].get(k2 := tuple(counts[18:27])) or _group_entry(2, k2)
    e3 = _GROUPS[3].get(k3 := tuple(counts[27:34])) or _group_entry(3, k3)
    any_bits = e0[2] | e1[2] | e2[2] | e3[2]
    every_bits = e0[3] & e1[3] & e2[3] & e3[3]
    if melds:
        for meld in melds:
            for k in meld.tiles:
                any_bits |= _PROPS[k]
                every_bits &= _PROPS[k]
    tile_fans = _tile_fans_of(any_bits, every_bits)
    fours = merged.count(4)
    seat, prevalent = WINDS[win.seat_wind], WINDS[win.round_wind]

    best: list[int] | None = None
    # Special shapes need a concealed hand (组合龙: at most one meld); otherwise only regular readings.
    a, b, c, h = infos = (e0[0], e1[0], e2[0], e3[0])
    if fixed_cnt <= 1 and (a & b & c & h & _SPECIAL_FLAGS
                           or a & gi.KNIT_ANY and b & gi.KNIT_ANY and c & gi.KNIT_ANY):
        shapes = win_shapes(counts, fixed_cnt, MCR_SHAPES, infos)
    else:
        shapes = _STANDARD if (a & 3) * (b & 3) * (c & 3) * (h & 3) == 2 else _NONE
    if not shapes:
        return MCRScore(False, reason="not a winning shape")
    if _SEVEN_PAIRS in shapes:
        best = special.seven_pairs(counts, w, flag_fans, tile_fans, fours)
    elif _HONOURS_KNITTED in shapes:
        best = special.honours_and_knitted(counts, flag_fans)
    elif _THIRTEEN_ORPHANS in shapes:
        best = special.thirteen_orphans(counts, flag_fans)
    elif _KNITTED_STRAIGHT in shapes:
        fixed_kind_packs = [_kind_pack(m) for m in win.melds]
        best = special.knitted_straight(counts, fixed_kind_packs, merged, w, self_drawn, flag_fans,
                                        lambda rest: _unique_wait(rest, w, 3), prevalent, seat)
    if best is None and fixed_cnt == 0 and _STANDARD_SHAPE in shapes:
        best = special.nine_gates(counts, w, flag_fans)
    seven = best is not None and best[I.SEVEN_PAIRS] == 1
    if (best is None or seven) and _STANDARD_SHAPE in shapes:
        facts = HandFacts(CODE[w], self_drawn, flag_fans, tile_fans, fours, kongs,
                          lambda: _unique_wait_known(counts, w, fixed_cnt, infos), seat, prevalent)
        fixed = [_code_pack(m) for m in melds]
        divisions = _divisions(e0[1], e1[1], e2[1], e3[1])
        if len(divisions) == 1 and best is None:
            best = score_division(fixed + divisions[0], fixed_cnt, facts)
        else:
            best_total = total(best) if best is not None else 0
            for division in divisions:
                table = score_division(fixed + division, fixed_cnt, facts)
                points = total(table)
                if points > best_total or (points == best_total and best is not None and (
                        table[I.PURE_TRIPLE_CHOW] or table[I.TRIPLE_PUNG] or seven)):
                    best, best_total = table, points
    if best is None:
        return MCRScore(False, reason="not a winning shape")
    scored = list(compress(_FAN_INDICES, best))
    fans = [(FANS[i], best[i]) for i in scored]
    points = sum([POINTS[i] * best[i] for i in scored])
    if win.flowers:
        fans.append((Fan.FLOWER_TILES, win.flowers))
    return MCRScore(True, fans, points + win.flowers, win.flowers)


def _flag_fans(self_drawn: bool, last_of_kind: bool, kong_win: bool, last_tile: bool) -> list[tuple[Fan, int]]:
    t: dict[Fan, int] = {}
    if last_of_kind:
        t[Fan.LAST_TILE] = 1
    if self_drawn:
        t[Fan.SELF_DRAWN] = 1
        if last_tile:
            t[Fan.LAST_TILE_DRAW] = 1
            t[Fan.SELF_DRAWN] = 0
        if kong_win:
            t[Fan.OUT_WITH_REPLACEMENT_TILE] = 1
            t[Fan.SELF_DRAWN] = 0
    else:
        if last_tile:
            t[Fan.LAST_TILE_CLAIM] = 1
        if kong_win:
            t[Fan.ROBBING_THE_KONG] = 1
            t[Fan.LAST_TILE] = 0
    return tuple((fan, n) for fan, n in t.items())


# indexed by self-drawn | last of its kind << 1 | kong win << 2 | last tile << 3
_FLAG_FANS = tuple(_flag_fans(bool(i & 1), bool(i & 2), bool(i & 4), bool(i & 8)) for i in range(16))

# Per kind, a bit mask of what the tile-wide fans ask of it; a hand ORs (any tile) and ANDs (every tile) them.
_HONOR, _WIND, _DRAGON, _TERMINAL, _TERM_OR_HONOR, _REVERSIBLE, _GREEN = (1 << i for i in range(7))
_SUIT_BIT = {CHARACTERS: 1 << 7, BAMBOO: 1 << 8, DOTS: 1 << 9}
_RANK_SHIFT = 10


def _properties(c: int) -> int:
    bits = (_REVERSIBLE if c in REVERSIBLE else 0) | (_GREEN if c in GREEN else 0)
    if is_honor(c):
        return bits | _HONOR | _TERM_OR_HONOR | (_WIND if c in WINDS else _DRAGON)
    bits |= _SUIT_BIT[c >> 4] | 1 << (_RANK_SHIFT + (c & 15))
    return bits | (_TERMINAL | _TERM_OR_HONOR if c & 15 in (1, 9) else 0)


_PROPS: tuple[int, ...] = tuple(_properties(CODE[k]) for k in range(34))
_ALL_BITS = (1 << 20) - 1


@lru_cache(maxsize=None)
def _tile_fans_of(any_bits: int, every_bits: int) -> tuple[tuple[Fan, int], ...]:
    """Fans of the hand's tiles as a whole (suits, terminals and honours, ranks), from the OR and
    the AND of its tiles' property masks."""
    t = [0] * FAN_COUNT
    suits = {s for s, bit in _SUIT_BIT.items() if any_bits & bit} | ({HONORS} if any_bits & _HONOR else set())
    if HONORS not in suits:
        t[Fan.NO_HONORS] = 1
    missing = 3 - len(suits - {HONORS})
    t[Fan.ONE_VOIDED_SUIT] = missing
    if missing == 2:
        t[Fan.ONE_VOIDED_SUIT] = 0
        if t[Fan.NO_HONORS]:
            t[Fan.FULL_FLUSH] = 1
            t[Fan.NO_HONORS] = 0
        else:
            t[Fan.HALF_FLUSH] = 1
    if len(suits) == 4 and any_bits & _WIND and any_bits & _DRAGON:
        t[Fan.ALL_TYPES] = 1
    if not any_bits & _TERM_OR_HONOR:
        t[Fan.ALL_SIMPLES] = 1
    if every_bits & _REVERSIBLE:
        t[Fan.REVERSIBLE_TILES] = 1
    if every_bits & _GREEN:
        t[Fan.ALL_GREEN] = 1
    if not t[Fan.ALL_SIMPLES]:
        if every_bits & _HONOR:
            t[Fan.ALL_HONORS] = 1
        elif every_bits & _TERMINAL:
            t[Fan.ALL_TERMINALS] = 1
        elif every_bits & _TERM_OR_HONOR:
            t[Fan.ALL_TERMINALS_AND_HONORS] = 1
    if HONORS not in suits:
        ranks = {r for r in range(1, 10) if any_bits >> (_RANK_SHIFT + r) & 1}
        if ranks <= {1, 2, 3, 4}:
            t[Fan.LOWER_FOUR if 4 in ranks else Fan.LOWER_TILES] = 1
        elif ranks <= {6, 7, 8, 9}:
            t[Fan.UPPER_FOUR if 6 in ranks else Fan.UPPER_TILES] = 1
        elif ranks <= {4, 5, 6}:
            t[Fan.MIDDLE_TILES] = 1
    return tuple((FANS[i], n) for i, n in enumerate(t) if n)


GroupEntry = tuple[int, list, int, int]      # (summary, readings, any-tile properties, every-tile properties)
_GROUPS: list[dict[tuple[int, ...], GroupEntry]] = [{}, {}, {}, {}]
_SPECIAL_FLAGS = gi.EVEN | gi.ORPHANS | gi.SINGLES


def _group_entry(group: int, pattern: tuple[int, ...]) -> GroupEntry:
    info = gi.suited_info(pattern) if group < 3 else gi.honours_info(pattern)
    any_bits, every_bits = 0, _ALL_BITS
    for r, n in enumerate(pattern):
        if n:
            any_bits |= _PROPS[group * 9 + r]
            every_bits &= _PROPS[group * 9 + r]
    entry = (info, _group_readings(group, pattern), any_bits, every_bits)
    _GROUPS[group][pattern] = entry
    return entry


def _tile_fans(merged: list[int]) -> tuple[tuple[Fan, int], ...]:
    any_bits, every_bits = 0, _ALL_BITS
    for p in compress(_PROPS, merged):
        any_bits |= p
        every_bits &= p
    return _tile_fans_of(any_bits, every_bits)


def _unique_wait(counts: list[int], win: int, declared: int) -> bool:
    """Does the hand less its winning tile wait on exactly one kind (as a regular hand, or as
    seven pairs)?  Kinds whose four copies are all held still count as waits."""
    counts[win] -= 1
    try:
        return len(wait_kinds_with_held(counts, declared)) == 1
    finally:
        counts[win] += 1


def _unique_wait_known(counts: list[int], win: int, declared: int, infos: tuple[int, int, int, int]) -> bool:
    """``_unique_wait`` reusing the hand's group summaries: only the winning tile's group changes."""
    g = win // 9 if win < 27 else 3
    lo, hi = g * 9, (g * 9 + 9 if g < 3 else 34)
    counts[win] -= 1
    try:
        key = tuple(counts[lo:hi])
        entry = _GROUPS[g].get(key) or _group_entry(g, key)
        changed = infos[:g] + (entry[0],) + infos[g + 1:]
        return len(wait_kinds_with_held(counts, declared, changed)) == 1
    finally:
        counts[win] += 1


def _divisions(g0: list, g1: list, g2: list, g3: list) -> list[list[Pack]]:
    """Every regular reading of the standing tiles: its sets, the pair last.

    Several readings come in the order of their sorted sets (pung before chow at a tile),
    so that equal-scoring readings resolve as in the reference tables."""
    if len(g0) == len(g1) == len(g2) == len(g3) == 1:
        a, b, c, d = g0[0], g1[0], g2[0], g3[0]
        pairs = [r[0] for r in (a, b, c, d) if r[0] is not None]
        if len(pairs) != 1:
            return []
        return [[*a[2], *b[2], *c[2], *d[2], (PAIR, pairs[0], False)]]
    else:
        readings = [(a, b, c, d) for a in g0 for b in g1 for c in g2 for d in g3]
    out = []
    for parts in readings:
        pairs = [r[0] for r in parts if r[0] is not None]
        if len(pairs) != 1:
            continue
        out.append((parts, [p for r in parts for p in r[2]] + [(PAIR, pairs[0], False)]))
    if len(out) > 1:
        out.sort(key=lambda item: sorted(t for r in item[0] for t in r[1]))
    return [packs for _, packs in out]


GroupReading = tuple[int | None, tuple[tuple[int, int, int], ...], tuple[Pack, ...]]
_GROUP_READINGS: dict[tuple[int, tuple[int, ...]], list[GroupReading]] = {}


def _group_readings(group: int, pattern: tuple[int, ...]) -> list[GroupReading]:
    """One group's readings as (pair code or None, sets as code triples, sets as packs), cached by pattern."""
    key = (group, pattern)
    cached = _GROUP_READINGS.get(key)
    if cached is not None:
        return cached
    base = group * 9
    readings = []
    for pair, sets in splits(pattern, group < 3):
        triples = tuple((CODE[base + r],) * 3 if kind == SPLIT_PUNG else (CODE[base + r], CODE[base + r] + 1,
                                                                           CODE[base + r] + 2)
                        for kind, r in sets)
        packs = tuple((CHOW, t[1], False) if t[0] != t[1] else (PUNG, t[0], False) for t in triples)
        readings.append((None if pair < 0 else CODE[base + pair], triples, packs))
    _GROUP_READINGS[key] = readings
    return readings


def _code_pack(meld) -> Pack:
    if meld.kind is MeldKind.CHOW:
        return (CHOW, CODE[meld.tile] + 1, True)
    if meld.kind is MeldKind.PUNG:
        return (PUNG, CODE[meld.tile], True)
    return (KONG, CODE[meld.tile], not meld.concealed)


def _kind_pack(meld) -> tuple[int, int, bool]:
    kind = {MeldKind.CHOW: CHOW, MeldKind.PUNG: PUNG, MeldKind.KONG: KONG}[meld.kind]
    return (kind, meld.tile, not meld.concealed)
