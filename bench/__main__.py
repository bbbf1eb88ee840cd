"""``python -m bench`` (``make bench``): run every benchmark, print ratios, write bench/results.json."""

from __future__ import annotations

import json
import platform
from pathlib import Path

from bench import durability, games, hands, reader, scoring


def main() -> None:
    results = {"machine": platform.machine(), "python": platform.python_version(), "hands": hands.run(),
               "reader": reader.run(), "scoring": scoring.run(), "games": games.run(),
               "durability": durability.run()}
    hands.print_table(results["hands"])
    reader.print_table(results["reader"])
    scoring.print_table(results["scoring"])
    games.print_table(results["games"])
    durability.print_table(results["durability"])
    out = Path(__file__).resolve().parent / "results.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written: {out}")


if __name__ == "__main__":
    main()
