"""One settlement: hands played in the simulator, re-judged from their records by the table's referee (the
``diag judge`` path), by ``mjtable score`` and as a hand-written case, give the payments the game recorded."""

import json

import pytest

from firmware.diagnostics.commands import DiagCommands
from firmware.rules.case_scoring import score_line
from firmware.rules.hand_record import CLAIMS, HandRecord, Verb
from firmware.rules.registry import load_ruleset
from firmware.rules.settlement import settle_hand
from firmware.tiles.tile import code, format_tiles
from sim.table_run import SimRun

SOURCE = {1: "left", 2: "opposite", 3: "right"}


def _rows(payments) -> list[tuple]:
    return sorted((p["event"], p["payer"], p["payee"], p["amount"], p["reason"], bool(p.get("held"))) for p in payments)


def _case_of(record: HandRecord, settled) -> dict | None:
    """The case a referee would type for a hand with one win: the winner's tiles and sets, the others' sets,
    the table's context (None when the hand has no single win)."""
    wins = [a for a in record.actions if a.verb is Verb.WIN]
    if len(wins) != 1 or not settled.verdicts[0].legal:
        return None
    win = wins[0]
    wind = lambda side: "ESWN"[(side - record.dealer) % 4]           # noqa: E731
    melds: dict[int, list[dict]] = {s: [] for s in range(4)}
    for a in record.actions:
        if a.verb in CLAIMS:
            tiles = format_tiles(list(a.chow_tiles) if a.verb is Verb.CHOW else [a.tile] * (3 if a.verb is Verb.PUNG
                                                                                            else 4))
            melds[a.side].append({"kind": a.verb.value, "tiles": tiles,
                                  "from": SOURCE[(a.side - a.source) % 4]})
        elif a.verb is Verb.ADDED_KONG:
            pung = next(m for m in melds[a.side] if m["kind"] == "pung" and m["tiles"] == format_tiles([a.tile] * 3))
            pung.update(kind="kong", tiles=format_tiles([a.tile] * 4), added=True)
        elif a.verb is Verb.CONCEALED_KONG:
            melds[a.side].append({"kind": "kong", "tiles": format_tiles([a.tile] * 4), "concealed": True})
    case = {"id": record.hand, "rules": record.rules, "hand": format_tiles(list(win.hand)), "win_tile": code(win.tile),
            "melds": melds[win.side], "self_drawn": win.source is None, "seat_wind": wind(win.side),
            "round_wind": "ESWN"[record.round_wind], "flowers": win.flowers or 0,
            "discarder": None if win.source is None else wind(win.source),
            **{f: True for f in win.flags if f in ("kong_win", "last_tile", "flower_win", "last_of_kind")},
            "table": {"dealer_streak": record.streak, "long_hair": record.long_hair,
                      "chips": {wind(s): c for s, c in enumerate(record.chips)},
                      "melds": {wind(s): m for s, m in melds.items() if s != win.side and m},
                      "open_seats": [wind(s) for s in range(4) if s != win.side and any("from" in m for m in melds[s])],
                      "first_discard_followed": settled.followed}}
    if any(i.key == "kong_discard" for i in settled.verdicts[0].context_items):
        case["kong_discard"] = True
    return case


