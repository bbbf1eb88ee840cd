"""The real table's referee records a hand through the diagnostics socket: ``diag judge --record`` takes all of
a declaration or nothing, and takes nothing twice (a set already in the hand's record is not taken again)."""

from __future__ import annotations

from typing import Any

from firmware.diagnostics.commands import DiagCommands
from sim.table_run import SimRun


def _lay(run: SimRun, side: int, text: str) -> None:
    from firmware.tiles.tile import parse
    from sim.tileset import SimTile

    on_pads = {t.uid for pad in run.world.pads for t in pad}
    free: dict[int, list] = {}
    for entry in run.world.registry.sets["A"]:
        if entry.uid not in on_pads:
            free.setdefault(entry.kind, []).append(entry)
    run.world.lay_on_pad(side, [SimTile(e.uid, "A", e.kind) for e in (free[k].pop() for k in parse(text))])


def _ask(run: SimRun, request: dict[str, Any]) -> dict[str, Any]:
    answers: list[dict] = []
    DiagCommands(run.session).handle(request, answers.append)
    run.run_until(lambda: bool(answers), 10)
    return answers[0]


def _in_play(rules: str = "competition") -> SimRun:
    """A real table's hand (no simulated players): in play until the referee ends it."""
    run = SimRun(rules=rules, hands=1, hand_s=3000.0)
    run.run_until(lambda: run.state is not None and run.state.value == "in_play", 600)
    return run


def _kong_rows(run: SimRun) -> list[tuple[int, int, int, str]]:
    settled = run.session.hand.referee.settlement()
    return [(p.payer, p.payee, p.amount, p.reason.key) for p in settled.payments if "kong" in p.reason.key]


def test_a_failed_recorded_judge_takes_nothing_and_a_corrected_one_scores() -> None:
    run = _in_play()
    try:
        c = run.session
        dealer = c.book.dealer
        winner, other = (dealer + 2) % 4, (dealer + 1) % 4
        request = {"cmd": "judge", "side": winner, "tile": "E", "discarder": dealer, "melds": f"c123m@{other}",
                   "seat_melds": {str(other): f"k9p@{dealer}"}, "open": [], "record": True}
        _lay(run, winner, "123m456p789s123sE")            # one E short: 9 standing tiles beside the chow
        chips, actions = list(c.scoreboard.chips), list(c.hand.referee.record.actions)
        failed = _ask(run, request)
        assert not failed["ok"] and "standing tiles" in failed["error"] and not failed.get("recorded"), failed
        assert c.hand.referee.record.actions == actions and c.scoreboard.chips == chips
        assert _kong_rows(run) == []
        _lay(run, winner, "E")                            # the referee finds the tile: the same request again
        scored = _ask(run, request)
        assert scored["ok"] and scored["legal"] and scored["recorded"], scored
        kong = [m for m in scored["money"] if m["reason"] == "melded_kong"]
        assert [(m["payer"], m["payee"], m["amount"]) for m in kong] == [(dealer, other, 12)]
        history = c.scoreboard.hands()
        assert history[-1].winners == [winner]
        assert history[-1].by_side == [scored["payments"][f"side{s}"] for s in range(4)]
        assert sum(c.scoreboard.chips) == sum(chips)
    finally:
        run.close()


def test_a_declaration_after_a_false_win_pays_no_kong_twice() -> None:
    run = _in_play()
    try:
        c = run.session
        dealer = c.book.dealer
        first, second, other = (dealer + 2) % 4, (dealer + 3) % 4, (dealer + 1) % 4
        seat_melds = {str(other): f"k9p@{dealer} p5s@{first}"}
        _lay(run, first, "123m456p789s123sE5m")           # not a winning hand: 诈和, the hand goes on
        false = _ask(run, {"cmd": "judge", "side": first, "tile": "E", "discarder": dealer, "open": [],
                           "seat_melds": seat_melds, "record": True})
        assert false["ok"] and not false["legal"] and false["recorded"] and "note" in false, false
        assert _kong_rows(run) == [(dealer, other, 12, "melded_kong")]
        _lay(run, second, "123m456p789s123sEE")
        won = _ask(run, {"cmd": "judge", "side": second, "tile": "E", "discarder": dealer, "open": [],
                         "seat_melds": seat_melds, "record": True})
        assert won["ok"] and won["legal"] and won["recorded"], won
        assert _kong_rows(run) == [(dealer, other, 12, "melded_kong")]
        assert [m["reason"] for m in won["money"]] == ["win"] * len(won["money"])
        record = c.scoreboard.hands()[-1].record
        assert record.count(f"{other} kong 9p from {dealer}") == 1 and record.count(f"{other} pung 5s") == 1
    finally:
        run.close()


