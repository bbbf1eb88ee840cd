"""Scoring benchmark: full MCR scoring per hand, mjtable against PyMahjongGB and ``mahjong``.

Hands: the 410 case hands of ``tests/data`` (random and curated) and 2000
generated wins of every shape.  PyMahjongGB (C++) scores the same MCR hands;
``mahjong`` is the pure-Python peer, though it scores riichi rules: it is
given the same tiles, melds and flags (a hand without a riichi yaku still
costs it a full evaluation).  Figures are microseconds per hand, best of
three passes.  Targets: faster than every pure-Python peer, within 5x of
PyMahjongGB.

Hostile lines: ``mjtable score``'s answer to one line whose tile string is
10 KB, 100 KB and 1 MB long (digits without a suit letter, which a
backtracking pattern made quadratic, and valid tile codes), in microseconds
per KB: flat across the sizes when the line's reading is linear.  The 1 MB
line is also fed through the whole stream, where it is over the line limit
and dropped in bounded chunks.
"""

from __future__ import annotations

import io
import json
import random
import time
from pathlib import Path
from typing import Callable

from bench import peers
from bench.mcr_hands import generated_wins, to_pymahjonggb
from firmware.rules.case_format import parse_case
from firmware.rules.mcr.scorer import score
from firmware.rules.win import MeldKind, Win

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
N_GENERATED = 2000
TARGET_VS_CPP = 5.0


def case_wins() -> list[Win]:
    wins = []
    for name in ("mcr-random.jsonl", "mcr-curated.jsonl"):
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            wins.append(parse_case(json.loads(line)).win)
    return wins


def _pymahjonggb() -> Callable[[Win], object] | str:
    try:
        from MahjongGB import MahjongFanCalculator
    except ImportError:
        return "pymahjonggb is not installed (pip install '.[bench]')"
    prepared: dict[int, dict] = {}

    def run(w: Win) -> object:
        args = prepared.get(id(w))
        if args is None:
            args = prepared[id(w)] = to_pymahjonggb(w)
        try:
            return MahjongFanCalculator(**args)
        except TypeError:
            return None
    return run


_RIICHI_34 = list(range(27)) + [27, 28, 29, 30, 33, 32, 31]    # our C F P = red, green, white


def _mahjong_pkg() -> Callable[[Win], object] | str:
    try:
        from mahjong.hand_calculating.hand import HandCalculator
        from mahjong.hand_calculating.hand_config import HandConfig
        from mahjong.meld import Meld
    except ImportError:
        return "mahjong is not installed (pip install '.[bench]')"
    calculator = HandCalculator()
    prepared: dict[int, tuple] = {}

    def convert(w: Win) -> tuple:
        used = [0] * 34

        def t136(kind: int) -> int:
            k = _RIICHI_34[kind]
            used[k] += 1
            return k * 4 + used[k] - 1

        melds, tiles = [], []
        for m in w.melds:
            ids = [t136(k) for k in m.tiles]
            tiles += ids
            meld_type = {MeldKind.CHOW: Meld.CHI, MeldKind.PUNG: Meld.PON, MeldKind.KONG: Meld.KAN}[m.kind]
            melds.append(Meld(meld_type, ids, opened=not m.concealed))
        tiles += [t136(k) for k in w.hand]
        win_id = t136(w.win_tile)
        tiles.append(win_id)
        config = HandConfig(is_tsumo=w.self_drawn, player_wind=27 + w.seat_wind, round_wind=27 + w.round_wind)
        return tiles, win_id, melds, config

    def run(w: Win) -> object:
        args = prepared.get(id(w))
        if args is None:
            args = prepared[id(w)] = convert(w)
        tiles, win_id, melds, config = args
        return calculator.estimate_hand_value(tiles, win_id, melds=melds, config=config)
    return run


HOSTILE_SIZES = (10_000, 100_000, 1_000_000)
HOSTILE_TILES = {"digits_without_suit": "1", "valid_tile_codes": "123m"}


