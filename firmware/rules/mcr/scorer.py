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

from bisect import bisect_left
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import compress, product

from firmware.hands import group_info as gi
from firmware.hands.analysis import MCR_SHAPES, Shape, group_summary, wait_kinds_with_held, win_shapes
from firmware.hands.suit_tables import complete_patterns
from firmware.rules.mcr import special
from firmware.rules.mcr.fans import FAN_COUNT, POINTS, Fan, FanCounts
from firmware.rules.mcr.fans import FanIndex as I
from firmware.rules.mcr.groups import (ALL_BITS, CHOW_PROPS, EMPTY, PROPS, GroupEntry, Reading, group_entry,
                                       hand_tile_fans, tile_fans_of)
from firmware.rules.mcr.regular import CHOW, KONG, PUNG, HandFacts, base_table, kong_families, score_reading, total
from firmware.rules.mcr.tiles import CODE, WINDS
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


# Whole hands scored, kept by a canonical key (the standing tiles sorted, the melds as kind, tile and concealment,
# the winning tile, the flags and winds; flowers are added afterwards): an LRU whose size the scoring benchmark
# measured (bench/scoring.py prints its hit rate and memory).  A table scores ~100 hands a day and asks of the same
# hand within one turn (may this side win on the discard, then the win itself), so this serves ``mjtable score``
# and the simulator; bounded whatever the input.  2,048 entries (about 1.5 MB): a game's hit rate is the same as
# with 4,096 (34%), and a set of 2,000 hands seen before is still all kept.
HANDS_KEPT = 2048
_MELD_CODE = {MeldKind.CHOW: CHOW, MeldKind.PUNG: PUNG, MeldKind.KONG: KONG}
_NOT_A_WIN = (False, (), 0, "not a winning shape")
# The (kind, tile, concealed) of every meld and the (fan, count) of every fan up to 8, made once and shared by
# every key and result that holds them: fewer objects for the garbage collector to walk (bounded by design).
_MELD_KEYS = tuple((kind, tile, concealed) for kind in (CHOW, PUNG, KONG) for tile in range(34)
                   for concealed in (False, True))
_FAN_COUNTS = tuple(tuple((fan, n) for n in range(9)) for fan in FANS)
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
            concealed = k == kong and m.source is None
            tile = m.tile
            mk.append(_MELD_KEYS[(k * 34 + tile) * 2 + concealed] if 0 <= tile < 34 else (k, tile, concealed))
        meld_key = tuple(mk)
    else:
        meld_key = ()
    return (bytes(sorted(win.hand)), meld_key, win.win_tile,
            win.self_drawn | win.last_of_kind << 1 | win.kong_win << 2 | win.last_tile << 3,
            win.seat_wind, win.round_wind)


