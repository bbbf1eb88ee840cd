"""Stacking cycle benchmark: the 144-tile cycle against its cam bound, and where the time above it goes.

A side of the 144-tile set is 18 two-tile stacks, one stacker cam turn each
(``cam_turn_s``, 1.4 s on the four-port model): no cycle can be shorter than
18 x 1.4 = 25.2 s, the cam bound.  For each of the seeds 1-10 the benchmark
runs the real controller on the simulated table (:class:`sim.table_run.SimRun`:
the sets poured, stacked with the reader streaming, verified, raised; timed
hands, no players) and takes the mean of its cycles (``stacking.done``: the
disk started to the last side done); the row is the median and the worst seed
as a ratio to the bound (goal: median <= 1.05x, no seed above 1.10x).

The breakdown is :class:`sim.cycle_timeline.CycleTimeline`'s, measured on the
simulated pins: seconds per cycle each head spent stacking (its cam turning),
waiting for tiles with the disk running, waiting with the disk held
(back-pressure of another head's full track), and done waiting for the last
side; the same for the side that finished last (its idle time is the cycle's
excess over the bound); and around the cycle, the reader's stream start, the
verification of the walls after the last stack and the handover from the wall
lifts.
"""

from __future__ import annotations

import logging
import statistics
import tempfile
import time
from pathlib import Path

from firmware.config import default_table_path, load_table_config
from sim.cycle_timeline import HEAD_STATES, CycleTimeline, summarise
from sim.table_run import SimRun

SEEDS = range(1, 11)
HANDS = 16
GOAL_MEDIAN = 1.05
GOAL_WORST = 1.10


def _scratch() -> str | None:
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() else None


def cam_bound_s(tiles: int = 144) -> float:
    cfg = load_table_config(default_table_path())
    stacks = (tiles // 4 + 1) // 2
    return stacks * cfg.stacker.cam_turn_s


def one_seed(seed: int, hands: int = HANDS) -> dict:
    """A seed's game: its cycles' mean and the timeline's breakdown."""
    holder: list[CycleTimeline] = []
    with tempfile.TemporaryDirectory(prefix="mjtable-cycle-", dir=_scratch()) as folder:
        run = SimRun(rules="mcr", seed=seed, hands=hands, state_path=Path(folder) / "table.db", keep_world=False,
                     observers=[lambda e: holder[0].on_event(e) if holder else None])
        holder.append(CycleTimeline(run.world))
        try:
            finished = run.run(timeout_s=hands * 900.0)
        finally:
            run.close()
    timeline = holder[0]
    summary = summarise(timeline.cycles)
    summary["finished"] = finished
    summary["cycle_s"] = [round(c.duration_s, 3) for c in timeline.cycles]
    return summary


def run(seeds=SEEDS, hands: int = HANDS) -> dict:
    logging.getLogger().setLevel(logging.CRITICAL)
    bound = cam_bound_s(144)
    start = time.perf_counter()
    per_seed = {seed: one_seed(seed, hands) for seed in seeds}
    ratios = {seed: round(s["duration_s"] / bound, 4) for seed, s in per_seed.items()}
    n = len(per_seed)

    def mean_of(key: str, state: str | None = None) -> float | None:
        values = [s[key] if state is None else s[key][state] for s in per_seed.values()]
        values = [v for v in values if v is not None]
        return round(sum(values) / len(values), 3) if values else None

    median, worst = statistics.median(ratios.values()), max(ratios.values())
    return {
        "cam_bound_s": bound, "hands": hands, "seeds": list(seeds), "ratios": ratios,
        "cycle_s": {seed: round(s["duration_s"], 3) for seed, s in per_seed.items()},
        "cycles": sum(s["cycles"] for s in per_seed.values()),
        "cycle_range_s": [min(min(s["cycle_s"]) for s in per_seed.values()),
                          max(max(s["cycle_s"]) for s in per_seed.values())],
        "median_ratio": round(median, 4), "worst_ratio": round(worst, 4),
        "worst_seed": max(ratios, key=ratios.__getitem__),
        "median_met": median <= GOAL_MEDIAN, "worst_met": worst <= GOAL_WORST,
        "all_finished": all(s["finished"] for s in per_seed.values()),
        "breakdown": {
            "mean_head_s": {state: mean_of("mean_head_s", state) for state in HEAD_STATES},
            "last_side_s": {state: mean_of("last_side_s", state) for state in HEAD_STATES},
            "pauses": mean_of("pauses"), "gate_changes": mean_of("gate_changes"),
            "reader_start_s": mean_of("reader_start_s"),
            "verify_s": mean_of("verify_s"), "lift_gap_s": mean_of("lift_gap_s"),
        },
        "seeds_run": n, "wall_s": round(time.perf_counter() - start, 2),
    }


def print_table(results: dict) -> None:
    bound = results["cam_bound_s"]
    seeds = results["seeds"]
    print(f"\nstacking cycle, 144 tiles: mean of each seed's cycles ({results['hands']} timed MCR hands, "
          f"{results['cycles']} cycles over seeds {seeds[0]}-{seeds[-1]}) / cam bound {bound:.1f} s")
    print("seed   " + " ".join(f"{s:>6}" for s in seeds))
    print("cycle s" + " ".join(f"{results['cycle_s'][s]:6.2f}" for s in seeds))
    print("ratio  " + " ".join(f"{results['ratios'][s]:6.3f}" for s in seeds))
    verdict_m = "met" if results["median_met"] else "MISSED"
    verdict_w = "met" if results["worst_met"] else "MISSED"
    print(f"cycle: median {results['median_ratio']:.3f}x, worst {results['worst_ratio']:.3f}x (seed "
          f"{results['worst_seed']}) the cam bound; targets median <= {GOAL_MEDIAN:g}x: {verdict_m}, "
          f"worst <= {GOAL_WORST:g}x: {verdict_w}")
    low, high = results["cycle_range_s"]
    print(f"single cycles from {low:.2f} s to {high:.2f} s ({low / bound:.3f}x to {high / bound:.3f}x)")
    b = results["breakdown"]
    print("where a cycle's time goes (s per cycle, mean over the seeds):")
    print(f"  {'':22}" + "".join(f"{state:>12}" for state in HEAD_STATES))
    for key, label in (("mean_head_s", "each head (mean)"), ("last_side_s", "the side done last")):
        print(f"  {label:22}" + "".join(f"{b[key][state]:12.3f}" for state in HEAD_STATES))

    def s(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f} s"

    print(f"  disk held {b['pauses']:.1f} times, gates opened or closed {b['gate_changes']:.0f} times a cycle "
          f"(four gates); around the cycle: reader stream start "
          f"{s(b['reader_start_s'])}, walls verified {s(b['verify_s'])} after the last stack, "
          f"wall lifts home to the cycle {s(b['lift_gap_s'])}")