def _hostile_line(pattern: str, size: int) -> str:
    hand = (pattern * (size // len(pattern) + 1))[:size]
    return json.dumps({"id": 1, "rules": "mcr", "hand": hand, "win_tile": "1m", "seat_wind": "E",
                       "round_wind": "E"})


def _best_s(fn: Callable[[], object], passes: int = 3) -> float:
    best = float("inf")
    for _ in range(passes):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def hostile() -> dict:
    """Microseconds per KB of one hostile line, per size: the scorer's line function (no line limit), and
    the 1 MB line through the stream (over the limit: dropped)."""
    from firmware.rules.case_scoring import score_input, score_line

    rows: dict = {}
    for name, pattern in HOSTILE_TILES.items():
        row: dict = {}
        for size in HOSTILE_SIZES:
            line = _hostile_line(pattern, size)
            seconds = _best_s(lambda line=line: score_line(line))
            row[str(size)] = {"ms": round(seconds * 1e3, 2), "us_per_kb": round(seconds * 1e6 / (len(line) / 1e3), 2)}
        first, last = row[str(HOSTILE_SIZES[0])]["us_per_kb"], row[str(HOSTILE_SIZES[-1])]["us_per_kb"]
        row["ratio_1mb_to_10kb_per_kb"] = round(last / first, 2)
        rows[name] = row
    data = (_hostile_line("1", HOSTILE_SIZES[-1]) + "\n").encode()
    seconds = _best_s(lambda: score_input(io.BytesIO(data), io.StringIO()))
    rows["stream_1mb_line"] = {"ms": round(seconds * 1e3, 2), "us_per_kb": round(seconds * 1e6 / (len(data) / 1e3), 2)}
    return rows


def run() -> dict:
    sets = {"case_hands": case_wins(), "generated": list(generated_wins(random.Random(5), N_GENERATED))}
    engines: dict[str, Callable | str] = {"mjtable": score, "pymahjonggb": _pymahjonggb(), "mahjong": _mahjong_pkg()}
    notes = [f"{name} skipped: {e}" for name, e in engines.items() if isinstance(e, str)]
    results: dict = {"tasks": {}, "notes": notes}
    for task, wins in sets.items():
        row: dict = {"hands": len(wins)}
        for name, engine in engines.items():
            if not isinstance(engine, str):
                row[name] = round(peers.time_us(engine, wins), 2)
        ours = row["mjtable"]
        row["ratios"] = {p: round(row[p] / ours, 2) for p in ("pymahjonggb", "mahjong") if p in row}
        targets = {}
        if "pymahjonggb" in row:
            targets["within_5x_of_pymahjonggb"] = ours <= TARGET_VS_CPP * row["pymahjonggb"]
        if "mahjong" in row:
            targets["faster_than_mahjong"] = ours < row["mahjong"]
        row["targets"] = targets
        results["tasks"][task] = row
    results["hostile"] = hostile()
    return results


def print_table(results: dict) -> None:
    print("\nMCR scoring, us per hand (ratio = peer / mjtable; mahjong scores riichi rules on the same tiles)")
    print(f"{'hands':12} {'n':>5} {'mjtable':>9} {'pymahjonggb':>12} {'ratio':>6} {'mahjong':>9} {'ratio':>6}")
    for task, row in results["tasks"].items():
        r = row["ratios"]
        print(f"{task:12} {row['hands']:5d} {row['mjtable']:9.1f} {row.get('pymahjonggb', float('nan')):12.1f} "
              f"{r.get('pymahjonggb', float('nan')):6.2f} {row.get('mahjong', float('nan')):9.1f} "
              f"{r.get('mahjong', float('nan')):6.2f}  "
              + ", ".join(f"{k}: {'met' if v else 'MISSED'}" for k, v in row["targets"].items()))
    for note in results["notes"]:
        print(f"note: {note}")
    hostile_rows = results.get("hostile")
    if hostile_rows:
        sizes = [str(n) for n in HOSTILE_SIZES]
        print("\nmjtable score, one hostile line: us per KB by tile-string size (flat = linear; ratio = 1 MB / 10 KB)")
        print(f"{'line':22} " + " ".join(f"{int(n) // 1000:>7} KB" for n in sizes) + f" {'ratio':>6} {'1 MB ms':>8}")
        for name in HOSTILE_TILES:
            row = hostile_rows[name]
            print(f"{name:22} " + " ".join(f"{row[n]['us_per_kb']:10.2f}" for n in sizes)
                  + f" {row['ratio_1mb_to_10kb_per_kb']:6.2f} {row[sizes[-1]]['ms']:8.1f}")
        stream = hostile_rows["stream_1mb_line"]
        print(f"{'stream, 1 MB line':22} {stream['us_per_kb']:10.2f} us per KB, {stream['ms']:.1f} ms "
              "(over the 64 KiB line limit: dropped in bounded chunks)")
