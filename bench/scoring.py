"""Scoring benchmark: full MCR scoring per hand, mjtable against PyMahjongGB and ``mahjong``.

Hands seen before: the 410 case hands of ``tests/data`` (random and curated)
and 2000 generated wins of every shape, each scored once untimed, then timed
(best of three passes).  Hands never seen: 20,000 more generated wins, none
of them scored before in the process, each scored once (best of two such
sets).  PyMahjongGB (C++) scores the same MCR hands (its arguments prepared
outside the timing); ``mahjong`` is the pure-Python peer, though it scores
riichi rules: it is given the same tiles, melds and flags (a hand without a
riichi yaku still costs it a full evaluation).  Figures are microseconds per
hand; ``x C++`` is mjtable's time over PyMahjongGB's in the same run.  Goals
(issue 31): at most 1.0x PyMahjongGB on hands seen before, 2.0x on hands
never seen.

``mjtable score``: 20,000 distinct generated MCR cases as JSON lines (half of
the discard wins name a discarder, so payments are settled and written too),
scored by ``python -m firmware.cli.main score FILE`` in a process of its own,
startup included: lines per second of wall time (best of three) and of CPU
time; goal 20,000 lines/s.

Caches: every cache of the hand analysis and the MCR scorer, its hits,
misses, hit rate and size over the scoring rows, and its memory (measured
with tracemalloc in a separate pass: what clearing it frees), now and at its
bound.

Hostile lines: ``mjtable score``'s answer to one line whose tile string is
10 KB, 100 KB and 1 MB long (digits without a suit letter, which a
backtracking pattern made quadratic, and valid tile codes), in microseconds
per KB: flat across the sizes when the line's reading is linear.  The 1 MB
line is also fed through the whole stream, where it is over the line limit
and dropped in bounded chunks.
"""

from __future__ import annotations

import gc
import io
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Callable

from bench import peers
from bench.mcr_hands import generated_wins, to_pymahjonggb
from firmware.rules.case_format import parse_case
from firmware.rules.mcr.scorer import hand_key, score
from firmware.rules.win import MeldKind, Win

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
N_GENERATED = 2000
N_FRESH = 20_000
N_LINES = 20_000
GOAL_SEEN = 1.0             # x PyMahjongGB's time, hands seen before
GOAL_NEVER_SEEN = 2.0       # ... hands never seen in the process
GOAL_LINES_PER_S = 20_000   # mjtable score, startup included


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


def _fresh_wins(seed: int, n: int, seen: set) -> list[Win]:
    """``n`` generated wins none of whose keys (:func:`hand_key`, flowers apart) is in ``seen`` (which grows)."""
    out: list[Win] = []
    for w in generated_wins(random.Random(seed), 4 * n):
        key = hand_key(w)
        if key not in seen:
            seen.add(key)
            out.append(w)
            if len(out) == n:
                break
    return out


def _once_us(fn: Callable, items: list) -> float:
    start = time.perf_counter()
    for item in items:
        fn(item)
    return (time.perf_counter() - start) / len(items) * 1e6


def _all_caches() -> dict[str, object]:
    from firmware.hands.analysis import caches as hand_caches
    from firmware.rules.mcr.scorer import caches as mcr_caches

    return {**hand_caches(), **mcr_caches()}


def _cache_stats() -> dict:
    out = {}
    for name, cache in _all_caches().items():
        info = cache.cache_info()
        asked = info.hits + info.misses
        out[name] = {"hits": info.hits, "misses": info.misses, "size": info.currsize, "max": info.maxsize,
                     "hit_rate": round(info.hits / asked, 4) if asked else None}
    return out


def _cache_memory(workload: Callable[[], object]) -> dict:
    """Bytes each cache holds after ``workload`` (from empty caches): what clearing it frees, by tracemalloc."""
    caches = _all_caches()
    for cache in caches.values():
        cache.cache_clear()
    gc.collect()
    tracemalloc.start()
    try:
        workload()
        gc.collect()
        out = {}
        for name, cache in caches.items():
            size = cache.cache_info().currsize
            before = tracemalloc.get_traced_memory()[0]
            cache.cache_clear()
            gc.collect()
            freed = before - tracemalloc.get_traced_memory()[0]
            out[name] = {"entries": size, "bytes": freed, "bytes_per_entry": round(freed / size) if size else None}
    finally:
        tracemalloc.stop()
    return out


