"""Soak benchmark: a table that runs for months must cost the same at hand 10,000 as at hand 1,000.

Plays one long game per rule set on the simulated table (MCR 10,000 hands,
the others 2,000) with simulated players, and reports for every block of
1,000 hands (500 for the shorter games) the CPU seconds per hand and the
peak resident memory of the process.  Flat means the last block within 10%
of the second (the first warms the caches) for CPU, and memory not growing
by more than a few MB.  Also the simulator's speed on a 16-hand MCR game
(simulated seconds per CPU second, target 5,000x: the table database in a
RAM folder where there is one, since a disk's sync cost is the host's, not
the simulator's; ``durability`` measures that) and the start-up time of
``mjtable --help`` and ``mjtable score``.
"""

from __future__ import annotations

import gc
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hal.runtime import keep_startup_objects
from sim.table_run import SimRun

SOAK = {"mcr": 10_000, "competition": 2_000, "liaoning": 2_000, "jinzhou": 2_000}
SPEED_TARGET = 5_000
CPU_FLAT = 0.10                 # the last block's CPU per hand within 10% of the second's
MEMORY_FLAT_MB = 8.0


def rss_mb() -> float:
    """Resident memory of this process now (Linux /proc; elsewhere the peak so far)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _ram_folder() -> str | None:
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def _table(rules: str, hands: int, seed: int, folder: str) -> SimRun:
    """A simulated table as ``mjtable sim`` builds it, its start-up objects kept out of the collector."""
    run = SimRun(rules=rules, hands=hands, play=True, seed=seed, state_path=Path(folder) / "table.db",
                 keep_world=False)     # (the controller's own writes and memory, not the simulated tiles')
    keep_startup_objects()
    return run


def soak(rules: str, hands: int, block: int, seed: int = 11) -> dict:
    """One long game; per block of hands: CPU s per hand, the peak resident MB within the block."""
    logging.getLogger().setLevel(logging.CRITICAL)
    with tempfile.TemporaryDirectory(dir=_ram_folder()) as tmp:
        run = _table(rules, hands, seed, tmp)
        blocks: list[dict] = []
        peak = rss_mb()
        cpu0, done = time.process_time(), 0

        def sample() -> None:
            nonlocal peak
            peak = max(peak, rss_mb())
            run.loop.call_later(60.0, sample)
        run.loop.call_later(60.0, sample)
        while done < hands:
            target = min(hands, done + block)
            run.run_until(lambda target=target: run.players.finished or run.game.hands_recorded >= target,
                          block * 1200.0)
            played = run.game.hands_recorded - done
            cpu1 = time.process_time()
            blocks.append({"hands": run.game.hands_recorded, "cpu_s_per_hand": round((cpu1 - cpu0) / max(played, 1), 5),
                           "peak_mb": round(max(peak, rss_mb()), 1)})
            cpu0, done, peak = cpu1, run.game.hands_recorded, rss_mb()
            if run.players.finished or played == 0:
                break
        conserved = run.session.scoreboard.conserved() if run.session else False
        run.close()
    gc.unfreeze()
    second, last = blocks[1] if len(blocks) > 1 else blocks[0], blocks[-1]
    cpu_growth = last["cpu_s_per_hand"] / second["cpu_s_per_hand"] - 1 if second["cpu_s_per_hand"] else 0.0
    mem_growth = last["peak_mb"] - second["peak_mb"]
    return {"rules": rules, "hands": done, "blocks": blocks, "chips_conserved": conserved,
            "cpu_growth": round(cpu_growth, 3), "memory_growth_mb": round(mem_growth, 1),
            "flat": cpu_growth <= CPU_FLAT and mem_growth <= MEMORY_FLAT_MB}


def speed(hands: int = 16, seed: int = 1, repeats: int = 3) -> dict:
    """Simulated seconds per CPU second of a 16-hand MCR game (the best of ``repeats`` runs: a shared
    machine only ever adds time)."""
    logging.getLogger().setLevel(logging.CRITICAL)
    best = None
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(dir=_ram_folder()) as tmp:
            run = _table("mcr", hands, seed, tmp)
            cpu0 = time.process_time()
            run.run(timeout_s=hands * 900.0)
            cpu_s = time.process_time() - cpu0
            simulated_s = run.loop.now()
            run.close()
        gc.unfreeze()
        if best is None or cpu_s < best[1]:
            best = (simulated_s, cpu_s)
    simulated_s, cpu_s = best
    return {"hands": hands, "simulated_s": round(simulated_s, 1), "cpu_s": round(cpu_s, 3),
            "speedup": round(simulated_s / cpu_s), "target_met": simulated_s / cpu_s >= SPEED_TARGET}


def startup() -> dict:
    """Wall seconds of ``mjtable --help`` and of scoring one line, in fresh interpreters (best of three)."""
    line = '{"id": 1, "hand": "123m456p789s123sE", "win_tile": "E", "self_drawn": true, "seat_wind": "E", ' \
           '"round_wind": "E"}\n'
    out = {}
    for name, argv, stdin in (("help", ["--help"], None), ("score", ["score"], line)):
        best = None
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "firmware.cli.main", *argv], input=stdin, text=True,
                           capture_output=True, check=False)
            took = time.perf_counter() - start
            best = took if best is None else min(best, took)
        out[name] = round(best or 0.0, 3)
    return out


def run(hands: dict[str, int] | None = None) -> dict:
    results = {"speed": speed(), "startup_s": startup(), "soak": []}
    for rules, n in (hands or SOAK).items():
        results["soak"].append(soak(rules, n, block=1000 if n >= 5000 else 500))
    return results


def print_table(results: dict) -> None:
    s = results["speed"]
    print(f"\nsimulator: a {s['hands']}-hand MCR game, {s['simulated_s']:g} simulated s in {s['cpu_s']} CPU s: "
          f"{s['speedup']}x (target {SPEED_TARGET}x: {'met' if s['target_met'] else 'MISSED'})")
    st = results["startup_s"]
    print(f"start-up: mjtable --help {st['help']} s, mjtable score (one line) {st['score']} s")
    for r in results["soak"]:
        print(f"soak {r['rules']}: {r['hands']} hands, CPU per hand and peak memory per block "
              f"({'flat' if r['flat'] else 'GROWING'}: CPU {r['cpu_growth']:+.0%}, memory {r['memory_growth_mb']:+} MB "
              f"from the second block to the last; chips {'conserved' if r['chips_conserved'] else 'NOT conserved'})")
        print("   " + "  ".join(f"{b['hands']}: {b['cpu_s_per_hand'] * 1000:.1f} ms {b['peak_mb']:.0f} MB"
                                for b in r["blocks"]))
