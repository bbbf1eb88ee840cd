"""Durability and SD-card benchmark: what the table database costs per hand.

The same seeded game (MCR, simulated players) is played with the table
database in a folder on disk (not a RAM file system, where a sync costs
nothing), once per ``synchronous`` setting.  Each run reports its wall time
per hand, the bytes SQLite wrote per hand (the write-ahead log, whose every
frame is one page and its header, counted with checkpoints held back), the
bytes the process sent to storage per hand (``/proc/self/io``: whole 4 KB
file-system blocks, so every commit costs at least one), and the commits.
The table always runs FULL (with WAL, NORMAL may lose the last commits at a
power cut); the ratio FULL / NORMAL is what durability costs.  The target
for an SD card is at most 50 KB written per hand.
"""

from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path

from firmware.store import table_store as store_module
from sim.table_run import SimRun

HANDS = 16
MODES = ("FULL", "NORMAL", "OFF")
TARGET_KB_PER_HAND = 50


def _written_bytes() -> int | None:
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("write_bytes:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _play(mode: str, hands: int, folder: Path) -> dict:
    """A game; the bytes are counted from the end of the first hand on (the first load stacks one set more than
    a running table does per hand)."""
    store_module.SYNCHRONOUS, store_module.WAL_AUTOCHECKPOINT = mode, 0
    try:
        with tempfile.TemporaryDirectory(dir=folder, prefix=".durability-") as tmp:
            state = Path(tmp) / "table.db"
            wal = state.with_name(state.name + "-wal")
            start = time.perf_counter()
            game = SimRun(rules="mcr", hands=hands + 1, play=True, seed=7, state_path=state, keep_world=False)
            game.run_until(lambda: game.game.hands_recorded >= 1, 900.0)
            wal_before, io_before = wal.stat().st_size, _written_bytes()
            game.run(timeout_s=hands * 900.0)
            played = max(game.game.hands_recorded - 1, 1)
            wal_bytes = wal.stat().st_size - wal_before
            io_after = _written_bytes()
            wall_s = time.perf_counter() - start
            game.close()
    finally:
        store_module.SYNCHRONOUS, store_module.WAL_AUTOCHECKPOINT = "FULL", 1000
    storage = None if io_before is None or io_after is None else (io_after - io_before) // played
    return {"hands": played, "wall_s": round(wall_s, 3), "wall_s_per_hand": round(wall_s / (played + 1), 4),
            "sqlite_bytes_per_hand": wal_bytes // played, "storage_bytes_per_hand": storage}


def run(hands: int = HANDS) -> dict:
    logging.getLogger().setLevel(logging.CRITICAL)
    folder = Path(__file__).resolve().parent        # on the project's disk, not /dev/shm
    results: dict = {mode: _play(mode, hands, folder) for mode in MODES}
    full, normal = results["FULL"]["wall_s_per_hand"], results["NORMAL"]["wall_s_per_hand"]
    results["full_over_normal"] = round(full / normal, 2) if normal else None
    results["target_met"] = results["FULL"]["sqlite_bytes_per_hand"] <= TARGET_KB_PER_HAND * 1024
    return results


def print_table(results: dict) -> None:
    print(f"\ndurability: the table database per hand, {results['FULL']['hands']} MCR hands on disk")
    print(f"{'synchronous':12} {'s/hand':>8} {'SQLite KB/hand':>15} {'storage KB/hand':>16}")
    for mode in MODES:
        r = results[mode]
        storage = "-" if r["storage_bytes_per_hand"] is None else f"{r['storage_bytes_per_hand'] / 1024:.1f}"
        print(f"{mode:12} {r['wall_s_per_hand']:8.3f} {r['sqlite_bytes_per_hand'] / 1024:15.1f} {storage:>16}")
    print(f"FULL costs {results['full_over_normal']}x NORMAL per hand (the table runs FULL: a power cut loses no "
          f"commit); SQLite writes target <= {TARGET_KB_PER_HAND} KB/hand: "
          f"{'met' if results['target_met'] else 'MISSED'}")