def _score_hand(key: HandKey) -> tuple[bool, tuple[tuple[Fan, int], ...], int, str]:
    """(win, fans in rule-book order, total, reason) of a hand by its key, flowers apart.

    The steps: the standing tiles sorted with the winning tile, and cut into their groups (each suit, the
    honours), each group looked up (:mod:`~firmware.rules.mcr.groups`); the way-of-winning flags corrected
    by the tiles; the shapes the groups allow (special shapes: :func:`_score_special`); the fans of the
    tiles as a whole; the best regular reading; the fans listed."""
    hand, melds, w, flag_bits, seat_wind, round_wind = key
    i = bisect_left(hand, w)
    tiles = hand[:i] + _BYTE[w] + hand[i:]
    a = bisect_left(tiles, 9)
    b = bisect_left(tiles, 18, a)
    c = bisect_left(tiles, 27, b)
    entry = group_entry
    e0 = entry(tiles[:a]) if a else EMPTY[0]
    e1 = entry(tiles[a:b]) if b > a else EMPTY[1]
    e2 = entry(tiles[b:c]) if c > b else EMPTY[2]
    e3 = entry(tiles[c:]) if len(tiles) > c else EMPTY[3]
    infos = (e0[0], e1[0], e2[0], e3[0])
    fixed_cnt = len(melds)
    if fixed_cnt <= 1 and (infos[0] & infos[1] & infos[2] & infos[3] & _SPECIAL_FLAGS or infos[0] & gi.KNIT_ANY
                           and infos[1] & gi.KNIT_ANY and infos[2] & gi.KNIT_ANY):
        return _score_special(key, tiles, (e0, e1, e2, e3))
    if (infos[0] & 3) * (infos[1] & 3) * (infos[2] & 3) * (infos[3] & 3) != 2:
        return _NOT_A_WIN
    self_drawn = flag_bits & 1
    held = tiles.count(w)
    any_bits = e0[3] | e1[3] | e2[3] | e3[3]
    every_bits = e0[4] & e1[4] & e2[4] & e3[4]
    fours = e0[2] + e1[2] + e2[2] + e3[2]
    if melds:
        in_melds, kongs, melded, melded_kongs, meld_fours, meld_any, meld_every, meld_chows, meld_pungs = \
            _meld_facts(melds, tiles, w)
        any_bits |= meld_any
        every_bits &= meld_every
        fours += meld_fours
    else:
        in_melds = kongs = melded = melded_kongs = 0
        meld_chows = meld_pungs = ()
        if a == 14 or b - a == 14 or c - b == 14:
            nine = special.nine_gates(_counts(tiles), w, _FLAG_FANS[_flag_index(flag_bits, held, in_melds, kongs)])
            if nine is not None:
                return _result(nine)
    flag_fans = _FLAG_FANS[_flag_index(flag_bits, held, in_melds, kongs)]
    tile_fans = hand_tile_fans(any_bits, every_bits)
    facts = HandFacts(CODE[w], bool(self_drawn), base_table(flag_fans, tile_fans, melded, self_drawn, fours - kongs),
                      kong_families(melded_kongs, kongs - melded_kongs),
                      _unique_wait_regular, (tiles, w, held, fixed_cnt, infos, (e0, e1, e2, e3)),
                      WINDS[seat_wind], WINDS[round_wind])
    best = _best_regular(None, False, (e0[1], e1[1], e2[1], e3[1]), meld_chows, meld_pungs, w, facts)
    return _NOT_A_WIN if best is None else _result(best)


def _flag_index(flag_bits: int, held: int, in_melds: int, kongs: int) -> int:
    """The way-of-winning flags as the tiles prove them (an index of :data:`_FLAG_FANS`): a winning tile
    also standing cannot be 和绝张, one whose melded pung shows the other three is; 杠上开花 needs a kong,
    抢杠和 a tile seen nowhere else.  ``held``: copies of the winning tile standing, itself included."""
    self_drawn = flag_bits & 1
    last_of_kind = flag_bits & 2 and held == 1 or in_melds == 3
    kong_win = flag_bits & 4 and (kongs > 0 if self_drawn else in_melds == 0 and held == 1)
    return self_drawn | bool(last_of_kind) << 1 | bool(kong_win) << 2 | (flag_bits & 8)


def _meld_facts(melds: tuple[tuple[int, int, bool], ...], tiles: bytes,
                w: int) -> tuple[int, int, int, int, int, int, int, tuple[int, ...], tuple[int, ...]]:
    """What the melds add: copies of the winning tile in them, kongs, melds not concealed kongs, melded
    kongs, kinds they bring to four copies, the OR and AND of their tiles' property masks, and their
    chows' middle codes and their pungs' and kongs' codes."""
    kongs = melded = melded_kongs = 0
    any_bits, every_bits = 0, ALL_BITS
    chows: list[int] = []
    pungs: list[int] = []
    added: dict[int, int] = {}
    for kind, k, concealed in melds:
        if kind == CHOW:
            some, every = CHOW_PROPS[k]
            chows.append(CODE[k] + 1)
            for kk in (k, k + 1, k + 2):
                added[kk] = added.get(kk, 0) + 1
            melded += 1
        else:
            some = every = PROPS[k]
            pungs.append(CODE[k])
            added[k] = added.get(k, 0) + (3 if kind == PUNG else 4)
            if kind == KONG:
                kongs += 1
                if not concealed:
                    melded_kongs += 1
            if not concealed:
                melded += 1
        any_bits |= some
        every_bits &= every
    fours = 0
    for k, n in added.items():
        if n + tiles.count(k) == 4:
            fours += 1
    return (added.get(w, 0), kongs, melded, melded_kongs, fours, any_bits, every_bits, tuple(chows), tuple(pungs))


