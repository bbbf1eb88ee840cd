"""The verify page's own check in a real browser (Debian's Chromium, Playwright): the phone replays a hand.

The page is the real app (a table database of seeded simulated games, the
controller faked) served to the browser through Playwright's routing on
``http://127.0.0.1:9`` (a secure context, as a phone over the table's https
is), so no port and no simulated table are needed.  A real hand verifies; one
tile of a wall changed, two tiles' order swapped (both recommitted, as a table
that committed to other walls than it dealt), the dice changed or a dealt hand
changed in what the table sends each fails with a message naming what
differs.  And the browser's replay (``static/verify_replay.js``) agrees with
``fair_check`` on every hand of seeded games of five rule sets, as recorded
and tampered with, and its plain SHA-256 (for pages over http) with hashlib's.

Without /usr/bin/chromium the tests skip, unless ``CI=true``: then they fail.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from firmware.rules.fair_check import SealedHand, check_hand
from firmware.rules.registry import load_ruleset
from firmware.store.seal_rows import SealRows
from firmware.store.table_store import TableStore
from firmware.tiles.dealing import deal
from firmware.tiles.fair_walls import commitment_of, parse_preimage
from firmware.tiles.wall import Position, Wall
from firmware.web.fairplay import seal_data
from tests.support.sealed_run import sealed_game
from tests.support.web_fakes import STATUS, WebTable

pytestmark = [pytest.mark.browser, pytest.mark.alone]            # (Chromium and a timed page: nothing beside it)

ORIGIN = "http://127.0.0.1:9"
GAMES = (("mcr", False), ("sichuan", True), ("jinzhou", False), ("liaoning", True), ("competition", False))
HANDS = 4


@pytest.fixture(scope="module")
def games(tmp_path_factory) -> dict[str, Path]:
    """A table database per rule set: ``HANDS`` seeded hands, every one sealed and played (electronic dice for
    some)."""
    folder = tmp_path_factory.mktemp("verify")
    out = {}
    for rules, electronic in GAMES:
        out[rules] = folder / f"{rules}.db"
        sealed_game(out[rules], hands=HANDS, seed=11, rules=rules, electronic=electronic)
    return out


def _hands(db: Path) -> list[dict[str, Any]]:
    store = TableStore(db)
    try:
        return [row for row in SealRows(store).sealed_hands() if row["commitment"]]
    finally:
        store.close()


@contextmanager
def served(page: Any, tmp_path: Path, db: Path, tamper: Callable[[dict], None] | None = None) -> Iterator[Any]:
    """The table's page for ``db`` at ``ORIGIN`` in ``page``; ``tamper(hand)`` changes what ``/verify/data`` sends."""
    with WebTable(tmp_path, db) as web:
        web.push({"ok": True, "snapshot": STATUS, "at_s": 1.0, "tick_s": 0.25})

        def answer(route: Any) -> None:
            request = route.request
            asked = {k: v for k, v in request.headers.items() if k in ("accept-language", "cookie")}
            got = web.client.request(request.method, request.url[len(ORIGIN):], headers=asked)
            body = got.content
            if tamper is not None and request.url.startswith(ORIGIN + "/verify/data") and got.status_code == 200:
                data = got.json()
                tamper(data["hand"])
                body = json.dumps(data).encode()
            route.fulfill(status=got.status_code, body=body, content_type=got.headers.get("content-type"))
        page.route(ORIGIN + "/**", answer)
        yield web
        page.unroute(ORIGIN + "/**")


def check_in_browser(page: Any, hand: int, reveal: str | None = None,
                     commitment: str | None = None) -> tuple[str | None, str]:
    """Open /verify for ``hand`` (in English), fill in another reveal or commitment, press Check: the replay's
    verdict ("true", "false"; None when the hash did not match and nothing was replayed) and its words."""
    page.set_extra_http_headers({"accept-language": "en"})
    page.goto(f"{ORIGIN}/verify?hand={hand}")
    if reveal is not None:
        page.fill("textarea[name=reveal]", reveal)
    if commitment is not None:
        page.fill("textarea[name=commitment]", commitment)
    page.click("form#verify button[type=submit]")
    page.wait_for_selector("form#verify[data-state=done]", state="attached")
    return page.get_attribute("#verify-replay", "data-ok"), page.text_content("#verify-replay")


def _places(row: dict[str, Any]) -> tuple[Any, Wall]:
    """The deal of a row's revealed walls, as the table dealt them."""
    walls = parse_preimage(row["reveal"])
    wall = Wall.from_sides([list(side) for side in walls.sides])
    return deal(wall, load_ruleset(row["record"]["rules"]).deal_rules, tuple(row["dice"]), row["dealer"]), wall


def _with(reveal: str, changes: dict[Position, str]) -> str:
    """``reveal`` with the tiles at some places replaced (each side's line: stack 1 first, bottom then top)."""
    lines = reveal.split("\n")
    for p, tile in changes.items():
        head, tiles = lines[3 + p.side].rsplit(" ", 1)
        tiles = tiles.split(",")
        tiles[2 * (p.stack - 1) + (p.level == "top")] = tile
        lines[3 + p.side] = head + " " + ",".join(tiles)
    return "\n".join(lines)


