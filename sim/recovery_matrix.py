"""The recovery matrix: every fault a table meets, at every state and instant of its cycle, ends in a table that plays.

One case is (fault, instant, rule set, seed).  The simulated table plays a
short game (``HANDS`` hands, real players, the table's referee settling
every hand) and the fault is injected into the *model* at the instant: when
the controller enters a state (plus an offset inside it: a lift half way
up, the dice spinning), or when a stacking cycle has counted a fraction of
its tiles (the heads part-way).  The simulated people then do what people
do: close the lid, wait for the supply, resume a hold, and a technician
repairs and acknowledges a latched fault (the documented action).

Every case must show, measured from outside the controller:

* no E99 (a software error is never a recovery);
* the table never loses track of its tiles (E62, E63 or E82 with every tile
  in its set: a set booked as stacked that is still on the disk, two sets
  mixed);
* the game completes all its hands after the fault clears;
* chips are conserved (every hand's stored payments sum to zero and each
  side's chips are its start plus its payments) and every hand dealt is
  recorded once;
* no tile of a wall is dealt without having been read: every hand the
  controller deals is, tile for tile, what the physical walls give;
* no motor ran while an interlock (lid, supply, reset key, stuck key) was
  active (:class:`sim.interlock_watch.InterlockWatch`);
* a fault that was raised is still latched or held and reported with its
  code (nothing is recovered by ignoring it).

:func:`run_case` runs one case; :func:`run_matrix` runs many (in worker
processes) and :func:`matrix_table` prints fault x instant.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable

from firmware.controller.states import TableState
from firmware.events import Event
from firmware.tiles.dealing import deal
from firmware.tiles.tile import code
from firmware.tiles.wall import Wall
from sim.faults import _apply_now, parse_fault
from sim.table_run import SimRun

log = logging.getLogger(__name__)

S = TableState
HANDS = 3                   # the fault falls in the first hand's cycle; two more hands prove the table plays on
TIMEOUT_S = 2 * 3600.0      # simulated: a run that has not completed by then did not recover
RULE_SETS = ("mcr", "competition", "liaoning", "jinzhou", "sichuan")
# a set that ran out, a side over its count, a tile of the other set: with every tile in its set, the table lost
# track of where its tiles are (a set booked stacked that is still on the disk, two sets mixed in the centre)
TILE_TRACK_CODES = frozenset({"E62", "E63", "E82"})


# -- the faults --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FaultKind:
    """A fault a table meets, as the model is changed when it strikes."""

    name: str
    spec: str                       # a sim fault spec without @WHEN (see :mod:`sim.faults`), or a harness action
    short: str                      # its column in the printed matrix

    def strike(self, run: SimRun) -> None:
        if self.spec.startswith("power-cut"):
            run.power_cut(float(self.spec.split("=")[1].rstrip("s")) if "=" in self.spec else 5.0)
        elif self.spec.startswith("rfid-noise"):
            line = run.world.reader_line
            p, _, for_s = self.spec.split("=")[1].partition("/")
            line.noise_p = float(p)
            run.loop.call_later(float(for_s.rstrip("s") or 30), setattr, line, "noise_p", 0.0)
        else:
            _apply_now(run.world, parse_fault(self.spec))


FAULTS: tuple[FaultKind, ...] = (
    FaultKind("lid open", "lid-open=20s", "lid"),
    FaultKind("supply dip", "brownout=2s", "dip"),
    FaultKind("power cut", "power-cut=5s", "cut"),
    *(FaultKind(f"jam stacker{s}", f"jam:stacker{s}", f"S{s}") for s in range(4)),
    *(FaultKind(f"jam lift{s}", f"jam:lift{s}", f"L{s}") for s in range(4)),
    FaultKind("jam centre", "jam:center", "ctr"),
    FaultKind("disk stall", "stall:disk", "disk"),
    FaultKind("reader gone", "rfid-disconnect=10s", "rdr"),
    FaultKind("reader noisy", "rfid-noise=0.02/30s", "noise"),
    FaultKind("stuck key", "stuck-on:key_lift0=40s", "key"),
    FaultKind("dice stall", "jam:dice", "dice"),
)


# -- the instants ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Instant:
    """When a fault strikes: the ``nth`` entry into ``state`` plus ``after_s``, or when stacking cycle ``cycle``
    has counted ``fraction`` of its tiles."""

    name: str
    state: TableState | None = None
    nth: int = 1
    after_s: float = 0.0
    cycle: int | None = None
    fraction: float = 0.0
    topic: str | None = None        # or on the nth event of this topic
    arrange: tuple[str, ...] = ()   # sim fault specs that bring the table to this state (a foreign tile: rejected)
    pause: bool = False             # the players pause the first stacking (both lift keys) and resume it

    @property
    def arrange_tiles(self) -> bool:
        """The arrangement changes the sets themselves (a tile defect is expected then)."""
        return any(spec.split("@")[0].split("=")[0] in ("foreign-tile", "unknown-tile", "missing-tile", "extra-tile")
                   for spec in self.arrange)

    def arm(self, later: Callable[[float, Callable[[], None]], None], strike: Callable[[], None]
            ) -> Callable[[Event], None]:
        """An observer of the table's events that calls ``strike()`` once, at this instant (``later(delay_s, fn)``
        schedules on the run's loop)."""
        seen: Counter[str] = Counter()
        fired = [False]

        def fire() -> None:
            if not fired[0]:
                fired[0] = True
                strike()

        def watch(event: Event) -> None:
            if fired[0]:
                return
            if self.state is not None:
                if event.topic == "controller.state" and event.data["state"] == self.state.value:
                    seen["state"] += 1
                    if seen["state"] == self.nth:
                        later(self.after_s, fire)
            elif self.topic is not None:
                if event.topic == self.topic:
                    seen["topic"] += 1
                    if seen["topic"] == self.nth:
                        later(self.after_s, fire)
            elif event.topic == "stacking.start":
                seen["cycle"] += 1
                seen["tiles"] = 0
                seen["target"] = event.data["target_tiles"] * 4
            elif event.topic == "stacking.tile" and seen["cycle"] == self.cycle:
                seen["tiles"] += 1
                if seen["tiles"] >= max(1, int(self.fraction * seen["target"])):
                    fire()
        return watch


