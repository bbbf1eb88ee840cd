"""The simulated table's pieces the command line drives: runs, the bench harness, faults, reports, tools.

``mjtable sim``, ``diag --sim``, ``diag reader --sim``, ``sim --fleet`` and
``reader-sim`` run the simulated table (``sim/``); they reach it through
this module, so that nothing else in ``firmware/`` names ``sim``.  A run
(:class:`SimRun`) builds its table through :func:`firmware.root.table.build_table`
with the ``SIM`` profile, the bench harness (:class:`SimTable`) through
:func:`firmware.root.table.build_bench`.
"""

from __future__ import annotations

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

__all__ = ["FleetSim", "Pacer", "PtyReader", "SimRun", "SimTable", "SimTile", "SimTimeout", "SimWebPage",
           "Stopwatch", "build_report", "check_fits_run", "check_resume", "final_line",
           "fleet_summary_lines", "generated_set", "parse_fault", "parse_shuffle_bias", "parse_wear",
           "summary_lines", "table_ids"]
