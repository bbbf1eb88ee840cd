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
FanCounts = tuple[tuple[Fan, int], ...]     # (fan, count) pairs


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


# Whole hands scored, kept by a canonical key (the standing tiles sorted, the melds as kind, tile and concealment,
# the winning tile, the flags and winds; flowers are added afterwards): an LRU whose size the scoring benchmark
# measured (bench/scoring.py prints its hit rate and memory).  A table scores ~100 hands a day and asks of the same
# hand within one turn (may this side win on the discard, then the win itself), so this serves ``mjtable score``
# and the simulator; bounded whatever the input.  2,048 entries (about 1.5 MB): a game's hit rate is the same as
# with 4,096 (34%), and a set of 2,000 hands seen before is still all kept.
HANDS_KEPT = 2048
_MELD_CODE = {MeldKind.CHOW: CHOW, MeldKind.PUNG: PUNG, MeldKind.KONG: KONG}
_NOT_A_WIN = (False, (), 0, "not a winning shape")
_FLOWERS = Fan.FLOWER_TILES


def score(win: Win) -> MCRScore:
    """Score a declared win; ``win`` must be valid (:meth:`Win.validate`).

    A hand's result is looked up by its canonical key (:func:`hand_key`) and worked out on a miss by
    :func:`_score_hand`; the flowers are added last."""
    found = _score_key(hand_key(win))
    if not found[0]:
        return MCRScore(False, reason=found[3])
    flowers = win.flowers
    if flowers:
        return MCRScore(True, [*found[1], (_FLOWERS, flowers)], found[2] + flowers, flowers)
    return MCRScore(True, list(found[1]), found[2], 0)


HandKey = tuple[bytes, tuple[tuple[int, int, bool], ...], int, int, int, int]


def hand_key(win: Win) -> HandKey:
    """What a win's score depends on, flowers apart: (standing tiles sorted, melds as (kind, tile,
    concealed), winning tile, flags as bits, seat wind, round wind).  Wins equal in these score alike.

    The standing tiles are kept as bytes (a kind is below 34): a key of the whole-hand cache then holds
    about a third of the memory a tuple of ints would."""
    melds = win.melds
    if melds:
        code = _MELD_CODE
        kong = KONG
        mk = []
        for m in melds:
            k = code[m.kind]
            mk.append((k, m.tile, k == kong and m.source is None))
        meld_key = tuple(mk)
    else:
        meld_key = ()
    return (bytes(sorted(win.hand)), meld_key, win.win_tile,
            win.self_drawn | win.last_of_kind << 1 | win.kong_win << 2 | win.last_tile << 3,
            win.seat_wind, win.round_wind)


def _score_hand(key: HandKey) -> tuple[bool, tuple[tuple[Fan, int], ...], int, str]:
    """(win, fans in rule-book order, total, reason) of a hand by its key, flowers apart.

    The steps: the tiles counted; the way-of-winning flags corrected by them; each group of the
    hand looked up, with the fans of its tiles as a whole; the shapes it may make; the best
    special reading, then (none, or seven pairs) the best regular one; the fans listed."""
    hand, melds, w, flag_bits, seat_wind, round_wind = key
    counts, merged, in_melds, kongs = _tile_counts(hand, melds, w)
    self_drawn = flag_bits & 1
    # the way-of-winning flags as the tiles prove them: a winning tile also standing cannot be 和绝张, one whose
    # melded pung shows the other three is; 杠上开花 needs a kong, 抢杠和 a tile seen nowhere else
    last_of_kind = flag_bits & 2 and counts[w] == 1 or in_melds == 3
    kong_win = flag_bits & 4 and (kongs > 0 if self_drawn else in_melds == 0 and counts[w] == 1)
    flag_fans = _FLAG_FANS[self_drawn | bool(last_of_kind) << 1 | bool(kong_win) << 2 | (flag_bits & 8)]
    e0, e1, e2, e3, tile_fans = _groups(counts, melds)
    infos = (e0[0], e1[0], e2[0], e3[0])
    fixed_cnt = len(melds)
    shapes = _shapes(counts, fixed_cnt, infos)
    if not shapes:
        return _NOT_A_WIN
    fours = merged.count(4)
    best = _best_special(shapes, counts, merged, melds, w, self_drawn, seat_wind, round_wind, flag_fans, tile_fans,
                         fours)
    seven = best is not None and best[I.SEVEN_PAIRS] == 1
    if (best is None or seven) and _STANDARD_SHAPE in shapes:
        facts = HandFacts(CODE[w], bool(self_drawn), flag_fans, tile_fans, fours, kongs,
                          lambda: _unique_wait_known(counts, w, fixed_cnt, infos),
                          WINDS[seat_wind], WINDS[round_wind])
        best = _best_regular(best, seven, _divisions(e0[1], e1[1], e2[1], e3[1]), melds, facts)
    if best is None:
        return _NOT_A_WIN
    return _result(best)


