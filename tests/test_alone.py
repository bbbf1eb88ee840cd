"""Under pytest-xdist a test marked ``alone`` runs while no other test does (tests/conftest.py's turn)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Each test writes when it ran.  The ``alone`` ones take long enough that a neighbour would overlap them; the
# ``free`` ones as long, outside the turn (the control: they do overlap others, so the check can fail).
_TESTS = '''
import json, os, time
from pathlib import Path
import pytest

def _ran(name, seconds):
    started = time.monotonic()
    time.sleep(seconds)
    out = Path(os.environ["RANGES"]) / f"{name}.json"
    out.write_text(json.dumps([started, time.monotonic(), os.environ.get("PYTEST_XDIST_WORKER")]))

@pytest.mark.parametrize("n", range(12))
def test_shared(n):
    _ran(f"shared{n}", 0.1)

@pytest.mark.alone
@pytest.mark.parametrize("n", range(3))
def test_alone(n):
    _ran(f"alone{n}", 0.3)

@pytest.mark.free
@pytest.mark.parametrize("n", range(2))
def test_free(n):
    _ran(f"free{n}", 0.6)
'''

_CONFTEST = '''
import pytest
from tests.conftest import _turn

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if item.get_closest_marker("free"):
        yield
        return
    with _turn(item.get_closest_marker("alone") is not None):
        yield
'''

_INI = '''[pytest]
markers =
    alone: alone
    free: free
'''


def _needs_xdist() -> None:
    """pytest-xdist comes with the ``test`` extra: without it skip on a developer's machine, fail under CI."""
    if importlib.util.find_spec("xdist") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("pytest-xdist is missing on CI (the test extra installs it)")
        pytest.skip("pytest-xdist is not installed (pip install -e '.[test]')")


def _overlapping(ranges: dict[str, tuple[float, float, str]], names: str, others: tuple[str, ...]) -> list:
    return [(a, b) for a, (a0, a1, _) in ranges.items() if a.startswith(names)
            for b, (b0, b1, _) in ranges.items() if b != a and b.startswith(others) and b0 < a1 and a0 < b1]


def test_an_alone_test_overlaps_no_other_on_two_workers(tmp_path):
    _needs_xdist()
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_turns.py").write_text(_TESTS)
    (suite / "conftest.py").write_text(_CONFTEST)
    (suite / "pytest.ini").write_text(_INI)
    out = tmp_path / "ranges"
    out.mkdir()
    env = dict(os.environ, RANGES=str(out),
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:playwright", "-n2", str(suite)]
    run = subprocess.run(argv, cwd=suite, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    ranges = {p.stem: tuple(json.loads(p.read_text())) for p in out.iterdir()}
    assert len(ranges) == 17 and {w for _, _, w in ranges.values()} == {"gw0", "gw1"}     # (both workers ran)
    assert _overlapping(ranges, "alone", ("shared", "alone")) == []
    assert _overlapping(ranges, "free", ("shared", "alone", "free")) != []       # (outside the turn: they overlap)
