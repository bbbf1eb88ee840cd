"""The MCR hands that are not four sets and a pair: seven pairs, the knitted hands, 十三幺, 九莲宝灯.

Each function returns a fan table, or None when the hand is not that shape.
Seven pairs is also tried as a regular hand by the scorer (a regular
reading may score more); the others stand alone.  A 组合龙 hand (147 258
369 in three suits, one set and a pair; one set may be melded) is scored
here with its fourth set and pair.
"""

from __future__ import annotations

from itertools import compress
from typing import Callable

from firmware.hands.shapes import KNITTED
from firmware.rules.mcr.exclusions import final_adjust, wind_pungs
from firmware.rules.mcr.fans import FAN_COUNT, Fan, FanCounts
from firmware.rules.mcr.regular import CHOW, KONG, PAIR, PUNG, Pack, wait_fan
from firmware.rules.mcr.tiles import CODE, is_dragon, is_honor, is_terminal, is_wind
from firmware.tile_constants import HONOUR_KINDS, TERMINALS_AND_HONOURS

_ORPHANS = frozenset(TERMINALS_AND_HONOURS)
_SEVEN_TWOS = [2] * 7
_KINDS = range(34)
_KNITTED_SETS = tuple(frozenset(seq) for seq in KNITTED)
_SUITED = range(27)


