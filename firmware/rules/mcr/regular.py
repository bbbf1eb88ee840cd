"""Scoring one reading of a regular hand (four sets and a pair) under MCR.

``score_reading`` fills a fan table (counts per :class:`Fan`) for one
reading of the hand, in the order the rules build on each other: it starts
from the hand's base table (the way of winning, concealment, the hand's
tiles as a whole, four of a kind: :func:`base_table`, once per hand), then
the kong and concealed-pung families, each pung, the chow and pung
combinations, the pair, what every set shares, the wait, and last the
exclusions (不计) and the wind pungs.  Hand-wide facts that do not depend on
the reading come in a :class:`HandFacts`, computed once per hand by the scorer.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable
from operator import mul

from firmware.rules.mcr import families as fam
from firmware.rules.mcr.exclusions import final_adjust, wind_pungs
from firmware.rules.mcr.fans import FAN_COUNT, POINTS, FanCounts
from firmware.rules.mcr.fans import FanIndex as I
from firmware.rules.mcr.tiles import C, E, N, is_dragon, is_numbered, is_wind

CHOW, PUNG, KONG, PAIR = 0, 1, 2, 3

# A pack: (kind of pack, tile code (a chow's middle tile), melded from another player's discard)
Pack = tuple[int, int, bool]


@dataclass(slots=True)
class HandFacts:
    """What the scorer knows of the whole hand, for every reading alike."""

    win: int                       # winning tile code
    self_drawn: bool
    base: list[int]                # the table every reading starts from (:func:`base_table`)
    # the kong and concealed-pung fans by concealed pungs (:func:`kong_families`)
    kong_family: tuple[tuple[tuple[int, int], ...], ...]
    unique_wait_check: Callable[..., bool]  # does the hand less its winning tile wait on that tile alone?
    wait_args: tuple[object, ...]           # ... asked with these arguments
    seat_wind: int                 # codes
    round_wind: int
    _unique_wait: bool | None = None

    def unique_wait(self) -> bool:
        """Computed once, and only when a reading could score a wait."""
        if self._unique_wait is None:
            self._unique_wait = self.unique_wait_check(*self.wait_args)
        return self._unique_wait


def base_table(flag_fans: FanCounts, tile_fans: FanCounts, melded: int, self_drawn: int, tile_hogs: int) -> list[int]:
    """The fans of a hand that no reading changes: the way of winning, concealment (``melded``: the melds
    not concealed kongs: 不求人 / 门前清 with none, 全求人 with four won on a discard), the tiles as a whole,
    and 四归一 (which 一色四同顺 takes away again)."""
    t = [0] * FAN_COUNT
    for fan, n in flag_fans:
        t[fan] = n
    if melded == 0:
        t[I.FULLY_CONCEALED_HAND if self_drawn else I.CONCEALED_HAND] = 1
    elif melded == 4:
        t[I.SELF_DRAWN if self_drawn else I.MELDED_HAND] = 1
    elif self_drawn:
        t[I.SELF_DRAWN] = 1
    for fan, n in tile_fans:
        t[fan] = n
    t[I.TILE_HOG] = tile_hogs
    return t


def _kong_family(concealed_pungs: int, melded_kongs: int, concealed_kongs: int) -> tuple[tuple[int, int], ...]:
    t = [0] * FAN_COUNT
    fam.kongs_and_concealed_pungs(concealed_pungs, melded_kongs, concealed_kongs, t)
    return tuple((fan, n) for fan, n in enumerate(t) if n)


# by melded kongs, concealed kongs, then concealed pungs (kongs apart): bounded by design (5 x 5 x 5)
_KONG_FAMILIES = tuple(tuple(tuple(_kong_family(p, m, c) for p in range(5)) for c in range(5)) for m in range(5))


def kong_families(melded_kongs: int, concealed_kongs: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The kong and concealed-pung fans of a hand with these kongs, by its concealed pungs (kongs apart)."""
    return _KONG_FAMILIES[melded_kongs][concealed_kongs]