INSTANTS: tuple[Instant, ...] = (
    Instant("power-on", state=S.HOMING, after_s=0.2),
    Instant("open to pour", state=S.OPEN, after_s=1.0),
    Instant("centre closing", state=S.CENTER_DOWN, after_s=0.5),
    Instant("stacking begins", topic="controller.stacking", nth=1),
    Instant("stacking 5%", cycle=1, fraction=0.05),
    Instant("stacking 50%", cycle=1, fraction=0.5),
    Instant("stacking 95%", cycle=1, fraction=0.95),
    Instant("ready", state=S.READY, after_s=0.5),
    Instant("lifts starting", state=S.RAISING, after_s=0.2),
    Instant("lifts half way", state=S.RAISING, after_s=1.5),
    Instant("dice waiting", state=S.DICE, after_s=1.0),
    Instant("dice rolling", topic="dice.waiting", after_s=0.0, nth=1),
    Instant("deal", topic="deal", after_s=0.0),
    Instant("in play", state=S.IN_PLAY, after_s=20.0),
    Instant("below begins", topic="controller.stacking", nth=2),
    Instant("below 5%", cycle=2, fraction=0.05),
    Instant("below 50%", cycle=2, fraction=0.5),
    Instant("below 95%", cycle=2, fraction=0.95),
    Instant("centre rising", state=S.CENTER_UP, nth=2, after_s=0.5),
    Instant("open after hand", state=S.OPEN, nth=2, after_s=2.0),
    Instant("centre closing after hand", state=S.CENTER_DOWN, nth=2, after_s=0.5),
    Instant("deciding", state=S.IDLE, nth=2),
    Instant("paused", state=S.PAUSED, after_s=2.0, pause=True),
    Instant("rejected walls", state=S.REJECTED, after_s=1.0, arrange=("foreign-tile",)),
    Instant("held", state=S.HOLD, after_s=2.0, arrange=("lid-open@stacking1=8s",)),
    Instant("latched", state=S.LATCHED, after_s=5.0, arrange=("jam:lift2",)),
)
PAUSE_AT = 0.3              # the players pause the first stacking this far in
RESUME_AFTER_S = 10.0       # ... and resume it this long after


# -- one case -----------------------------------------------------------------------------------------------------
@dataclass
class CaseResult:
    fault: str
    instant: str
    rules: str
    seed: int
    struck: bool = False
    completed: bool = False
    outcome: str = ""                       # recovered / latched (acknowledged) / FAIL
    codes: list[str] = field(default_factory=list)
    latched: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    hands: int = 0
    motor_s_under_interlock: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems


