"""Scenarios: simulated runs with injected faults and the outcome they must produce.

A scenario file (``config/scenarios/*.toml``)::

    [scenario]
    description = "side 2's stacking cam jams during the second stacking cycle"
    hands = 3                      # hands to play (timed waits: the scenarios test the table, not the game)
    sets = ["A", "B"]              # what the players pour in at the start
    inject = ["jam:stacker2@stacking2"]
    press = [["key_reset", 150.0]] # optional key presses: [key, simulated s]
    power_cuts = [95.0]            # optional power cuts at simulated times
    power_cut_in = ["raising"]     # optional: one power cut in each of these states
    rules = "mcr"                  # optional rule set
    fit_tile_set = true            # optional: false keeps the table's tile_set even if the rules differ

    [overrides]                    # optional: table model values for this run
    "limits.cycle_limit_s" = 20.0

    [expect]
    faults = ["E33"]               # every one of these codes must be raised
    completes = true               # the players got all their hands (after holds / acknowledges)
    end_state = "in_play"          # optional

``run_scenario`` also checks, for every latched or holding fault, that no
motor output is still on one loop tick after the fault was detected, and
that no motor ran at all while an interlock was active (the lid open, the
supply low, the reset key or a stuck key down), measured on the simulated
pins by :class:`sim.interlock_watch.InterlockWatch`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from firmware.config import read_toml
from firmware.config_paths import shipped_dir
from firmware.faults import ConfigError
from sim.faults import parse_fault
from sim.table_run import SimRun


@dataclass
class ScenarioResult:
    name: str
    ok: bool
    problems: list[str] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    end_state: str | None = None
    simulated_s: float = 0.0


def scenario_files(folder: Path | None = None) -> list[Path]:
    return sorted((folder or shipped_dir() / "scenarios").glob("*.toml"))


def run_scenario(path: Path, seed: int = 1) -> ScenarioResult:
    data = read_toml(path)
    try:
        spec, expect = data["scenario"], data.get("expect", {})
    except KeyError:
        raise ConfigError(f"{path}: missing [scenario]") from None
    run = SimRun(cfg=_with_overrides(data.get("overrides", {}), path), seed=spec.get("seed", seed),
                 rules=spec.get("rules", "mcr"), fit_tile_set=spec.get("fit_tile_set", True),
                 faults=[parse_fault(s) for s in spec.get("inject", [])], hands=spec.get("hands", 3),
                 sets=tuple(spec.get("sets", ["A", "B"])),
                 hand_s=spec.get("hand_s", 60.0), cut_in_states=set(spec.get("power_cut_in", [])))
    problems: list[str] = []
    motor_checks: list[tuple[str, float]] = []

    def check_motors(code: str, at_s: float) -> None:
        running = [name for name, on in run.world.motors_running().items() if on]
        if running:
            problems.append(f"{code} at {at_s:.2f} s: motors still on one tick later: {', '.join(running)}")
        motor_checks.append((code, at_s))

    def on_fault(event) -> None:
        fault = event.data["fault"]
        if fault.tier.stops_table:
            run.loop.call_later(0.0, check_motors, fault.code.value, fault.at_s)

    run.bus.subscribe("fault", on_fault)
    for key, at_s in spec.get("press", []):
        run.loop.call_at(float(at_s), run.world.press, key)
    for at_s in spec.get("power_cuts", []):
        run.loop.call_at(float(at_s), run.power_cut, 2.0)
    completed = run.run(timeout_s=spec.get("timeout_s", 4000.0))
    raised = [f.code.value for f in run.faults()]
    for code in expect.get("faults", []):
        if code not in raised:
            problems.append(f"expected fault {code} was not raised (raised: {', '.join(raised) or 'none'})")
    if expect.get("completes", True) and not completed:
        problems.append(f"the players did not get their hands (state {run.state.value if run.state else None})")
    if not expect.get("completes", True) and completed:
        problems.append("the run completed, but the scenario expects the table to stop")
    missed = sorted(run.cut_in_states - set(run.cut_states))
    if missed:
        problems.append(f"never reached, so no power cut in: {', '.join(missed)}")
    under = {k: v for k, v in run.interlocks.finish().items() if v}
    if under:
        problems.append("motors ran while an interlock was active: " + ", ".join(
            f"{k} {v:g} s (e.g. {run.interlocks.worst[k]})" for k, v in under.items()))
    end_state = run.state.value if run.state else None
    if "end_state" in expect and end_state != expect["end_state"]:
        problems.append(f"end state {end_state}, expected {expect['end_state']}")
    result = ScenarioResult(path.stem, not problems, problems, raised, end_state, run.loop.now())
    run.close()
    return result


def _with_overrides(overrides: dict, path: Path):
    """The default table model with ``[overrides]`` applied (``limits.cycle_limit_s = 20``)."""
    from firmware.config import default_table_path, load_table_config

    cfg = load_table_config(default_table_path())
    for dotted, value in overrides.items():
        section_name, _, key = dotted.partition(".")
        section = getattr(cfg, section_name, None)
        if section is None or key not in type(section).model_fields:
            raise ConfigError(f"{path}: [overrides] key '{dotted}' is not a table model key")
        cfg = cfg.model_copy(update={section_name: section.model_copy(update={key: value})})
    return cfg