def _counts(tiles: bytes) -> list[int]:
    counts = [0] * 34
    for kind in tiles:
        counts[kind] += 1
    return counts


def _score_special(key: HandKey, tiles: bytes, entries: tuple[GroupEntry, GroupEntry, GroupEntry, GroupEntry]
                   ) -> tuple[bool, tuple[tuple[Fan, int], ...], int, str]:
    """A hand whose groups allow a special shape (seven pairs, 全不靠 / 七星不靠, 十三幺, 组合龙): the best
    special reading, then (none, or seven pairs) the best regular one."""
    hand, melds, w, flag_bits, seat_wind, round_wind = key
    counts, merged, in_melds, kongs = _tile_counts(hand, melds, w)
    self_drawn = flag_bits & 1
    flag_fans = _FLAG_FANS[_flag_index(flag_bits, counts[w], in_melds, kongs)]
    infos = (entries[0][0], entries[1][0], entries[2][0], entries[3][0])
    fixed_cnt = len(melds)
    shapes = win_shapes(counts, fixed_cnt, MCR_SHAPES, infos)
    if not shapes:
        return _NOT_A_WIN
    any_bits, every_bits = 0, ALL_BITS
    for e in entries:
        any_bits |= e[3]
        every_bits &= e[4]
    for kind, k, _ in melds:
        some, every = CHOW_PROPS[k] if kind == CHOW else (PROPS[k], PROPS[k])
        any_bits |= some
        every_bits &= every
    tile_fans = hand_tile_fans(any_bits, every_bits)
    fours = merged.count(4)
    best = _best_special(shapes, counts, merged, melds, w, self_drawn, seat_wind, round_wind, flag_fans, tile_fans,
                         fours)
    seven = best is not None and best[I.SEVEN_PAIRS] == 1
    if (best is None or seven) and _STANDARD_SHAPE in shapes:
        meld_chows = tuple(CODE[k] + 1 for kind, k, _ in melds if kind == CHOW)
        meld_pungs = tuple(CODE[k] for kind, k, _ in melds if kind != CHOW)
        melded = sum(1 for kind, _, concealed in melds if not concealed)
        melded_kongs = sum(1 for kind, _, concealed in melds if kind == KONG and not concealed)
        base = base_table(flag_fans, tile_fans, melded, self_drawn, fours - kongs)
        facts = HandFacts(CODE[w], bool(self_drawn), base, kong_families(melded_kongs, kongs - melded_kongs),
                          _unique_wait_known, (tiles, w, fixed_cnt, infos), WINDS[seat_wind], WINDS[round_wind])
        best = _best_regular(best, seven, (entries[0][1], entries[1][1], entries[2][1], entries[3][1]), meld_chows,
                             meld_pungs, w, facts)
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


def _best_regular(best: list[int] | None, seven: bool, readings: tuple[tuple[Reading, ...], tuple[Reading, ...],
                  tuple[Reading, ...], tuple[Reading, ...]], meld_chows: tuple[int, ...],
                  meld_pungs: tuple[int, ...], w: int, facts: HandFacts) -> list[int] | None:
    """The fan table of the highest-scoring regular reading (就高不就低), each scored by
    :func:`~firmware.rules.mcr.regular.score_reading`; ``best`` (seven pairs', or None) unless one beats it.
    ``readings``: each group's readings (:mod:`~firmware.rules.mcr.groups`).  Readings come in the order of
    their sorted sets (pung before chow at a tile); on a tie the first wins, except that one with 一色三同顺
    or 三同刻, or any over seven pairs (``seven``), is preferred (the reference tables do the same)."""
    r0, r1, r2, r3 = readings
    if len(r0) == len(r1) == len(r2) == len(r3) == 1:
        divisions = [(r0[0], r1[0], r2[0], r3[0])]
    else:
        divisions = [parts for parts in product(r0, r1, r2, r3)
                     if (parts[0][0] > 0) + (parts[1][0] > 0) + (parts[2][0] > 0) + (parts[3][0] > 0) == 1]
        if len(divisions) > 1:
            divisions.sort(key=lambda parts: sorted(parts[0][3] + parts[1][3] + parts[2][3] + parts[3][3]))
    g = w // 9 if w < 27 else 3
    wc = facts.win
    discard = not facts.self_drawn
    only = len(divisions) == 1 and best is None
    best_total = total(best) if best is not None else 0
    for parts in divisions:
        p0, p1, p2, p3 = parts
        if (p0[0] > 0) + (p1[0] > 0) + (p2[0] > 0) + (p3[0] > 0) != 1:
            continue
        chows = p0[1] + p2[1] + p1[1]           # (codes run characters, bamboo, dots, honours: sorted)
        pungs = p0[2] + p2[2] + p1[2] + p3[2]
        concealed = len(pungs)
        if meld_chows:
            chows = tuple(sorted(chows + meld_chows))
        if meld_pungs:
            pungs = tuple(sorted(pungs + meld_pungs))
        own = parts[g]
        win_chows = own[1]
        # on a discard, a pung completed by the winning tile is melded, unless the tile may be read into a chow
        if discard and wc in own[2] and not any(m - 1 <= wc <= m + 1 for m in win_chows):
            concealed -= 1
        table = score_reading(chows, pungs, p0[0] | p1[0] | p2[0] | p3[0], concealed, win_chows, facts)
        if only:
            return table
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
        fans.append(_FAN_COUNTS[i][n] if n < 9 else (FANS[i], n))
        points += POINTS[i] * n
    return True, tuple(fans), points, ""


