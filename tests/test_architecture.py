"""The shape of the code is checked, and the check can fail: import-linter's contracts (``.importlinter``).

``make lint`` runs them on the tree; here they run on the tree as it is
(all kept), and on a copy of it with one import that goes up a layer, one
that makes a package of the firmware import hal, and one that makes two
packages import each other: each breaks the contract named for it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(tree: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(tree))
    return subprocess.run([str(LINT), "--no-cache", "--config", str(tree / ".importlinter")], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=120)


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    for name in ("firmware", "hal", "sim", "parlour"):
        shutil.copytree(ROOT / name, tree / name, ignore=shutil.ignore_patterns("__pycache__", "static", "defaults"))
    shutil.copy(ROOT / ".importlinter", tree / ".importlinter")
    return tree


def _add_import(tree: Path, module: str, line: str) -> None:
    path = tree / (module.replace(".", "/") + ".py")
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition("from __future__ import annotations\n")
    path.write_text(head + "from __future__ import annotations\n" + line + "\n" + rest, encoding="utf-8")


def test_the_tree_keeps_every_contract():
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "8 kept, 0 broken" in result.stdout


@pytest.mark.parametrize("module, line, broken", [
    ("firmware.tiles.tile", "import firmware.controller.controller", "kernel < domain"),
    ("firmware.controller.lamps", "import firmware.game.status", "kernel < domain"),
    ("firmware.store.outbox", "import firmware.fleet.link", "kernel < domain"),
    ("firmware.mechanisms.panel", "import hal.gpio", "only the composition root"),
    ("firmware.cli.sim_cmd", "import sim.table_run", "only the composition root"),
    ("hal.gpio", "import firmware.controller.controller", "hal is the hardware layer"),
    ("firmware.web.guards", "import firmware.web.app", "no two packages import each other"),
    ("parlour.core.points", "import sqlalchemy", "parlour's core is pure"),
    ("parlour.core.standings", "import parlour.store.facts_store", "core < store"),
    ("firmware.fleet.consumer", "import parlour.core.event", "the table's firmware never imports"),
])
def test_an_import_that_breaks_the_shape_fails_the_lint(tmp_path, module, line, broken):
    tree = _copy(tmp_path)
    assert _lint(tree).returncode == 0
    _add_import(tree, module, line)
    result = _lint(tree)
    assert result.returncode != 0
    broken_lines = result.stdout[result.stdout.index("Broken contracts"):]
    assert broken in broken_lines, result.stdout[-2000:]
