"""Scoring one reading of a regular hand (four sets and a pair) under MCR.

``score_division`` fills a fan table (counts per :class:`Fan`) for one
division of the hand, in the order the rules build on each other: the way
of winning, the kong and concealed-pung families, each pung, the chow or
pung combinations, concealment, the pair, what every set shares, the hand's
tiles as a whole, four of a kind, the wait, and last the exclusions (不计)
and the wind pungs.  Hand-wide facts that do not depend on the division come
in a :class:`HandFacts`, computed once per hand by the scorer.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable
from operator import mul

from firmware.rules.mcr import families as fam
from firmware.rules.mcr.exclusions import final_adjust, wind_pungs
from firmware.rules.mcr.fans import FAN_COUNT, POINTS, Fan
from firmware.rules.mcr.fans import FanIndex as I
from firmware.rules.mcr.tiles import C, E, N, is_dragon, is_numbered, is_wind

CHOW, PUNG, KONG, PAIR = 0, 1, 2, 3

# A pack: (kind of pack, tile code (a chow's middle tile), melded from another player's discard)
Pack = tuple[int, int, bool]


@dataclass(slots=True)
class HandFacts:
    """What the scorer knows of the whole hand, for every division alike."""

    win: int                       # winning tile code
    self_drawn: bool
    flag_fans: list[tuple[Fan, int]]      # from the way of winning (自摸, 和绝张, 妙手回春 ...)
    tile_fans: list[tuple[Fan, int]]      # from the tiles as a whole (flushes, 断幺, 全大 ...)
    fours: int                     # kinds with all four tiles in the hand, kongs not subtracted
    kongs: int
    unique_wait_check: Callable[[], bool]   # does the hand less its winning tile wait on that tile alone?
    seat_wind: int                 # codes
    round_wind: int
    _unique_wait: bool | None = None

    def unique_wait(self) -> bool:
        """Computed once, and only when a reading could score a wait."""
        if self._unique_wait is None:
            self._unique_wait = self.unique_wait_check()
        return self._unique_wait


def score_division(packs: list[Pack], fixed_cnt: int, facts: HandFacts) -> list[int]:
    """The fan table of one reading (its total: :func:`total`)."""
    t = [0] * FAN_COUNT
    for fan, n in facts.flag_fans:
        t[fan] = n
    win = facts.win
    pair = packs[4][1]
    chows: list[int] = []
    pungs: list[int] = []
    concealed_pungs = melded_kongs = concealed_kongs = 0
    win_in_concealed_chow = False
    concealed_win_pungs = 0
    for kind, tile, melded in packs[:4]:
        if kind == CHOW:
            chows.append(tile)
            if not melded and tile - 1 <= win <= tile + 1:
                win_in_concealed_chow = True
        else:
            pungs.append(tile)
            if kind == PUNG:
                if not melded:
                    concealed_pungs += 1
                    if tile == win:
                        concealed_win_pungs += 1
            elif melded:
                melded_kongs += 1
            else:
                concealed_kongs += 1
    # On a discard, a pung completed by the winning tile is melded, unless the tile may be read into a chow.
    if not facts.self_drawn and not win_in_concealed_chow:
        concealed_pungs -= concealed_win_pungs

    if pungs:
        fam.kongs_and_concealed_pungs(concealed_pungs, melded_kongs, concealed_kongs, t)
        if len(pungs) == 4 and not t[I.FOUR_KONGS] and not t[I.FOUR_CONCEALED_PUNGS]:
            t[I.ALL_PUNGS] = 1
        pungs.sort()
    n_chows = len(chows)
    if n_chows > 1:
        chows.sort()
    for fan, n in _combination(tuple(chows), tuple(pungs), pair):
        t[fan] = n

    # 不求人 / 门前清 with nothing melded; 全求人 with four melded sets won on a discard
    melded = 0
    for _, _, m in packs[:fixed_cnt]:
        melded += m
    if melded == 0:
        t[I.FULLY_CONCEALED_HAND if facts.self_drawn else I.CONCEALED_HAND] = 1
    elif melded == 4:
        t[I.SELF_DRAWN if facts.self_drawn else I.MELDED_HAND] = 1
    elif facts.self_drawn:
        t[I.SELF_DRAWN] = 1
    for fan, n in facts.tile_fans:
        t[fan] = n
    if not t[I.QUADRUPLE_CHOW]:
        t[I.TILE_HOG] = facts.fours - facts.kongs
    if (win_in_concealed_chow or pair == win) and facts.unique_wait():
        wait_fan(packs[fixed_cnt:], win, t)
    final_adjust(t)
    if not t[I.BIG_FOUR_WINDS]:
        for tile in pungs:
            if E <= tile <= N:
                wind_pungs(tile, facts.round_wind, facts.seat_wind, t)
    if not any(t):
        t[I.CHICKEN_HAND] = 1
    return t


def total(t: list[int]) -> int:
    """The points of a fan table (flowers apart)."""
    return sum(map(mul, POINTS, t))


# (chows, pungs and kongs, pair) -> the fans that depend on these tiles alone, as (fan, count): an LRU sized by
# measurement.  Few hands share a combination (hit rate 15% in a 4,096-hand game and 11% over 20,000 hands never
# seen, with 16,384 entries; 9% with 2,048), and a miss costs no more than the look-up saves, so 2,048 entries
# (about 0.8 MB) score as fast as 16,384 (about 6 MB) did; bench/scoring.py prints its hit rate and memory.
COMBINATIONS_KEPT = 2048


@lru_cache(maxsize=COMBINATIONS_KEPT)
def _combination(chows: tuple[int, ...], pungs: tuple[int, ...], pair: int) -> tuple[tuple[int, int], ...]:
    """The fans that follow from which sets and pair a reading has, whoever melded them: the pungs of
    terminals, honours and dragons, the chow and pung combinations (with 不拆移 and 套算一次), what the
    pair makes of them (平和, 小三元, 小四喜), and what every set shares (全带幺, 全带五, 全双刻).
    None of them depends on concealment, the way of winning or the rest of the table, so a reading's
    combination is worked out once and kept (``chows`` and ``pungs`` sorted)."""
    packs = [(CHOW, c, False) for c in chows] + [(PUNG, p, False) for p in pungs] + [(PAIR, pair, False)]
    return _combination_fans(list(chows), list(pungs), pair, packs)


def _combination_fans(chows: list[int], pungs: list[int], pair: int,
                      packs: list[Pack]) -> tuple[tuple[int, int], ...]:
    """The fans that follow from which sets and pair a reading has, whoever melded them: the pungs of
    terminals, honours and dragons, the chow and pung combinations (with 不拆移 and 套算一次), what the
    pair makes of them (平和, 小三元, 小四喜), and what every set shares (全带幺, 全带五, 全双刻).
    None of them depends on concealment, the way of winning or the rest of the table, so a reading's
    combination is worked out once and kept."""
    t = [0] * FAN_COUNT
    for tile in pungs:
        if tile >= C:
            t[I.DRAGON_PUNG] += 1
        elif tile >= E or tile & 15 in (1, 9):
            t[I.PUNG_OF_TERMINALS_OR_HONORS] += 1
    n_chows = len(chows)
    if n_chows == 4:
        if _three_suited_terminal_chows(chows, pair):
            t[I.THREE_SUITED_TERMINAL_CHOWS] = 1
        elif _pure_terminal_chows(chows, pair):
            t[I.PURE_TERMINAL_CHOWS] = 1
        else:
            fam.score_four_chows((chows[0], chows[1], chows[2], chows[3]), t)
    elif n_chows == 3:
        fam.score_three_chows((chows[0], chows[1], chows[2]), t)
    elif n_chows == 2:
        fam.score_two_chows(chows[0], chows[1], t)
        fam.score_two_pungs(pungs[0], pungs[1], t)
    elif n_chows == 1:
        fam.score_three_pungs((pungs[0], pungs[1], pungs[2]), t)
    else:
        fam.score_four_pungs((pungs[0], pungs[1], pungs[2], pungs[3]), t)
    _pair(pair, n_chows, t)
    _set_traits(packs, t)
    return tuple((fan, n) for fan, n in enumerate(t) if n)


def _three_suited_terminal_chows(chows: list[int], pair: int) -> bool:
    """三色双龙会: 123 and 789 in two suits, a pair of 5 in the third."""
    if not is_numbered(pair) or pair & 15 != 5:
        return False
    if any(c >> 4 == pair >> 4 or c & 15 not in (2, 8) for c in chows):
        return False
    return sorted(chows) == sorted({c & 0xF0 | r for c in chows for r in (2, 8)}) and len({c >> 4 for c in chows}) == 2


def _pure_terminal_chows(chows: list[int], pair: int) -> bool:
    """一色双龙会: 123, 123, 789, 789 and a pair of 5, one suit."""
    if not is_numbered(pair) or pair & 15 != 5:
        return False
    base = pair & 0xF0
    return sorted(chows) == [base | 2, base | 2, base | 8, base | 8]


def _pair(pair: int, n_chows: int, t: list[int]) -> None:
    """平和 needs a suited pair; a dragon pair turns 双箭刻 into 小三元, a wind pair 三风刻 into 小四喜."""
    if n_chows == 4:
        if is_numbered(pair):
            t[I.ALL_CHOWS] = 1
        return
    if t[I.TWO_DRAGONS_PUNGS]:
        if is_dragon(pair):
            t[I.LITTLE_THREE_DRAGONS] = 1
            t[I.TWO_DRAGONS_PUNGS] = 0
        return
    if t[I.BIG_THREE_WINDS] and is_wind(pair):
        t[I.LITTLE_FOUR_WINDS] = 1
        t[I.BIG_THREE_WINDS] = 0


def _set_traits(packs: list[Pack], t: list[int]) -> None:
    """全带幺 (every set and the pair hold a terminal or honour), 全带五 (a 5), 全双刻 (even pungs)."""
    outside = five = even = 0
    for kind, tile, _ in packs:
        if not is_numbered(tile):
            outside += 1
            continue
        r = tile & 15
        if kind == CHOW:
            if r in (2, 8):
                outside += 1
            elif r in (4, 5, 6):
                five += 1
        elif r in (1, 9):
            outside += 1
        elif r == 5:
            five += 1
        elif r in (2, 4, 6, 8):
            even += 1
    if outside == 5:
        t[I.OUTSIDE_HAND] = 1
    elif five == 5:
        t[I.ALL_FIVE] = 1
    elif even == 5:
        t[I.ALL_EVEN_PUNGS] = 1


def wait_fan(concealed: list[Pack], win: int, t: list[int]) -> None:
    """On a unique wait: 边张 if the winning tile ends a concealed chow, else 嵌张 if it is a chow's
    middle, else 单钓 if it pairs; one of the three at most.  None with 全求人 or 四杠."""
    if t[I.MELDED_HAND] or t[I.FOUR_KONGS]:
        return
    edge = closed = single = False
    for kind, tile, _ in concealed:
        if kind == CHOW:
            if tile == win:
                closed = True
            elif tile + 1 == win or tile - 1 == win:
                edge = True
        elif kind == PAIR and tile == win:
            single = True
    if edge:
        t[I.EDGE_WAIT] = 1
    elif closed:
        t[I.CLOSED_WAIT] = 1
    elif single:
        t[I.SINGLE_WAIT] = 1