def score_reading(chows: tuple[int, ...], pungs: tuple[int, ...], pair: int, concealed_pungs: int,
                  win_chows: tuple[int, ...], facts: HandFacts) -> list[int]:
    """The fan table of one reading (its total: :func:`total`): ``chows`` and ``pungs`` (kongs included) are
    the codes of every set, melds included, sorted (a chow by its middle tile); ``concealed_pungs`` the
    standing pungs that count as concealed; ``win_chows`` the standing chows of the winning tile's suit."""
    t = facts.base.copy()
    if pungs:
        for fan, n in facts.kong_family[concealed_pungs]:
            t[fan] = n
        if len(pungs) == 4 and not t[I.FOUR_KONGS] and not t[I.FOUR_CONCEALED_PUNGS]:
            t[I.ALL_PUNGS] = 1
    winds = _combination_into(chows, pungs, pair, t)
    if t[I.QUADRUPLE_CHOW]:
        t[I.TILE_HOG] = 0
    win = facts.win
    edge = closed = False
    for tile in win_chows:
        if tile == win:
            closed = True
        elif tile + 1 == win or tile - 1 == win:
            edge = True
    if (edge or closed or pair == win) and not t[I.MELDED_HAND] and not t[I.FOUR_KONGS] and facts.unique_wait():
        # on a unique wait: 边张 if the tile ends a concealed chow, else 嵌张 if it is one's middle, else 单钓
        t[I.EDGE_WAIT if edge else I.CLOSED_WAIT if closed else I.SINGLE_WAIT] = 1
    final_adjust(t)
    if winds and not t[I.BIG_FOUR_WINDS]:
        for tile in winds:
            wind_pungs(tile, facts.round_wind, facts.seat_wind, t)
    if not any(t):
        t[I.CHICKEN_HAND] = 1
    return t


def total(t: list[int]) -> int:
    """The points of a fan table (flowers apart)."""
    return sum(map(mul, POINTS, t))


def _combination_into(chows: tuple[int, ...], pungs: tuple[int, ...], pair: int, t: list[int]) -> tuple[int, ...]:
    """The fans that follow from which sets and pair a reading has, whoever melded them: the pungs of
    terminals, honours and dragons, the chow and pung combinations (with 不拆移 and 套算一次), what the
    pair makes of them (平和, 小三元, 小四喜), and what every set shares (全带幺, 全带五, 全双刻).
    The chows' fans and the pungs' are each kept by their sets alone (few hands share all their sets,
    many share their chows or their pungs).  Returns the wind pungs (for 圈风刻 and 门风刻)."""
    traits = _PUNG_TRAIT[pair]
    n_chows = len(chows)
    if n_chows:
        if n_chows == 4 and pair < 0x40 and pair & 15 == 5 and _terminal_chows(chows, pair, t):
            traits += _chow_part(chows)[1]
        else:
            fans, trait = _chow_part(chows)
            traits += trait
            for fan, n in fans:
                t[fan] = n
        if n_chows == 4 and pair < 0x40:
            t[I.ALL_CHOWS] = 1              # 平和 needs a suited pair
    if pungs:
        fans, trait, winds, honour_pair = _pung_part(pungs)
        traits += trait
        for fan, n in fans:
            t[fan] = n
        if honour_pair and pair > 0x40:
            _pair(pair, t)
    else:
        winds = ()
    if traits & 15 == 5:
        t[I.OUTSIDE_HAND] = 1
    elif traits >> 4 & 15 == 5:
        t[I.ALL_FIVE] = 1
    elif traits >> 8 == 5:
        t[I.ALL_EVEN_PUNGS] = 1
    return winds


def _terminal_chows(chows: tuple[int, ...], pair: int, t: list[int]) -> bool:
    """三色双龙会 or 一色双龙会 (four chows and a pair of 5), scored in ``t``; False for neither."""
    if _three_suited_terminal_chows(list(chows), pair):
        t[I.THREE_SUITED_TERMINAL_CHOWS] = 1
    elif _pure_terminal_chows(list(chows), pair):
        t[I.PURE_TERMINAL_CHOWS] = 1
    else:
        return False
    return True


