"""The recovery matrix, whole: every fault a table meets at every state and instant, every rule set, three seeds.

:mod:`sim.recovery_matrix` runs each case on the simulated table (real
players, the referee, the technician who acknowledges a latched fault) and
checks it from outside the controller.  This benchmark runs all of them in
worker processes (one per core), prints the matrix (instants down, faults
across) and how long it took; the figures go into the README.  Every cell
must be ``ok`` (recovered by itself) or ``L`` (through the documented latched
fault, acknowledged): a ``FAIL`` is a bug, listed under the table.
"""

from __future__ import annotations

import logging
import time

from sim.recovery_matrix import all_cases, by_rules, matrix_table, run_matrix, summary


def run() -> dict:
    logging.getLogger().setLevel(logging.CRITICAL)
    started = time.perf_counter()
    results = run_matrix(all_cases())
    wall_s = time.perf_counter() - started
    return {"cases": len(results), "failed": sum(1 for r in results if not r.ok),
            "latched": sum(1 for r in results if r.ok and r.latched), "wall_s": round(wall_s, 1),
            "table": matrix_table(results), "summary": summary(results), "by_rules": by_rules(results),
            "failures": [f"{r.fault} at {r.instant} ({r.rules}, seed {r.seed}): {'; '.join(r.problems)}"
                         for r in results if not r.ok]}


def print_table(results: dict) -> None:
    print(f"\nrecovery matrix: {results['summary']}, in {results['wall_s']:.0f} s")
    print(results.get("by_rules", ""))
    print(results["table"])
    for line in results["failures"]:
        print("FAIL", line)
