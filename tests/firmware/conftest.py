"""The firmware's tests: a simulated table on virtual time, built with faults and table overrides."""

from __future__ import annotations

from sim.harness import SimTable


def make_sim(*specs: str, seed: int = 1, **table_overrides) -> SimTable:
    from firmware.config import default_table_path, load_table_config
    from sim.faults import parse_fault

    cfg = load_table_config(default_table_path())
    if table_overrides:
        cfg = cfg.model_copy(update={"table": cfg.table.model_copy(update=table_overrides)})
    return SimTable(cfg, seed=seed, faults=[parse_fault(s) for s in specs])