def _trait(chow: bool, tile: int) -> int:
    """What a set (or the pair) adds towards 全带幺 (bits 0-3), 全带五 (4-7) and 全双刻 (8-11)."""
    if not is_numbered(tile):
        return 1
    r = tile & 15
    if chow:
        return 1 if r in (2, 8) else 16 if r in (4, 5, 6) else 0
    return 1 if r in (1, 9) else 16 if r == 5 else 256 if r in (2, 4, 6, 8) else 0


_CHOW_TRAIT = tuple(_trait(True, c) for c in range(0x48))
_PUNG_TRAIT = tuple(_trait(False, c) for c in range(0x48))

# Chows (and pungs) of a reading, sorted, with their fans: LRUs sized by the scoring benchmark (bench/scoring.py
# prints their hit rates and memory).  At most 13,000 chow keys (21 chows, up to four) and 53,000 pung keys
# (34 kinds, up to four) exist, and a hand's chows or pungs recur far more often than its whole set of sets.
CHOWS_KEPT = 2048
PUNGS_KEPT = 2048


@lru_cache(maxsize=CHOWS_KEPT)
def _chow_part(chows: tuple[int, ...]) -> tuple[tuple[tuple[int, int], ...], int]:
    """The chow combinations of a reading's chows (sorted, a chow by its middle tile) as (fan, count)
    pairs, and the chows' traits (:func:`_trait`)."""
    t = [0] * FAN_COUNT
    n = len(chows)
    if n == 4:
        fam.score_four_chows((chows[0], chows[1], chows[2], chows[3]), t)
    elif n == 3:
        fam.score_three_chows((chows[0], chows[1], chows[2]), t)
    elif n == 2:
        fam.score_two_chows(chows[0], chows[1], t)
    return tuple((fan, k) for fan, k in enumerate(t) if k), sum(_CHOW_TRAIT[c] for c in chows)


@lru_cache(maxsize=PUNGS_KEPT)
def _pung_part(pungs: tuple[int, ...]) -> tuple[tuple[tuple[int, int], ...], int, tuple[int, ...], bool]:
    """The fans of a reading's pungs and kongs (sorted codes): pungs of terminals, honours and dragons, the pung
    combinations; their traits (:func:`_trait`); the wind pungs; and whether an honour pair changes the fans
    (双箭刻 or 三风刻: :func:`_pair`)."""
    t = [0] * FAN_COUNT
    for tile in pungs:
        if tile >= C:
            t[I.DRAGON_PUNG] += 1
        elif tile >= E or tile & 15 in (1, 9):
            t[I.PUNG_OF_TERMINALS_OR_HONORS] += 1
    n = len(pungs)
    if n == 4:
        fam.score_four_pungs((pungs[0], pungs[1], pungs[2], pungs[3]), t)
    elif n == 3:
        fam.score_three_pungs((pungs[0], pungs[1], pungs[2]), t)
    elif n == 2:
        fam.score_two_pungs(pungs[0], pungs[1], t)
    return (tuple((fan, k) for fan, k in enumerate(t) if k), sum(_PUNG_TRAIT[p] for p in pungs),
            tuple(p for p in pungs if E <= p <= N), bool(t[I.TWO_DRAGONS_PUNGS] or t[I.BIG_THREE_WINDS]))


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


def _pair(pair: int, t: list[int]) -> None:
    """An honour pair with fewer than four chows: a dragon pair turns 双箭刻 into 小三元, a wind pair 三风刻
    into 小四喜."""
    if t[I.TWO_DRAGONS_PUNGS]:
        if is_dragon(pair):
            t[I.LITTLE_THREE_DRAGONS] = 1
            t[I.TWO_DRAGONS_PUNGS] = 0
        return
    if t[I.BIG_THREE_WINDS] and is_wind(pair):
        t[I.LITTLE_FOUR_WINDS] = 1
        t[I.BIG_THREE_WINDS] = 0


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
