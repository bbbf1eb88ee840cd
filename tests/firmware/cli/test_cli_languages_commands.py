"""The fleet's commands, ``sim --fleet``'s summary, ``deal`` and ``reader-sim`` in Simplified Chinese and English.

Each command runs with ``--lang zh-CN`` and ``--lang en``: in Chinese its
words are there and no English sentence is left (what stays as it is: table
ids, paths, options, URLs, tile codes, a broker's own reason); in English
the code's own words.
"""

from __future__ import annotations

import json
import re

import pytest

from firmware.cli import words
from firmware.cli.main import main
from tests.support.fleet_rig import TableProcess, wait_for
from tests.support.mosquitto_broker import broker, free_port  # noqa: F401 (the fixture)

HAN = re.compile(r"[\u4e00-\u9fff]")
# what a sentence in Chinese may carry in Latin letters: paths, options, URLs, ids, tile codes, commands
NOT_WORDS = re.compile(r"(\S*/\S*|--[\w-]+|\b[a-z]+://\S+|\bmjtable( \w+)*|\bmosquitto -c\b|\bt\d{2,3}\b|"
                       r"\b(hall1|sim|ack|rebirth|resend_since|session_open|E\d\d)\b|\w+\.(crt|key|pem|pub|conf)\b)")
ENGLISH = re.compile(r"\b[A-Za-z][a-z]+\b[ ,]+\b[A-Za-z][a-z]+\b")     # (URL, SITE, FILE: an argument's name)


def english_left(text: str) -> list[str]:
    """Two English words in a row left in ``text`` once what is no sentence is taken out (an English phrase)."""
    return [m.group(0) for m in ENGLISH.finditer(NOT_WORDS.sub(" ", text))]


@pytest.fixture(autouse=True)
def _english_after():
    yield
    words.use("en")


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_the_check_finds_english_and_passes_chinese():
    assert english_left("mjtable: no such file") == ["no such"]
    assert english_left("牌桌 t01：p/t/t01.crt，p/t/t01.key（两个都复制到牌桌上，[fleet] cert_file 和 key_file）") == []


# -- deal and reader-sim ----------------------------------------------------------------------------------------
def test_deal_in_both_languages(capsys):
    argv = ["deal", "--rules", "mcr", "--seed", "3", "--dice", "3,4,2,5", "--dealer", "1"]
    code, out, _ = _run(capsys, "--lang", "zh-CN", *argv)
    assert code == 0
    for said in ("144 张牌，每边 18 墩，庄家在 1 号边", "0 号边上层 3f 8m", "0 号边下层 8p 4p",
                 "开牌：骰子 3+4+2+5 → 3 号边的牌墙（对家），从其右端数第 14 墩（第二次掷骰：3 号边）",
                 "1 号边（东家）：12457m335689p18sN  [14 张]", "最先摸的牌：1p (1 号边第 4 墩下层)",
                 "第一张补牌：4p（3 号边第 13 墩上层）；配牌后可摸 91 张"):
        assert said in out, said
    assert english_left(out.replace("MCR", "")) == []
    code, out, _ = _run(capsys, "--lang", "en", *argv)
    assert code == 0 and not HAN.search(out.replace("国粹麻将", "").replace("对家", ""))
    for said in ("144 tiles, 18 stacks per side, dealer on side 1", "side 0 top    3f 8m", "side 0 bottom 8p 4p",
                 "break: dice 3+4+2+5 -> wall of side 3 (对家), stack 14 from its right end (second thrower: side 3)",
                 "side 1 (East wind): 12457m335689p18sN  [14 tiles]", "first draws: 1p (side 1 stack 4 bottom)",
                 "first replacement: 4p (side 3 stack 13 top); drawable after the deal: 91 tiles"):
        assert said in out, said


def test_deal_refuses_bad_dice_in_the_chosen_language(capsys):
    code, _, err = _run(capsys, "--lang", "zh-CN", "deal", "--dice", "9,9")
    assert code == 2 and "骰子须为 2 个或 4 个 1..6 的点数" in err and english_left(err) == [], err
    code, _, err = _run(capsys, "--lang", "en", "deal", "--dice", "x")
    assert code == 2 and "dice must be numbers like 3,4 or 3,4,2,5, not 'x'" in err