def test_a_real_hand_verifies_in_the_browser_as_mjtable_verify_does(games, page, tmp_path):
    row = _hands(games["mcr"])[0]
    python = check_hand(SealedHand.from_json(row), load_ruleset)
    assert python.ok and python.draws > 20
    with served(page, tmp_path, games["mcr"]):
        ok, words = check_in_browser(page, 1)
    assert ok == "true" and page.locator("#verify-ok").is_visible()
    dice = "+".join(map(str, row["dice"]))
    assert f"dealt with dice {dice}, give exactly this hand's starting hands and its {python.draws} draws" in words


def test_one_tile_of_a_wall_changed_names_the_hand_it_was_dealt_to(games, page, tmp_path):
    row = _hands(games["mcr"])[0]
    dealt, wall = _places(row)
    first = dealt.hands[row["dealer"]][0]                          # the dealer's first tile
    other = "E" if wall[first] != 27 else "S"
    reveal = _with(row["reveal"], {first: other})
    with served(page, tmp_path, games["mcr"]):
        ok, words = check_in_browser(page, 1, reveal, commitment_of(reveal))   # (the table committed to these)
    assert ok == "false" and page.locator("#verify-ok").is_visible()  # (the hash matches: the deal does not)
    dealer = ("East", "South", "West", "North")[row["dealer"]]
    assert "This hand does NOT match its committed walls:" in words
    assert f"{dealer} was dealt {row['record']['dealt'][str(row['dealer'])]}" in words
    assert f"Action {1 + row['dealer']}: {dealer}'s starting hand is not what the walls deal." in words
    with served(page, tmp_path, games["mcr"]):                   # (the reveal changed, the commitment kept)
        ok, _ = check_in_browser(page, 1, reveal)
    assert ok is None and page.locator("#verify-bad").is_visible() and page.locator("#verify-replay").is_hidden()


def test_two_tiles_swapped_names_the_draw_that_differs(games, page, tmp_path):
    row = _hands(games["mcr"])[0]
    dealt, wall = _places(row)
    a, b = dealt.live[0], dealt.live[1]                           # the first two live draws, of two kinds
    assert wall[a] != wall[b], "the seeded walls' first two live tiles are of one kind: pick another seed"
    from firmware.tiles.tile import code
    reveal = _with(row["reveal"], {a: code(wall[b]), b: code(wall[a])})
    with served(page, tmp_path, games["mcr"]):
        ok, words = check_in_browser(page, 1, reveal, commitment_of(reveal))
    python = check_hand(SealedHand.from_json({**row, "reveal": reveal, "commitment": commitment_of(reveal)}),
                        load_ruleset)
    n = int(re.match(r"action (\d+)", python.problems[0]).group(1))
    assert ok == "false" and re.search(rf"Action {n}: the walls give \w+ (draws|shows flower) \S+ \(live wall, "
                                       rf"\w+'s wall, stack {a.stack}, {a.level}\); the record has: ", words), words


def test_the_dice_changed_fail_with_the_dice_named(games, page, tmp_path):
    row = _hands(games["mcr"])[0]
    dice = [6 if d != 6 else 5 for d in row["dice"]]

    def other_dice(hand: dict) -> None:
        hand["dice"] = dice
    with served(page, tmp_path, games["mcr"], other_dice):
        ok, words = check_in_browser(page, 1)
    assert ok == "false" and "the revealed walls dealt with dice " + "+".join(map(str, dice)) + " give" in words
    rolled = _hands(games["sichuan"])[0]                           # electronic dice: the seed decides them
    assert rolled["dice_by"] == "electronic"
    with served(page, tmp_path, games["sichuan"], lambda hand: hand.update(dice=[7 - d for d in hand["dice"]])):
        ok, words = check_in_browser(page, 1)
    flipped, faces = "+".join(str(7 - d) for d in rolled["dice"]), "+".join(map(str, rolled["dice"]))
    assert ok == "false" and f"Electronic dice {flipped}: the revealed seed gives {faces}." in words


def test_a_dealt_hand_changed_names_its_side(games, page, tmp_path):
    row = _hands(games["mcr"])[0]
    side = (row["dealer"] + 2) % 4
    tiles = row["record"]["dealt"][str(side)]
    changed = ("5p" if not tiles.startswith("5p") else "6p") + tiles[2:] if tiles[1] in "mps" else "5p" + tiles[1:]

    def other_hand(hand: dict) -> None:
        hand["record"]["dealt"][str(side)] = changed
    with served(page, tmp_path, games["mcr"], other_hand):
        ok, words = check_in_browser(page, 1)
    who = ("East", "South", "West", "North")[side]
    assert ok == "false" and f"{who} was dealt {changed}; the revealed walls dealt with dice" in words
    assert f"give {tiles}." in words


