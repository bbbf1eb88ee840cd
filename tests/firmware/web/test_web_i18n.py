"""The web page's languages and the player's view, without a browser.

The catalogue: every message the page's code, templates and the fault
registry give (extracted as ``make i18n`` does, with ``babel.cfg``) has its
Chinese, with the same placeholders; each language's compiled ``.mo`` (what
the wheel ships and the table reads) says what its ``.po`` says; the plural
forms are each language's.  The language: the cookie of the page's switch,
else ``Accept-Language``, else zh-CN.  The player's view at ``/`` without a
login: the state in words, the seats with their names (the assigned round's)
and winds, the dealer, chips and this game's hands, with no identifier of the
status on it; its fragments; the switch (a form, its own Origin only).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from firmware.web import i18n
from firmware.web.player import hand_line, live, names
from tests.support.web_fakes import STATUS, WebTable

babel = pytest.importorskip("babel")             # (a tool of the build: in the test and lint extras)

ROOT = Path(__file__).resolve().parents[3]
LOCALE = ROOT / "firmware" / "web" / "locale"
PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]|%s")
# What must never be read on a page: a snake_case identifier (in_play, stacker_home1), a raw side number
IDENTIFIER = re.compile(r"\b[a-z]+_[a-z0-9_]+\b|\bside \d\b")


def _po(locale: str):
    from babel.messages.pofile import read_po

    with open(LOCALE / locale / "LC_MESSAGES" / "messages.po", "rb") as f:
        return read_po(f)


def _extracted() -> dict[object, list[str]]:
    """The messages as ``make i18n`` extracts them (babel.cfg, the same keywords)."""
    from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
    from babel.messages.frontend import parse_mapping_cfg

    with open(ROOT / "babel.cfg") as f:
        method_map, options_map = parse_mapping_cfg(f)
    keywords = {**DEFAULT_KEYWORDS, "N_": None, "_g": (2,), "g": None}
    found: dict[object, list[str]] = {}
    for filename, _, message, _comments, _ in extract_from_dir(str(ROOT), method_map, options_map, keywords):
        if filename.startswith(("firmware/web", "firmware/faults.py", "firmware/refusals.py")):
            found.setdefault(message, []).append(filename)
    return found


def test_every_message_of_the_page_has_its_chinese_with_the_same_placeholders():
    extracted = _extracted()
    assert len(extracted) > 300
    zh = _po("zh_CN")
    missing, wrong = [], []
    for message, where in extracted.items():
        entry = zh.get(message)
        if entry is None or not entry.string or (isinstance(entry.string, tuple) and not all(entry.string)) \
                or entry.fuzzy:
            missing.append((message, where[0]))
            continue
        ids = message if isinstance(message, tuple) else (message,)
        strings = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        wanted = sorted(PLACEHOLDER.findall(ids[0]))
        if any(sorted(PLACEHOLDER.findall(s)) != wanted for s in strings):
            wrong.append(message)
    assert missing == [], f"not translated (make i18n, then translate in the .po): {missing[:5]}"
    assert wrong == [], f"placeholders differ: {wrong[:5]}"
    from firmware.faults import registry                      # (the faults' texts and hints, from the registry)
    assert all(zh.get(f.text) and zh.get(f.hint) for f in registry())


@pytest.mark.parametrize("locale", i18n.LOCALES)
def test_the_compiled_catalogue_says_what_its_po_says(locale):
    """The .mo the wheel ships (committed, compiled by ``make i18n``) agrees with its .po, message for message."""
    from babel.messages.mofile import read_mo

    po = _po(locale)
    with open(LOCALE / locale / "LC_MESSAGES" / "messages.mo", "rb") as f:
        mo = read_mo(f)

    def table(catalog):
        def flat(x):
            return tuple(x) if isinstance(x, (list, tuple)) else x
        return {flat(m.id): flat(m.string) for m in catalog if m.id and m.string and not m.fuzzy
                and (not isinstance(m.string, (list, tuple)) or all(m.string))}
    assert table(po) == table(mo), f"{locale}: run make i18n (pybabel compile)"
    assert po.plural_forms == mo.plural_forms


def test_plural_forms_are_each_languages():
    zh, en = i18n.words("zh_CN"), i18n.words("en")
    assert _po("zh_CN").num_plurals == 1 and _po("en").num_plurals == 2
    assert [en.ngettext("%(num)d minute left", "%(num)d minutes left", n) % {"num": n} for n in (1, 2)] == [
        "1 minute left", "2 minutes left"]
    assert [zh.ngettext("%(num)d minute left", "%(num)d minutes left", n) % {"num": n} for n in (1, 2)] == [
        "还剩 1 分钟", "还剩 2 分钟"]


@pytest.mark.parametrize("header, chosen", [
    (None, "zh_CN"), ("", "zh_CN"), ("fr-FR,fr;q=0.9", "zh_CN"), ("en-US,en;q=0.9", "en"),
    ("zh-CN,zh;q=0.9", "zh_CN"), ("zh-TW", "zh_CN"),
    ("de;q=0.9, en;q=0.5, zh;q=0.8", "zh_CN"), ("en;q=0.9, zh;q=0.1", "en"), ("en;q=0, zh", "zh_CN"),
    ("x" * 5000, "zh_CN"), ("en;q=nonsense, zh", "zh_CN")])
def test_the_language_from_accept_language(header, chosen):
    assert i18n.negotiate(header) == chosen


def test_every_name_a_status_carries_has_words():
    from firmware.controller.states import TRANSITIONS, TableState
    from firmware.web.bodies import MECHANISM_BUTTONS, TEST_BUTTONS

    zh = i18n.words("zh_CN")
    assert {s.value for s in TableState} == set(i18n.STATES) == set(i18n.STATE_TONE)
    assert {row["trigger"] for row in TRANSITIONS} <= set(i18n.TRIGGERS)
    assert set(MECHANISM_BUTTONS) <= set(i18n.MECHANISMS) and set(TEST_BUTTONS) <= set(i18n.TESTS)
    for sensor in ("center_up", "center_down", "supply_ok", "lid", "key_reset", "stacker_home0", "tile_in3",
                   "feed_full1", "lift_home2", "key_lift0", "key_dice3"):
        assert not IDENTIFIER.search(zh.sensor(sensor)) and not IDENTIFIER.search(i18n.words("en").sensor(sensor))
    assert zh.sensor("stacker_home1") == "码牌头 2 原位" and zh.state("in_play") == "打牌中"
    assert zh.state("dice") == "请掷骰" and zh.state("stacking") == "洗牌中"
    assert [zh.position(s) for s in range(4)] == ["东", "南", "西", "北"]
    assert zh.seat(1, "W") == "南（西家）" and i18n.words("en").seat(1, "W") == "South (West wind)"


PLAYERS = {"E": "阿兰", "S": "Bo", "W": "小陈", "N": "Dee"}


def _status(**changes):
    status = {name: dict(fields) for name, fields in STATUS.items()}
    for name, fields in changes.items():
        status[name] = {**status.get(name, {}), **fields}
    return {**status, "link": {"up": True, "reason": None}}


def test_the_player_view_names_the_seats_the_dealer_and_the_walls():
    zh = i18n.words("zh_CN")
    view = live(_status(), zh)
    assert view["state_words"] == "打牌中" and view["tone"] == "play" and view["round_wind"] == "东风圈"
    assert [s["name"] for s in view["seats"]] == ["东", "南", "西", "北"] and view["dealer"] == "东"
    assert [s["share"] for s in view["seats"]] == [1.0] * 4                   # (in play: the walls whole)
    rnd = {"state": "playing", "assignment": {"event": "春季赛", "round": 2}, "players": PLAYERS, "hands": 8,
           "hands_played": 3, "seconds_left": 600}
    view = live(_status(round=rnd, book={"dealer": 2, "hand": 5},
                        stacking={"active": True, "target": 34, "counted": [34, 17, 0, 5]},
                        table={"state": "stacking"}), zh)
    assert names(_status(round=rnd)) == ["阿兰", "Bo", "小陈", "Dee"]
    assert [(s["name"], s["wind"], s["dealer"]) for s in view["seats"]] == [
        ("阿兰", "西家", False), ("Bo", "北家", False), ("小陈", "东家", True), ("Dee", "南家", False)]
    assert view["state_words"] == "洗牌中" and [s["share"] for s in view["seats"]] == [1.0, 0.5, 0.0, 5 / 34]
    assert view["round"] == "春季赛 第2轮 · 第 3 / 8 局 · 还剩 10 分钟"
    en = live(_status(round=rnd, table={"state": "dice"}), i18n.words("en"))
    assert en["state_words"] == "Roll the dice" and en["hint"] == "The dealer presses the dice key."
    assert en["round"] == "春季赛, round 2 · hand 3 of 8 · 10 minutes left"


def test_a_hand_line_says_who_won_with_what_and_the_money():
    from firmware.web.scoreboard import hand_view

    result = {"hand": 3, "dealer": 1, "winners": [2], "drawn": False, "rules": "mcr",
              "fans": [{"name": "碰碰和", "en": "All Pungs", "points": 6, "count": 1},
                       {"name": "箭刻", "en": "Dragon Pung", "points": 2, "count": 1}],
              "money": [{"payer": p, "payee": 2, "amount": 16, "reason": "win", "held": False} for p in (0, 1, 3)]}
    line = hand_line(hand_view(result), _status(round={"players": PLAYERS}), i18n.words("zh_CN"))
    assert line["result"] == "小陈（南家）和牌" and line["won"] == 48 and line["value_total"] == "8"
    assert [(m["who"], m["amount"]) for m in line["money"]] == [("阿兰", -16), ("Bo", -16), ("小陈", 48), ("Dee", -16)]


@pytest.fixture(scope="module")
def game_db(tmp_path_factory):
    """A table database with ten hands of a game (seed 3: a win with its payments first)."""
    from sim.table_run import SimRun

    db = tmp_path_factory.mktemp("game") / "table.db"
    run = SimRun(hands=10, play=True, state_path=db, seed=3)
    assert run.run(timeout_s=5000.0)
    run.close()
    return db


@pytest.fixture
def table(tmp_path, game_db):
    with WebTable(tmp_path, game_db) as web:
        web.client.headers.pop("accept-language")
        web.push({"ok": True, "snapshot": _status(round={"state": "playing", "players": PLAYERS,
                                                         "assignment": {"event": "春季赛", "round": 1}}),
                  "at_s": 12.5, "tick_s": 0.25})
        yield web


def _visible(html: str) -> str:
    """The text a reader sees: no script, no tags, no attributes, and nothing shown verbatim (``data-verbatim``:
    a hand's revealed walls are hashed byte for byte, so they are never translated)."""
    html = re.sub(r"<script.*?</script>", " ", html, flags=re.S)
    html = re.sub(r"<(pre|textarea)\b[^>]*\bdata-verbatim\b[^>]*>.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


def test_the_player_view_needs_no_login_and_shows_no_identifier(table):
    page = table.client.get("/")
    assert page.status_code == 200 and 'lang="zh-CN"' in page.text            # (zh-CN: no Accept-Language)
    text = _visible(page.text)
    assert "打牌中" in text and "阿兰" in text and "庄家" in text and "本场牌局" in text and "第 1 局" in text
    assert not IDENTIFIER.search(text), IDENTIFIER.search(text)
    assert "/login" in page.text and "/faults" not in page.text                 # (nothing of the staff's pages)
    assert page.text.index('data-hand="10"') < page.text.index('data-hand="9"')   # this game's hands, the latest first
    opened, folded = page.text.split('<details class="earlier">')                 # eight, then the earlier ones folded
    assert opened.count('class="hand-line"') == 8 and folded.count('class="hand-line"') == 2
    assert "更早的 2 局" in folded
    english = table.client.get("/", headers={"accept-language": "en-GB,en;q=0.8"})
    assert 'lang="en"' in english.text and "Playing" in english.text and "Dealer" in english.text
    assert not IDENTIFIER.search(_visible(english.text))
    live_part = table.client.get("/view/live")
    assert live_part.status_code == 200 and "<html" not in live_part.text and "打牌中" in live_part.text
    hands = table.client.get("/view/hands")
    assert hands.status_code == 200 and 'data-hand="1"' in hands.text and "<html" not in hands.text
    assert table.client.get("/table", follow_redirects=False).status_code == 303        # (the staff's: a login)


def test_the_language_switch_is_remembered_and_takes_only_its_own_origin(table):
    switched = table.client.post("/lang", data={"to": "en", "next": "/"}, follow_redirects=False)
    assert switched.status_code == 303 and switched.headers["location"] == "/"
    assert "mjtable_lang=en" in switched.headers["set-cookie"] and "Max-Age=31536000" in switched.headers["set-cookie"]
    assert 'lang="en"' in table.client.get("/", headers={"accept-language": "zh-CN"}).text    # (the cookie wins)
    assert table.client.post("/lang", data={"to": "klingon"}).status_code == 400
    away = table.client.post("/lang", data={"to": "zh_CN", "next": "//evil.example/"}, follow_redirects=False)
    assert away.headers["location"] == "/"
    refused = table.client.post("/lang", data={"to": "zh_CN"}, headers={"origin": "http://evil.example"})
    assert refused.status_code == 403
    assert 'lang="en"' in table.client.get("/").text


def test_the_staff_pages_show_no_identifier_in_either_language(table):
    table.login("tech")
    for locale in i18n.LOCALES:
        table.client.cookies.set("mjtable_lang", locale)
        for path in ("/", "/table", "/faults", "/scoreboard", "/hand/1", "/verify?hand=1", "/service", "/card",
                     "/faults/history", "/scoreboard/rows"):
            page = table.client.get(path)
            assert page.status_code == 200, (locale, path)
            found = IDENTIFIER.search(_visible(page.text))
            assert found is None, (locale, path, found and found.group(0))


def test_before_the_controller_answers_the_player_view_says_so(tmp_path, game_db):
    with WebTable(tmp_path, game_db) as web:
        web.client.headers.pop("accept-language")
        page = web.client.get("/")
        assert page.status_code == 200 and "牌桌无响应" in page.text and "还没开局" in page.text
        assert not IDENTIFIER.search(_visible(page.text))


# -- the staff's and technicians' blocks, and the refusals they show ----------------------------------------------
def test_the_staff_and_technician_blocks_are_in_the_pages_language(table):
    table.login("tech")
    zh = table.client.get("/table").text
    assert "开新局" in zh and "开台计时" in zh and "Start a game" not in zh and "Open the table" not in zh
    faults = table.client.get("/faults").text
    assert "下载诊断资料" in faults and "Download diagnostics" not in faults
    words = i18n.words("zh_CN").script()["text"]
    assert words["staff_refused"] == "被拒绝：%(why)s" and "Refused" not in words["session_last"]
    table.client.cookies.set("mjtable_lang", "en")
    assert "Start a game" in table.client.get("/table").text


def test_a_controllers_refusal_is_worded_in_the_pages_language(table):
    """The controller answers a code and its values (language-neutral); the page words it (a state's name, a
    mechanism's, a fault's text and hint), in Chinese on a Chinese page, in English on an English one."""
    from firmware.game.staff import StaffError
    from firmware.refusals import Reason, Refusal

    table.login("tech")
    table.control.answers["game"] = StaffError(Reason.HAND_IN_PLAY).refusal.answer()
    zh = table.client.post("/api/staff/game", json={"action": "end"})
    assert zh.status_code == 409 and zh.json()["error"] == "正在打牌：请在两手之间再操作"
    en = table.client.post("/api/staff/game", json={"action": "end"}, headers={"accept-language": "en"})
    assert en.json()["error"] == "a hand is in play: do this between hands" == str(StaffError(Reason.HAND_IN_PLAY))
    table.control.answers["players"] = StaffError(Reason.PLAYER_NAME, seat="W").refusal.answer()
    assert table.client.post("/api/staff/players", json={"players": None}).json()["error"] == \
        "西 的名字：1 到 40 个可显示字符"
    table.control.answers["ack"] = Refusal(Reason.NOTHING_TO_ACK, state="in_play").answer()
    assert table.client.post("/api/ack").json()["error"] == "没有需要确认的故障（牌桌现在：打牌中）"
    table.control.answers["ack"] = Refusal(Reason.INTERLOCK, fault="E04").answer(fault="E04")
    said = table.client.post("/api/ack").json()["error"]
    assert said.startswith("被拒绝：") and "（E04）" in said and "维修盖" in said and not IDENTIFIER.search(said)
    table.control.answers["ack"] = Refusal(Reason.STILL_MOVING, moving=["wall_lift0"]).answer()
    said = table.client.post("/api/ack").json()["error"]
    assert "仍在运转" in said and "wall_lift0" not in said
    table.control.answers["ack"] = {"ok": False, "error": "an answer of another version", "refusal": "nonesuch"}
    assert table.client.post("/api/ack").json()["error"] == "an answer of another version"     # (said as it came)


def test_the_pages_own_refusals_are_in_its_language(table):
    table.login("staff")
    refused = table.client.post("/api/ack")
    assert refused.status_code == 403 and refused.json()["error"] == "你的角色（员工）不能确认故障"
    table.client.cookies.clear()
    assert table.client.post("/api/staff/game", json={"action": "end"}).json()["error"] == "请先登录"


def test_a_held_actions_refusals_are_in_the_pages_language(table):
    """Two presses at once, another session's hold, a hold stopped: the page's own refusals, worded where shown (a
    held action by its mechanism's name, the reason it stopped as a phrase)."""
    from firmware.web.hub import Hub
    from firmware.web.users import Role

    table.login("tech")
    first = table.client.post("/api/hold", json={"kind": "jog", "name": "turntable"}).json()
    assert first["ok"]
    busy = table.client.post("/api/hold", json={"kind": "jog", "name": "dice"}).json()
    assert busy["error"] == "转盘 正被 tech 按住运行：请等它结束" and not IDENTIFIER.search(busy["error"])
    english = table.client.post("/api/hold", json={"kind": "jog", "name": "dice"}, headers={"accept-language": "en"})
    assert english.json()["error"] == "Turntable is held by tech: wait for it to end"
    assert table.client.post("/api/hold/nonesuch/alive").json()["error"] == "没有这个按住操作（早已结束，或从未开始）"
    assert table.client.post(f"/api/hold/{first['hold']}/release").json()["stopping"]
    zh = i18n.words("zh_CN")
    hub = Hub(lambda: 0.0, max_streams=3, kept_for_technicians=0)
    assert all(hub.open(f"session {i}", Role.TECHNICIAN) for i in range(3))
    assert zh.answer(hub.refusal())["error"] == "本桌打开的页面太多（最多 3 个）：请关闭一个"
    assert i18n.words("en").answer(hub.refusal())["error"] == \
        "too many pages are open on this table (at most 3): close one"
    stopped = i18n.said("stopped: %(why)s", why=i18n.phrase("let go by %(user)s", user="ana"))
    assert stopped["error"] == "stopped: let go by ana" and zh.answer(stopped)["error"] == "已停止：ana 已松开"