def run_case(fault: FaultKind, instant: Instant, rules: str = "mcr", seed: int = 1, hands: int = HANDS,
             auto_ack_s: float | None = 60.0) -> CaseResult:
    """One case; ``auto_ack_s`` None: no technician comes (a latched fault stays)."""
    out = CaseResult(fault.name, instant.name, rules, seed)
    box: dict[str, SimRun] = {}
    waiting: list[tuple[float, Callable[[], None]]] = []

    def later(delay_s: float, fn: Callable[[], None]) -> None:
        if "run" in box:
            box["run"].loop.call_later(delay_s, fn)
        else:
            waiting.append((delay_s, fn))       # (an event of the first boot, before the run is built)

    def strike() -> None:
        out.struck = True
        fault.strike(box["run"])

    deals: list[str] = []

    def check_deal(event: Event) -> None:
        if event.topic == "deal":
            problem = _deal_problem(box["run"], event)
            if problem:
                deals.append(f"hand {event.data['hand']}: {problem}")
    observers = [instant.arm(later, strike), check_deal]
    if instant.pause:
        observers.append(_pause_first_stacking(later, lambda: box["run"]))
    run = SimRun(rules=rules, seed=seed, hands=hands, play=True, auto_ack_s=auto_ack_s,
                 faults=[parse_fault(spec) for spec in instant.arrange], observers=observers)
    box["run"] = run
    for delay_s, fn in waiting:
        run.loop.call_later(delay_s, fn)
    try:
        out.completed = run.run(timeout_s=TIMEOUT_S)
        run.settle()
        faults = run.faults()
        out.codes = [f.code.value for f in faults]
        out.latched = [f.code.value for f in faults if f.tier.value == "latched"]
        out.motor_s_under_interlock = sum(run.interlocks.finish().values())
        board = run.session.scoreboard if run.session is not None else None
        if not out.struck:
            out.problems.append("the instant was never reached")
        if "E99" in out.codes:
            out.problems.append("E99 software error")
        lost = sorted({c for c in out.codes if c in TILE_TRACK_CODES}) if not instant.arrange_tiles else []
        if lost:
            out.problems.append(f"the table lost track of its tiles: {', '.join(lost)} with every tile in place")
        if not out.completed:
            out.problems.append(f"not completed (state {run.state.value if run.state else 'off'})")
        if board is None or not board.conserved():
            out.problems.append("chips not conserved")
        else:
            recorded = [h.hand for h in board.hands(since=0, all_games=True)]
            out.hands = len(recorded)
            if len(recorded) != len(set(recorded)):
                out.problems.append(f"a hand recorded twice: {recorded}")
            if out.completed and len(recorded) < hands:
                out.problems.append(f"{len(recorded)} of {hands} hands recorded")
        out.problems += deals
        if out.motor_s_under_interlock > 0:
            out.problems.append(f"motors ran {out.motor_s_under_interlock:.3f} s under an interlock")
    except Exception as exc:  # noqa: BLE001 - a crash of the run is a failed case, reported with the rest
        log.exception("case %s at %s crashed", fault.name, instant.name)
        out.problems.append(f"crashed: {type(exc).__name__}: {exc}")
    finally:
        run.close()
    out.outcome = "FAIL" if out.problems else ("latched" if out.latched else "recovered")
    return out


def _pause_first_stacking(later, run_of: Callable[[], SimRun]) -> Callable[[Event], None]:
    """The players pause the first stacking with both lift keys (补牌) and resume it with one, ``PAUSE_AT`` of its
    tiles in (of the set being stacked: 108 for 四川)."""
    tiles = [0]
    target = [144]

    def watch(event: Event) -> None:
        if event.topic == "stacking.start" and tiles[0] >= 0:
            target[0] = event.data["target_tiles"] * 4
        if event.topic != "stacking.tile" or tiles[0] < 0:
            return
        tiles[0] += 1
        if tiles[0] >= PAUSE_AT * target[0]:
            tiles[0] = -1
            world = run_of().world
            for key in ("key_lift0", "key_lift1"):
                world.keys[key].set(True)
                later(0.3, lambda key=key: world.keys[key].set(False))
            later(RESUME_AFTER_S, lambda: world.press("key_lift1"))
    return watch


def _deal_problem(run: SimRun, event: Event) -> str | None:
    """What the controller dealt against what the physical walls give: every tile known and the same."""
    world = run.world
    wall = Wall.from_sides([[tuple(t.kind for t in stack) for stack in side] for side in world.walls])
    physical = deal(wall, run.rules.deal_rules, tuple(event.data["dice"]), event.data["dealer"])
    said = event.data["hands"]
    if event.data.get("wall") != "verified":
        return f"dealt from a wall that is {event.data.get('wall')}"
    for side in physical.hands:
        real = sorted(code(k) for k in physical.hand_tiles(wall, side))
        known = said.get(side) or said.get(str(side)) or []
        if "?" in known:
            return f"side {side} dealt {known.count('?')} tiles that were never read"
        if sorted(known) != real:
            return f"side {side}: the controller dealt {sorted(known)}, the walls gave {real}"
    return None


# -- the whole matrix ----------------------------------------------------------------------------------------------
def all_cases(faults: Iterable[FaultKind] = FAULTS, instants: Iterable[Instant] = INSTANTS,
              rules: Iterable[str] = RULE_SETS, seeds: Iterable[int] = (1, 2, 3)) -> list[tuple]:
    return list(itertools.product(faults, instants, rules, seeds))


