"""Hand-analysis benchmark: win checks and waits, mjtable against its peers.

Tasks, on the same seeded hands for every engine:

* ``win_complete``: win check on complete 14-tile hands (4 sets + a pair);
* ``win_random``: win check on random 14-tile hands (almost never wins);
* ``waits_random``: waits of random 13-tile hands;
* ``waits_ready``: waits of ready 13-tile hands (a complete hand less one tile).

Figures are microseconds per hand (best of three passes).
"""

from __future__ import annotations

import random
from typing import Callable

from bench import peers
from firmware.hands.analysis import is_win, waits

N_HANDS = 2000
# Issue targets: minimum ratio PyMahjongGB / mjtable per task.
TARGETS = {"win_complete": 1.0, "win_random": 1.0, "waits_random": 20.0, "waits_ready": 20.0}
TARGET_PEER = "pymahjonggb"


def _complete_hand(rng: random.Random) -> list[int]:
    while True:
        counts = [0] * 34
        kinds: list[int] = []
        pair = rng.randrange(34)
        counts[pair] += 2
        kinds += [pair, pair]
        for _ in range(4):
            if rng.random() < 0.6:
                suit, r = rng.randrange(3), rng.randrange(7)
                tiles = [suit * 9 + r + i for i in range(3)]
            else:
                tiles = [rng.randrange(34)] * 3
            for t in tiles:
                counts[t] += 1
            kinds += tiles
        if max(counts) <= 4:
            rng.shuffle(kinds)
            return kinds


def _random_hand(rng: random.Random, n: int) -> list[int]:
    wall = [k for k in range(34) for _ in range(4)]
    return rng.sample(wall, n)


def make_hands(seed: int = 7, n: int = N_HANDS) -> dict[str, list[list[int]]]:
    rng = random.Random(seed)
    complete = [_complete_hand(rng) for _ in range(n)]
    return {
        "win_complete": complete,
        "win_random": [_random_hand(rng, 14) for _ in range(n)],
        "waits_random": [_random_hand(rng, 13) for _ in range(n)],
        "waits_ready": [h[:-1] for h in complete],
    }


def _ours() -> tuple[Callable, Callable]:
    def win(kinds: list[int]) -> bool:
        counts = [0] * 34
        for k in kinds:
            counts[k] += 1
        return is_win(counts)

    def wt(kinds: list[int]) -> list[int]:
        counts = [0] * 34
        for k in kinds:
            counts[k] += 1
        return waits(counts)

    return win, wt


def run() -> dict:
    hands = make_hands()
    engines: dict[str, tuple[Callable, Callable] | str] = {
        "mjtable": _ours(), "pymahjonggb": peers.pymahjonggb(), "mahjong": peers.mahjong_pkg()}
    results: dict = {"hands_per_task": N_HANDS, "tasks": {}, "notes": []}
    for name, engine in engines.items():
        if isinstance(engine, str):
            results["notes"].append(f"{name} skipped: {engine}")
    for task, task_hands in hands.items():
        row = {}
        for name, engine in engines.items():
            if isinstance(engine, str):
                continue
            fn = engine[0] if task.startswith("win") else engine[1]
            row[name] = round(peers.time_us(fn, task_hands), 3)
        ours = row["mjtable"]
        row["ratios"] = {peer: round(us / ours, 2) for peer, us in row.items() if peer != "mjtable"}
        if TARGET_PEER in row["ratios"]:
            row["target"] = {"peer": TARGET_PEER, "min_ratio": TARGETS[task],
                             "met": row["ratios"][TARGET_PEER] >= TARGETS[task]}
        results["tasks"][task] = row
    return results


def print_table(results: dict) -> None:
    print(f"hand analysis, us per hand ({results['hands_per_task']} hands per task; ratio = peer / mjtable, "
          f"above 1 means mjtable is faster)")
    peers_seen = sorted({p for row in results["tasks"].values() for p in row["ratios"]})
    print(f"{'task':14} {'mjtable':>9} " + " ".join(f"{p:>12} {'ratio':>7}" for p in peers_seen))
    for task, row in results["tasks"].items():
        cells = " ".join(f"{row.get(p, float('nan')):12.2f} {row['ratios'].get(p, float('nan')):7.1f}"
                         for p in peers_seen)
        target = row.get("target")
        verdict = f"  target >= {target['min_ratio']:g}x {target['peer']}: {'met' if target['met'] else 'MISSED'}" \
            if target else ""
        print(f"{task:14} {row['mjtable']:9.2f} {cells}{verdict}")
    for note in results["notes"]:
        print(f"note: {note}")