def test_reader_sim_says_where_it_serves(capsys):
    code, out, _ = _run(capsys, "--lang", "zh-CN", "reader-sim", "--seconds", "0.1")
    assert code == 0 and re.match(r"模拟识牌板在 /dev/\S+ 上运行（按 Ctrl-C 停止）", out), out
    code, out, _ = _run(capsys, "--lang", "en", "reader-sim", "--seconds", "0.1")
    assert code == 0 and re.match(r"simulated reader board on /dev/\S+ \(Ctrl-C to stop\)", out), out


# -- fleet: certificates, keys, the broker's folder ---------------------------------------------------------------
def test_fleet_set_up_in_both_languages(tmp_path, capsys):
    p = tmp_path
    code, out, _ = _run(capsys, "--lang", "zh-CN", "fleet", "certs", "ca", "--out", str(p / "ca"), "--site", "hall1")
    assert code == 0 and "已写入 CA：" in out and "离线保管" in out and english_left(out) == [], out
    code, out, _ = _run(capsys, "--lang", "zh-CN", "fleet", "certs", "table", "t01", "--ca", str(p / "ca"), "--out",
                        str(p / "t"))
    assert code == 0 and "牌桌 t01：" in out and english_left(out) == [], out
    code, _, err = _run(capsys, "--lang", "zh-CN", "fleet", "certs", "table", "t01", "--ca", str(p / "ca"), "--out",
                        str(p / "t"))
    assert code == 2 and "已存在（加 --force 可替换）" in err and english_left(err) == [], err
    code, out, _ = _run(capsys, "--lang", "zh-CN", "fleet", "certs", "server", "127.0.0.1", "--ca", str(p / "ca"),
                        "--out", str(p / "b"))
    assert code == 0 and "代理服务器证书（127.0.0.1）" in out, out
    code, out, _ = _run(capsys, "--lang", "zh-CN", "fleet", "certs", "command-key", "--out", str(p / "k"))
    assert code == 0 and "控制台用它签名" in out and english_left(out) == [], out
    code, out, _ = _run(capsys, "--lang", "zh-CN", "fleet", "broker-config", "--site", "hall1", "--ca", str(p / "ca"),
                        "--server", str(p / "b"), "--out", str(p / "b"))
    assert code == 0 and "已写入：" in out and "运行：mosquitto -c" in out and english_left(out) == [], out
    code, out, _ = _run(capsys, "--lang", "en", "fleet", "certs", "command-key", "--out", str(p / "k2"))
    assert code == 0 and "command keys: " in out and "(consoles sign with it)" in out and not HAN.search(out)


@pytest.mark.parametrize("argv, chinese", [
    (["fleet", "watch", "--broker", "mqtts://x", "--site", "hall1"], "使用 mqtts:// 时需要麻将馆的 ca.crt"),
    (["fleet", "watch", "--broker", "mqtt://x", "--site", "hall1", "--ca", "nowhere.crt"], "文件不存在"),
    (["fleet", "send", "--broker", "mqtt://x", "--site", "hall1", "--table", "t01", "--sign-key", "k", "ack"],
     "请给出故障代码"),
    (["fleet", "send", "--broker", "mqtt://x", "--site", "hall1", "--table", "t01", "--sign-key", "k",
      "resend_since", "99999999999999999999"], "超出范围"),
    (["fleet", "send", "--broker", "mqtt://x", "--site", "hall1", "--table", "t01", "--sign-key", "k", "rebirth",
      "now"], "不带参数值"),
    (["fleet", "release", "--bundle", "none.tar", "--url", "http://h/x", "--broker", "mqtt://x", "--site", "hall1",
      "--tables", "t01", "--sign-key", "k"], "--bundle none.tar：文件不存在"),
    (["fleet", "release", "--bundle", "none.tar", "--url", "ftp://h/x", "--broker", "mqtt://x", "--site", "hall1",
      "--tables", "t01", "--sign-key", "k"], "牌桌通过 http:// 或 https:// 下载发布包"),
    (["sim", "--fleet", "2"], "--fleet 需要 --broker URL"),
    (["sim", "--fleet", "2", "--broker", "mqtt://127.0.0.1:1", "--web", "8080"], "网页只服务一张牌桌"),
    (["sim", "--fleet", "2", "--broker", "mqtt://127.0.0.1:1", "--inject", "t009:jam:stacker1@hand1"],
     "2 张牌桌（t001..t002）中没有 t009"),
    (["sim", "--state-dir", "x"], "--state-dir 须与 --fleet N（模拟的麻将馆）同用"),
])
def test_fleet_refusals_are_chinese(argv, chinese, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, "--lang", "zh-CN", *argv)
    assert code == 2 and chinese in err and english_left(err) == [] and len(err.strip().splitlines()) == 1, err
    code, _, err = _run(capsys, "--lang", "en", *argv)
    assert code == 2 and not HAN.search(err), err


