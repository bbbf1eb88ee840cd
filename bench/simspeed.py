"""Simulator speed and flat memory (issue 31): ``python -m bench simspeed``.

Three measurements, each in a fresh interpreter (``python -m bench.simspeed WORKER ...``) so that what
one leaves in memory does not count in the next:

* **speed**: ``mjtable sim --hands 64 --seed 1`` (MCR, the simulated players) as a command, its
  simulated seconds per CPU second of the whole process (start-up included: the interpreter, the imports,
  the table's build, the report), best of ``REPEATS``; the goal is 10,000x.  The table database is in a
  RAM folder where there is one (a disk's sync time is the host's; ``durability`` measures it).
* **curve**: one MCR game of 8,192 hands with the simulated players, as ``mjtable sim`` plays it; the
  process's resident memory (now, and its peak) every 512 hands.  The goal: the peak at 4,096 hands at
  most 1.10x the peak at 512.
* **run path**: the table's service as ``mjtable run --sim`` builds it (the real controller, the simulated
  table and its people, no players: a hand is a timed wait) on virtual time, for ``RUN_CYCLES`` hand cycles
  (stack, deal, play, push in); resident memory every 512 cycles, and its growth per cycle from the
  second sample on, with what that growth would come to over 100,000 cycles.

``MJTABLE_BENCH_SCALE`` (a factor, default 1) shortens the curve and the run path for a quick look.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEED_HANDS = 64
SPEED_GOAL = 10_000
REPEATS = 3
CURVE_HANDS = 8_192
CURVE_EVERY = 512
CURVE_GOAL = 1.10               # the peak at 4,096 hands over the peak at 512
RUN_CYCLES = 8_192
RUN_EVERY = 512
RUN_PROJECTED = 100_000
RUN_FLAT_MB = 2.0               # growth projected over 100,000 cycles that still counts as flat
RUN_CPU_FLAT = 1.15             # CPU per cycle, last quarter over first: above this it grows with the history


def _scale() -> float:
    try:
        return max(0.01, float(os.environ.get("MJTABLE_BENCH_SCALE", "1")))
    except ValueError:
        return 1.0


def _ram_folder() -> str | None:
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def _env() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    folder = _ram_folder()
    if folder:
        env["TMPDIR"] = folder
    return env


def rss_mb() -> float:
    """Resident memory of this process now (Linux /proc; elsewhere the peak so far)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return peak_mb()