def _flag_fans(self_drawn: bool, last_of_kind: bool, kong_win: bool, last_tile: bool) -> FanCounts:
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

_BYTE = tuple(bytes((k,)) for k in range(34))
_WEIGHTS = tuple(16 ** r for r in range(9))          # a rank's weight in a packed suit pattern


_SPECIAL_FLAGS = gi.EVEN | gi.ORPHANS | gi.SINGLES


def _unique_wait(counts: list[int], win: int, declared: int) -> bool:
    """Does the hand less its winning tile wait on exactly one kind (as a regular hand, or as
    seven pairs)?  Kinds whose four copies are all held still count as waits."""
    counts[win] -= 1
    try:
        return len(wait_kinds_with_held(counts, declared)) == 1
    finally:
        counts[win] += 1


def _unique_wait_regular(tiles: bytes, w: int, held: int, declared: int, infos: tuple[int, int, int, int],
                         entries: tuple[GroupEntry, ...]) -> bool:
    """``_unique_wait`` of a regular hand (every group complete): with the winning tile's suit less that
    tile unable to be complete, only that suit can take a tile, so the hand waits on that tile alone when no
    other rank completes the suit (the table of complete patterns says).  Otherwise (the honours, a second
    pair, six pairs that may wait as seven pairs): :func:`_unique_wait_known`."""
    g = w // 9 if w < 27 else 3
    if g == 3 or declared == 0 and (sum(infos) >> gi.PAIRS_SHIFT & 127) - (held % 2 == 0) == 6:
        return _unique_wait_known(tiles, w, declared, infos)
    rank = w - g * 9
    key = entries[g][5] - _WEIGHTS[rank]
    sets_only, with_pair = complete_patterns()
    if infos[g] & 3 == 2:
        table = with_pair
    elif key in with_pair:
        return _unique_wait_known(tiles, w, declared, infos)
    else:
        table = sets_only
    for r, weight in enumerate(_WEIGHTS):
        if r != rank and key + weight in table:
            return False
    return True


def _unique_wait_known(tiles: bytes, win: int, declared: int, infos: tuple[int, ...]) -> bool:
    """``_unique_wait`` reusing the hand's group summaries: only the winning tile's group changes."""
    counts = _counts(tiles)
    counts[win] -= 1
    g = win // 9 if win < 27 else 3
    changed = infos[:g] + (group_summary(tuple(counts[g * 9:g * 9 + 9])),) + infos[g + 1:]
    return len(wait_kinds_with_held(counts, declared, changed)) == 1


_score_key = lru_cache(maxsize=HANDS_KEPT)(_score_hand)


def caches() -> dict[str, object]:
    """The scorer's bounded caches by name (each has ``cache_info`` and ``cache_clear``), for the benchmark."""
    from firmware.rules.mcr.regular import _chow_part, _pung_part

    return {"mcr.hands": _score_key, "mcr.groups": group_entry, "mcr.tile_fans": tile_fans_of,
            "mcr.chows": _chow_part, "mcr.pungs": _pung_part}