def test_fleet_send_without_an_answer_says_so_in_chinese(tmp_path, capsys):
    from firmware.fleet.certs import make_command_key

    pem, _pub = make_command_key(tmp_path, "cmd")
    code, _, err = _run(capsys, "--lang", "zh-CN", "fleet", "send", "--broker", f"mqtt://127.0.0.1:{free_port()}",
                        "--site", "hall1", "--table", "t01", "--sign-key", str(pem), "rebirth", "--seconds", "1")
    assert code == 1 and err.startswith("mjtable: 牌桌 t01：连接被拒绝：") or "秒内无应答" in err, err


# -- fleet watch and send on a broker --------------------------------------------------------------------------------
def test_watch_and_send_in_chinese(broker, tmp_path, capsys):  # noqa: F811
    from firmware.fleet.certs import make_command_key
    from firmware.fleet.command_auth import load_signing_key

    pem, _pub = make_command_key(tmp_path, "hall1-cmd")
    table = TableProcess(tmp_path / "t01.db", "t01", broker.url, keys=[load_signing_key(pem)],
                         status={"state": "in_play", "hand": 3, "dealer": 1, "chips": [1, 2, -3, 0],
                                 "faults": [{"code": "E41", "hint": "refill side 0"}]},
                         on_command=lambda verb, args, issuer: {"ok": 1})
    try:
        wait_for(table.connected, what="t01 connected")
        code, out, _ = _run(capsys, "--lang", "zh-CN", "fleet", "watch", "--broker", broker.url, "--site", "hall1",
                            "--once")
        assert code == 0, out
        for said in ("场馆 hall1：1 张牌桌，1 张在线", "牌桌", "连接", "状态", "筹码", "在线", "打牌中", "E41",
                     "1 2 -3 0"):
            assert said in out, said
        assert "in_play" not in out and "online" not in out and "tables" not in out
        code, out, _ = _run(capsys, "--lang", "en", "fleet", "watch", "--broker", broker.url, "--site", "hall1",
                            "--once")
        assert code == 0 and "site hall1: 1 table, 1 online" in out and "Playing" in out and not HAN.search(out)
        code, out, _ = _run(capsys, "--lang", "zh-CN", "fleet", "watch", "--broker", broker.url, "--site", "hall1",
                            "--once", "--json")
        assert json.loads(out)["state"]["state"] == "in_play"          # (data stays as it is)
        code, _, err = _run(capsys, "--lang", "zh-CN", "fleet", "watch", "--broker", broker.url, "--site", "hall9",
                            "--once", "--seconds", "2")
        assert code == 0 and "场馆 hall9 没有任何牌桌的消息到达此连接" in err and english_left(err) == [], err
        code, out, err = _run(capsys, "--lang", "zh-CN", "fleet", "send", "--broker", broker.url, "--site", "hall1",
                              "--sign-key", str(pem), "--table", "t01", "ack", "E31")
        assert code == 1 and "latched fault" in json.loads(out)["error"]            # (the answer: data, as given)
        assert err.startswith("mjtable: 牌桌 t01 拒绝了："), err
        code, _, err = _run(capsys, "--lang", "zh-CN", "fleet", "send", "--broker", broker.url, "--site", "hall1",
                            "--sign-key", str(pem), "--table", "t02", "rebirth", "--seconds", "1")
        assert code == 1 and "牌桌 t02：1 秒内无应答" in err and english_left(err) == [], err
    finally:
        table.close()