def test_a_northeastern_judge_is_told_who_had_opened_not_left_to_guess() -> None:
    """辽宁 / 锦州: a payer's share depends on whether it was closed; as ``mjtable score``, the judge asks."""
    run = _in_play("liaoning")
    try:
        c = run.session
        dealer = c.book.dealer
        winner = (dealer + 2) % 4
        _lay(run, winner, "123m456p789s555s99m")
        request = {"cmd": "judge", "side": winner, "tile": "9m", "discarder": dealer, "melds": "c123m",
                   "record": True}
        chips = list(c.scoreboard.chips)
        refused = _ask(run, request)
        assert not refused["ok"] and "'open', [] for none" in refused["error"], refused
        assert c.scoreboard.chips == chips and c.hand.referee.record.actions == []
        closed = _ask(run, {**request, "record": False, "open": []})
        opened = _ask(run, {**request, "record": False, "open": [s for s in range(4) if s != winner]})
        assert closed["ok"] and opened["ok"], (closed, opened)
        assert closed["payments"][f"side{dealer}"] < opened["payments"][f"side{dealer}"] < 0
    finally:
        run.close()


def _over_the_socket(run: SimRun, tmp_path, request: dict[str, Any]) -> dict[str, Any]:
    """One request through the diagnostics socket (the client in a thread, this thread drives the loop)."""
    from tests.firmware.diagnostics.test_diag import _ask_while_running, _serve

    server, path = _serve(run, tmp_path)
    try:
        return _ask_while_running(run, path, request)
    finally:
        server.stop()


def test_a_kong_is_paid_when_it_is_made_and_not_again_when_the_win_names_it(tmp_path) -> None:
    run = _in_play()
    try:
        c = run.session
        dealer = c.book.dealer
        maker, winner, third = (dealer + 1) % 4, (dealer + 2) % 4, (dealer + 3) % 4
        chips = list(c.scoreboard.chips)
        melded = _over_the_socket(run, tmp_path, {"cmd": "kong", "side": maker, "tile": "9p", "from": dealer})
        assert melded["ok"] and melded["kind"] == "melded", melded
        assert melded["payments"][f"side{dealer}"] == -12 and melded["payments"][f"side{maker}"] == 12
        assert c.scoreboard.chips[dealer] == chips[dealer] - 12 and c.scoreboard.chips[maker] == chips[maker] + 12
        concealed = _ask(run, {"cmd": "kong", "side": third, "tile": "7s", "concealed": True})
        assert concealed["ok"] and concealed["payments"][f"side{third}"] == 18, concealed
        no_pung = _ask(run, {"cmd": "kong", "side": third, "tile": "2m", "added": True})
        assert not no_pung["ok"] and "no pung of 2m" in no_pung["error"] and "from" in no_pung["error"]
        added = _ask(run, {"cmd": "kong", "side": third, "tile": "2m", "added": True, "from": dealer})
        assert added["ok"] and added["actions"] == [f"{third} pung 2m from {dealer}", f"{third} added_kong 2m"]
        assert added["payments"][f"side{third}"] == 12, added
        for bad, words in (({"side": maker, "tile": "5s"}, "say which kong"),
                           ({"side": maker, "tile": "5s", "from": maker}, "another side"),
                           ({"side": maker, "tile": "5s", "concealed": True, "from": dealer}, "say which kong"),
                           ({"side": maker, "tile": "1f", "concealed": True}, "flower")):
            refused = _ask(run, {"cmd": "kong", **bad})
            assert not refused["ok"] and words in refused["error"], (bad, refused)
        kongs = _kong_rows(run)
        _lay(run, winner, "123m456p789s123sEE")
        won = _ask(run, {"cmd": "judge", "side": winner, "tile": "E", "discarder": dealer, "open": [],
                         "seat_melds": {str(maker): f"k9p@{dealer}", str(third): f"K7s a2m@{dealer}"},
                         "record": True})
        assert won["ok"] and won["legal"] and won["recorded"], won
        assert _kong_rows(run) == kongs and {m["reason"] for m in won["money"]} == {"win"}
        assert c.scoreboard.conserved()
    finally:
        run.close()


