"""Adapters for the benchmark peers; each is optional (skipped with a note when missing).

* PyMahjongGB (``pymahjonggb``, C++): its public API checks a win by
  calculating the hand's fans (``MahjongFanCalculator`` raises on a
  non-win), so a win check is one call and waits are one call per kind.
* ``mahjong`` (pure Python, riichi rules): ``Agari.is_agari`` on a 34-count
  vector; waits are one call per kind.
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

_GB_NAMES = ([f"W{r}" for r in range(1, 10)] + [f"B{r}" for r in range(1, 10)] + [f"T{r}" for r in range(1, 10)]
             + ["F1", "F2", "F3", "F4", "J1", "J2", "J3"])


def pymahjonggb() -> tuple[Callable, Callable] | str:
    try:
        from MahjongGB import MahjongFanCalculator
    except ImportError:
        return "pymahjonggb is not installed (pip install '.[bench]')"

    def to_gb(kinds):
        return tuple(_GB_NAMES[k] for k in kinds)

    def win(kinds14: list[int]) -> bool:
        hand = to_gb(kinds14[:-1])
        try:
            MahjongFanCalculator(pack=(), hand=hand, winTile=_GB_NAMES[kinds14[-1]], flowerCount=0,
                                 isSelfDrawn=False, is4thTile=False, isAboutKong=False, isWallLast=False,
                                 seatWind=0, prevalentWind=0)
            return True
        except TypeError:
            return False

    def waits(kinds13: list[int]) -> list[int]:
        hand = to_gb(kinds13)
        out = []
        held = [0] * 34
        for k in kinds13:
            held[k] += 1
        for k in range(34):
            if held[k] >= 4:
                continue
            try:
                MahjongFanCalculator(pack=(), hand=hand, winTile=_GB_NAMES[k], flowerCount=0, isSelfDrawn=False,
                                     is4thTile=False, isAboutKong=False, isWallLast=False, seatWind=0,
                                     prevalentWind=0)
                out.append(k)
            except TypeError:
                pass
        return out

    return win, waits


def mahjong_pkg() -> tuple[Callable, Callable] | str:
    try:
        from mahjong.agari import Agari
    except ImportError:
        return "mahjong is not installed (pip install '.[bench]')"
    agari = Agari()

    def win(kinds14: list[int]) -> bool:
        counts = [0] * 34
        for k in kinds14:
            counts[k] += 1
        return bool(agari.is_agari(counts))

    def waits(kinds13: list[int]) -> list[int]:
        counts = [0] * 34
        for k in kinds13:
            counts[k] += 1
        out = []
        for k in range(34):
            if counts[k] >= 4:
                continue
            counts[k] += 1
            if agari.is_agari(counts):
                out.append(k)
            counts[k] -= 1
        return out

    return win, waits


def time_us(fn: Callable, items: Sequence, passes: int = 3) -> float:
    """Microseconds per item of ``fn`` over ``items``, best of ``passes`` (one untimed warm-up pass
    first, so peers prepare their inputs and caches fill outside the timing)."""
    for item in items:
        fn(item)
    best = float("inf")
    for _ in range(passes):
        start = time.perf_counter()
        for item in items:
            fn(item)
        best = min(best, time.perf_counter() - start)
    return best / len(items) * 1e6
