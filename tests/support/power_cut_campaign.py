"""Power cuts that cut: the controller on the simulated table in a child process, killed with SIGKILL.

The in-process power cut of the simulator can only fall between two loop
callbacks and closes the database cleanly.  Here the whole simulated table
runs in a forked child process that keeps its tiles in the table database,
written in every transaction the controller commits
(as every ``SimRun`` does), so the tiles and the controller's
knowledge are always at the same commit.  The child tells the parent when
its virtual clock passes a random instant; the parent kills it with SIGKILL
right then (the kill lands at whatever instruction the child has reached:
inside a callback, between two writes of one step, in a commit), reads
what was committed, and starts a new child on the same file.  After the last
cut a child plays the game to its end.  Nothing here sleeps: the parent
blocks on the child's pipe.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from firmware.controller.states import SetLocation

OK, NOT_COMPLETED, INCONSISTENT, CRASHED = 0, 3, 5, 4


@dataclass
class Campaign:
    cuts: int = 0
    restarts_inconsistent: list[str] = field(default_factory=list)
    committed: dict[int, list[int]] = field(default_factory=dict)     # hand -> payments by side, as first seen
    lost_or_changed: list[str] = field(default_factory=list)
    final_exit: int | None = None
    problems: list[str] = field(default_factory=list)


def _child(state: Path, seed: int, rules: str, hands_total: int, kill_at_s: float | None, pipe: int) -> None:
    """The table: resume from ``state`` and play until ``hands_total`` hands were dealt (runs in the child)."""
    code = CRASHED
    try:
        from sim.table_run import SimRun

        dealt = _book(state).get("hand", 0) if state.exists() else 0
        run = SimRun(hands=max(1, hands_total - dealt), state_path=state, seed=seed, rules=rules, play=True)
        problem = consistency(run)
        if problem:
            os.write(2, f"inconsistent after the restart: {problem}\n".encode())
            code = INCONSISTENT
        else:
            if kill_at_s is not None:
                told = []

                def pacer(when: float) -> None:
                    if when >= kill_at_s and not told:
                        told.append(1)
                        os.write(pipe, b"k")
                run.loop.pacer = pacer
            completed = run.run(timeout_s=hands_total * 900.0 + 900.0)
            run.settle()
            code = OK if completed else NOT_COMPLETED
            problem = consistency(run)
            if problem:
                os.write(2, f"inconsistent at the end: {problem}\n".encode())
                code = INCONSISTENT
            run.close()
    except BaseException:  # noqa: BLE001 - the child reports and exits, never returns into pytest
        traceback.print_exc(file=sys.stderr)
    finally:
        os.write(pipe, b"e")
        os._exit(code)


def consistency(run) -> str | None:
    """Where the bookkeeping says each set is agrees with where the tiles are (as far as the controller can
    know: a set pushed into the open centre is still "on the table" until the centre closes)."""
    if run.controller is None:
        return None
    book = run.controller.book
    on_table = {t.set_id for side in run.world.walls for stack in side for t in stack}
    in_grooves = {t.set_id for head in run.world.heads for stack in head.groove for t in stack}
    on_disk = {t.set_id for t in run.world.turntable.hopper}
    said_table = {s for s in ("A", "B") if book.where(s) is SetLocation.TABLE}
    said_stacked = {s for s in ("A", "B") if book.where(s) is SetLocation.STACKED}
    # walls the players pushed into the open centre are on the disk until the centre closes and says so
    if not on_table <= said_table or not said_table <= on_table | (on_disk if book.hand_over else set()):
        return f"book says {said_table} on the table, the walls hold {on_table}"
    if not said_stacked <= in_grooves | on_table:
        return f"book says {said_stacked} stacked, the grooves hold {in_grooves}"
    # the campaign injects no tile faults: the two sets never mix (a set's leftovers on the disk would)
    on_feed = on_disk | {t.set_id for head in run.world.heads for t in head.track}
    for where, sets in (("walls", on_table), ("grooves", in_grooves), ("disk and tracks", on_feed)):
        if len(sets) > 1:
            return f"sets mixed in the {where}: {sorted(sets)}"
    return None


def _book(state: Path) -> dict:
    db = sqlite3.connect(state)
    try:
        row = db.execute("SELECT value FROM kv WHERE key = 'book'").fetchone()
        return json.loads(row[0]) if row else {}
    except sqlite3.Error:
        return {}
    finally:
        db.close()


def committed(state: Path) -> dict[int, list[int]]:
    """Every recorded hand's payments by side, as committed in the file now (a hand in play, whose money paid on
    the spot is there before its result, is not counted until its result is)."""
    db = sqlite3.connect(state)
    try:
        out: dict[int, list[int]] = {}
        for hand, in db.execute("SELECT hand FROM hand_results"):
            out[hand] = [0] * 4
        for hand, payer, payee, amount in db.execute("SELECT hand, payer, payee, amount FROM payments WHERE held = 0"):
            if hand in out:
                out[hand][payer] -= amount
                out[hand][payee] += amount
        return out
    except sqlite3.Error:
        return {}
    finally:
        db.close()


def _spawn(state: Path, seed: int, rules: str, hands_total: int, kill_at_s: float | None) -> tuple[int, int]:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _child(state, seed, rules, hands_total, kill_at_s, write_end)
    os.close(write_end)
    return pid, read_end


CUT_WITHIN_S = 320.0        # each child is cut within this much simulated time (about a hand and its stacking)


def run_campaign(folder: Path, seed: int, rules: str, cuts: int) -> Campaign:
    """``cuts`` SIGKILLs at random instants of one game, then the game to its end; every check recorded."""
    rng = random.Random(seed)
    state = folder / "table.db"
    result = Campaign()
    hands_total = cuts + 1
    for i in range(cuts):
        kill_at_s = rng.uniform(0.5, CUT_WITHIN_S)
        pid, pipe = _spawn(state, seed * 1000 + i, rules, hands_total, kill_at_s)
        said = os.read(pipe, 1)
        if said == b"k":
            os.kill(pid, signal.SIGKILL)
            result.cuts += 1
        _, status = os.waitpid(pid, 0)
        os.close(pipe)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == INCONSISTENT:
            result.restarts_inconsistent.append(f"cut {i}")
        elif os.WIFEXITED(status) and os.WEXITSTATUS(status) == CRASHED:
            result.problems.append(f"child {i} crashed (see its traceback)")
        _compare_committed(state, result, f"cut {i}")
    pid, pipe = _spawn(state, seed * 1000 + cuts, rules, hands_total, None)
    os.read(pipe, 1)
    _, status = os.waitpid(pid, 0)
    os.close(pipe)
    result.final_exit = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    result.problems += final_checks(state, result)
    return result


def _compare_committed(state: Path, result: Campaign, which: str) -> None:
    """Every result committed before ``which`` is still there, unchanged; the new ones are remembered."""
    now = committed(state)
    for hand, payments in result.committed.items():
        if now.get(hand) != payments:
            result.lost_or_changed.append(f"hand {hand}: {payments} before {which}, {now.get(hand)} after")
    for hand, payments in now.items():
        result.committed.setdefault(hand, payments)


def final_checks(state: Path, result: Campaign) -> list[str]:
    problems = []
    db = sqlite3.connect(state)
    try:
        dup = db.execute("SELECT hand FROM hands GROUP BY hand HAVING count(*) > 1").fetchall()
        if dup:
            problems.append(f"hands dealt twice: {dup}")
        orphans = db.execute("SELECT hand FROM hand_results WHERE hand NOT IN (SELECT hand FROM hands)").fetchall()
        if orphans:
            problems.append(f"results of hands never dealt: {orphans}")
        mismatched = db.execute("SELECT r.hand FROM hand_results r JOIN hands h ON h.hand = r.hand "
                                "WHERE r.dealer != h.dealer").fetchall()
        if mismatched:
            problems.append(f"results whose dealer is not the dealt hand's: {mismatched}")
        unbalanced = db.execute("SELECT hand, event FROM payments WHERE amount <= 0 OR payer = payee").fetchall()
        if unbalanced:
            problems.append(f"payments not summing to zero (a row from a side to itself, or of nothing): "
                            f"{unbalanced}")
        for game, start in db.execute("SELECT id, start_chips FROM games"):
            chips = dict(db.execute("SELECT side, chips FROM chips WHERE game = ?", (game,)).fetchall())
            paid: dict[int, int] = {}
            for payer, payee, amount in db.execute("SELECT payer, payee, amount FROM payments WHERE game = ? "
                                                   "AND held = 0", (game,)):
                paid[payer] = paid.get(payer, 0) - amount
                paid[payee] = paid.get(payee, 0) + amount
            if any(chips.get(s, 0) != start + paid.get(s, 0) for s in range(4)):
                problems.append(f"game {game}: chips {chips} are not {start} plus the payments {paid}")
            if sum(chips.values()) != 4 * start:
                problems.append(f"game {game}: chips not conserved: {chips}")
        software = db.execute("SELECT count(*) FROM faults WHERE code IN ('E98', 'E99')").fetchone()[0]
        if software:
            problems.append(f"{software} E98/E99 faults after the cuts")
    finally:
        db.close()
    if result.lost_or_changed:
        problems.append("committed results lost or changed: " + "; ".join(result.lost_or_changed[:3]))
    if result.restarts_inconsistent:
        problems.append("bookkeeping and tiles disagreed after: " + ", ".join(result.restarts_inconsistent))
    if result.final_exit != OK:
        problems.append(f"the game did not complete after the cuts (exit {result.final_exit})")
    return problems


# -- the simulator's own command, killed ---------------------------------------------------------------------------
# The child is ``mjtable sim`` itself (its arguments, its resume checks, its report), with one addition: it tells the
# parent on a pipe when its virtual clock passes the instant to kill at; the parent kills it with SIGKILL then.
_CLI_CHILD = """
import os, sys
kill_at, fd = float(sys.argv[1]), int(sys.argv[2])
from sim.virtual_loop import VirtualLoop
told = []
real_step = VirtualLoop.step


