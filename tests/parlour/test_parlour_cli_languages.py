"""``mjtable tourney`` in Simplified Chinese and English: its help and its lines (the hall's side, the same catalogue).

What the desk refuses (a players file's line, a format, a result, the
database) is said in the same language, its values kept; the JSON
(``--json``, ``export``) is data.
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
    assert out.split("\n")[0].split() == ["名次", "姓名", "积分", "得分", "场数", "轮空"], out
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


def _new(db, players, *more):
    return ["tourney", "new", *db, "--name", "e", "--rules", "mcr", "--players", str(players), "--rounds", "2",
            "--hands-per-round", "4", "--plan-seconds", "1", *more]


def test_the_desks_refusals_in_chinese_and_english(event, capsys):
    db, players = event
    twice = players.parent / "twice.csv"
    twice.write_text("name,team\nA,\nB,\nA,\nC,\n", encoding="utf-8")
    assert main(["--lang", "zh-CN", *_new(db, twice)]) == 2
    assert capsys.readouterr().err.strip() == "mjtable: 选手文件第 4 行：'A' 出现了两次"
    assert main(["--lang", "en", *_new(db, twice)]) == 2
    assert capsys.readouterr().err.strip() == "mjtable: players file line 4: 'A' is there twice"
    blank = players.parent / "blank.csv"
    blank.write_text("name,team\nA,\n\u200b,\n", encoding="utf-8")
    assert main(["--lang", "zh-CN", *_new(db, blank)]) == 2
    assert capsys.readouterr().err.strip() == ("mjtable: 选手文件第 3 行：选手姓名 '\\u200b'："
                                               "须为 1 到 40 个可打印字符，不能只有空格或不可见字符")
    assert main(["--lang", "zh-CN", *_new(db, players, "--advance", "2")]) == 2
    err = capsys.readouterr().err
    assert "属于竞技麻将（--rules competition）：国标麻将各桌得分为 4 / 2 / 1 / 0" in err and "MCR's" not in err, err
    assert main(["--lang", "zh-CN", *_new(db, players)]) == 0
    capsys.readouterr()
    assert main(["--lang", "zh-CN", *_new(db, players)]) == 2
    assert capsys.readouterr().err.strip() == "mjtable: 此数据库中已有名为 'e' 的比赛"
    assert main(["--lang", "zh-CN", "tourney", "seat", *db, "--round", "3"]) == 2
    assert capsys.readouterr().err.strip() == "mjtable: 第 3 轮尚未排座（本比赛为第 1 到 2 轮）"
    (players.parent / "r.json").write_text('{"E": 1, "S": 1, "W": 0, "N": 0}')
    result = ["tourney", "result", *db, "--table", "T1", "--round", "1", str(players.parent / "r.json")]
    assert main(["--lang", "zh-CN", *result]) == 2
    assert capsys.readouterr().err.strip() == ("mjtable: 各家得分之和为 2，不是 0：请核对（若确因罚分如此，加 "
                                               "--unbalanced）")
    assert main(["--lang", "en", *result]) == 2
    assert capsys.readouterr().err.strip() == ("mjtable: the scores sum to 2, not 0: check them (--unbalanced if "
                                               "penalties really make it so)")
    assert main(["--lang", "zh-CN", "tourney", "standings", *db, "--event", "x"]) == 2
    assert capsys.readouterr().err.strip() == "mjtable: 这里没有名为 'x' 的比赛（现有：e）"
    assert main(["--lang", "en", "tourney", "penalty", *db, "--round", "1", "--player", "Z", "--points", "1",
                 "--reason", "r", "--referee", "ana"]) == 2
    assert capsys.readouterr().err.strip() == "mjtable: 'Z' is not a player of e"


def test_a_desks_refusal_keeps_its_english_for_the_log():
    from parlour.core.event import FormatError
    from parlour.desk import read_players

    with pytest.raises(FormatError) as caught:
        read_players("name,team\nA,\nA,\n", teams=False)
    assert str(caught.value) == "players file line 3: 'A' is there twice"
    assert caught.value.template == "players file line %(line)s: %(name)r is there twice"


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
