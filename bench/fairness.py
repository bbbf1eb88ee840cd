"""Shuffle-bias and wear warnings: false-alarm and detection rates, with Wilson 95% intervals.

The detectors (firmware/fairness, firmware/maintenance) are run on data the
simulator's own biased shuffler and wear model make (sim/shuffle_bias.py,
sim/wear.py), without the rest of the table, so that a thousand runs take
minutes: walls laid by the ring (fair or clumping), dealt by the rule
set's procedure with fair or rigged dice (MCR: two throws, 144 tiles), and
cam cycle times of a healthy or wearing part with timing noise.  A few
short ``mjtable sim`` runs then confirm the warnings end to end.

Targets (issue 34): fair tables alarm in < 1% of 1,000-hand runs; favour=1
pair and clump=0.1 detected within 500 hands in >= 95% of runs; a part
wearing 0.5% a cycle named >= 20 cycles before it jams in >= 90% of runs;
a healthy part never warned in 10,000 cycles.
"""

from __future__ import annotations

import logging
import math
import os
import random
import statistics
import time
from multiprocessing import Pool

from firmware.fairness.monitor import ShuffleMonitor
from firmware.fairness.patterns import HAND_TILES, Pattern, count_neighbours, pairs
from firmware.maintenance.wear import WearMonitor
from firmware.tiles.dealing import DealRules, deal
from firmware.tiles.sets import TILE_SETS
from firmware.tiles.wall import BOTTOM, Wall
from sim.shuffle_bias import ClumpRing, FavourRig, synthetic_sides
from sim.wear import jams, worn_turn_s

RUNS = 1000
# fair runs of 1,000 hands are the slow part (about 4 ms a hand a core): 400 by default, the fewest whose
# 0 alarms put the Wilson bound under the 1% target; MJTABLE_BENCH_FAIR_RUNS=100 for a quick look
FAIR_RUNS = int(os.environ.get("MJTABLE_BENCH_FAIR_RUNS", "400"))
FAIR_HANDS = 1000
DETECT_WITHIN = 500
HEALTHY_CYCLES = 10_000
NOISE = 0.02                # cam cycle times vary by 2% (sd) on a healthy part
HEALTHY_BEFORE_WEAR = 50    # cycles before the wear starts
LEAD_CYCLES = 20
TILES = 144
RULES = DealRules(throws=2)
E2E_HANDS = 40
E2E_SEEDS = (1, 2)


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


_KINDS = TILE_SETS[TILES].all_tiles()
_COPIES = tuple(TILE_SETS[TILES].copies)
_SHAPE: dict = {}