def stepped(self, *args):
    ran = real_step(self, *args)
    if self._now >= kill_at and not told:
        told.append(1)
        os.write(fd, b"k")
    return ran


VirtualLoop.step = stepped


def run_steps(self, done, deadline_s):        # (the loop's own runs its steps in one frame: one at a time here)
    while not done():
        if not self.step(deadline_s):
            return False
    return True


VirtualLoop.run_steps = run_steps
if os.environ.get("MJTABLE_TEST_NO_WORLD_ROWS"):     # (the campaign's own check: a world not kept is found)
    from sim import world_state
    world_state.WorldRows.write = lambda self, db: None
from firmware.cli.main import main
code = main(sys.argv[3:])
os.write(fd, b"e")
sys.exit(code)
"""
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class CliCampaign(Campaign):
    exits: list[int] = field(default_factory=list)      # the runs not killed, in order


def run_cli_campaign(folder: Path, seed: int, rules: str, kills: int, hands: int = 2,
                     kill_within_s: float = 450.0) -> CliCampaign:
    """``mjtable sim --hands H --seed S --state FILE`` killed ``kills`` times at random virtual instants, the same
    command each time (a run that ends before its instant is a run not killed; another follows); then the same
    command once more, from ``mjtable`` itself, to its end."""
    import subprocess

    rng = random.Random(seed)
    state = folder / "table.db"
    command = ["sim", "--rules", rules, "--hands", str(hands), "--seed", str(seed), "--state", str(state), "--quiet"]
    result = CliCampaign()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    i = 0
    while result.cuts < kills and i < 3 * kills:
        i += 1
        read_end, write_end = os.pipe()
        child = subprocess.Popen([sys.executable, "-c", _CLI_CHILD, f"{rng.uniform(0.5, kill_within_s):.3f}",
                                  str(write_end), *command], pass_fds=(write_end,), cwd=ROOT, env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(write_end)
        said = os.read(read_end, 1)
        if said == b"k":
            child.kill()
            result.cuts += 1
        _, err = child.communicate()
        os.close(read_end)
        if said != b"k":
            result.exits.append(child.returncode)
            if child.returncode != 0:
                result.problems.append(f"run {i} (not killed) ended {child.returncode}: {err.decode()[-400:]}")
        _compare_committed(state, result, f"kill {i}")
    mjtable = Path(sys.executable).with_name("mjtable")
    # (PYTHONPATH: the checkout under test, also where the virtualenv's editable install points at another one)
    final = subprocess.run([str(mjtable), *command], cwd=folder, capture_output=True, text=True, env=env)
    result.final_exit = final.returncode
    if final.returncode != OK:
        result.problems.append(f"the resume after the last kill said: {final.stderr[-600:]}")
    result.problems += final_checks(state, result)
    result.problems += _hands_once(state)
    return result


def _hands_once(state: Path) -> list[str]:
    """Every hand dealt is in the table database once, numbered 1..N without a gap, and every one but the last
    ended, each with its result row (its win or drawn end, or void: a hand in play when the simulator was
    killed, ended by the players with both lift keys)."""
    db = sqlite3.connect(state)
    try:
        hands = [h for h, in db.execute("SELECT hand FROM hands ORDER BY hand")]
        open_hands = [h for h, in db.execute("SELECT hand FROM hands WHERE ended_s IS NULL ORDER BY hand")]
        no_result = [h for h, in db.execute("SELECT hand FROM hands WHERE ended_s IS NOT NULL AND hand NOT IN "
                                            "(SELECT hand FROM hand_results) ORDER BY hand")]
    finally:
        db.close()
    problems = []
    if hands != list(range(1, len(hands) + 1)):
        problems.append(f"hands not numbered 1..N once each: {hands}")
    if [h for h in open_hands if h != len(hands)]:
        problems.append(f"hands never ended: {open_hands}")
    if no_result:
        problems.append(f"hands ended without a result row: {no_result}")
    return problems
