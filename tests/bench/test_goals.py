"""``make bench`` ends with the goals' table (bench/goals.py): each goal met or MISSED by this run's figure, at the
bound itself met, a goal whose benchmark was not selected "not run"; ``python -m bench`` prints it after a
benchmark that measures a goal, and not after one that measures none."""

from __future__ import annotations

import bench.__main__ as bench_main
from bench import cycle, goals, scoring, simspeed


def _results(sim_ratio: int, never_x: float, lines_per_s: int, median: float) -> dict:
    return {
        "simspeed": {"speed": {"ratio": sim_ratio, "ms_per_hand": 40.0, "met": sim_ratio >= simspeed.SPEED_GOAL},
                     "curve": {"ratio_4096_512": 1.09, "met": True},
                     "run_path": {"projected_mb_100k": 0.4, "flat": True, "samples": [{"cycles": 8192}]}},
        "scoring": {"tasks": {"case_hands": {"x_cpp": 0.4}, "generated": {"x_cpp": 1.0},
                              "never_seen": {"x_cpp": never_x}},
                    "score_lines": {"auto_jobs": 2, "auto": {"lines_per_s": lines_per_s},
                                    "one_process": {"lines_per_s": lines_per_s // 2}}},
        "cycle": {"median_ratio": median, "worst_ratio": median + 0.01,
                  "median_met": median <= cycle.GOAL_MEDIAN, "worst_met": median + 0.01 <= cycle.GOAL_WORST},
    }


def _verdicts(results: dict) -> dict[str, bool | None]:
    return {row.what: row.met for row in goals.rows(results)}


def test_each_goal_is_met_or_missed_by_this_runs_figure():
    missed = _verdicts(_results(9_999, 2.01, scoring.GOAL_LINES_PER_S - 1, 1.06))
    assert [v for v in missed.values()] == [False, True, True, True, False, False, False]
    met = _verdicts(_results(simspeed.SPEED_GOAL, scoring.GOAL_NEVER_SEEN, scoring.GOAL_LINES_PER_S, 1.05))
    assert all(met.values()), met           # (at the bound itself: met)


def test_a_seen_before_row_is_missed_when_either_set_is_over_its_bound():
    results = _results(10_000, 1.0, 20_000, 1.0)
    results["scoring"]["tasks"]["case_hands"]["x_cpp"] = 1.2
    row = next(r for r in goals.rows(results) if r.what.startswith("MCR scorer, hands seen before"))
    assert row.met is False and "case hands 1.2x" in row.measured


def test_a_goal_whose_benchmark_did_not_run_says_so(capsys):
    results = {"scoring": _results(1, 9.0, 1, 1.0)["scoring"]}
    verdicts = _verdicts(results)
    assert sum(v is None for v in verdicts.values()) == 4
    goals.print_table(results)
    out = capsys.readouterr().out
    assert sum(line.endswith("not run") for line in out.splitlines()) == 4
    assert "1 of 3 measured goals met; 4 not run" in out
    assert out.splitlines()[2].split()[:2] == ["what", "goal"]          # (the columns' heading)


def test_a_shortened_memory_curve_is_not_a_verdict():
    results = _results(10_000, 1.0, 20_000, 1.0)
    results["simspeed"]["curve"] = {"ratio_4096_512": None, "met": False}     # (MJTABLE_BENCH_SCALE < 0.5)
    row = next(r for r in goals.rows(results) if r.what.startswith("peak RSS"))
    assert row.met is None


class _Canned:
    def __init__(self, results: dict) -> None:
        self.results = results

    def run(self) -> dict:
        return self.results

    def print_table(self, results: dict) -> None:
        print("table of", sorted(results))


def test_python_m_bench_ends_with_the_goals_after_a_benchmark_that_measures_one(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(bench_main, "__file__", str(tmp_path / "__main__.py"))     # (results-*.json written there)
    canned = _results(7_000, 8.0, 17_000, 1.04)
    monkeypatch.setitem(bench_main.BENCHMARKS, "scoring", _Canned(canned["scoring"]))
    monkeypatch.setitem(bench_main.BENCHMARKS, "hands", _Canned({"rows": []}))
    assert bench_main.main(["scoring"]) == 0
    out = capsys.readouterr().out
    assert "speed and flat memory, the goals" in out and "8.0x" in out and "MISSED" in out
    assert (tmp_path / "results-scoring.json").exists()
    assert bench_main.main(["hands"]) == 0
    assert "the goals" not in capsys.readouterr().out