@pytest.mark.parametrize("rules, seed", [("mcr", 3), ("competition", 4), ("liaoning", 5), ("jinzhou", 6)])
def test_every_hand_settles_alike_from_its_record(rules, seed):
    run = SimRun(rules=rules, hands=12, play=True, seed=seed)
    try:
        assert run.run(timeout_s=60000)
        hands = run.session.scoreboard.hands(all_games=True)
        commands = DiagCommands(run.session)
        ruleset = load_ruleset(rules)
        reasons, cases = set(), 0
        for h in hands:
            assert h.record, f"hand {h.hand} has no record"
            data = json.loads(h.record)
            stored = _rows([p.to_json() for p in h.payments])
            reasons |= {row[4] for row in stored}
            record = HandRecord.from_json(data)
            settled = settle_hand(ruleset, record)
            assert _rows([p.to_json() for p in settled.payments]) == stored, f"hand {h.hand}: settle_hand"
            answers: list[dict] = []
            commands.handle({"cmd": "judge", "hand_record": data}, answers.append)
            run.run_until(lambda got=answers: bool(got), 10)
            assert answers[0]["ok"], answers[0]
            assert _rows(answers[0]["money"]) == stored, f"hand {h.hand}: the referee's judge"
            scored = score_line(json.dumps({"id": h.hand, "record": data}))
            assert _rows(scored["money"]) == stored, f"hand {h.hand}: mjtable score of the record"
            case = _case_of(record, settled)
            if case is not None and not any(r[4] in ("chase", "flower_kong") for r in stored):
                # (a case holds no discards and no flowers but the winner's: 追牌 and another's 花杠 it cannot say)
                answer = score_line(json.dumps(case))
                by_wind = {"ESWN"[(s - record.dealer) % 4]: d for s, d in enumerate(settled.deltas())}
                assert answer.get("payments") == by_wind, (f"hand {h.hand}: as a case", case, answer)
                cases += 1
        assert "win" in reasons and cases >= 3
    finally:
        run.close()


def test_power_cuts_in_the_middle_of_hands_keep_each_record_and_its_money_together():
    """The record of the hand in play is read back after a power cut and the players send what was lost: every
    hand's stored money is still what its stored record settles to, nothing paid twice."""
    import random

    run = SimRun(rules="competition", hands=8, play=True, seed=8)
    rng = random.Random(2)
    for at_s in sorted(rng.uniform(100, 2500) for _ in range(10)):
        run.loop.call_at(at_s, run.power_cut, 2.0)
    try:
        assert run.run(timeout_s=80000)
        run.settle()
        board = run.session.scoreboard
        hands = board.hands(all_games=True)
        assert len(hands) >= 8 and board.conserved() and run.game.refused == 0
        assert run.record.power_cuts >= 5
        ruleset = load_ruleset("competition")
        for h in hands:
            settled = settle_hand(ruleset, HandRecord.from_json(json.loads(h.record)))
            assert _rows([p.to_json() for p in settled.payments]) == _rows([p.to_json() for p in h.payments]), h.hand
    finally:
        run.close()


def test_a_referee_s_penalty_is_paid_now_kept_through_a_power_cut_and_named_in_the_summary():
    from sim.report import build_report, summary_lines

    run = SimRun(rules="competition", hands=2, play=True, seed=3)
    try:
        run.run_until(lambda: run.state is not None and run.state.value == "in_play", 3000)
        hand = run.controller.book.hand
        answers: list[dict] = []
        DiagCommands(run.session).handle({"cmd": "penalty", "side": 1, "kind": "early_draw"}, answers.append)
        run.run_until(lambda: bool(answers), 10)
        a = answers[0]
        assert a["ok"] and a["payments"] == {"side0": 10, "side1": -30, "side2": 10, "side3": 10}, a
        assert run.session.scoreboard.chips == [110, 70, 110, 110]
        run.power_cut(2.0)
        run.run_until(lambda: run.session is not None and run.session.hand.hand == hand, 60)
        shown: list[dict] = []
        DiagCommands(run.session).handle({"cmd": "hand"}, shown.append)
        run.run_until(lambda: bool(shown), 10)
        assert "1 penalty early_draw" in shown[0]["record"]["actions"] and shown[0]["in_play"]
        assert run.session.scoreboard.chips == [110, 70, 110, 110]      # read back, not paid again
        refused: list[dict] = []
        DiagCommands(run.session).handle({"cmd": "penalty", "side": 1, "kind": "sneeze"}, refused.append)
        run.run_until(lambda: bool(refused), 10)
        assert not refused[0]["ok"] and "early_draw" in refused[0]["error"]
        assert run.run(timeout_s=20000)
        report = build_report(run, "competition", 2, 1.0)
        assert report["money"]["penalty:early_draw"]["count"] == 3 and report["chips_conserved"]
        assert any("抢摸 3 payments (30)" in line for line in summary_lines(report, []))
        record = json.loads(run.session.scoreboard.hands(all_games=True)[0].record)
        assert "1 penalty early_draw" in record["actions"]
    finally:
        run.close()