def test_watch_without_a_broker_says_so_in_chinese(capsys):
    code, _, err = _run(capsys, "--lang", "zh-CN", "fleet", "watch", "--broker", f"mqtt://127.0.0.1:{free_port()}",
                        "--site", "hall1", "--once", "--seconds", "1")
    assert code == 1 and "无应答" in err, err


def test_the_release_column_and_fault_hints_in_chinese():
    from firmware.cli.fleet_watch import fault_hint, release_cell

    words.use("zh_CN")
    cell = release_cell({"firmware": "1.0.0", "release": {"state": "rolled back", "target": "2.0.0",
                                                          "rollout": "r1", "wave": 2}})
    assert cell == "1.0.0\n已回滚（自 2.0.0）\nr1，第 2 批"
    assert release_cell({"firmware": "1.0.0", "release": {"state": "installing", "target": "2.0.0"}}) == \
        "1.0.0\n进行中 2.0.0"
    hint = fault_hint({"code": "E41", "hint": "whatever the table said"})
    assert hint.startswith("E41 ") and HAN.search(hint) and "whatever" not in hint
    words.use("en")
    assert release_cell({"firmware": "1.0.0", "release": {"state": "rolled back", "target": "2.0.0"}}) == \
        "1.0.0\nrolled back from 2.0.0"


# -- fleet release: its progress ---------------------------------------------------------------------------------------
def test_a_rollouts_progress_and_why_it_halted_in_both_languages():
    from firmware.cli.fleet_release import progress_line
    from firmware.fleet.rollout import Observation, Rollout

    r = Rollout(["t01", "t02"], [1, 2], "2.0.0", soak_s=10, report_timeout_s=30, rollout_id="r1")
    for t in ("t01", "t02"):
        r.observe(t, Observation.of_view(True, {"firmware": "1.0.0"}, []), 0)
    r.start(0)
    r.tick(31)                                               # t01 never reported: halted, rolled back
    progress = r.progress(31)
    assert progress["halt"] == {"code": "no_report", "table": "t01", "version": "2.0.0", "seconds": "30"}
    assert progress["reason"] == "t01: no report of 2.0.0 within 30 s"       # (the hall's, in English)
    words.use("zh_CN")
    line = progress_line(progress)
    assert line.startswith("版本 2.0.0：已中止，第 1/2 批，0/2 张正常（已中止：t01：30 秒内未报告 2.0.0） | ") and \
        "t01=回滚中" in line and "t02=等待中" in line, line
    assert english_left(line) == []
    words.use("en")
    assert progress_line(progress) == ("release 2.0.0: halted, wave 1/2, 0/2 healthy (halted: t01: no report of 2.0.0 "
                                       "within 30 s) | t01=rolling back t02=waiting")


# -- sim --fleet: the summary ----------------------------------------------------------------------------------------
def test_the_fleet_simulators_summary_in_both_languages(broker, capsys):  # noqa: F811
    argv = ["sim", "--fleet", "2", "--broker", broker.url, "--site", "hall1", "--hands", "1", "--quiet"]
    code, out, err = _run(capsys, "--lang", "zh-CN", *argv)
    assert code == 0, err
    head, *rows, total = out.strip().splitlines()
    assert head.split() == ["牌桌", "手数", "事件", "已发布", "已确认", "发件队列", "重连", "启动", "故障"]
    assert [row.split()[:2] for row in rows] == [["t001", "1"], ["t002", "1"]]
    assert total.startswith("牌桌群：2 张牌桌，2 手（每桌 1-1 手），实际用时 ") and "发件队列深度 0" in total, total
    assert english_left(out) == []
    code, out, _ = _run(capsys, "--lang", "en", *argv)
    assert code == 0 and out.startswith("table  hands events published  acked outbox reconnects boots faults\n"), out
    assert "fleet: 2 tables, 2 hands (1-1 per table) in " in out and not HAN.search(out)


