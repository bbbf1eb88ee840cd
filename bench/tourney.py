"""Tournament store benchmark: the event's state asked after each new fact, as the hall's service asks it.

An event whose tables have told N hands (one fact each, as the fleet tells them), then one more fact: the
time to fold every fact again (what each result cost before the store kept its state) against the store's
``state()``, which reads and applies only the facts stored since.  SQLite in a RAM folder where there is one;
milliseconds, best of five; ``ratio`` is the full fold's time over the kept state's.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from parlour.core.event import EventFormat
from parlour.core.facts import FactKind, fold
from parlour.store.facts_store import TourneyStore

SIZES = (1_000, 10_000, 50_000)


def _best_ms(fn, passes: int = 5) -> float:
    best = float("inf")
    for _ in range(passes):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return round(best * 1e3, 2)


def _one_size(path: Path, size: int) -> dict:
    store = TourneyStore(str(path))
    event_id = store.create_event(EventFormat("bench", "mcr", 8, 4))
    store.append_many(event_id, [(FactKind.HAND, {"round": 1, "table": f"T{i % 250 + 1}", "msg_id": f"m{i}",
                                                  "hand": i // 250 + 1, "winners": [0]}) for i in range(size)])
    store.state(event_id)
    added = [0]

    def one_more() -> None:
        added[0] += 1
        store.append(event_id, FactKind.HAND, {"round": 1, "table": "T1", "msg_id": f"x{added[0]}"})

    def kept() -> None:
        one_more()
        store.state(event_id)

    def full() -> None:
        one_more()
        fold(store.facts(event_id))

    row = {"full_fold_ms": _best_ms(full), "kept_state_ms": _best_ms(kept)}
    row["ratio"] = round(row["full_fold_ms"] / row["kept_state_ms"], 1)
    store.close()
    return row


def run() -> dict:
    folder = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        return {str(size): _one_size(Path(tmp) / f"e{size}.db", size) for size in SIZES}


def print_table(results: dict) -> None:
    print("\ntournament state after one more fact, ms (full fold: every fact read and folded again; kept: the "
          "store's state, the new fact applied to a copy)")
    print(f"{'facts':>8} {'full fold':>10} {'kept':>8} {'ratio':>7}")
    for size, row in results.items():
        print(f"{int(size):8d} {row['full_fold_ms']:10.2f} {row['kept_state_ms']:8.2f} {row['ratio']:7.1f}")