def test_the_wall_s_end_pays_its_money_and_writes_a_drawn_hand(tmp_path) -> None:
    """锦州 黄庄: the dealer pays each 2; the result is a drawn hand, the dealer moves on; once only."""
    run = _in_play("jinzhou")
    try:
        c = run.session
        dealer, hand = c.book.dealer, c.book.hand
        a = _over_the_socket(run, tmp_path, {"cmd": "drawn"})
        assert a["ok"] and a["drawn"] and a["recorded"], a
        assert a["payments"] == {f"side{s}": (-6 if s == dealer else 2) for s in range(4)}
        row = c.scoreboard.hands()[-1]
        assert row.hand == hand and row.drawn and row.winners == []
        assert row.by_side == [a["payments"][f"side{s}"] for s in range(4)]
        assert c.hand.outcome().drawn and c.book.last_winner is None
        again = _ask(run, {"cmd": "drawn"})
        assert not again["ok"] and "scored already" in again["error"]
        assert c.scoreboard.hands()[-1].by_side == row.by_side
        late = _ask(run, {"cmd": "kong", "side": dealer, "tile": "7s", "concealed": True})
        assert not late["ok"] and "scored already" in late["error"]
    finally:
        run.close()


def test_the_wall_s_end_asked_again_before_its_result_is_written_pays_once() -> None:
    """(A power cut between the wall's end and the hand's result: the record has ``wall_end`` already.)"""
    from firmware.rules.hand_record import Action, Verb

    run = _in_play("jinzhou")
    try:
        c = run.session
        assert c.hand.take(c.book.hand, Action(Verb.WALL_END)) is None
        chips = list(c.scoreboard.chips)
        a = _ask(run, {"cmd": "drawn"})
        assert a["ok"] and a["recorded"] and sum(1 for m in a["money"] if m["reason"] == "draw") == 3, a
        assert c.scoreboard.chips == chips and c.scoreboard.hands()[-1].drawn
    finally:
        run.close()


def test_the_kong_and_drawn_tools_from_the_cli(capsys) -> None:
    from firmware.cli.main import main

    assert main(["diag", "--sim", "kong", "1", "7s"]) == 2                 # which kong is not guessed
    assert "--from SIDE" in capsys.readouterr().err
    assert main(["diag", "--sim", "--json", "kong", "1", "7s", "--from", "0"]) == 1
    assert "no hand in play" in capsys.readouterr().out                     # (--sim deals no hand)
    assert main(["diag", "--sim", "drawn"]) == 2                           # one keystroke does not end a hand
    assert "mjtable diag drawn --yes" in capsys.readouterr().err
    assert main(["diag", "--sim", "drawn", "--yes"]) == 1
    assert "FAILED: no hand in play" in capsys.readouterr().out
    assert main(["diag", "--sim", "judge", "--side", "1", "--tile", "E", "--more"]) == 2
    assert "--more goes with --record" in capsys.readouterr().err


def test_two_winners_on_one_discard() -> None:
    """竞技麻将 一炮多响: the first winner recorded with ``more``, the hand waits for the second, who ends it."""
    run = _in_play()
    try:
        c = run.session
        dealer, hand = c.book.dealer, c.book.hand
        first, second = (dealer + 1) % 4, (dealer + 2) % 4
        _lay(run, first, "123m456p789s123sEE")
        _lay(run, second, "123456789m456pEE")                # 清龙
        declared = {"cmd": "judge", "tile": "E", "discarder": dealer, "open": [], "record": True}
        chips = list(c.scoreboard.chips)
        a = _ask(run, {**declared, "side": first, "more": True})
        assert a["ok"] and a["legal"] and a["pending"] and not a["recorded"] and "other winners" in a["note"], a
        assert not c.scoreboard.recorded(hand) and c.scoreboard.chips == chips     # what it would pay, not paid
        assert "not a drawn hand" in _ask(run, {"cmd": "drawn"})["error"]
        elsewhere = _ask(run, {**declared, "side": second, "tile": "5m"})
        assert not elsewhere["ok"] and "only another winner on that discard" in elsewhere["error"], elsewhere
        b = _ask(run, {**declared, "side": second})
        assert b["ok"] and b["legal"] and b["recorded"], b
        row = c.scoreboard.hands()[-1]
        assert row.hand == hand and sorted(row.winners) == sorted([first, second])
        assert c.scoreboard.conserved()
    finally:
        run.close()


