"""``mjtable verify``: a line per hand and a summary; exit 0 when every hand checks, 1 when one does not, 2 for a
file that is neither a table database nor exported hands."""

import json
import sqlite3
import zlib

import pytest

from firmware.cli.main import main
from tests.support.sealed_run import sealed_game


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    path = tmp_path_factory.mktemp("verify") / "table.db"
    sealed_game(path, hands=3, seed=2)
    return path.read_bytes()


@pytest.fixture
def db(played, tmp_path):
    path = tmp_path / "table.db"
    path.write_bytes(played)
    return path


def _verify(capsys, *argv):
    """(exit status, the hands' lines and the summary (a failure's further problems left out), stderr)"""
    code = main(["verify", *map(str, argv)])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, [line for line in out.out.splitlines() if not line.startswith(" ")], out.err


def _alter_record(path, hand, edit):
    """What a tamperer with the card would do: rewrite one hand's record in the file."""
    db = sqlite3.connect(path)
    value, = db.execute("SELECT record FROM hand_results WHERE hand = ?", (hand,)).fetchone()
    text = zlib.decompress(value).decode() if isinstance(value, bytes) else value
    record = json.loads(text)
    edit(record)
    new = json.dumps(record, separators=(",", ":"))
    db.execute("UPDATE hand_results SET record = ? WHERE hand = ?",
               (zlib.compress(new.encode()) if isinstance(value, bytes) else new, hand))
    db.commit()
    db.close()


def test_every_hand_of_a_database_verifies(db, capsys):
    code, lines, _ = _verify(capsys, db)
    assert code == 0
    assert [line.split()[:2] for line in lines[:3]] == [["hand", "1"], ["hand", "2"], ["hand", "3"]]
    assert all(" ok " in line and "draws match the revealed walls" in line for line in lines[:3])
    assert lines[-1] == "3 hands: 3 verified, 0 failed, 0 not revealed yet"


def test_one_tile_drawn_altered_in_one_record_fails_that_hand(db, capsys):
    def edit(record):
        actions = record["actions"]
        i = next(i for i, a in enumerate(actions) if a.split()[1:2] == ["draw"] and i > 10)
        side, _, tile = actions[i].split()
        actions[i] = f"{side} draw {'9s' if tile != '9s' else '8s'}"
    _alter_record(db, 2, edit)
    code, lines, _ = _verify(capsys, db)
    assert code == 1
    assert " ok " in lines[0] and " ok " in lines[2]
    assert lines[1].startswith("hand    2  set") and "FAILED" in lines[1] and "the walls give" in lines[1]
    assert lines[-1] == "3 hands: 2 verified, 1 failed, 0 not revealed yet"


def test_one_dealt_tile_altered_in_one_record_fails(db, capsys):
    def edit(record):
        side, tiles = next(iter(record["dealt"].items()))
        record["dealt"][side] = ("1m" if not tiles.startswith("1m") else "2m") + tiles[2:] \
            if tiles[1] in "mps" else "1m" + tiles[1:]
    _alter_record(db, 1, edit)
    code, lines, _ = _verify(capsys, db)
    assert code == 1 and "FAILED" in lines[0] and "was dealt" in lines[0]


def test_a_tile_of_the_revealed_walls_or_the_dice_altered_in_the_file_fails(db, capsys):
    con = sqlite3.connect(db)
    preimage, = con.execute("SELECT preimage FROM hand_seals WHERE hand = 3").fetchone()
    side = preimage.split("\n")[3]
    tiles = side.split(" ", 2)[2].split(",")
    tiles[4] = "E" if tiles[4] != "E" else "S"
    con.execute("UPDATE hand_seals SET preimage = ? WHERE hand = 3",
                (preimage.replace(side, "side 0 " + ",".join(tiles)),))
    dice, = con.execute("SELECT dice FROM hands WHERE hand = 1").fetchone()
    con.execute("UPDATE hands SET dice = ? WHERE hand = 1", (json.dumps([7 - d for d in json.loads(dice)]),))
    con.commit()
    con.close()
    code, lines, _ = _verify(capsys, db)
    assert code == 1
    assert "FAILED" in lines[0] and "FAILED" in lines[2] and "does not hash to the commitment" in lines[2]
    assert lines[-1] == "3 hands: 1 verified, 2 failed, 0 not revealed yet"


def test_a_hand_whose_seal_was_removed_fails(db, capsys):
    con = sqlite3.connect(db)
    con.execute("DELETE FROM hand_seals WHERE hand = 2")
    con.commit()
    con.close()
    code, lines, _ = _verify(capsys, db)
    assert code == 1 and "no commitment was recorded" in lines[1]


def test_exported_hands_verify_elsewhere_and_an_edited_line_fails(db, tmp_path, capsys):
    export = tmp_path / "hands.jsonl"
    assert _verify(capsys, db, "--export", export)[0] == 0
    code, lines, _ = _verify(capsys, export, "--quiet")
    assert code == 0 and lines == ["3 hands: 3 verified, 0 failed, 0 not revealed yet"]
    rows = [json.loads(line) for line in export.read_text().splitlines()]
    rows[0]["dice"] = [7 - d for d in rows[0]["dice"]]
    export.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, lines, _ = _verify(capsys, export, "-q")
    assert code == 1 and len(lines) == 2 and lines[0].startswith("hand    1") and "FAILED" in lines[0]


def test_several_paths_name_their_file(db, tmp_path, capsys):
    other = tmp_path / "other.db"
    other.write_bytes(db.read_bytes())
    code, lines, _ = _verify(capsys, db, other)
    assert code == 0 and lines[0].startswith(f"{db}: hand") and lines[3].startswith(f"{other}: hand")
    assert lines[-1] == "6 hands: 6 verified, 0 failed, 0 not revealed yet"


@pytest.mark.parametrize("content, words", [
    (b"not json\n", "not an exported hand"),
    (b'{"hand": 1}\n', "' is missing"),
    (b"\xff\xfe\n", "not text"),
])
def test_a_file_that_is_neither_is_one_clear_error(tmp_path, capsys, content, words):
    path = tmp_path / "hands.jsonl"
    path.write_bytes(content)
    code, _, err = _verify(capsys, path)
    assert code == 2 and words in err and str(path) in err


def test_a_missing_file_is_one_clear_error(tmp_path, capsys):
    code, _, err = _verify(capsys, tmp_path / "none.db")
    assert code == 2 and "No such file" in err


def test_the_database_is_only_read(db, capsys):
    before = db.read_bytes()
    code, lines, _ = _verify(capsys, db)
    assert code == 0 and lines[-1] == "3 hands: 3 verified, 0 failed, 0 not revealed yet"
    assert db.read_bytes() == before


def test_a_database_of_a_newer_release_is_one_clear_error(db, capsys):
    con = sqlite3.connect(db)
    con.execute("PRAGMA user_version = 99")
    con.commit()
    con.close()
    code, _, err = _verify(capsys, db)
    assert code == 2 and str(db) in err and "not a table database this release can read" in err