def _run_one(case: tuple) -> CaseResult:
    logging.disable(logging.CRITICAL)
    return run_case(*case)


def _worker_init() -> None:
    """A worker's table databases in memory-backed files where there are some (``/dev/shm``): a case's commits
    then cost no disk sync (nothing here survives the process, and the in-process power cut closes cleanly)."""
    import tempfile

    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        tempfile.tempdir = "/dev/shm"


def run_matrix(cases: list[tuple], workers: int | None = None) -> list[CaseResult]:
    """Every case, in worker processes (one per core)."""
    workers = workers or os.cpu_count() or 1
    if workers == 1:
        return [_run_one(c) for c in cases]
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(workers, initializer=_worker_init) as pool:
        return pool.map(_run_one, cases, chunksize=4)


def sample(seed: int = 20261201) -> list[tuple]:
    """A few cases per fault and per instant, every rule set and seed in turn: the fast check in ``make test``
    (deterministic; every fault at six instants, every instant under at least four faults)."""
    import random

    rng = random.Random(seed)
    cases = []
    instants = list(INSTANTS)
    for i, fault in enumerate(FAULTS):
        chosen = [instants[(i * 6 + k) % len(instants)] for k in range(6)]
        for k, instant in enumerate(chosen):
            cases.append((fault, instant, RULE_SETS[(i + k) % len(RULE_SETS)], 1 + rng.randrange(3)))
    return cases


def matrix_table(results: list[CaseResult]) -> str:
    """The matrix as a Markdown table, instants down, faults across: ``ok`` (every rule set and seed recovered
    by itself), ``L`` (some through the latched fault a technician acknowledges, as documented), ``FAIL n``
    (n cases failed), ``-`` (not run)."""
    cells: dict[tuple[str, str], list[CaseResult]] = defaultdict(list)
    for r in results:
        cells[(r.fault, r.instant)].append(r)
    shorts = {f.name: f.short for f in FAULTS}
    faults = list(dict.fromkeys(r.fault for r in results))
    instants = [i.name for i in INSTANTS if any(r.instant == i.name for r in results)]
    lines = ["| instant | " + " | ".join(shorts.get(f, f) for f in faults) + " |",
             "|---|" + "---|" * len(faults)]
    for i in instants:
        row = []
        for f in faults:
            rs = cells.get((f, i), [])
            failed = sum(1 for r in rs if not r.ok)
            row.append(f"FAIL {failed}" if failed else ("L" if any(r.latched for r in rs) else "ok") if rs else "-")
        lines.append(f"| {i} | " + " | ".join(row) + " |")
    legend = ", ".join(f"{f.short} = {f.name}" for f in FAULTS if f.name in faults)
    return "\n".join(lines) + "\n\n" + legend


def summary(results: list[CaseResult]) -> str:
    """One line: cases, recovered by themselves, through a latched fault, failed."""
    failed = [r for r in results if not r.ok]
    latched = sum(1 for r in results if r.ok and r.latched)
    return (f"{len(results)} cases ({len({r.fault for r in results})} faults x {len({r.instant for r in results})} "
            f"instants x {len({r.rules for r in results})} rule sets x {len({r.seed for r in results})} seeds): "
            f"{len(results) - len(failed) - latched} recovered, {latched} through a latched fault acknowledged, "
            f"{len(failed)} failed")


def by_rules(results: list[CaseResult]) -> str:
    """A line per rule set: its cases, recovered by themselves, through a latched fault, failed."""
    lines = []
    for rules in dict.fromkeys(r.rules for r in results):
        rs = [r for r in results if r.rules == rules]
        failed = sum(1 for r in rs if not r.ok)
        latched = sum(1 for r in rs if r.ok and r.latched)
        lines.append(f"{rules}: {len(rs)} cases, {len(rs) - failed - latched} recovered, {latched} latched, "
                     f"{failed} failed")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m sim.recovery_matrix [--sample] [--seeds 1,2,3] [--rules mcr,...]``: run and print the matrix."""
    import argparse
    import time

    parser = argparse.ArgumentParser(prog="python -m sim.recovery_matrix", description=main.__doc__)
    parser.add_argument("--sample", action="store_true", help="the fast sample of make test only")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--rules", default=",".join(RULE_SETS))
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args(argv)
    cases = sample() if args.sample else all_cases(rules=args.rules.split(","),
                                                   seeds=[int(s) for s in args.seeds.split(",")])
    started = time.monotonic()
    results = run_matrix(cases, args.workers)
    print(matrix_table(results))
    print()
    print(summary(results), f"in {time.monotonic() - started:.0f} s")
    print(by_rules(results))
    for r in results:
        if not r.ok:
            print(f"FAIL {r.fault} at {r.instant} ({r.rules}, seed {r.seed}): {'; '.join(r.problems)}")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