def _hand_index(dealer: int, faces: tuple[int, ...], per_side: int) -> dict[int, list[tuple[int, int]]]:
    """(side, index in the side's stacking order) of every seat's first 13 tiles for a break (cached)."""
    key = (dealer, faces)
    if key not in _SHAPE:
        wall = Wall.from_sides([[(0, 0)] * (per_side // 2)] * 4)
        d = deal(wall, RULES, faces, dealer)
        _SHAPE[key] = {s: [(p.side, (p.stack - 1) * 2 + (0 if p.level == BOTTOM else 1)) for p in ps[:HAND_TILES]]
                       for s, ps in d.hands.items()}
    return _SHAPE[key]


def _one_shuffle_run(args: tuple[int, str, float, int]) -> int | None:
    """One run: the hand a warning was first raised at (None: none within ``hands``)."""
    seed, bias, strength, hands = args
    rng = random.Random(seed)
    monitor = ShuffleMonitor()
    ring = ClumpRing(strength, rng) if bias == "clump" else None
    rig = FavourRig(0, strength, RULES) if bias == "favour" else None
    for hand in range(1, hands + 1):
        sides = synthetic_sides(_KINDS, rng, ring)
        dealer = rng.randrange(4)
        faces = tuple(rng.randint(1, 6) for _ in range(4))
        if rig is not None:
            wall = Wall.from_sides([[tuple(seq[i:i + 2]) for i in range(0, len(seq), 2)] for seq in sides])
            faces = rig.choose(wall, dealer, faces)
        shape = _hand_index(dealer, faces, len(sides[0]))
        seat_pairs = {s: pairs([sides[a][i] for a, i in idx]) for s, idx in shape.items()}
        neighbours = {p: count_neighbours(p, sides) for p in Pattern}
        if monitor.observe_counts(hand, _COPIES, tuple(len(s) for s in sides), seat_pairs, neighbours):
            return hand
    return None


def _one_wear_run(args: tuple[int, float, int]) -> tuple[int | None, int | None]:
    """(cycle warned, cycle jammed) of one part: healthy (percent 0, ``cycles`` long) or wearing until it jams."""
    seed, percent, cycles = args
    rng = random.Random(seed)
    monitor = WearMonitor()
    healthy_s = 1.2
    for cycle in range(1, cycles + 1):
        worn = max(0, cycle - HEALTHY_BEFORE_WEAR) if percent else 0
        turn_s = worn_turn_s(healthy_s, percent, worn)
        if percent and jams(healthy_s, turn_s):
            return (monitor.warnings[0].cycle if monitor.warnings else None, cycle)
        monitor.observe("stacker2", turn_s * (1.0 + rng.gauss(0.0, NOISE)), 0.0, 0)
    return (monitor.warnings[0].cycle if monitor.warnings else None, None)


def _rate(alarms: list, n: int) -> dict:
    k = sum(1 for a in alarms if a)
    lo, hi = wilson(k, n)
    return {"runs": n, "hits": k, "rate": round(k / n, 4), "wilson95": [round(lo, 4), round(hi, 4)]}


def _end_to_end() -> dict:
    """A few short ``mjtable sim`` runs with the bias and wear injected into the table model."""
    from firmware.root.simulator import SimRun
    from sim.shuffle_bias import ShuffleBias

    out = {}
    for name, bias, wear in (("favour=E:1 + wear head2:0.5", ShuffleBias(0, 1.0, 0.0), [("head2", 0.5)]),
                             ("clump=0.1", ShuffleBias(None, 0.0, 0.1), [])):
        runs = []
        for seed in E2E_SEEDS:
            run = SimRun(rules="mcr", seed=seed, hands=E2E_HANDS, play=True, shuffle_bias=bias, wear=wear)
            try:
                run.loop.run_until(lambda r=run: r.players.finished, E2E_HANDS * 900.0 + 600.0)
                fair = [dict(w) for w in run.record.warnings["fairness"]]
                maint = [dict(w) for w in run.record.warnings["maintenance"]]
                runs.append({"seed": seed, "fairness": [(w["chart"], w["hand"]) for w in fair],
                             "maintenance": [(w["part"], w["cycle"]) for w in maint],
                             "jammed_at_cycle": [p.jammed_at_cycle for p in run.world.wear]})
            finally:
                run.close()
        out[name] = runs
    return out


def run(runs: int = RUNS, end_to_end: bool = True, fair_runs: int = FAIR_RUNS) -> dict:
    logging.getLogger().setLevel(logging.CRITICAL)
    start = time.perf_counter()
    with Pool(2) as pool:
        fair = pool.map(_one_shuffle_run, [(10_000 + i, "fair", 0.0, FAIR_HANDS) for i in range(fair_runs)],
                        chunksize=8)
        favour = pool.map(_one_shuffle_run, [(20_000 + i, "favour", 1.0, DETECT_WITHIN) for i in range(runs)],
                          chunksize=8)
        clump = pool.map(_one_shuffle_run, [(30_000 + i, "clump", 0.1, DETECT_WITHIN) for i in range(runs)],
                         chunksize=8)
        healthy = pool.map(_one_wear_run, [(40_000 + i, 0.0, HEALTHY_CYCLES) for i in range(runs)], chunksize=8)
        worn = pool.map(_one_wear_run, [(50_000 + i, 0.5, 10**6) for i in range(runs)], chunksize=8)
    leads = [j - w for w, j in worn if w is not None and j is not None]
    result = {
        "shuffle": {"false_alarm_1000_hands": _rate(fair, fair_runs),
                    "favour_E_1_pair_within_500": {**_rate(favour, runs), "median_hands": _median(favour)},
                    "clump_0.1_within_500": {**_rate(clump, runs), "median_hands": _median(clump)}},
        "wear": {"healthy_false_alarm_10000_cycles": _rate([w for w, _ in healthy], runs),
                 "wear_0.5pct_named_20_cycles_before_jam": {
                     **_rate([w is not None and j is not None and j - w >= LEAD_CYCLES for w, j in worn], runs),
                     "median_lead_cycles": statistics.median(leads) if leads else None,
                     "min_lead_cycles": min(leads) if leads else None},
                 "noise_sd": NOISE},
        "synthetic_s": round(time.perf_counter() - start, 1),
    }
    if end_to_end:
        result["end_to_end"] = _end_to_end()
    result["elapsed_s"] = round(time.perf_counter() - start, 1)
    return result


def _median(hands: list) -> float | None:
    found = [h for h in hands if h]
    return statistics.median(found) if found else None


def print_table(r: dict) -> None:
    print("\nfairness and wear warnings (synthetic runs of the simulator's shuffler and wear model)")
    rows = [("fair table, alarm in 1,000 hands (target < 1%)", r["shuffle"]["false_alarm_1000_hands"]),
            ("favour=E:1 detected within 500 hands (>= 95%)", r["shuffle"]["favour_E_1_pair_within_500"]),
            ("clump=0.1 detected within 500 hands (>= 95%)", r["shuffle"]["clump_0.1_within_500"]),
            ("healthy part, warning in 10,000 cycles (none)", r["wear"]["healthy_false_alarm_10000_cycles"]),
            ("wear 0.5%/cycle named >= 20 cycles before jam (>= 90%)",
             r["wear"]["wear_0.5pct_named_20_cycles_before_jam"])]
    for name, row in rows:
        lo, hi = row["wilson95"]
        extra = "".join(f"  {k} {row[k]}" for k in ("median_hands", "median_lead_cycles", "min_lead_cycles")
                        if k in row)
        print(f"  {name:58s} {row['hits']:4d}/{row['runs']:<5d} {100 * row['rate']:6.2f}%  "
              f"[{100 * lo:.2f}%, {100 * hi:.2f}%]{extra}")
    for name, runs in r.get("end_to_end", {}).items():
        for one in runs:
            print(f"  mjtable sim {name}, seed {one['seed']}: fairness {one['fairness']}, "
                  f"maintenance {one['maintenance']}, jammed at cycle {one['jammed_at_cycle']}")
    print(f"  ({r['synthetic_s']} s synthetic, {r['elapsed_s']} s in all)")
