"""Tile sets declared but not enrolled: the registry knows their letters, the walls are counted, not verified."""

from __future__ import annotations

import logging
import os
import re
from collections import Counter
from pathlib import Path

import pytest

from firmware.config import TableConfig, default_table_path, load_table_config
from firmware.faults import ConfigError, FaultCode
from firmware.game.pad import read_pad
from firmware.reader.registry import TileRegistry, load_registry, load_table_registry
from firmware.reader.verify import Defect, verify_wall
from firmware.reader.wall_map import WallMap
from firmware.tiles.sets import TILE_SETS
from firmware.tiles.wall import BOTTOM, TOP, Position
from sim.table_run import SimRun
from sim.tileset import generated_set
from sim.virtual_loop import VirtualLoop
from sim.world import TableWorld

SHIPPED_TILES = default_table_path().parent.parent / "tiles"


def _model(tmp_path: Path, enrolled: tuple[str, ...] = ()) -> TableConfig:
    """The shipped model copied to ``tmp_path/tables/table.toml`` with a real table's registry lines
    (``../tiles/A.csv``, ``../tiles/B.csv``); the sets in ``enrolled`` get the simulator's files there."""
    text = default_table_path().read_text(encoding="utf-8")
    text, n = re.subn(r'^([AB]) = "\.\./tiles/sim-([AB])\.csv"$', r'\1 = "../tiles/\2.csv"', text, flags=re.M)
    assert n == 2, "the shipped model's [reader.registry] lines changed"
    (tmp_path / "tables").mkdir()
    (tmp_path / "tiles").mkdir()
    model = tmp_path / "tables" / "table.toml"
    model.write_text(text, encoding="utf-8")
    for set_id in enrolled:
        (tmp_path / "tiles" / f"{set_id}.csv").write_text(
            (SHIPPED_TILES / f"sim-{set_id}.csv").read_text(encoding="utf-8"), encoding="utf-8")
    return load_table_config(model)


def _tiles_file(tmp_path: Path, set_id: str) -> str:
    return os.path.normpath(tmp_path / "tiles" / f"{set_id}.csv")


# -- the registry -------------------------------------------------------------------------------------
def test_missing_registry_files_declare_the_sets_without_enrolling_them(tmp_path):
    registry = load_table_registry(_model(tmp_path))
    assert list(registry.sets) == ["A", "B"]                 # the controller still tracks both sets
    assert registry.unenrolled == ["A", "B"]
    assert not registry.enrolled("A") and not registry.enrolled("B")
    assert registry.counted_only("A") and registry.counted_only("B") and registry.counted_only("?")
    assert registry.by_uid == {} and registry.lookup(generated_set("A")[0][0]) is None
    hint = registry.enrol_hint()
    assert "\n" not in hint
    assert hint.startswith("tile sets A, B not enrolled: walls are counted, not verified; enrol each set with: "
                           f"mjtable diag enroll --set A --antenna 0 --out {_tiles_file(tmp_path, 'A')}")
    assert f"mjtable diag enroll --set B --antenna 0 --out {_tiles_file(tmp_path, 'B')}" in hint


def test_one_set_enrolled_the_other_declared(tmp_path):
    registry = load_table_registry(_model(tmp_path, enrolled=("A",)))
    assert list(registry.sets) == ["A", "B"] and registry.unenrolled == ["B"]
    assert registry.enrolled("A") and not registry.counted_only("A")
    assert registry.counted_only("B") and not registry.counted_only("?")     # an unknown set is not excused
    assert registry.lookup(generated_set("A")[0][0]).set_id == "A"
    assert registry.enrol_hint() == ("tile set B not enrolled: its walls are counted, not verified; enrol it with: "
                                     f"mjtable diag enroll --set B --antenna 0 --out {_tiles_file(tmp_path, 'B')}")


def test_the_shipped_model_has_every_set_enrolled():
    registry = load_table_registry(load_table_config(default_table_path()))
    assert registry.unenrolled == [] and registry.enrol_hint() == ""
    assert not registry.counted_only("A") and not registry.counted_only("B")


