"""Committed walls on the page: a hand's commitment and its QR code, the reveal and its check once the hand is over,
and ``/verify`` for anyone at the table."""

import sqlite3

import pytest

from firmware.tiles.fair_walls import commitment_of
from tests.support.sealed_run import sealed_game
from tests.support.web_fakes import STATUS, WebTable


@pytest.fixture(scope="module")
def sealed_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("fairplay") / "table.db"
    sealed_game(path, hands=2, seed=7)
    return path.read_bytes()


@pytest.fixture
def db(sealed_db, tmp_path):
    path = tmp_path / "table.db"
    path.write_bytes(sealed_db)
    return path


def _seal(db, hand):
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT commitment, preimage FROM hand_seals WHERE hand = ?", (hand,)).fetchone()
    finally:
        con.close()


def _page(tmp_path, db, path, login=True):
    with WebTable(tmp_path, db) as web:
        web.push({"ok": True, "snapshot": STATUS, "at_s": 1.0, "tick_s": 0.25})
        if login:
            web.login("staff")
        answer = web.client.get(path)
        return answer.status_code, answer.text


def test_a_hand_s_page_shows_its_commitment_qr_reveal_and_check(db, tmp_path):
    commitment, preimage = _seal(db, 1)
    assert commitment == commitment_of(preimage)
    code, page = _page(tmp_path, db, "/hand/1")
    assert code == 200 and 'id="seal"' in page
    assert f'<code class="commitment">{commitment}</code>' in page
    assert '<div class="qr"' in page and "<svg" in page and 'class="segno"' in page
    assert "Verified: the reveal hashes to the commitment" in page
    assert preimage.split("\n")[3] in page                               # the reveal, under its summary
    assert 'href="/verify?hand=1"' in page


def test_a_tampered_hand_says_it_does_not_match(db, tmp_path):
    con = sqlite3.connect(db)
    con.execute("UPDATE hands SET dice = '[1,1,1,1]' WHERE hand = 2")
    con.commit()
    con.close()
    code, page = _page(tmp_path, db, "/hand/2")
    assert code == 200 and "This hand does not match its committed walls:" in page and "Verified" not in page


def test_a_hand_in_play_shows_the_commitment_and_keeps_the_walls(db, tmp_path):
    commitment, preimage = _seal(db, 2)
    con = sqlite3.connect(db)
    con.execute("DELETE FROM hand_results WHERE hand = 2")
    con.commit()
    con.close()
    for path, login in (("/hand/2", True), ("/verify?hand=2", False)):
        code, page = _page(tmp_path, db, path, login)
        assert code == 200 and commitment in page and "<svg" in page
        assert all(line not in page for line in preimage.split("\n")[3:])     # nothing of the walls, seed, nonce


def test_the_verify_page_needs_no_login_and_fills_in_the_hand(db, tmp_path):
    commitment, preimage = _seal(db, 1)
    code, page = _page(tmp_path, db, "/verify?hand=1", login=False)
    assert code == 200 and 'src="/static/verify.js"' in page
    assert f'maxlength="64">{commitment}</textarea>' in page and preimage.split("\n")[4] in page
    code, page = _page(tmp_path, db, "/verify", login=False)
    assert code == 200 and 'maxlength="64"></textarea>' in page
    code, page = _page(tmp_path, db, "/verify?hand=99", login=False)
    assert code == 200 and "No committed walls for hand 99" in page
    code, page = _page(tmp_path, db, "/verify?hand=12345678901234567890", login=False)
    assert code == 200 and "No committed walls" not in page                    # (not a hand number: a blank form)


def test_a_hand_dealt_without_a_seal_says_so(db, tmp_path):
    con = sqlite3.connect(db)
    con.execute("DELETE FROM hand_seals WHERE hand = 1")
    con.commit()
    con.close()
    code, page = _page(tmp_path, db, "/hand/1")
    assert code == 200 and "dealt without committed walls" in page


def _player_view(tmp_path, db, book):
    with WebTable(tmp_path, db) as web:
        web.client.headers["accept-language"] = "en"
        web.push({"ok": True, "snapshot": {**STATUS, "table": {**STATUS["table"], "state": "dice"},
                                           "book": {**STATUS["book"], **book}}, "at_s": 1.0, "tick_s": 0.25})
        return web.client.get("/").text


def test_the_player_s_view_shows_the_commitment_of_the_walls_up(db, tmp_path):
    commitment = "ab" * 32
    page = _player_view(tmp_path, db, {"commitment": commitment, "hand": 4, "hand_open": False})
    assert "Walls committed before the dice" in page and f'<code class="commitment">{commitment}</code>' in page
    assert 'class="segno"' in page and f'href="/verify?hand=5&amp;c={commitment}"' in page     # the next hand's
    for odd in (None, "ab" * 31, "AB" * 32, "<script>" + "a" * 56):
        assert "Walls committed" not in _player_view(tmp_path, db, {"commitment": odd})


def test_the_verify_page_takes_the_commitment_the_player_kept(db, tmp_path):
    commitment, preimage = _seal(db, 1)
    kept = "0" * 64
    code, page = _page(tmp_path, db, f"/verify?hand=1&c={kept}", login=False)
    assert code == 200 and f'maxlength="64">{kept}</textarea>' in page and preimage.split("\n")[3] in page
    code, page = _page(tmp_path, db, "/verify?hand=1&c=xyz", login=False)
    assert f'maxlength="64">{commitment}</textarea>' in page                  # (not a commitment: the hand's)


def _data(tmp_path, db, hand):
    with WebTable(tmp_path, db) as web:
        web.push({"ok": True, "snapshot": STATUS, "at_s": 1.0, "tick_s": 0.25})
        answer = web.client.get(f"/verify/data?hand={hand}")          # (no login: anyone at the table checks)
        return answer.status_code, answer.json()


def test_verify_data_sends_what_the_browser_replays_and_no_verdict(db, tmp_path):
    commitment, preimage = _seal(db, 1)
    code, answer = _data(tmp_path, db, 1)
    assert code == 200 and answer["ok"]
    hand = answer["hand"]
    assert (hand["commitment"], hand["reveal"], hand["hand"]) == (commitment, preimage, 1)
    assert hand["record"]["rules"] == "mcr" and any(a.split()[1] == "draw" for a in hand["record"]["actions"])
    assert hand["deal"] == {"throws": 2, "kept_tail": 0, "kept_per_kong": 0, "stack_by": "total"}
    assert len(hand["dice"]) == 4 and hand["dice_by"] in ("physical", "electronic")
    assert not {"check", "ok", "problems", "draws"} & set(hand)                # the browser decides, not the table


def test_verify_data_keeps_a_hand_in_play_to_itself(db, tmp_path):
    commitment, preimage = _seal(db, 2)
    con = sqlite3.connect(db)
    con.execute("DELETE FROM hand_results WHERE hand = 2")
    con.commit()
    con.close()
    code, answer = _data(tmp_path, db, 2)
    assert code == 200 and answer["hand"]["commitment"] == commitment
    assert answer["hand"]["reveal"] is None and answer["hand"]["record"] is None and answer["hand"]["deal"] is None
    for odd in ("99", "x", "12345678901234567890", ""):
        code, answer = _data(tmp_path, db, odd)
        assert code == 404 and answer["ok"] is False
