"""``mjtable selftest``: a release checks itself against the table before it may become current.

Run by the new release's own interpreter, before the ``current`` link is
switched: its modules import; the table's configuration (``/etc/mjtable``)
loads and suits the rule set; the table database opens and migrates, on a
copy (the table's own file is not touched); and the production service runs
a few seconds against the simulated table (``run --sim``) without a fault.
The operating system's protection against power cuts is reported too (see
``docs/table-os.md``) but does not fail the test: a bench PC has none.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from firmware.faults import ConfigError, TableError
from firmware.i18n import N_, worded_text

PACKAGES = ("firmware", "hal", "sim")
SKIP_IMPORT = ("firmware.release.launcher", "hal.start_guard")   # (the start guard's: harmless but pointless)


@dataclass(frozen=True)
class Check:
    """One check's verdict.  ``name`` is marked for the catalogue and ``detail`` made by ``worded_text`` (or an
    error's message, ``error`` kept beside it), so that the command line says both in its language; ``line()``
    is the English, for the log."""

    name: str
    ok: bool
    detail: str
    error: BaseException | None = None

    def line(self) -> str:
        return f"{'ok    ' if self.ok else 'FAILED'} {self.name}: {self.detail}"


IMPORTS, CONFIGURATION, DATABASE, SIM_RUN = N_("imports"), N_("configuration"), N_("database"), N_("run --sim")


def check_imports() -> Check:
    count, broken = 0, []
    for package in PACKAGES:
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
            if info.name in SKIP_IMPORT or info.name.startswith("sim.serial_handlers."):
                continue
            try:
                importlib.import_module(info.name)
                count += 1
            except Exception as exc:  # noqa: BLE001 (any failure to import is what this check reports)
                broken.append(f"{info.name}: {type(exc).__name__}: {exc}")
    if broken:
        return Check(IMPORTS, False, "; ".join(broken[:5]))     # (the modules' own errors)
    return Check(IMPORTS, True, worded_text("%(count)d modules", count=count))


def check_config(args: argparse.Namespace) -> Check:
    from firmware.config import load_table_config
    from firmware.config_paths import table_model
    from firmware.reader.registry import load_table_registry
    from firmware.rules.config import table_conflicts
    from firmware.rules.registry import load_ruleset

    try:
        model, folder = table_model(args.table, args.config_dir, simulated=False)
        cfg = load_table_config(model)
        registry = load_table_registry(cfg)
        rules = load_ruleset(args.rules, folder)
        conflicts = table_conflicts(rules, cfg.table.tile_set, str(model))
    except (ConfigError, TableError, OSError) as exc:
        return Check(CONFIGURATION, False, str(exc), exc)
    if conflicts:
        return Check(CONFIGURATION, False, "; ".join(conflicts))
    return Check(CONFIGURATION, True, worded_text(
        "%(model)s (%(name)s, %(tiles)d tiles, sets %(sets)s), rules %(rules)s", model=str(model),
        name=cfg.table.name, tiles=cfg.table.tile_set, sets="/".join(sorted(registry.sets)) or "-",
        rules=args.rules))


def check_database(state: Path) -> Check:
    from firmware.store.table_store import open_table_store

    with tempfile.TemporaryDirectory(prefix="mjtable-selftest-") as tmp:
        copy = Path(tmp) / "table.db"
        if state.exists():
            for suffix in ("", "-wal"):
                if Path(f"{state}{suffix}").exists():
                    shutil.copyfile(f"{state}{suffix}", f"{copy}{suffix}")
        try:
            store, problem = open_table_store(copy)
        except Exception as exc:  # noqa: BLE001
            return Check(DATABASE, False, f"{state}: {type(exc).__name__}: {exc}")
        store.close()
    if problem:
        return Check(DATABASE, False, worded_text("%(path)s: this release cannot use it (%(reason)s)",
                                                  path=str(state), reason=str(problem.get("reason"))))
    if state.exists():
        return Check(DATABASE, True, worded_text("%(path)s opens and migrates (on a copy)", path=str(state)))
    return Check(DATABASE, True, worded_text("%(path)s does not exist yet: a fresh one starts", path=str(state)))


def check_sim_run(run_for: Callable[[float], tuple], seconds: float) -> Check:
    """The production service's composition against the simulated table, at real time (``run_for(seconds)``:
    the composition root's self-test run, giving the state, the faults raised and the reader's link)."""
    from firmware.controller.states import TableState
    from firmware.reader.driver import LinkState

    try:
        state, faults, link = run_for(seconds)
    except (ConfigError, TableError, OSError) as exc:
        return Check(SIM_RUN, False, str(exc), exc)
    if faults or state in (TableState.LATCHED, TableState.HOLD) or link is not LinkState.UP:
        return Check(SIM_RUN, False, worded_text(
            "after %(seconds)s s: state %(state)s, reader %(link)s, faults %(faults)s", seconds=f"{seconds:g}",
            state=state.value, link=link.name, faults=", ".join(faults) or "-"))
    return Check(SIM_RUN, True, worded_text("%(seconds)s s at real time: state %(state)s, reader up, no fault",
                                            seconds=f"{seconds:g}", state=state.value))


def check_os(root: Path, say: Callable[[str], str] = str) -> list[str]:
    """What the operating system lacks against power cuts (reported, not failed); ``say`` as for
    :func:`~firmware.release.os_checks.format_report`."""
    from firmware.release.os_checks import check_table_os, format_report, missing

    checks = check_table_os(root)
    return format_report(missing(checks), say=say).splitlines() if missing(checks) else []


def run_selftest(args: argparse.Namespace, run_for: Callable[[float], tuple]) -> list[Check]:
    """``run_for(seconds)``: the service against the simulated table (see :func:`check_sim_run`)."""
    checks = [check_imports(), check_config(args), check_database(args.state or Path("/var/lib/mjtable/table.db"))]
    if args.sim_seconds > 0:
        checks.append(check_sim_run(run_for, args.sim_seconds))
    return checks