def peak_mb() -> float:
    """The peak resident memory of this process's own image (Linux: ``VmHWM``, reset when the process began to
    run this program).  Not ``ru_maxrss``: Linux carries that over an exec from the process that forked it, so
    a worker started by a benchmark run that had grown to 250 MB (the scoring rows before it) read 250 MB from
    its first sample on, and the memory curve's ratio said 1.0 whatever the curve did."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# -- in the parent -----------------------------------------------------------------------------------------
def speed(hands: int = SPEED_HANDS, seed: int = 1, repeats: int = REPEATS) -> dict:
    """Simulated s per CPU s of ``mjtable sim --hands N`` as a whole process (the best of ``repeats``).

    With the modules' compiled bytecode, as an installed table and a checkout's second run have it (pip
    compiles at install, Python writes ``__pycache__`` on a first import): a shell with
    ``PYTHONDONTWRITEBYTECODE`` set would otherwise compile every module at every start (some 0.15 s).  A
    one-hand run first writes it."""
    env = _env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory(dir=_ram_folder()) as tmp:
        subprocess.run([sys.executable, "-m", "firmware.cli.main", "sim", "--hands", "1", "--quiet", "--report",
                        str(Path(tmp) / "r.json")], env=env, stdout=subprocess.DEVNULL, check=True)
    best: dict | None = None
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(dir=_ram_folder()) as tmp:
            report = Path(tmp) / "r.json"
            argv = [sys.executable, "-m", "firmware.cli.main", "sim", "--hands", str(hands), "--seed", str(seed),
                    "--quiet", "--report", str(report)]
            proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode != 0:
                raise RuntimeError(f"mjtable sim failed ({proc.returncode}): {proc.stderr.read().decode()[-2000:]}")
            proc.stderr.close()
            cpu_s = usage.ru_utime + usage.ru_stime
            simulated_s = json.loads(report.read_text())["simulated_s"]
        if best is None or cpu_s < best["cpu_s"]:
            best = {"hands": hands, "simulated_s": simulated_s, "cpu_s": round(cpu_s, 3)}
    assert best is not None
    ratio = best["simulated_s"] / best["cpu_s"]
    best.update(ratio=round(ratio), ms_per_hand=round(1000 * best["cpu_s"] / hands, 1), goal=SPEED_GOAL,
                met=ratio >= SPEED_GOAL)
    return best


def _worker(*args: str) -> list[dict]:
    out = subprocess.run([sys.executable, "-m", "bench.simspeed", *args], env=_env(), capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"bench.simspeed {' '.join(args)} failed: {out.stderr[-2000:]}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def curve(hands: int = CURVE_HANDS, every: int = CURVE_EVERY) -> dict:
    samples = _worker("curve", str(hands), str(every))
    by_hand = {s["hands"]: s for s in samples}
    first, at_4096 = by_hand.get(every), by_hand.get(4096)
    ratio = at_4096["peak_mb"] / first["peak_mb"] if first and at_4096 else None
    return {"samples": samples, "ratio_4096_512": None if ratio is None else round(ratio, 3), "goal": CURVE_GOAL,
            "met": ratio is not None and ratio <= CURVE_GOAL}


def run_path(cycles: int = RUN_CYCLES, every: int = RUN_EVERY) -> dict:
    samples = _worker("run", str(cycles), str(every))
    grow = None
    later = samples[1:]                     # (from the second sample: the first includes the warm-up)
    if len(later) >= 2:
        # the least-squares slope of RSS over cycles (one sample's page-sized step is not a trend)
        mx = sum(s["cycles"] for s in later) / len(later)
        my = sum(s["rss_mb"] for s in later) / len(later)
        sxx = sum((s["cycles"] - mx) ** 2 for s in later)
        grow = sum((s["cycles"] - mx) * (s["rss_mb"] - my) for s in later) / sxx if sxx else 0.0
    projected = None if grow is None else grow * RUN_PROJECTED
    # the CPU a cycle costs, the last quarter of the samples over the first after warm-up: a per-cycle read of
    # something that grows with the table's history (a scan of every hand played) shows as a rising ratio
    quarter = max(1, len(later) // 4)
    cpu_growth = (round(sum(s["ms_per_cycle"] for s in later[-quarter:]) / sum(s["ms_per_cycle"]
                                                                               for s in later[:quarter]), 2)
                  if len(later) >= 2 else None)
    return {"samples": samples, "mb_per_cycle": None if grow is None else round(grow, 6),
            "projected_mb_100k": None if projected is None else round(projected, 1), "flat_mb": RUN_FLAT_MB,
            "flat": projected is not None and projected <= RUN_FLAT_MB, "cpu_growth": cpu_growth,
            "cpu_flat": cpu_growth is not None and cpu_growth <= RUN_CPU_FLAT}


def run() -> dict:
    scale = _scale()
    return {"speed": speed(),
            "curve": curve(max(CURVE_EVERY, int(CURVE_HANDS * scale) // CURVE_EVERY * CURVE_EVERY)),
            "run_path": run_path(max(3 * RUN_EVERY, int(RUN_CYCLES * scale) // RUN_EVERY * RUN_EVERY))}


def print_table(results: dict) -> None:
    s = results["speed"]
    print(f"\nsimulator: mjtable sim --hands {s['hands']} (MCR, players), {s['simulated_s']:.0f} simulated s in "
          f"{s['cpu_s']} CPU s, start-up included: {s['ratio']:,}x, {s['ms_per_hand']} ms per hand "
          f"(goal {s['goal']:,}x: {'met' if s['met'] else 'MISSED'})")
    c = results["curve"]
    verdict = "not reached (a shortened run)" if c["ratio_4096_512"] is None else "met" if c["met"] else "MISSED"
    print(f"memory, one MCR game with players: peak RSS at 4,096 hands / at 512 = {c['ratio_4096_512']} "
          f"(goal <= {c['goal']}: {verdict})")
    print("    hands    RSS MB   peak MB   CPU ms/hand")
    for x in c["samples"]:
        print(f"    {x['hands']:5d}   {x['rss_mb']:7.2f}   {x['peak_mb']:7.2f}   {x['ms_per_hand']:9.1f}")
    r = results["run_path"]
    print(f"run path (the service with the simulated table, no players, virtual time): "
          f"{r['samples'][-1]['cycles'] if r['samples'] else 0} hand cycles, {r['mb_per_cycle']} MB per cycle from "
          f"the second sample, {r['projected_mb_100k']} MB over {RUN_PROJECTED:,} cycles "
          f"({'flat' if r['flat'] else 'GROWING'}: at most {r['flat_mb']} MB); CPU per cycle, the last quarter "
          f"of the samples over the first: {r['cpu_growth']}x ({'flat' if r['cpu_flat'] else 'GROWING'}: at most "
          f"{RUN_CPU_FLAT}x)")
    print("    cycles   RSS MB   peak MB   CPU ms/cycle")
    for x in r["samples"]:
        print(f"    {x['cycles']:6d}   {x['rss_mb']:6.2f}   {x['peak_mb']:7.2f}   {x['ms_per_cycle']:10.1f}")


# -- the workers (fresh interpreters) -----------------------------------------------------------------------
def _curve_worker(hands: int, every: int) -> None:
    import logging

    from hal.runtime import keep_startup_objects
    from sim.table_run import SimRun

    logging.getLogger().setLevel(logging.CRITICAL)
    run = SimRun(rules="mcr", hands=hands, play=True, seed=1)       # (as ``mjtable sim`` builds it)
    keep_startup_objects()
    assert run.game is not None
    cpu0, done = time.process_time(), 0
    while done < hands:
        target = done + every
        run.run_until(lambda target=target: run.players.finished or run.game.hands_recorded >= target,
                      every * 1200.0)
        played = run.game.hands_recorded - done
        cpu1 = time.process_time()
        done = run.game.hands_recorded
        print(json.dumps({"hands": done, "rss_mb": round(rss_mb(), 3), "peak_mb": round(peak_mb(), 3),
                          "ms_per_hand": round(1000 * (cpu1 - cpu0) / max(1, played), 1)}), flush=True)
        cpu0 = cpu1
        if run.players.finished or played == 0:
            break
    run.close()


def _run_worker(cycles: int, every: int) -> None:
    import logging

    from firmware.config import default_table_path
    from firmware.root.service import ServiceOptions, build_service
    from hal.runtime import keep_startup_objects
    from sim.virtual_loop import VirtualLoop

    logging.getLogger().setLevel(logging.CRITICAL)
    with tempfile.TemporaryDirectory() as tmp:
        loop = VirtualLoop()
        options = ServiceOptions(default_table_path(), None, "mcr", Path(tmp) / "table.db", simulated=True)
        wired = build_service(options, loop)       # (as ``mjtable run --sim`` builds it, on virtual time)
        people = wired.live.people                 # (the SELFTEST profile's simulated table and its people)
        wired.start()
        keep_startup_objects()
        cpu0, done = time.process_time(), 0
        while done < cycles:
            target = done + every
            loop.run_until(lambda target=target: people.hands_ended >= target, every * 1200.0)
            cpu1 = time.process_time()
            print(json.dumps({"cycles": people.hands_ended, "rss_mb": round(rss_mb(), 3),
                              "peak_mb": round(peak_mb(), 3),
                              "ms_per_cycle": round(1000 * (cpu1 - cpu0) / max(1, people.hands_ended - done), 1)}),
                  flush=True)
            cpu0, done = cpu1, people.hands_ended
        wired.close()


if __name__ == "__main__":
    kind, n, step = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    {"curve": _curve_worker, "run": _run_worker}[kind](n, step)