def case_line(case_id: int, w: Win, rng: random.Random) -> str:
    """A win as a line of ``mjtable score`` (a discard win names its discarder half the time)."""
    from firmware.tiles.tile import format_tiles

    winds = "ESWN"
    melds = []
    for m in w.melds:
        meld: dict = {"kind": m.kind.value, "tiles": format_tiles(m.tiles)}
        if m.concealed:
            meld["concealed"] = True
        else:
            meld["from"] = m.source
        melds.append(meld)
    case = {"id": case_id, "rules": "mcr", "hand": format_tiles(list(w.hand)), "melds": melds,
            "win_tile": format_tiles([w.win_tile]), "self_drawn": w.self_drawn, "last_of_kind": w.last_of_kind,
            "kong_win": w.kong_win, "last_tile": w.last_tile, "seat_wind": winds[w.seat_wind],
            "round_wind": winds[w.round_wind], "flowers": w.flowers}
    if not w.self_drawn and rng.random() < 0.5:
        case["discarder"] = winds[(w.seat_wind + 1 + rng.randrange(3)) % 4]
    return json.dumps(case, ensure_ascii=False)


def score_lines() -> dict:
    """``mjtable score`` over N_LINES distinct MCR lines in its own process, startup included: as the command
    runs by default (``--jobs auto``: the file is over 1 MiB, so one worker per CPU, at most 4) and in one
    process (``--jobs 1``), best of three each, the two alternating; with the modules' compiled bytecode, as an
    install has it (see :func:`bench.simspeed.speed`)."""
    from firmware.cli.score_workers import auto_jobs

    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    rng = random.Random(31)
    wins = _fresh_wins(3131, N_LINES, set())
    text = "".join(case_line(i + 1, w, rng) + "\n" for i, w in enumerate(wins))
    runs: dict[str, dict[str, list[float]]] = {"auto": {"wall": [], "cpu": []}, "1": {"wall": [], "cpu": []}}
    with tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as tmp:
        src, dst = Path(tmp) / "lines.jsonl", Path(tmp) / "answers.jsonl"
        src.write_text(text, encoding="utf-8")
        jobs = auto_jobs(src)
        answers: dict[str, bytes] = {}
        for _ in range(3):
            for option, times in runs.items():
                with dst.open("wb") as out:
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    start = time.perf_counter()
                    subprocess.run([sys.executable, "-m", "firmware.cli.main", "score", "--jobs", option, str(src)],
                                   stdout=out, cwd=ROOT, env=env, check=True)
                    times["wall"].append(time.perf_counter() - start)
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    times["cpu"].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
                answers[option] = dst.read_bytes()
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "firmware.cli.main", "score", os.devnull], cwd=ROOT, env=env, check=True)
        startup = time.perf_counter() - start
    assert answers["auto"] == answers["1"], "the workers answer as one process does"
    lines = answers["1"].decode().splitlines()
    assert len(lines) == N_LINES and all('"error"' not in a for a in lines), "every line answered, none an error"
    out: dict = {"lines": N_LINES, "startup_s": round(startup, 3), "auto_jobs": jobs}
    for option, times in runs.items():
        wall, cpu = min(times["wall"]), min(times["cpu"])
        out["auto" if option == "auto" else "one_process"] = {
            "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "lines_per_s": round(N_LINES / wall),
            "lines_per_cpu_s": round(N_LINES / cpu), "ratio_to_goal": round(N_LINES / wall / GOAL_LINES_PER_S, 2)}
    return out


