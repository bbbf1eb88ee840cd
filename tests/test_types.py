"""The scorer's and the hand analysis's annotations are checked (mypy, as ``make lint`` runs it), and the check
can fail: on the tree as it is (clean), and on a copy where one function says it returns a list of the (fan,
count) pairs it really returns as a tuple, the mistake the check was brought in for."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MYPY = Path(sys.executable).with_name("mypy")


def _mypy(tree: Path, cache: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(MYPY), "--cache-dir", str(cache), "--config-file", str(tree / "setup.cfg")],
                          cwd=tree, capture_output=True, text=True, timeout=300)


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "firmware", tree / "firmware",
                    ignore=shutil.ignore_patterns("__pycache__", "static", "locale", "templates"))
    shutil.copy(ROOT / "setup.cfg", tree / "setup.cfg")
    return tree


def test_the_scorer_and_the_hand_analysis_type_check(tmp_path):
    result = _mypy(ROOT, tmp_path / "cache")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Success: no issues found" in result.stdout


def test_an_annotation_that_lies_fails_the_check(tmp_path):
    tree = _copy(tmp_path)
    scorer = tree / "firmware" / "rules" / "mcr" / "scorer.py"
    text = scorer.read_text(encoding="utf-8")
    true = "last_tile: bool) -> FanCounts:"
    assert true in text
    scorer.write_text(text.replace(true, "last_tile: bool) -> list[tuple[Fan, int]]:"), encoding="utf-8")
    result = _mypy(tree, tmp_path / "cache")
    assert result.returncode == 1, result.stdout[-3000:]
    assert "scorer.py" in result.stdout and "Incompatible return value type" in result.stdout