def _tile_counts(hand: bytes, melds: tuple[tuple[int, int, bool], ...],
                 w: int) -> tuple[list[int], list[int], int, int]:
    """The standing tiles by kind (the winning tile among them); the same with the melds' tiles; how many
    copies of the winning tile are in melds; how many kongs."""
    counts = [0] * 34
    for kind in hand:
        counts[kind] += 1
    counts[w] += 1
    if not melds:
        return counts, counts, 0, 0
    merged = list(counts)
    kongs = 0
    for kind, k, _ in melds:
        if kind == CHOW:
            merged[k] += 1
            merged[k + 1] += 1
            merged[k + 2] += 1
        elif kind == PUNG:
            merged[k] += 3
        else:
            merged[k] += 4
            kongs += 1
    return counts, merged, merged[w] - counts[w], kongs


def _groups(counts: list[int], melds: tuple[tuple[int, int, bool], ...]) -> tuple[GroupEntry, GroupEntry, GroupEntry,
                                                                                GroupEntry, FanCounts]:
    """One look-up per group (each suit, the honours): its summary, its readings, its tiles' properties;
    and the fans of the hand's tiles as a whole, the melds' tiles included."""
    entry = _group_entry
    e0 = entry(0, tuple(counts[0:9]))
    e1 = entry(1, tuple(counts[9:18]))
    e2 = entry(2, tuple(counts[18:27]))
    e3 = entry(3, tuple(counts[27:34]))
    any_bits = e0[2] | e1[2] | e2[2] | e3[2]
    every_bits = e0[3] & e1[3] & e2[3] & e3[3]
    for kind, k, _ in melds:
        if kind == CHOW:
            some, every = _CHOW_PROPS[k]
        else:
            some = every = _PROPS[k]
        any_bits |= some
        every_bits &= every
    # (the masks cut to what the tile-wide fans read, so that few keys cover every hand)
    return e0, e1, e2, e3, _tile_fans_of(any_bits & _LOW_BITS | _RANKS_CANON[any_bits >> _RANK_SHIFT],
                                         every_bits & _EVERY_BITS)


def _shapes(counts: list[int], fixed_cnt: int, infos: tuple[int, int, int, int]) -> list[Shape]:
    """The shapes the hand may make.  Special shapes need a concealed hand (组合龙: at most one meld) and
    groups that allow one; otherwise only the regular shape, when the groups' sizes make four sets and a pair."""
    a, b, c, h = infos
    if fixed_cnt <= 1 and (a & b & c & h & _SPECIAL_FLAGS
                           or a & gi.KNIT_ANY and b & gi.KNIT_ANY and c & gi.KNIT_ANY):
        return win_shapes(counts, fixed_cnt, MCR_SHAPES, infos)
    return _STANDARD if (a & 3) * (b & 3) * (c & 3) * (h & 3) == 2 else _NONE


def _best_special(shapes: list[Shape], counts: list[int], merged: list[int], melds: tuple[tuple[int, int, bool], ...],
                  w: int, self_drawn: int, seat_wind: int, round_wind: int, flag_fans: FanCounts, tile_fans: FanCounts,
                  fours: int) -> list[int] | None:
    """The fan table of the hand's special reading (seven pairs, 全不靠 / 七星不靠, 十三幺, 组合龙, else
    九莲宝灯), None for none."""
    best = None
    if _SEVEN_PAIRS in shapes:
        best = special.seven_pairs(counts, w, flag_fans, tile_fans, fours)
    elif _HONOURS_KNITTED in shapes:
        best = special.honours_and_knitted(counts, flag_fans)
    elif _THIRTEEN_ORPHANS in shapes:
        best = special.thirteen_orphans(counts, flag_fans)
    elif _KNITTED_STRAIGHT in shapes:
        fixed_kind_packs = [(kind, k, not concealed) for kind, k, concealed in melds]
        best = special.knitted_straight(counts, fixed_kind_packs, merged, w, self_drawn, flag_fans,
                                        lambda rest: _unique_wait(rest, w, 3), WINDS[round_wind], WINDS[seat_wind])
    if best is None and not melds and _STANDARD_SHAPE in shapes:
        best = special.nine_gates(counts, w, flag_fans)
    return best


def _best_regular(best: list[int] | None, seven: bool, divisions: list[list[Pack]],
                  melds: tuple[tuple[int, int, bool], ...], facts: HandFacts) -> list[int] | None:
    """The fan table of the highest-scoring regular reading (就高不就低), each scored by
    :func:`~firmware.rules.mcr.regular.score_division`; ``best`` (seven pairs', or None) unless one beats it.
    On a tie the first reading wins, except that one with 一色三同顺 or 三同刻, or any over seven pairs
    (``seven``), is preferred."""
    fixed_cnt = len(melds)
    fixed = [_code_pack(kind, k, concealed) for kind, k, concealed in melds]
    if len(divisions) == 1 and best is None:
        return score_division(fixed + divisions[0], fixed_cnt, facts)
    best_total = total(best) if best is not None else 0
    for division in divisions:
        table = score_division(fixed + division, fixed_cnt, facts)
        points = total(table)
        if points > best_total or (points == best_total and best is not None and (
                table[I.PURE_TRIPLE_CHOW] or table[I.TRIPLE_PUNG] or seven)):
            best, best_total = table, points
    return best


