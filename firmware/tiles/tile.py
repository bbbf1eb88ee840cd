"""Tile kinds and the compact notation (``123m55p789sEEE``).

A tile kind is a small integer, so hands are counted in plain lists:

==========  =======  ======================================
kinds       code     tiles
==========  =======  ======================================
0..8        1m..9m   characters 万
9..17       1p..9p   dots 饼 / 筒
18..26      1s..9s   bamboo 条
27..30      E S W N  winds 东 南 西 北
31..33      C F P    dragons 中 (red), 发 (green), 白 (white)
34..41      1f..8f   flowers 春 夏 秋 冬 梅 兰 竹 菊
==========  =======  ======================================
"""

from __future__ import annotations

from firmware.i18n import worded
from firmware.tile_constants import PLAYABLE, SUITED, TERMINALS, TERMINALS_AND_HONOURS  # noqa: F401

SUITS = "mps"
HONOURS = "ESWNCFP"
KINDS = 42
FLOWER_BASE = 34
WINDS = tuple(range(27, 31))
DRAGONS = tuple(range(31, 34))
RED_DRAGON = 31


class TileError(ValueError):
    """A tile code, count or hand that is not valid; the message names the problem."""


def is_suited(kind: int) -> bool:
    return kind < SUITED


def is_honour(kind: int) -> bool:
    return SUITED <= kind < PLAYABLE


def is_flower(kind: int) -> bool:
    return FLOWER_BASE <= kind < KINDS


def suit_of(kind: int) -> int:
    """0 = m, 1 = p, 2 = s; only for suited kinds."""
    return kind // 9


def rank_of(kind: int) -> int:
    """1..9; only for suited kinds."""
    return kind % 9 + 1


def is_terminal_or_honour(kind: int) -> bool:
    return kind >= SUITED or kind % 9 in (0, 8)


def code(kind: int) -> str:
    """The code of one kind: ``5m``, ``E``, ``3f``."""
    if 0 <= kind < KINDS:
        return _CODES[kind]
    return _code(kind)


def _code(kind: int) -> str:
    if kind < SUITED:
        return f"{kind % 9 + 1}{SUITS[kind // 9]}"
    if kind < PLAYABLE:
        return HONOURS[kind - SUITED]
    if kind < KINDS:
        return f"{kind - FLOWER_BASE + 1}f"
    raise worded(TileError, "no tile kind %(kind)s", kind=kind)


_CODES = tuple(_code(kind) for kind in range(KINDS))      # (every action's log line names its tiles)
_RANKS = frozenset("123456789")
_SUIT_BASE = {"m": 0, "p": 9, "s": 18, "f": FLOWER_BASE}
_HONOUR_KIND = {h: SUITED + i for i, h in enumerate(HONOURS)}


def show(text: str, limit: int = 40) -> str:
    """``repr(text)``, cut short (with its length) when it is longer than ``limit``: error messages stay small."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text)} characters)"


def parse(text: str) -> list[int]:
    """Parse a compact string into kinds, in order: ``"123m5pE"`` -> [0, 1, 2, 13, 27].

    One left-to-right scan (linear in the length, whatever the text); the first bad code raises.
    """
    kinds: list[int] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in _RANKS:
            j = i + 1
            while j < n and text[j] in _RANKS:
                j += 1
            base = _SUIT_BASE.get(text[j]) if j < n else None
            if base is None:
                raise worded(TileError, "rank without a suit letter in %(text)s", text=show(text))
            if base == FLOWER_BASE and "9" in text[i:j]:
                raise worded(TileError, "unknown tile code '9f' in %(text)s", text=show(text))
            if j - i == 1:
                kinds.append(base + ord(c) - 49)
            else:
                kinds += [base + ord(d) - 49 for d in text[i:j]]
            i = j + 1
        elif c in _HONOUR_KIND:
            kinds.append(_HONOUR_KIND[c])
            i += 1
        elif c.isspace():
            i += 1
        elif c.isdigit() and c != "0":
            raise worded(TileError, "rank without a suit letter in %(text)s", text=show(text))
        else:
            raise worded(TileError, "unknown tile code %(code)r in %(text)s", code=c, text=show(text))
    if not kinds and text.strip():
        raise worded(TileError, "no tiles in %(text)s", text=show(text))
    return kinds


def parse_one(text: str) -> int:
    kind = _ONE_CODE.get(text)
    if kind is not None:                    # (a tile's own code: what parse makes of it)
        return kind
    kinds = parse(text)
    if len(kinds) != 1:
        raise worded(TileError, "expected one tile, got %(text)s", text=show(text))
    return kinds[0]


_ONE_CODE = {code(kind): kind for kind in range(KINDS)}


def format_tiles(kinds: list[int] | tuple[int, ...], sort: bool = True) -> str:
    """Print kinds compactly, grouping ranks before their suit letter."""
    ordered = sorted(kinds) if sort else list(kinds)
    out: list[str] = []
    run_suit: str | None = None
    run: list[str] = []
    for kind in ordered:
        c = code(kind)
        if kind < SUITED or kind >= FLOWER_BASE:
            rank, suit = c[:-1], c[-1]
            if suit != run_suit and run:
                out.append("".join(run) + run_suit)
                run = []
            run_suit = suit
            run.append(rank)
        else:
            if run:
                out.append("".join(run) + run_suit)
                run, run_suit = [], None
            out.append(c)
    if run:
        out.append("".join(run) + run_suit)
    return "".join(out)


def counts_of(kinds: list[int] | tuple[int, ...]) -> list[int]:
    """A 34-entry count vector of the playable kinds (flowers are rejected)."""
    counts = [0] * PLAYABLE
    for kind in kinds:
        if kind >= PLAYABLE:
            raise worded(TileError, "flower %(tile)s cannot stand in a hand", tile=code(kind))
        counts[kind] += 1
    return counts
