"""``python -m bench [NAME ...]`` (``make bench``): run the benchmarks (all, or the ones named), print
ratios, write bench/results.json (bench/results-NAME.json for a selection)."""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

from bench import (chain, cycle, durability, fairness, fleet, games, goals, hands, reader, recovery, scoring, simspeed,
                   soak, tourney, web_load)

BENCHMARKS = {"hands": hands, "reader": reader, "scoring": scoring, "games": games, "cycle": cycle,
              "durability": durability, "soak": soak, "simspeed": simspeed, "web": web_load, "fleet": fleet,
              "chain": chain, "recovery": recovery, "fairness": fairness,
              "tourney": tourney}
GOAL_BENCHMARKS = {"scoring", "simspeed", "cycle"}     # (the ones that measure a goal of bench/goals.py)


def main(argv: list[str] | None = None) -> int:
    names = list(sys.argv[1:] if argv is None else argv) or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}", file=sys.stderr)
        return 2
    results: dict = {"machine": platform.machine(), "python": platform.python_version()}
    for name in names:
        results[name] = BENCHMARKS[name].run()
    for name in names:
        BENCHMARKS[name].print_table(results[name])
    if set(names) & GOAL_BENCHMARKS:
        goals.print_table(results)
    selection = "" if names == list(BENCHMARKS) else "-" + "-".join(names)
    out = Path(__file__).resolve().parent / f"results{selection}.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
