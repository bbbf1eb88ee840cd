"""Generated MCR wins of every shape, and their translation for the benchmark peers.

Shared by ``make bench`` (scoring speed) and ``tests/firmware/rules/test_mcr_oracle.py``
(agreement with PyMahjongGB where it is installed).  Hands are random but
complete: four sets and a pair (some melded, some kongs, concealed or not,
themed by suit or honours), seven pairs, knitted hands, 十三幺 and 九莲宝灯,
with random flags, winds and flowers.
"""

from __future__ import annotations

import random
from typing import Iterator

from firmware.hands.shapes import KNITTED
from firmware.rules.win import HandError, Meld, MeldKind, Win

GB_NAMES = ([f"W{r}" for r in range(1, 10)] + [f"B{r}" for r in range(1, 10)] + [f"T{r}" for r in range(1, 10)]
            + ["F1", "F2", "F3", "F4", "J1", "J2", "J3"])
_OFFER = {"left": 1, "opposite": 2, "right": 3}
_SOURCES = ("left", "opposite", "right")


def _random_set(rng: random.Random, theme) -> tuple[str, int]:
    if theme == "honours" and rng.random() < 0.7:
        return "pung", rng.randrange(27, 34)
    suit = theme if isinstance(theme, int) else rng.randrange(3)
    if rng.random() < 0.5:
        return "chow", suit * 9 + rng.randrange(7)
    if rng.random() < 0.15:
        return "pung", rng.randrange(27, 34)
    return "pung", suit * 9 + rng.randrange(9)


def _tiles_of(kind: str, tile: int) -> list[int]:
    return [tile] * 3 if kind == "pung" else [tile, tile + 1, tile + 2]


def _shape(rng: random.Random) -> tuple[list[int], list[tuple[str, int]]]:
    """Concealed tiles (14 - 3 x melds, winning tile included) and the sets to meld."""
    theme = rng.choice([None, None, 0, 1, 2, "honours"])
    roll = rng.random()
    if roll < 0.08:
        pool = range(34) if not isinstance(theme, int) else range(theme * 9, theme * 9 + 9)
        return [k for _ in range(7) for k in [rng.choice(pool)] * 2], []
    if roll < 0.12:
        seq = list(rng.choice(KNITTED))
        if rng.random() < 0.5:
            tiles = rng.sample(seq, rng.randrange(7, 10))
            return tiles + rng.sample(range(27, 34), 14 - len(tiles)), []
        kind, tile = _random_set(rng, theme)
        pair = rng.randrange(34)
        if rng.random() < 0.3:
            return seq + [pair, pair], [(kind, tile)]
        return seq + _tiles_of(kind, tile) + [pair, pair], []
    if roll < 0.14:
        orphans = [0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33]
        return orphans + [rng.choice(orphans)], []
    if roll < 0.16:
        base = rng.randrange(3) * 9
        return [base] * 3 + [base + i for i in range(1, 8)] + [base + 8] * 3 + [base + rng.randrange(9)], []
    sets = [_random_set(rng, theme) for _ in range(4)]
    pair = rng.randrange(34) if not isinstance(theme, int) else theme * 9 + rng.randrange(9)
    melded = rng.choice([0, 0, 1, 1, 2, 3, 4])
    tiles = [pair, pair]
    for kind, tile in sets[melded:]:
        tiles += _tiles_of(kind, tile)
    return tiles, sets[:melded]


def generated_wins(rng: random.Random, n: int) -> Iterator[Win]:
    """``n`` valid wins (invalid draws, e.g. a fifth copy, are skipped and replaced)."""
    made = 0
    while made < n:
        tiles, to_meld = _shape(rng)
        rng.shuffle(tiles)
        win_tile = tiles.pop()
        melds = []
        for kind, tile in to_meld:
            r = rng.random()
            if kind == "chow":
                melds.append(Meld(MeldKind.CHOW, tile, "left"))
            elif r < 0.2:
                melds.append(Meld(MeldKind.KONG, tile, None))
            elif r < 0.4:
                melds.append(Meld(MeldKind.KONG, tile, rng.choice(_SOURCES)))
            else:
                melds.append(Meld(MeldKind.PUNG, tile, rng.choice(_SOURCES)))
        win = Win(tuple(tiles), tuple(melds), win_tile, rng.random() < 0.5, rng.random() < 0.15,
                  rng.random() < 0.15, rng.random() < 0.1, rng.randrange(4), rng.randrange(4), rng.choice([0, 0, 1, 2]))
        try:
            win.validate()
        except HandError:
            continue
        made += 1
        yield win


def to_pymahjonggb(w: Win) -> dict:
    """Keyword arguments of ``MahjongGB.MahjongFanCalculator`` for a win."""
    packs = []
    for m in w.melds:
        if m.kind is MeldKind.CHOW:
            packs.append(("CHI", GB_NAMES[m.tile + 1], 1))
        elif m.kind is MeldKind.PUNG:
            packs.append(("PENG", GB_NAMES[m.tile], _OFFER[m.source or "left"]))
        else:
            packs.append(("GANG", GB_NAMES[m.tile], 0 if m.concealed else _OFFER[m.source or "left"]))
    return dict(pack=tuple(packs), hand=tuple(GB_NAMES[k] for k in w.hand), winTile=GB_NAMES[w.win_tile],
                flowerCount=w.flowers, isSelfDrawn=w.self_drawn, is4thTile=w.last_of_kind, isAboutKong=w.kong_win,
                isWallLast=w.last_tile, seatWind=w.seat_wind, prevalentWind=w.round_wind)