def test_the_page_speaks_chinese(games, page, tmp_path):
    with served(page, tmp_path, games["mcr"], lambda hand: hand.update(dice=[1, 1, 1, 1])):
        page.set_extra_http_headers({"accept-language": "zh-CN"})
        page.goto(f"{ORIGIN}/verify?hand=1")
        page.click("form#verify button[type=submit]")
        page.wait_for_selector("#verify-replay[data-ok]", state="attached")
        words = page.text_content("#verify-replay")
    assert "1+1+1+1" in words and "was dealt" not in words and re.search(r"[\u4e00-\u9fff]", words)


# -- the browser and fair_check agree -------------------------------------------------------------------------------
def _tampered(row: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """A row as recorded, and changed the ways a dishonest table or record could be."""
    out = [row]
    walls = parse_preimage(row["reveal"])
    places = [(s, i) for s in range(4) for i in range(sum(len(stack) for stack in walls.sides[s]))]
    for _ in range(3):                                            # two tiles swapped, recommitted
        lines = row["reveal"].split("\n")
        (s1, i1), (s2, i2) = rng.sample(places, 2)
        head1, t1 = lines[3 + s1].rsplit(" ", 1)
        a = t1.split(",")
        if s1 == s2:
            a[i1], a[i2] = a[i2], a[i1]
            lines[3 + s1] = head1 + " " + ",".join(a)
        else:
            head2, t2 = lines[3 + s2].rsplit(" ", 1)
            b = t2.split(",")
            a[i1], b[i2] = b[i2], a[i1]
            lines[3 + s1], lines[3 + s2] = head1 + " " + ",".join(a), head2 + " " + ",".join(b)
        reveal = "\n".join(lines)
        out.append({**row, "reveal": reveal, "commitment": commitment_of(reveal)})
    out.append({**row, "dice": [rng.randint(1, 6) for _ in row["dice"]]})
    record = copy.deepcopy(row["record"])
    draws = [i for i, line in enumerate(record["actions"]) if line.split()[1:2] == ["draw"]]
    i = rng.choice(draws)
    side, _, tile = record["actions"][i].split()
    record["actions"][i] = f"{side} draw {'5p' if tile != '5p' else '6p'}"
    out.append({**row, "record": record})
    record = copy.deepcopy(row["record"])
    record["actions"] = record["actions"][:len(record["actions"]) // 2] + ["wall_end"]
    out.append({**row, "record": record})
    out.append({**row, "reveal": row["reveal"].replace("\nnonce ", "\nnonce  ")})
    for odd in (f"{side} draw 5p from {(int(side) + 1) % 4}", f"{side} pung 5p", f"{side} flower 5p",
                f"{side} win 5p hand 123m lucky", f"{side} deal 123x", f"{side} chow 124m from 1"):
        record = copy.deepcopy(row["record"])
        record["actions"][i] = odd                               # (a line the record cannot hold)
        out.append({**row, "record": record})
    out.append({**row, "record": {**row["record"], "streak": -1}})
    out.append({**row, "record": {**row["record"], "seat": 1}})
    return out


def test_the_browser_s_replay_agrees_with_fair_check(games, page, tmp_path):
    rng = random.Random(34)
    cases = []
    for rules, _electronic in GAMES:
        for row in _hands(games[rules]):
            for case in _tampered(row, rng):
                python = check_hand(SealedHand.from_json(case), load_ruleset)
                cases.append((case, seal_data(case)["deal"], python))
    assert len(cases) > 100
    with served(page, tmp_path, games["mcr"]):
        page.goto(f"{ORIGIN}/verify?hand=1")
        results = page.evaluate("async (cases) => { const out = []; for (const [hand, deal] of cases) "
                                "out.push(await MjReplay.check(hand, deal)); return out; }",
                                [[case, deal] for case, deal, _ in cases])
    failed = sum(not python.ok for _, _, python in cases)
    unread = sum(any(p.startswith("the hand's record cannot be read") for p in python.problems) for *_, python in cases)
    assert 0 < failed < len(cases) and unread > 0                # (passes, failures and unreadable records compared)
    for (case, _deal, python), js in zip(cases, results):
        where = f"hand {case['hand']} of {case['record']['rules']}: python {python.problems}, browser {js['problems']}"
        expected = (python.ok, python.pending, python.draws, len(python.problems))
        assert (js["ok"], js["pending"], js["draws"], len(js["problems"])) == expected, where
        unread = [p.startswith("the hand's record cannot be read") for p in python.problems]
        assert unread == [p["key"] == "v_bad_record" for p in js["problems"]], where
        actions = [int(n) for p in python.problems for n in re.findall(r"^action (\d+)", p)]
        assert actions == [p["values"]["n"] for p in js["problems"] if "n" in p["values"]], where


def test_the_plain_sha_256_agrees_with_hashlib(games, page, tmp_path):
    rng = random.Random(256)
    texts = [bytes(rng.randrange(256) for _ in range(n)) for n in (0, 1, 55, 56, 63, 64, 65, 119, 700, 4096)]
    with served(page, tmp_path, games["mcr"]):
        page.goto(f"{ORIGIN}/verify")
        got = page.evaluate("(texts) => texts.map((t) => MjReplay.hex(MjReplay.sha256Plain(Uint8Array.from(t))))",
                            [list(t) for t in texts])
    assert got == [hashlib.sha256(t).hexdigest() for t in texts]
