"""Durability benchmark: the cost per hand of ``synchronous=FULL`` against NORMAL and OFF, on a real disk.

The same seeded game (MCR, simulated players) is played three times with the
table database in a folder on disk (not a RAM file system, where a sync
costs nothing); each run reports its wall time per hand, the bytes the
process wrote to storage per hand (``/proc/self/io``), and the commits.  The
table always runs FULL: with WAL, NORMAL may lose the last commits at a
power cut.  The ratio FULL / NORMAL is what durability costs.
"""

from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path

from firmware.controller import store as store_module
from sim.table_run import SimRun

HANDS = 8
MODES = ("FULL", "NORMAL", "OFF")


def _written_bytes() -> int | None:
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("write_bytes:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def run(hands: int = HANDS) -> dict:
    logging.getLogger().setLevel(logging.CRITICAL)
    results = {}
    folder = Path(__file__).resolve().parent        # on the project's disk, not /dev/shm
    for mode in MODES:
        store_module.SYNCHRONOUS = mode
        try:
            with tempfile.TemporaryDirectory(dir=folder, prefix=".durability-") as tmp:
                before = _written_bytes()
                start = time.perf_counter()
                game = SimRun(rules="mcr", hands=hands, play=True, seed=7, state_path=Path(tmp) / "table.db")
                game.run(timeout_s=hands * 900.0)
                wall_s = time.perf_counter() - start
                played = game.game.hands_recorded if game.game else 0
                game.close()
                after = _written_bytes()
        finally:
            store_module.SYNCHRONOUS = "FULL"
        written = None if before is None or after is None else (after - before) // max(played, 1)
        results[mode] = {"hands": played, "wall_s": round(wall_s, 3),
                         "wall_s_per_hand": round(wall_s / max(played, 1), 4), "bytes_per_hand": written}
    full, normal = results["FULL"]["wall_s_per_hand"], results["NORMAL"]["wall_s_per_hand"]
    results["full_over_normal"] = round(full / normal, 2) if normal else None
    return results


def print_table(results: dict) -> None:
    print(f"\ndurability: the table database's synchronous setting, {results['FULL']['hands']} MCR hands on disk")
    print(f"{'synchronous':12} {'s/hand':>8} {'KB written/hand':>16}")
    for mode in MODES:
        r = results[mode]
        kb = "-" if r["bytes_per_hand"] is None else f"{r['bytes_per_hand'] / 1024:.1f}"
        print(f"{mode:12} {r['wall_s_per_hand']:8.3f} {kb:>16}")
    print(f"FULL costs {results['full_over_normal']}x NORMAL per hand "
          "(the table runs FULL: a power cut loses no commit)")
