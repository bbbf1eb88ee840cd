"""Tile codes for the MCR scorer: suit in the high nibble, rank in the low one.

Scoring compares ranks across suits (三色三同顺, 双同刻) and steps within a
suit (一色三步高), which is plain arithmetic on ``suit << 4 | rank``.
Suits are ordered characters, bamboo, dots, honours (the order of the
reference implementation, so ties between equal-scoring readings of a hand
resolve the same way); honours are E S W N C F P = 1..7.
"""

from __future__ import annotations

CHARACTERS, BAMBOO, DOTS, HONORS = 1, 2, 3, 4
_SUIT_OF_KIND = (CHARACTERS, DOTS, BAMBOO)   # our kinds run m, p, s

E, S, W, N, C, F, P = (HONORS << 4 | r for r in range(1, 8))
WINDS = (E, S, W, N)
DRAGONS = (C, F, P)


def code(kind: int) -> int:
    if kind < 27:
        return _SUIT_OF_KIND[kind // 9] << 4 | (kind % 9 + 1)
    return HONORS << 4 | (kind - 26)


CODE: tuple[int, ...] = tuple(code(k) for k in range(34))
KIND_OF_CODE: dict[int, int] = {c: k for k, c in enumerate(CODE)}


def suit(c: int) -> int:
    return c >> 4


def rank(c: int) -> int:
    return c & 15


def is_numbered(c: int) -> bool:
    return c < 0x40


def is_terminal(c: int) -> bool:
    return c < 0x40 and (c & 15) in (1, 9)


def is_honor(c: int) -> bool:
    return c >= 0x40


def is_wind(c: int) -> bool:
    return E <= c <= N


def is_dragon(c: int) -> bool:
    return C <= c <= P


def is_terminal_or_honor(c: int) -> bool:
    return c >= 0x40 or (c & 15) in (1, 9)


GREEN = frozenset({BAMBOO << 4 | r for r in (2, 3, 4, 6, 8)} | {F})
REVERSIBLE = frozenset({DOTS << 4 | r for r in (1, 2, 3, 4, 5, 8, 9)} | {BAMBOO << 4 | r for r in (2, 4, 5, 6, 8, 9)}
                       | {P})