def _result(best: list[int]) -> tuple[bool, tuple[tuple[Fan, int], ...], int, str]:
    """The win's fans (rule-book order) and total from the best reading's fan table, flowers apart."""
    # (one loop, not comprehensions and sum(): each of those is a call of its own on Python 3.11)
    fans: list[tuple[Fan, int]] = []
    points = 0
    for i in compress(_FAN_INDICES, best):
        n = best[i]
        fans.append((FANS[i], n))
        points += POINTS[i] * n
    return True, tuple(fans), points, ""


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
# a chow's three tiles: (OR, AND) of their masks, by its lowest kind
_CHOW_PROPS = tuple((_PROPS[k] | _PROPS[k + 1] | _PROPS[k + 2], _PROPS[k] & _PROPS[k + 1] & _PROPS[k + 2])
                    if k < 27 and k % 9 < 7 else (0, _ALL_BITS) for k in range(34))
_LOW_BITS = (1 << _RANK_SHIFT) - 1
_EVERY_BITS = _HONOR | _WIND | _DRAGON | _TERMINAL | _TERM_OR_HONOR | _REVERSIBLE | _GREEN


def _ranks_class(ranks: set[int]) -> int:
    """The rank bits of a representative of ``ranks``'s class for the rank fans (全大 ... 全小)."""
    if not ranks:
        return 0
    if ranks <= {1, 2, 3, 4}:
        one = {4} if 4 in ranks else {1}
    elif ranks <= {6, 7, 8, 9}:
        one = {6} if 6 in ranks else {9}
    elif ranks <= {4, 5, 6}:
        one = {5}
    else:
        one = {1, 9}
    return sum(1 << (_RANK_SHIFT + r) for r in one)


_RANKS_CANON = tuple(_ranks_class({r for r in range(1, 10) if bits >> r & 1}) for bits in range(1 << 10))
# (the OR and the AND of the tiles' masks, cut to the bits the fans read: at most a few hundred keys)
TILE_FANS_KEPT = 1024


@lru_cache(maxsize=TILE_FANS_KEPT)
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
_SPECIAL_FLAGS = gi.EVEN | gi.ORPHANS | gi.SINGLES
# Group patterns (a suit's nine counts or the seven honours) kept with what the scorer asks of them: an LRU
# sized by the scoring benchmark (bench/scoring.py prints its hit rate and memory; ~0.4 KB an entry).
GROUPS_KEPT = 16384


@lru_cache(maxsize=GROUPS_KEPT)
def _group_entry(group: int, pattern: tuple[int, ...]) -> GroupEntry:
    """A group's summary (:mod:`firmware.hands.group_info`), its readings, and the OR and AND of its tiles' masks."""
    info = gi.suited_info(pattern) if group < 3 else gi.honours_info(pattern)
    any_bits, every_bits = 0, _ALL_BITS
    for r, n in enumerate(pattern):
        if n:
            any_bits |= _PROPS[group * 9 + r]
            every_bits &= _PROPS[group * 9 + r]
    return info, _group_readings(group, pattern), any_bits, every_bits


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
        entry = _group_entry(g, key)
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


def _group_readings(group: int, pattern: tuple[int, ...]) -> list[GroupReading]:
    """One group's readings as (pair code or None, sets as code triples, sets as packs) (kept with the group's
    entry)."""
    base = group * 9
    readings = []
    for pair, sets in splits(pattern, group < 3):
        triples = tuple((CODE[base + r],) * 3 if kind == SPLIT_PUNG else (CODE[base + r], CODE[base + r] + 1,
                                                                           CODE[base + r] + 2)
                        for kind, r in sets)
        packs = tuple((CHOW, t[1], False) if t[0] != t[1] else (PUNG, t[0], False) for t in triples)
        readings.append((None if pair < 0 else CODE[base + pair], triples, packs))
    return readings


def _code_pack(kind: int, tile: int, concealed: bool) -> Pack:
    """A meld (kind, tile, concealed) as a pack of tile codes (a chow by its middle tile)."""
    if kind == CHOW:
        return (CHOW, CODE[tile] + 1, True)
    return (kind, CODE[tile], not concealed)


_score_key = lru_cache(maxsize=HANDS_KEPT)(_score_hand)


def caches() -> dict[str, object]:
    """The scorer's bounded caches by name (each has ``cache_info`` and ``cache_clear``), for the benchmark."""
    from firmware.rules.mcr.regular import _combination

    return {"mcr.hands": _score_key, "mcr.groups": _group_entry, "mcr.tile_fans": _tile_fans_of,
            "mcr.combinations": _combination}