def seven_pairs(counts: list[int], win: int, flag_fans: FanCounts, tile_fans: FanCounts, fours: int) -> list[int]:
    """七对 or 连七对; ``counts`` must be seven pairs (the shape analysis said so)."""
    t = [0] * FAN_COUNT
    if win < 27 and _seven_shifted(counts, win // 9 * 9):
        t[Fan.SEVEN_SHIFTED_PAIRS] = 1
        base = win // 9 * 9
        if not counts[base] and not counts[base + 8]:
            t[Fan.ALL_SIMPLES] = 1
        _flags(t, flag_fans)
        return t
    t[Fan.SEVEN_PAIRS] = 1
    for fan, n in tile_fans:
        t[fan] = n
    t[Fan.TILE_HOG] = fours
    _flags(t, flag_fans)
    final_adjust(t)
    return t


def _seven_shifted(counts: list[int], base: int) -> bool:
    """Seven pairs of one suit in a row (the hand holds 14 tiles, so 7 pairs there are all of it)."""
    group = counts[base:base + 9]
    return group.count(2) == 7 and any(group[start:start + 7] == _SEVEN_TWOS for start in range(3))


def honours_and_knitted(counts: list[int], flag_fans: FanCounts) -> list[int] | None:
    """全不靠 (with 组合龙 when all nine knitted tiles are there) or 七星不靠."""
    if max(counts) > 1 or sum(counts) != 14:
        return None
    suited = set(compress(_SUITED, counts))
    if not any(suited <= seq for seq in _KNITTED_SETS):
        return None
    t = [0] * FAN_COUNT
    if all(counts[k] for k in HONOUR_KINDS):
        t[Fan.GREATER_HONORS_AND_KNITTED] = 1
    else:
        t[Fan.LESSER_HONORS_AND_KNITTED] = 1
        if len(suited) == 9:
            t[Fan.KNITTED_STRAIGHT] = 1
    _flags(t, flag_fans)
    return t


def thirteen_orphans(counts: list[int], flag_fans: FanCounts) -> list[int] | None:
    if set(compress(_KINDS, counts)) != _ORPHANS:
        return None
    t = [0] * FAN_COUNT
    t[Fan.THIRTEEN_ORPHANS] = 1
    _flags(t, flag_fans)
    return t


def nine_gates(counts: list[int], win: int, flag_fans: FanCounts) -> list[int] | None:
    """九莲宝灯: 1112345678999 of one suit standing, any tile of that suit wins."""
    if win >= 27:
        return None
    base = win // 9 * 9
    held = list(counts[base:base + 9])
    held[win - base] -= 1
    if held != [3, 1, 1, 1, 1, 1, 1, 1, 3] or sum(counts) != 14:
        return None
    t = [0] * FAN_COUNT
    t[Fan.NINE_GATES] = 1
    r = win - base + 1
    if r in (1, 9):
        t[Fan.PURE_STRAIGHT] = 1
        t[Fan.TILE_HOG] = 1
    if r in (2, 5, 8):
        t[Fan.TWO_CONCEALED_PUNGS] = 1
        t[Fan.PUNG_OF_TERMINALS_OR_HONORS] = 1
    if r in (2, 3, 4, 6, 7, 8):
        t[Fan.SHORT_STRAIGHT] = 1
    _flags(t, flag_fans)
    return t


def knitted_straight(counts: list[int], fixed: list[Pack], total_counts: list[int], win: int, self_drawn: int,
                     flag_fans: FanCounts, unique_wait_of: Callable[[list[int]], bool], round_wind: int,
                     seat_wind: int) -> list[int] | None:
    """组合龙 + one set + a pair (the set may be a meld).  ``unique_wait_of(rest_counts)`` says
    whether the five tiles beside the 组合龙, less the winning tile, wait on one tile only."""
    seq = next((s for s in KNITTED if all(counts[k] for k in s)), None)
    if seq is None:
        return None
    rest = list(counts)
    for k in seq:
        rest[k] -= 1
    reading = _set_and_pair(rest, fixed)
    if reading is None:
        return None
    fourth, pair = reading
    kind, tile, melded = fourth
    pair_code = CODE[pair]
    t = [0] * FAN_COUNT
    t[Fan.KNITTED_STRAIGHT] = 1
    if kind == CHOW:
        if pair < 27:
            t[Fan.ALL_CHOWS] = 1
        if total_counts[pair] == 4:
            t[Fan.TILE_HOG] = 1
    else:
        c = CODE[tile]
        if is_honor(c):
            if is_wind(c):
                t[Fan.PUNG_OF_TERMINALS_OR_HONORS] = 1
                wind_pungs(c, round_wind, seat_wind, t)
                if is_dragon(pair_code):
                    t[Fan.ALL_TYPES] = 1
            else:
                t[Fan.DRAGON_PUNG] = 1
                if is_wind(pair_code):
                    t[Fan.ALL_TYPES] = 1
        else:
            if is_terminal(c):
                t[Fan.PUNG_OF_TERMINALS_OR_HONORS] = 1
            if pair < 27:
                t[Fan.NO_HONORS] = 1
            if kind != KONG and total_counts[tile] == 4:
                t[Fan.TILE_HOG] = 1
    _flags(t, flag_fans)
    if melded:
        if kind == KONG:
            t[Fan.MELDED_KONG] = 1
    else:
        if kind == KONG:
            t[Fan.CONCEALED_KONG] = 1
        if self_drawn:
            t[Fan.FULLY_CONCEALED_HAND] = 1
            t[Fan.SELF_DRAWN] = 0
        else:
            t[Fan.CONCEALED_HAND] = 1
    if not fixed:
        # The winning tile may be read as an edge, closed or single wait even inside the 组合龙.
        if rest[win] and unique_wait_of(rest):
            wait_fan([(kind, CODE[tile] + (1 if kind == CHOW else 0), melded), (PAIR, pair_code, False)],
                     CODE[win], t)
    elif win not in seq or counts[win] == 3:
        t[Fan.SINGLE_WAIT] = 1
    final_adjust(t)
    return t


def _set_and_pair(rest: list[int], fixed: list[Pack]) -> tuple[tuple[int, int, bool], int] | None:
    """The one way to read five (or, with a meld, two) tiles as a set and a pair."""
    held = [k for k in compress(_KINDS, rest) for _ in range(rest[k])]
    if fixed:
        if len(held) == 2 and held[0] == held[1]:
            kind, tile, melded = fixed[0]
            return (kind, tile, melded), held[0]
        return None
    readings = []
    for pair in {k for k in held if rest[k] >= 2}:
        left = list(rest)
        left[pair] -= 2
        three = [k for k in compress(_KINDS, left) for _ in range(left[k])]
        if three[0] == three[2]:
            readings.append(((PUNG, three[0], False), pair))
        elif three[0] < 27 and three[0] % 9 <= 6 and three == [three[0], three[0] + 1, three[0] + 2]:
            readings.append(((CHOW, three[0], False), pair))
    return readings[0] if len(readings) == 1 else None


def _flags(t: list[int], flag_fans: FanCounts) -> None:
    for fan, n in flag_fans:
        t[fan] = n
