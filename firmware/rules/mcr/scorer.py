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

from firmware.hands.analysis import STANDARD_ONLY, decompositions, is_standard_win
from firmware.rules.mcr import special
from firmware.rules.mcr.fans import FAN_COUNT, POINTS, Fan
from firmware.rules.mcr.regular import CHOW, KONG, PAIR, PUNG, HandFacts, Pack, score_division
from firmware.rules.mcr.tiles import CODE, GREEN, HONORS, REVERSIBLE, WINDS, is_honor, is_terminal_or_honor
from firmware.rules.win import MeldKind, Win

MINIMUM = 8


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
    counts = win.concealed_counts()
    fixed_cnt = len(win.melds)
    fixed_counts = [0] * 34
    for meld in win.melds:
        for k in meld.tiles:
            fixed_counts[k] += 1
    merged = [a + b for a, b in zip(counts, fixed_counts)]
    w = win.win_tile
    self_drawn = win.self_drawn
    last_of_kind = win.last_of_kind and counts[w] == 1 or fixed_counts[w] == 3
    kong_win = win.kong_win and (any(m.kind is MeldKind.KONG for m in win.melds) if self_drawn
                                 else fixed_counts[w] == 0 and counts[w] == 1)
    flag_fans = _flag_fans(self_drawn, last_of_kind, kong_win, win.last_tile)
    tile_fans = _tile_fans({CODE[k] for k in range(34) if merged[k]})
    fours = merged.count(4)
    kongs = sum(1 for m in win.melds if m.kind is MeldKind.KONG)
    seat, prevalent = WINDS[win.seat_wind], WINDS[win.round_wind]

    best: list[int] | None = None
    best_total = 0
    if fixed_cnt == 0:
        best = (special.seven_pairs(counts, w, flag_fans, tile_fans, fours)
                or special.honours_and_knitted(counts, flag_fans)
                or special.thirteen_orphans(counts, flag_fans))
    if best is None and fixed_cnt <= 1:
        fixed_kind_packs = [_kind_pack(m) for m in win.melds]
        best = special.knitted_straight(counts, fixed_kind_packs, merged, w, self_drawn, flag_fans,
                                        lambda rest: _unique_wait(rest, w, 4), prevalent, seat)
    if best is None and fixed_cnt == 0:
        best = special.nine_gates(counts, w, flag_fans)
    if best is not None:
        best_total = _total(best)
    seven = best is not None and best[Fan.SEVEN_PAIRS] == 1
    if best is None or seven:
        facts = HandFacts(CODE[w], self_drawn, flag_fans, tile_fans, fours, kongs,
                          _unique_wait(counts, w, 13 - 3 * fixed_cnt), seat, prevalent)
        fixed = [_code_pack(m) for m in win.melds]
        for division in _divisions(counts, fixed_cnt):
            table = score_division(fixed + division, fixed_cnt, facts)
            total = _total(table)
            if total > best_total or (total == best_total and best is not None and (
                    table[Fan.PURE_TRIPLE_CHOW] or table[Fan.TRIPLE_PUNG] or seven)):
                best, best_total = table, total
    if best is None:
        return MCRScore(False, reason="not a winning shape")
    fans = [(Fan(i), n) for i, n in enumerate(best) if n]
    if win.flowers:
        fans.append((Fan.FLOWER_TILES, win.flowers))
    return MCRScore(True, fans, best_total + win.flowers, win.flowers)


def _total(table: list[int]) -> int:
    return sum(POINTS[i] * n for i, n in enumerate(table) if n)


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
    return [(fan, n) for fan, n in t.items()]


def _tile_fans(codes: set[int]) -> list[tuple[Fan, int]]:
    """Fans of the hand's tiles as a whole: suits, terminals and honours, ranks."""
    t = [0] * FAN_COUNT
    suits = {c >> 4 for c in codes}
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
    if len(suits) == 4 and any(c in WINDS for c in codes) and any(c > WINDS[-1] for c in codes):
        t[Fan.ALL_TYPES] = 1
    if not any(is_terminal_or_honor(c) for c in codes):
        t[Fan.ALL_SIMPLES] = 1
    if codes <= REVERSIBLE:
        t[Fan.REVERSIBLE_TILES] = 1
    if codes <= GREEN:
        t[Fan.ALL_GREEN] = 1
    if not t[Fan.ALL_SIMPLES]:
        if all(is_honor(c) for c in codes):
            t[Fan.ALL_HONORS] = 1
        elif not any(is_honor(c) for c in codes) and all(c & 15 in (1, 9) for c in codes):
            t[Fan.ALL_TERMINALS] = 1
        elif all(is_terminal_or_honor(c) for c in codes):
            t[Fan.ALL_TERMINALS_AND_HONORS] = 1
    if HONORS not in suits:
        ranks = {c & 15 for c in codes}
        if ranks <= {1, 2, 3, 4}:
            t[Fan.LOWER_FOUR if 4 in ranks else Fan.LOWER_TILES] = 1
        elif ranks <= {6, 7, 8, 9}:
            t[Fan.UPPER_FOUR if 6 in ranks else Fan.UPPER_TILES] = 1
        elif ranks <= {4, 5, 6}:
            t[Fan.MIDDLE_TILES] = 1
    return [(Fan(i), n) for i, n in enumerate(t) if n]


def _unique_wait(counts: list[int], win: int, standing: int) -> bool:
    """Does the hand less its winning tile wait on exactly one kind (as a regular hand, or
    seven pairs with 13 standing tiles)?  Kinds whose four copies are all held still count."""
    counts = list(counts)
    counts[win] -= 1
    declared = (14 - (standing + 1)) // 3
    found = 0
    for k in range(34):
        counts[k] += 1
        if is_standard_win(counts, declared) or (standing == 13 and all(c % 2 == 0 for c in counts)):
            found += 1
        counts[k] -= 1
        if found > 1:
            return False
    return found == 1


def _divisions(counts: list[int], fixed_cnt: int) -> list[list[Pack]]:
    """Every regular reading of the standing tiles, each as its sets (code order) and the pair last."""
    out = []
    for d in decompositions(counts, fixed_cnt, STANDARD_ONLY):
        sets = sorted(((CODE[k], CODE[k] + 1, CODE[k] + 2) if kind == "chow" else (CODE[k],) * 3)
                      for kind, k in d.sets)
        packs: list[Pack] = [(CHOW, s[1], False) if s[0] != s[1] else (PUNG, s[0], False) for s in sets]
        packs.append((PAIR, CODE[d.pair], False))
        out.append((sets, packs))
    out.sort(key=lambda item: item[0])
    return [packs for _, packs in out]


def _code_pack(meld) -> Pack:
    if meld.kind is MeldKind.CHOW:
        return (CHOW, CODE[meld.tile] + 1, True)
    if meld.kind is MeldKind.PUNG:
        return (PUNG, CODE[meld.tile], True)
    return (KONG, CODE[meld.tile], not meld.concealed)


def _kind_pack(meld) -> tuple[int, int, bool]:
    kind = {MeldKind.CHOW: CHOW, MeldKind.PUNG: PUNG, MeldKind.KONG: KONG}[meld.kind]
    return (kind, meld.tile, not meld.concealed)
