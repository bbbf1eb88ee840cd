"""Tile registry files: the shipped simulator sets, enrollment round trip, and every kind of bad file."""

import pytest

from firmware.config import default_table_path, load_table_config
from firmware.faults import ConfigError
from firmware.reader.registry import (TileRegistry, load_registry, load_table_registry, read_set_file,
                                      write_set_file)
from firmware.tiles.sets import TILE_SETS
from firmware.tiles.tile import parse_one
from sim.tileset import generated_set


def test_shipped_simulator_sets_are_the_generated_registries():
    cfg = load_table_config(default_table_path())
    registry = load_table_registry(cfg)
    for set_id in ("A", "B"):
        assert [(t.uid, t.kind) for t in registry.sets[set_id]] == generated_set(set_id)


def test_write_then_read_round_trip(tmp_path):
    tiles = generated_set("C")
    write_set_file(tmp_path / "c.csv", "C", tiles)
    assert read_set_file(tmp_path / "c.csv", "C") == tiles
    registry = load_registry({"C": tmp_path / "c.csv"})
    assert registry.lookup(tiles[5][0]).kind == tiles[5][1]


def _write(tmp_path, rows, header="uid,set,tile"):
    path = tmp_path / "a.csv"
    path.write_text("\n".join([header] + rows) + "\n")
    return path


def _rows(tiles, set_id="A"):
    from firmware.tiles.tile import code
    return [f"{uid.hex()},{set_id},{code(kind)}" for uid, kind in tiles]


@pytest.mark.parametrize("mutate, message", [
    (lambda rows: rows[:3] + [rows[1]] + rows[4:], "already on line 3"),
    (lambda rows: ["zz" + rows[0][2:]] + rows[1:], "line 2: UID 'zz"),
    (lambda rows: ["0104" + rows[0][4:]] + rows[1:], "not an ISO 15693 tag"),
    (lambda rows: [rows[0].replace(",A,", ",B,")] + rows[1:], "this file is set A"),
    (lambda rows: [rows[0].replace(",1m", ",1x")] + rows[1:], "line 2"),
    (lambda rows: [rows[0] + ",extra"] + rows[1:], "expected uid,set,tile"),
    (lambda rows: [rows[0].replace(",1m", ",2m")] + rows[1:], "not a standard set"),
    (lambda rows: rows[:-1], "not a standard set"),
])
def test_bad_registry_files_name_file_and_line(tmp_path, mutate, message):
    path = _write(tmp_path, mutate(_rows(generated_set("A"))))
    with pytest.raises(ConfigError) as err:
        load_registry({"A": path})
    assert str(path) in str(err.value) and message in str(err.value)


def test_missing_header_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="header"):
        load_registry({"A": _write(tmp_path, _rows(generated_set("A")), header="id,face")})
    # a set whose file does not exist yet is declared, not enrolled (tests/firmware/reader/test_counting_only.py)
    registry = load_registry({"A": tmp_path / "none.csv"})
    assert list(registry.sets) == ["A"] and registry.unenrolled == ["A"] and not registry.enrolled("A")


def test_a_uid_in_two_sets_is_refused():
    registry = TileRegistry()
    registry.add_set("A", generated_set("A"))
    with pytest.raises(ConfigError, match="registered twice"):
        registry.add_set("B", generated_set("A"))


def test_smaller_standard_sets_are_valid_and_must_cover_the_table_set():
    registry = TileRegistry()
    tiles_136 = [(uid, kind) for uid, kind in generated_set("A") if kind < 34]
    registry.add_set("A", tiles_136)
    registry.check_covers("A", TILE_SETS[112], "x")
    with pytest.raises(ConfigError, match="short of 1f"):
        registry.check_covers("A", TILE_SETS[144], "x")
    assert parse_one("C") in {t.kind for t in registry.sets["A"]}