def test_winners_on_one_discard_are_judged_in_paying_order() -> None:
    """"数家同时和牌，点炮方按逆时针顺序付分" (S001 §35): the discarder pays 下家 first.  A referee who judges the 对家
    first (--more) and then the 下家 gets both recorded together, the 下家 paid first; nothing moves before the last
    winner is judged."""
    run = _in_play()
    try:
        c = run.session
        dealer, hand = c.book.dealer, c.book.hand
        down, across = (dealer + 1) % 4, (dealer + 2) % 4
        _lay(run, down, "123m456p789s123sEE")
        _lay(run, across, "123456789m456pEE")
        declared = {"cmd": "judge", "tile": "E", "discarder": dealer, "open": [], "record": True}
        chips = list(c.scoreboard.chips)
        a = _ask(run, {**declared, "side": across, "more": True})
        assert a["ok"] and a["legal"] and a["pending"] and not a["recorded"], a
        assert c.scoreboard.chips == chips                      # judged, nothing paid yet
        again = _ask(run, {**declared, "side": across, "more": True})
        assert not again["ok"] and "judged on this discard already" in again["error"], again
        b = _ask(run, {**declared, "side": down})
        assert b["ok"] and b["legal"] and b["recorded"] and b["side"] == down, b
        settled = c.hand.referee.last
        assert [v.side for v in settled.verdicts] == [down, across]        # paid 下家 first
        assert c.scoreboard.recorded(hand) and c.scoreboard.conserved()
    finally:
        run.close()


def test_more_winners_only_where_the_rule_set_has_them() -> None:
    run = _in_play("mcr")
    try:
        a = _ask(run, {"cmd": "judge", "side": 1, "tile": "E", "discarder": 0, "more": True, "record": True})
        assert not a["ok"] and "one winner per discard" in a["error"], a
    finally:
        run.close()


def test_a_sichuan_referee_tells_the_voids_the_wins_and_the_hands_still_in_at_the_wall_s_end(tmp_path) -> None:
    """四川 at a real table (the reader knows the deal, not the draws): 定缺 told per side, a win recorded that does
    not end the hand, and at the wall's end the hands still in shown, or the checks cannot be made."""
    run = _in_play("sichuan")
    try:
        c = run.session
        dealer, hand = c.book.dealer, c.book.hand
        winner, pig, ready, not_ready = ((dealer + i) % 4 for i in range(4))
        for side in range(4):
            told = _ask(run, {"cmd": "void", "side": side, "suit": "s"})
            assert told["ok"] and told["void"] == "s", told
        again = _ask(run, {"cmd": "void", "side": pig, "suit": "m"})
        assert not again["ok"] and "once" in again["error"]
        assert not _ask(run, {"cmd": "void", "side": pig, "suit": "z"})["ok"]
        _lay(run, winner, "123m456m789m12355p")
        won = _ask(run, {"cmd": "judge", "side": winner, "tile": "5p", "record": True})    # self-drawn: 3 pay 2
        assert won["ok"] and won["legal"] and won["payments"][f"side{winner}"] == 6, won     # paid now ...
        assert not c.scoreboard.recorded(hand) and "the hand goes on" in won["note"], won   # ... the rest play on
        missing = _ask(run, {"cmd": "drawn"})
        assert not missing["ok"] and "--show SIDE=TILES" in missing["error"], missing
        assert c.hand.hand == hand                                               # (nothing taken)
        shown = {str(pig): "1357m1357p1s", str(ready): "1223345556789m", str(not_ready): "13579m13579p26m"}
        a = _over_the_socket(run, tmp_path, {"cmd": "drawn", "show": shown})
        assert a["ok"] and a["recorded"], a
        by_reason: dict[str, int] = {}
        for m in a["money"]:
            by_reason[m["reason"]] = by_reason.get(m["reason"], 0) + m["amount"]
        assert by_reason == {"flower_pig": 16, "not_ready": 4}, a["money"]        # 8 to each; 4 to the ready one
        assert a["payments"][f"side{pig}"] == -16 and a["payments"][f"side{ready}"] == 12
        assert a["payments"][f"side{winner}"] == 0                              # (it had won: out of the checks)
        assert c.scoreboard.conserved() and c.book.last_winner == winner          # (the first winner deals next)
    finally:
        run.close()
