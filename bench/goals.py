"""The speed and flat-memory goals in one table at the end of ``make bench``: each goal, what this run measured
and met or MISSED, read from the results of the benchmarks that measure them (``scoring``, ``simspeed``,
``cycle``); a goal whose benchmark did not run (a selection: ``python -m bench scoring``) says so."""

from __future__ import annotations

from typing import NamedTuple

from bench import cycle, scoring, simspeed


class GoalRow(NamedTuple):
    what: str
    goal: str
    measured: str           # "" when the benchmark that measures it did not run
    met: bool | None        # None: not measured in this run


def rows(results: dict) -> list[GoalRow]:
    """Every goal with this run's figure, in the README's order."""
    out: list[GoalRow] = []
    sim = results.get("simspeed")
    speed = sim and sim.get("speed")
    out.append(GoalRow("simulator, sim --hands 64, simulated s per CPU s", f">= {simspeed.SPEED_GOAL:,}x",
                       f"{speed['ratio']:,}x ({speed['ms_per_hand']} ms a hand)" if speed else "",
                       speed["met"] if speed else None))
    curve = sim and sim.get("curve")
    measured = curve is not None and curve.get("ratio_4096_512") is not None
    out.append(GoalRow("peak RSS, 512 to 4,096 hands of a game", f"<= {simspeed.CURVE_GOAL:.2f}x",
                       f"{curve['ratio_4096_512']}x" if measured else "", curve["met"] if measured else None))
    path = sim and sim.get("run_path")
    measured = path is not None and path.get("projected_mb_100k") is not None
    out.append(GoalRow("run path, RSS over its cycles", f"flat (<= {simspeed.RUN_FLAT_MB:g} MB at 100,000)",
                       f"{path['projected_mb_100k']} MB at 100,000"
                       + (f" from {path['samples'][-1]['cycles']:,}" if path.get("samples") else "")
                       if measured else "",
                       path["flat"] if measured else None))
    tasks = (results.get("scoring") or {}).get("tasks", {})
    seen = [(task, tasks[task]["x_cpp"]) for task in ("case_hands", "generated") if "x_cpp" in tasks.get(task, {})]
    out.append(GoalRow("MCR scorer, hands seen before, x PyMahjongGB", f"<= {scoring.GOAL_SEEN:.1f}x",
                       ", ".join(f"{task.replace('_', ' ')} {x}x" for task, x in seen),
                       all(x <= scoring.GOAL_SEEN for _, x in seen) if seen else None))
    never = tasks.get("never_seen", {}).get("x_cpp")
    out.append(GoalRow("MCR scorer, hands never seen, x PyMahjongGB", f"<= {scoring.GOAL_NEVER_SEEN:.1f}x",
                       f"{never}x" if never is not None else "",
                       never <= scoring.GOAL_NEVER_SEEN if never is not None else None))
    lines = (results.get("scoring") or {}).get("score_lines")
    auto = lines and lines.get("auto")
    out.append(GoalRow("mjtable score, 20,000 lines, start-up included", f">= {scoring.GOAL_LINES_PER_S:,} lines/s",
                       f"{auto['lines_per_s']:,} lines/s ({lines['auto_jobs']} processes; one: "
                       f"{lines['one_process']['lines_per_s']:,})" if auto else "",
                       auto["lines_per_s"] >= scoring.GOAL_LINES_PER_S if auto else None))
    cyc = results.get("cycle")
    out.append(GoalRow("stacking cycle, x the cam bound", f"median <= {cycle.GOAL_MEDIAN:.2f}x, worst <= "
                       f"{cycle.GOAL_WORST:.2f}x",
                       f"{cyc['median_ratio']:.3f}x, {cyc['worst_ratio']:.3f}x" if cyc else "",
                       cyc["median_met"] and cyc["worst_met"] if cyc else None))
    return out


def print_table(results: dict) -> None:
    table = rows(results)
    print("\nspeed and flat memory, the goals (README, Benchmarks)")
    width = max(len(r.what) for r in table)
    goal_width = max(len(r.goal) for r in table)
    print(f"  {'what':{width}}  {'goal':{goal_width}}  {'this run':46}  verdict")
    for r in table:
        verdict = "not run" if r.met is None else "met" if r.met else "MISSED"
        print(f"  {r.what:{width}}  {r.goal:{goal_width}}  {r.measured or '-':46}  {verdict}")
    measured = [r for r in table if r.met is not None]
    print(f"  {sum(r.met for r in measured)} of {len(measured)} measured goals met"
          + (f"; {len(table) - len(measured)} not run (their benchmarks were not selected)"
             if len(measured) < len(table) else ""))
