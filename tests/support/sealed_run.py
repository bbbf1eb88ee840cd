"""A short simulated game kept in a table database, for the committed walls' tests (every hand sealed and played)."""

from __future__ import annotations

from pathlib import Path

from firmware.config import default_table_path, load_table_config
from sim.table_run import SimRun


def sealed_game(state_path: Path, hands: int = 3, seed: int = 1, rules: str = "mcr",
                electronic: bool = False) -> list:
    """Play ``hands`` hands on the simulated table into ``state_path`` (``electronic``: electronic dice); the
    events the table published, in order."""
    cfg = load_table_config(default_table_path())
    if electronic:
        cfg = cfg.model_copy(update={"dice": cfg.dice.model_copy(update={"electronic": True})})
    events: list = []
    run = SimRun(cfg, rules=rules, hands=hands, seed=seed, play=True, state_path=state_path,
                 observers=[events.append])
    try:
        assert run.run(timeout_s=7200.0), "the simulated game did not finish"
    finally:
        run.close()
    return events