def test_the_summarys_columns_line_up_in_chinese():
    from sim.fleet_run import TableSummary, summary_lines

    rows = [TableSummary(table="t001", hands=12, events=40, published=40, acked=40, outbox_depth=0, reconnects=1,
                         boots=1, faults=0, completed=False, final_state="latched")]
    lines = summary_lines(rows, 2.0, tr=words.catalogue_of("zh_CN"))
    assert lines[1].endswith("（未打完）  （已锁停）")
    assert "牌桌群：1 张牌桌，12 手" in lines[-1] and "每秒 6.0 手" in lines[-1]


# -- verify, diag's reader tools, sim's refusals ---------------------------------------------------------------------
def test_verify_in_both_languages(tmp_path, capsys):
    db = tmp_path / "t.db"
    assert main(["sim", "--hands", "1", "--state", str(db), "--quiet"]) == 0
    capsys.readouterr()
    code, out, _ = _run(capsys, "--lang", "zh-CN", "verify", str(db))
    line = r"第 +1 手  牌套 A  通过 +\w+…  骰子 [\d+]+ \(玩家掷出\)  配牌和 \d+ 次摸牌与公开的牌墙一致"
    assert code == 0 and re.match(line, out), out
    assert out.strip().endswith("共 1 手：1 手核对通过，0 手不通过，0 手尚未公开") and english_left(out) == [], out
    code, out, _ = _run(capsys, "--lang", "en", "verify", str(db))
    assert code == 0 and "draws match the revealed walls" in out and out.strip().endswith(
        "1 hand: 1 verified, 0 failed, 0 not revealed yet"), out
    text = tmp_path / "x.bin"
    text.write_bytes(b"\xff\xfe\x00")
    code, _, err = _run(capsys, "--lang", "zh-CN", "verify", str(text))
    assert code == 2 and "不是文本（既不是牌桌数据库也不是导出的牌局）" in err, err


def test_diag_reader_tools_in_chinese(capsys):
    code, out, _ = _run(capsys, "--lang", "zh-CN", "diag", "--sim", "reader", "ping")
    assert code == 0 and out.startswith("模拟识牌器：协议 1，固件 ") and "根天线" in out, out
    assert english_left(out) == [], out
    code, out, _ = _run(capsys, "--lang", "zh-CN", "diag", "--sim", "reader", "antennas")
    assert code == 0 and "  天线 0（0 号边的码牌头）：正常" in out and "  天线 4（0 号边的座位板）：正常" in out, out
    code, out, _ = _run(capsys, "--lang", "en", "diag", "--sim", "reader", "antennas")
    assert code == 0 and "  antenna 0 (head of side 0): ok" in out and "  antenna 4 (seat pad of side 0): ok" in out


@pytest.mark.parametrize("argv, chinese", [
    (["sim", "--speed", "x"], "--speed 应为 'max' 或相对实际时间的倍数，而不是 'x'"),
    (["sim", "--until-s", "5"], "--until-s 须与 --service 同用"),
    (["sim", "--web", "8080"], "--web 需要 --speed X"),
    (["sim", "--rules", "mcr", "--tiles", "136"], "--tiles 136 与 --rules mcr 不符，该规则用 144 张牌"),
    (["sim", "--auto-ack-s", "x"], "--auto-ack-s 应为秒数或 'none'，而不是 'x'"),
])
def test_sims_refusals_in_chinese(argv, chinese, capsys):
    code, _, err = _run(capsys, "--lang", "zh-CN", *argv)
    assert code == 2 and chinese in err and english_left(err) == [], err
    code, _, err = _run(capsys, "--lang", "en", *argv)
    assert code == 2 and not HAN.search(err), err


def test_one_stacking_cycles_wall_in_words(capsys):
    from types import SimpleNamespace

    from firmware.cli.sim_cmd import wall_words
    from firmware.reader.verify import Defect

    code, out, _ = _run(capsys, "--lang", "zh-CN", "sim", "--one-cycle")
    assert code == 0 and "  牌墙：已核对，每张牌恰好一张" in out, out
    problems = [SimpleNamespace(defect=d) for d in (Defect.DUPLICATE, Defect.DUPLICATE, Defect.MISSING)]
    rejected = SimpleNamespace(problems=problems, verified=True, may_rise=False)
    words.use("zh_CN")
    assert wall_words(rejected) == "拒绝：2 重复, 1 缺失"
    words.use("en")
    assert wall_words(rejected) == "rejected: 2 duplicated, 1 missing"
