"""``mjtable tourney`` in Simplified Chinese and English: its help and its lines (the hall's side, the same catalogue).

What the desk refuses (a players file, a format) is the desk's own English
after ``mjtable:``; the JSON (``--json``, ``export``) is data.
"""

from __future__ import annotations

import json
import re

import pytest

from firmware.cli import words
from firmware.cli.main import main

pytest.importorskip("sqlalchemy")
HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def _english_after():
    yield
    words.use("en")


@pytest.fixture
def event(tmp_path):
    (tmp_path / "p.csv").write_text("name,team\n" + "".join(f"P{i},\n" for i in range(8)), encoding="utf-8")
    return ["--db", str(tmp_path / "t.db")], tmp_path / "p.csv"


def test_an_event_in_chinese(event, capsys):
    db, players = event
    assert main(["--lang", "zh-CN", "tourney", "new", *db, "--name", "e", "--rules", "mcr", "--players",
                 str(players), "--rounds", "2", "--hands-per-round", "4", "--plan-seconds", "1"]) == 0
    out = capsys.readouterr().out
    assert re.match(r"e：8 名选手，已排好 2 轮座位（.*）：重复相遇 \d+ 次，下界 \d+", out), out
    assert main(["--lang", "zh-CN", "tourney", "plan", *db]) == 0
    out = capsys.readouterr().out
    assert out.startswith("第 1 轮：T1 E=") and "重复相遇" in out and "round" not in out, out
    assert main(["--lang", "zh-CN", "tourney", "standings", *db]) == 0
    out = capsys.readouterr().out
    assert out.split("\n")[0].split() == ["名次", "姓名", "积分", "得分"], out
    assert main(["--lang", "zh-CN", "tourney", "progress", *db]) == 0
    assert capsys.readouterr().out.startswith("第 1 轮：成绩 0/2，已确认 0\n")
    assert main(["--lang", "zh-CN", "tourney", "progress", *db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["round"] == 1                  # (data stays as it is)
    (players.parent / "r.json").write_text('{"E": 1, "S": -1, "W": 0, "N": 0}')
    assert main(["--lang", "zh-CN", "tourney", "result", *db, "--table", "T1", "--round", "1",
                 str(players.parent / "r.json")]) == 0
    assert capsys.readouterr().out.strip() == "第 1 轮 T1 桌：成绩已保存"
    assert main(["--lang", "en", "tourney", "confirm", *db, "--table", "T1", "--round", "1", "--referee", "ana"]) == 0
    assert capsys.readouterr().out.strip() == "round 1 table T1: confirmed by ana"


def test_tourneys_refusals_in_chinese(event, capsys):
    db, players = event
    with pytest.raises(SystemExit):
        main(["--lang", "zh-CN", "tourney", "new", *db, "--name", "e", "--rules", "mcr", "--players", str(players),
              "--rounds", "2", "--hands-per-round", "4", "--plan-seconds", "-1"])
    err = capsys.readouterr().err
    assert "参数 --plan-seconds：-1：须大于 0 且不超过 3600 秒（参见 mjtable tourney new --help）" in err, err
    latin = players.parent / "latin1.csv"
    latin.write_bytes("name,team\nJos\xe9,\n".encode("latin-1"))
    assert main(["--lang", "zh-CN", "tourney", "new", *db, "--name", "e", "--rules", "mcr", "--players", str(latin),
                 "--rounds", "2", "--hands-per-round", "4"]) == 2
    assert re.search(r"latin1.csv：不是 UTF-8 文本（第 \d+ 字节）；请另存为 UTF-8 CSV", capsys.readouterr().err)


@pytest.mark.parametrize("command", [[], ["new"], ["result"], ["standings"], ["serve"]], ids=lambda c: " ".join(c))
def test_tourneys_help_in_both_languages(command, capsys):
    with pytest.raises(SystemExit):
        main(["--lang", "zh-CN", "tourney", *command, "--help"])
    out = capsys.readouterr().out
    assert out.startswith("用法：mjtable tourney") and "\n选项：\n" in out and HAN.search(out)
    assert "show this help" not in out and "the tournament database" not in out and "print JSON" not in out
    with pytest.raises(SystemExit):
        main(["--lang", "en", "tourney", *command, "--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: mjtable tourney") and not HAN.search(out.replace("竞技麻将", "").replace(
        "标准分", "").replace("替补", ""))
