"""Shared fixtures: a simulated table on virtual time, isolated per test."""

from __future__ import annotations

import pytest
from gpiozero import Device

from sim.harness import SimTable


@pytest.fixture(autouse=True)
def _isolate_gpiozero_global_factory():
    """Every device gets pin_factory= explicitly; make sure no test leaks a global one."""
    saved = Device.pin_factory
    yield
    assert Device.pin_factory is saved, "a test set gpiozero's global pin factory"


@pytest.fixture
def sim():
    table = SimTable(seed=1)
    yield table
    table.close()


def make_sim(*specs: str, seed: int = 1, **table_overrides) -> SimTable:
    from firmware.config import default_table_path, load_table_config
    from sim.faults import parse_fault

    cfg = load_table_config(default_table_path())
    if table_overrides:
        cfg = cfg.model_copy(update={"table": cfg.table.model_copy(update=table_overrides)})
    return SimTable(cfg, seed=seed, faults=[parse_fault(s) for s in specs])
