"""Committed walls, end to end: ``mjtable sim --hands 200`` records a commitment and a reveal for every hand, ``mjtable
verify`` passes all of them from the database, and one tile altered in one record fails it (``-m slow``: the 200
hands take about two minutes; ``make test`` runs the same with 12)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 1800


def _mjtable(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "firmware.cli.main", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=TIMEOUT_S, env=dict(os.environ, PYTHONPATH=str(ROOT)))


def _alter_one_tile(db: Path, hand: int) -> str:
    """One drawn tile of one hand's record changed in the file, as a tamperer with the card would; the new line."""
    con = sqlite3.connect(db)
    value, = con.execute("SELECT record FROM hand_results WHERE hand = ?", (hand,)).fetchone()
    packed = isinstance(value, bytes)
    record = json.loads(zlib.decompress(value).decode() if packed else value)
    actions = record["actions"]
    i = next(i for i, a in enumerate(actions) if a.split()[1:2] == ["draw"] and i > 10)
    side, _, tile = actions[i].split()
    actions[i] = f"{side} draw {'5p' if tile != '5p' else '6p'}"
    text = json.dumps(record, separators=(",", ":"))
    con.execute("UPDATE hand_results SET record = ? WHERE hand = ?", (zlib.compress(text.encode()) if packed else text,
                                                                      hand))
    con.commit()
    con.close()
    return actions[i]


def _acceptance(tmp_path: Path, hands: int) -> None:
    db = tmp_path / "table.db"
    played = _mjtable("sim", "--hands", str(hands), "--state", str(db), "--quiet")
    assert played.returncode == 0, played.stderr[-2000:]
    con = sqlite3.connect(db)
    sealed = con.execute("SELECT count(*) FROM hand_seals s JOIN hand_results r ON r.hand = s.hand").fetchone()[0]
    con.close()
    assert sealed == hands                                 # a commitment and a reveal for every hand
    verified = _mjtable("verify", str(db))
    assert verified.returncode == 0, verified.stdout[-2000:] + verified.stderr[-2000:]
    lines = verified.stdout.splitlines()
    assert len(lines) == hands + 1 and all(" ok " in line for line in lines[:-1])
    assert lines[-1] == f"{hands} hands: {hands} verified, 0 failed, 0 not revealed yet"
    _alter_one_tile(db, hands // 2)
    tampered = _mjtable("verify", str(db), "--quiet")
    assert tampered.returncode == 1 and "Traceback" not in tampered.stderr
    failed = [line for line in tampered.stdout.splitlines() if "FAILED" in line]
    assert len(failed) == 1 and failed[0].startswith(f"hand {hands // 2:>4}") and "the walls give" in failed[0]
    assert tampered.stdout.splitlines()[-1] == f"{hands} hands: {hands - 1} verified, 1 failed, 0 not revealed yet"


def test_a_short_game_is_verified_and_one_altered_tile_fails_it(tmp_path):
    _acceptance(tmp_path, 12)


@pytest.mark.slow
def test_200_hands_are_verified_and_one_altered_tile_fails_them(tmp_path):
    _acceptance(tmp_path, 200)