def test_an_existing_malformed_file_is_still_an_error(tmp_path):
    cfg = _model(tmp_path)
    rows = (SHIPPED_TILES / "sim-A.csv").read_text(encoding="utf-8").splitlines()
    rows[3] = rows[3].replace(",1m", ",1x")
    bad = tmp_path / "tiles" / "A.csv"
    bad.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_table_registry(cfg)
    assert str(bad) in str(err.value) and "line 4" in str(err.value)


def test_an_unreadable_file_is_still_an_error(tmp_path):
    (tmp_path / "a.csv").mkdir()                            # there, but not a file
    with pytest.raises(ConfigError, match="cannot read"):
        load_registry({"A": tmp_path / "a.csv"})


def test_no_set_at_all_counts_every_wall():
    registry = TileRegistry()
    assert registry.counted_only("A") and registry.counted_only("?")
    assert "no tile set is enrolled" in registry.enrol_hint()


# -- verification -------------------------------------------------------------------------------------
def _map(uid_of, per_side: int = 36, counted: list[int] | None = None) -> WallMap:
    uids: dict[Position, bytes | None] = {}
    for side in range(4):
        for stack in range(1, per_side // 2 + 1):
            for level in (BOTTOM, TOP):
                uids[Position(side, stack, level)] = uid_of(side, stack, level)
    return WallMap(per_side, uids, counted or [per_side] * 4)


def _stranger(side: int, stack: int, level: str) -> bytes:
    return bytes([0xE0, 0x07, side, stack, 0 if level == BOTTOM else 1, 0, 0, 1])


def test_a_set_not_enrolled_is_counted_only():
    registry = TileRegistry()
    registry.add_set("A", generated_set("A"))
    registry.declare("B", "/etc/mjtable/tiles/B.csv")
    result = verify_wall(_map(_stranger), registry, "B", TILE_SETS[144])
    assert result.may_rise and result.problems == [] and result.fault_code is None
    assert not result.verified and result.mode == "counted"
    assert all(result.wall[p] is None for p in result.wall.positions())        # the deal knows no tile
    assert "counted only" in result.summary() and "not enrolled" in result.warnings[0]
    # the same tags in set A's walls: tile by tile, every one is unknown
    verified = verify_wall(_map(_stranger), registry, "A", TILE_SETS[144])
    assert verified.verified and not verified.may_rise and verified.fault_code is FaultCode.E82


def test_counting_still_catches_counts_and_lost_reads():
    registry = TileRegistry()
    registry.declare("A", "/etc/mjtable/tiles/A.csv")
    short = verify_wall(_map(_stranger, counted=[36, 35, 36, 36]), registry, "A", TILE_SETS[144])
    assert not short.may_rise and [p.defect for p in short.problems] == [Defect.SIDE_COUNT]
    assert short.fault_code is FaultCode.E82 and not short.verified

    def lost(side: int, stack: int, level: str) -> bytes | None:
        return None if (side, stack) == (2, 5) else _stranger(side, stack, level)
    casual = verify_wall(_map(lost), registry, "A", TILE_SETS[144])
    assert casual.may_rise and casual.fault_code is FaultCode.E83 and not casual.verified
    competition = verify_wall(_map(lost), registry, "A", TILE_SETS[144], competition=True)
    assert not competition.may_rise and competition.fault_code is FaultCode.E83


def test_a_pad_cannot_name_the_tiles_of_a_set_not_enrolled():
    registry = TileRegistry()
    registry.declare("B", "/etc/mjtable/tiles/B.csv")
    reads = []
    read_pad(None, 2, registry, "B", reads.append)          # (the reader is not even asked)
    assert not reads[0].ok and "set B is not enrolled" in reads[0].problem


# -- the simulated table ----------------------------------------------------------------------------------
def test_the_simulator_makes_the_tiles_of_a_set_not_enrolled_from_the_seed(tmp_path):
    cfg = _model(tmp_path, enrolled=("A",))
    world = TableWorld(cfg, VirtualLoop(), seed=5)
    again = TableWorld(cfg, VirtualLoop(), seed=5)
    other = TableWorld(cfg, VirtualLoop(), seed=6)
    assert world.registry.unenrolled == ["B"]
    b = world.sets["B"]
    assert [t.uid for t in b] == [t.uid for t in again.sets["B"]] != [t.uid for t in other.sets["B"]]
    assert [(t.uid, t.kind) for t in world.sets["A"]] == generated_set("A")        # the enrolled file's tiles
    uids = [t.uid for tiles in world.sets.values() for t in tiles]
    assert len(set(uids)) == len(uids) == 288
    assert all(len(u) == 8 and u[0] == 0xE0 for u in uids)
    assert Counter(t.kind for t in b) == Counter(TILE_SETS[144].all_tiles())
    assert all(world.registry.lookup(t.uid) is None and world.physical.lookup(t.uid).set_id == "B" for t in b)


def _e8x(run) -> list[str]:
    return [f.code.value for f in run.faults() if f.code.value.startswith("E8")]


def test_a_game_on_sets_not_enrolled_is_counted_and_warned_once(tmp_path, caplog):
    cfg = _model(tmp_path)
    with caplog.at_level(logging.WARNING, logger="firmware.controller.controller"):
        run = SimRun(cfg=cfg, hands=2, play=True)
        try:
            assert run.run(timeout_s=4000)
            walls = [e.data for e in run.events if e.topic == "wall.verified"]
            assert len(walls) >= 2 and {w["set_id"] for w in walls} == {"A", "B"}
            assert all(w["may_rise"] and not w["verified"] and w["mode"] == "counted" and not w["problems"]
                       for w in walls)
            assert _e8x(run) == [] and not [e for e in run.events if e.topic == "walls.rejected"]
            assert [e.data["wall"] for e in run.events if e.topic == "deal"] == ["counted", "counted"]
            hands = run.store.hands()
            assert [h["set_id"] for h in hands] == ["A", "B"]
            assert hands[0]["result"] == {"result": "ended", "wall": "counted"}
            assert run.record.walls_counted == len(walls) and run.record.walls_verified == 0
            assert run.session.scoreboard.conserved()
            state = _diag_state(run)
            assert state["enrol"] == run.world.registry.enrol_hint() and "not enrolled" in state["enrol"]
            assert set(state["walls"].values()) == {"counted"}
        finally:
            run.close()
    hints = [r for r in caplog.records if "not enrolled" in r.getMessage()]
    assert len(hints) == 1 and hints[0].levelno == logging.WARNING
    assert _tiles_file(tmp_path, "A") in hints[0].getMessage()


def test_set_a_enrolled_is_verified_set_b_is_counted(tmp_path):
    run = SimRun(cfg=_model(tmp_path, enrolled=("A",)), hands=3, play=True)
    try:
        assert run.run(timeout_s=5000)
        modes = {(e.data["set_id"], e.data["mode"]) for e in run.events if e.topic == "wall.verified"}
        assert modes == {("A", "verified"), ("B", "counted")}
        assert all(e.data["may_rise"] for e in run.events if e.topic == "wall.verified")
        assert _e8x(run) == []
        deals = [(e.data["set_id"], e.data["wall"]) for e in run.events if e.topic == "deal"]
        assert deals == [("A", "verified"), ("B", "counted"), ("A", "verified")]
        a_deal = next(e for e in run.events if e.topic == "deal" and e.data["set_id"] == "A")
        assert all("?" not in hand for hand in a_deal.data["hands"].values())     # A's faces are known
        results = [h["result"] for h in run.store.hands() if h["result"] is not None]
        assert results[:2] == [{"result": "ended"}, {"result": "ended", "wall": "counted"}]
        assert _diag_state(run)["enrol"].startswith("tile set B not enrolled")
    finally:
        run.close()


def test_the_shipped_model_verifies_every_wall_and_does_not_warn(caplog):
    with caplog.at_level(logging.WARNING, logger="firmware.controller.controller"):
        run = SimRun(hands=2, play=True)
        try:
            assert run.run(timeout_s=4000)
            assert {e.data["mode"] for e in run.events if e.topic == "wall.verified"} == {"verified"}
            assert run.record.walls_counted == 0
            assert "enrol" not in _diag_state(run)
        finally:
            run.close()
    assert not [r for r in caplog.records if "not enrolled" in r.getMessage()]


def _diag_state(run) -> dict:
    from firmware.diagnostics.commands import DiagCommands

    answers: list[dict] = []
    DiagCommands(run.session).handle({"cmd": "state"}, answers.append)
    assert answers and answers[0]["ok"]
    return answers[0]
