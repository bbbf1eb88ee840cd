"""The memory curve's peak is the worker's own: a worker started by a benchmark process that had grown large
(``make bench`` runs the scoring rows, some 250 MB, before the simulator's) must not read that process's peak
as its own, which made the curve's ratio 1.0 whatever the curve did."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
GROWN_MB = 300

PROBE = ("import json, resource; from bench.simspeed import peak_mb; "
         "print(json.dumps([peak_mb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024]))")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="the peak is read from Linux's /proc")
def test_a_worker_of_a_grown_process_reports_its_own_peak():
    grown = b"x" * (GROWN_MB << 20)         # (written, so resident: the parent's peak is now above GROWN_MB)
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    del grown
    own, inherited = json.loads(out.stdout)
    assert inherited >= GROWN_MB            # (what the curve read before: the parent's peak carried over)
    assert own < GROWN_MB / 3, own
