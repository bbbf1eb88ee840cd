"""The simulated table's pieces the command line drives: runs, the bench harness, faults, reports, tools.

``mjtable sim``, ``diag --sim``, ``diag reader --sim``, ``sim --fleet`` and
``reader-sim`` run the simulated table (``sim/``); they reach it through
this module, so that nothing else in ``firmware/`` names ``sim``.  A run
(:class:`SimRun`) builds its table through :func:`firmware.root.table.build_table`
with the ``SIM`` profile, the bench harness (:class:`SimTable`) through
:func:`firmware.root.table.build_bench`.  Each piece is imported when it is
first asked for (PEP 562): ``mjtable sim`` does not load the fleet's link, the
web page or the reader's pseudo-terminal unless it uses them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim.faults import check_fits_run, parse_fault
    from sim.fleet_run import FleetSim, table_ids
    from sim.fleet_run import summary_lines as fleet_summary_lines
    from sim.harness import SimTable
    from sim.pacer import Pacer, Stopwatch
    from sim.reader_pty import PtyReader
    from sim.report import build_report, final_line, summary_lines
    from sim.resume import check_resume
    from sim.shuffle_bias import parse_shuffle_bias
    from sim.table_run import SimRun
    from sim.tileset import SimTile, generated_set
    from sim.virtual_loop import SimTimeout
    from sim.wear import parse_wear
    from sim.web_page import SimWebPage

# each name: (its module, its name there)
_WHERE = {"check_fits_run": ("sim.faults", "check_fits_run"), "parse_fault": ("sim.faults", "parse_fault"),
          "FleetSim": ("sim.fleet_run", "FleetSim"), "table_ids": ("sim.fleet_run", "table_ids"),
          "fleet_summary_lines": ("sim.fleet_run", "summary_lines"), "SimTable": ("sim.harness", "SimTable"),
          "Pacer": ("sim.pacer", "Pacer"), "Stopwatch": ("sim.pacer", "Stopwatch"),
          "PtyReader": ("sim.reader_pty", "PtyReader"), "build_report": ("sim.report", "build_report"),
          "final_line": ("sim.report", "final_line"), "summary_lines": ("sim.report", "summary_lines"),
          "check_resume": ("sim.resume", "check_resume"),
          "parse_shuffle_bias": ("sim.shuffle_bias", "parse_shuffle_bias"),
          "SimRun": ("sim.table_run", "SimRun"), "SimTile": ("sim.tileset", "SimTile"),
          "generated_set": ("sim.tileset", "generated_set"), "SimTimeout": ("sim.virtual_loop", "SimTimeout"),
          "parse_wear": ("sim.wear", "parse_wear"), "SimWebPage": ("sim.web_page", "SimWebPage")}

__all__ = ["FleetSim", "Pacer", "PtyReader", "SimRun", "SimTable", "SimTile", "SimTimeout", "SimWebPage",
           "Stopwatch", "build_report", "check_fits_run", "check_resume", "final_line",
           "fleet_summary_lines", "generated_set", "parse_fault", "parse_shuffle_bias", "parse_wear",
           "summary_lines", "table_ids"]


def __getattr__(name: str) -> Any:
    try:
        module, attr = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value             # (asked once: the next time it is an ordinary name of this module)
    return value