def run() -> dict:
    for cache in _all_caches().values():
        cache.cache_clear()
    sets = {"case_hands": case_wins(), "generated": list(generated_wins(random.Random(5), N_GENERATED))}
    engines: dict[str, Callable | str] = {"mjtable": score, "pymahjonggb": _pymahjonggb(), "mahjong": _mahjong_pkg()}
    notes = [f"{name} skipped: {e}" for name, e in engines.items() if isinstance(e, str)]
    results: dict = {"tasks": {}, "notes": notes}
    for task, wins in sets.items():
        row: dict = {"hands": len(wins), "seen": True}
        for name, engine in engines.items():
            if not isinstance(engine, str):
                row[name] = round(peers.time_us(engine, wins), 2)
        _ratios(row, GOAL_SEEN)
        results["tasks"][task] = row
    seen = {hand_key(w) for wins in sets.values() for w in wins}
    best: dict = {}
    for seed in (3101, 3102):
        fresh = _fresh_wins(seed, N_FRESH, seen)
        gb = engines["pymahjonggb"]
        if not isinstance(gb, str):
            prepared = [to_pymahjonggb(w) for w in fresh]
            from MahjongGB import MahjongFanCalculator

            def run_gb(args: dict) -> object:
                try:
                    return MahjongFanCalculator(**args)
                except TypeError:
                    return None
            best["pymahjonggb"] = min(best.get("pymahjonggb", float("inf")), _once_us(run_gb, prepared))
        best["mjtable"] = min(best.get("mjtable", float("inf")), _once_us(score, fresh))
    row = {"hands": N_FRESH, "seen": False, **{k: round(v, 2) for k, v in best.items()}}
    _ratios(row, GOAL_NEVER_SEEN)
    results["tasks"]["never_seen"] = row
    results["caches"] = _cache_stats()
    results["score_lines"] = score_lines()
    memory_wins = sets["case_hands"] + sets["generated"] + _fresh_wins(3103, N_FRESH, set())
    memory = _cache_memory(lambda: [score(w) for w in memory_wins])
    for name, stats in results["caches"].items():
        stats.update(memory.get(name, {}))
    results["hostile"] = hostile()
    return results


def _ratios(row: dict, goal: float) -> None:
    ours = row["mjtable"]
    row["ratios"] = {p: round(row[p] / ours, 2) for p in ("pymahjonggb", "mahjong") if p in row}
    targets = {}
    if "pymahjonggb" in row:
        row["x_cpp"] = round(ours / row["pymahjonggb"], 2)
        targets[f"at_most_{goal}x_pymahjonggb"] = row["x_cpp"] <= goal
    if "mahjong" in row:
        targets["faster_than_mahjong"] = ours < row["mahjong"]
    row["targets"] = targets


def print_table(results: dict) -> None:
    print("\nMCR scoring, us per hand (x C++ = mjtable / pymahjonggb, goal <= 1.0 seen before, <= 2.0 never seen; "
          "mahjong scores riichi rules on the same tiles)")
    print(f"{'hands':12} {'n':>6} {'mjtable':>9} {'pymahjonggb':>12} {'x C++':>6} {'mahjong':>9} {'ratio':>6}")
    for task, row in results["tasks"].items():
        r = row["ratios"]
        print(f"{task:12} {row['hands']:6d} {row['mjtable']:9.1f} {row.get('pymahjonggb', float('nan')):12.1f} "
              f"{row.get('x_cpp', float('nan')):6.2f} {row.get('mahjong', float('nan')):9.1f} "
              f"{r.get('mahjong', float('nan')):6.2f}  "
              + ", ".join(f"{k}: {'met' if v else 'MISSED'}" for k, v in row["targets"].items()))
    for note in results["notes"]:
        print(f"note: {note}")
    lines = results.get("score_lines")
    if lines:
        print(f"\nmjtable score, {lines['lines']} distinct MCR lines, startup included "
              f"(startup {lines['startup_s']} s)")
        for name, label in (("auto", f"as it runs (--jobs auto: {lines['auto_jobs']} processes)"),
                            ("one_process", "in one process (--jobs 1)")):
            row = lines[name]
            print(f"  {label:40} {row['lines_per_s']:6d} lines/s ({row['wall_s']} s wall; {row['lines_per_cpu_s']} "
                  f"lines per CPU s); {row['ratio_to_goal']:.2f}x the goal of {GOAL_LINES_PER_S} lines/s: "
                  f"{'met' if row['ratio_to_goal'] >= 1 else 'MISSED'}")
    caches = results.get("caches")
    if caches:
        print("\ncaches over the scoring rows (memory: what clearing it frees after the case, generated and one "
              "never-seen set; at the bound: per entry x max)")
        print(f"{'cache':18} {'hits':>9} {'misses':>8} {'hit rate':>8} {'size':>7} {'max':>7} {'KB':>8} {'B/entry':>8} "
              f"{'KB at max':>9}")
        for name, c in caches.items():
            per = c.get("bytes_per_entry")
            rate = f"{c['hit_rate']:.1%}" if c["hit_rate"] is not None else "-"
            print(f"{name:18} {c['hits']:9d} {c['misses']:8d} {rate:>8} {c['size']:7d} {c['max']:7d} "
                  f"{c.get('bytes', 0) / 1024:8.0f} {per if per is not None else '-':>8} "
                  f"{(per or 0) * c['max'] / 1024:9.0f}")
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
