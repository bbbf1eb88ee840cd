"""中国竞技麻将: legal wins, fans, extra points, the settlement of whole hands (rules §A), penalties and the 局."""

import random

import pytest

from firmware.rules.competition.scorer import score_competition
from firmware.rules.registry import load_ruleset
from firmware.rules.settlement import settle_hand
from tests.support.record_builder import by_reason, record, settle
from tests.support.win_builder import make_win

RULES = load_ruleset("competition")
CFG = RULES.config.competition
FULL = (100, 100, 100, 100)


def win(hand, win_tile, melds=(), **kw):
    return make_win(hand, win_tile, melds, rules="competition", **kw)


def score(w):
    return score_competition(w, CFG)


# The worked examples (rules §A.11): 混一色 20 + 单吊 4 + 2 flowers = S 28.
HALF_FLUSH = ("0 pung E from 3", )


def test_example_1_discard_win_pays_twice_s():
    s = settle("competition", *HALF_FLUSH, "0 win N from 2 hand 123345678mN flowers 2", chips=FULL)
    assert s.deltas() == [56, 0, -56, 0] and s.verdicts[0].score.total == 28


def test_example_2_self_drawn_and_concealed():
    s = settle("competition", *HALF_FLUSH, "0 win N hand 123345678mN flowers 2", chips=FULL)
    assert s.deltas() == [84, -28, -28, -28]
    concealed = settle("competition", "0 win N hand 123345678mEEEN flowers 2", chips=FULL)
    assert concealed.verdicts[0].score.total == 36 and concealed.deltas() == [108, -36, -36, -36]


def test_example_3_double_during_a_dealer_streak():
    s = settle("competition", "0 win N hand 123345678mEEEN flowers 2", chips=(200, 200, 200, 200), streak=1)
    assert s.deltas() == [216, -72, -72, -72]
    # 倍打 doubles once, however long the streak
    assert settle("competition", "0 win N hand 123345678mEEEN flowers 2", chips=(200, 200, 200, 200),
                  streak=3).deltas() == [216, -72, -72, -72]


def test_example_4_robbed_kong_pays_three_times():
    s = settle("competition", *HALF_FLUSH, "0 win N from 3 hand 123345678mN flowers 2 kong_win", chips=FULL)
    assert s.deltas() == [84, 0, 0, -84]


def test_example_5_kong_money_and_chase_on_the_spot():
    s = settle("competition", "1 kong 5m from 3", "2 concealed_kong 9p", "0 pung E from 3", "0 added_kong E",
               *[f"3 flower {k}f" for k in (1, 2, 3, 4)])
    money = by_reason(s)
    assert money["melded_kong"] == [0, 12, 0, -12]                # 点杠: the feeder alone pays 12
    assert money["concealed_kong"] == [-6, -6, 18, -6]
    assert money["added_kong"] == [12, -4, -4, -4]
    assert money["flower_kong"] == [-8, -8, -8, 24]               # 春夏秋冬 shown: 花杠
    chase = settle("competition", "1 discard 7s", "2 discard 7s", "3 discard 7s", "0 discard 7s")
    assert by_reason(chase) == {"chase": [4, -12, 4, 4]}           # the first of the four pays each 4


def test_a_claim_breaks_a_run_of_discards():
    s = settle("competition", "1 discard 7s", "2 discard 7s", "3 pung 7s from 2", "3 discard 7s", "0 discard 7s")
    assert s.payments == []                                        # no 追牌


def test_kong_money_doubles_in_a_streak():
    s = settle("competition", "1 concealed_kong 9p", streak=1)
    assert s.deltas() == [-12, 36, -12, -12]


def test_no_fan_no_win():
    s = settle("competition", "0 pung E from 1", "0 win 9s from 1 hand 234m456p78s11s", chips=FULL)
    v = s.verdicts[0]
    assert not v.legal and "无番" in v.reason and s.deltas() == [-30, 10, 10, 10]
    assert 0 in s.dead                                               # and the declarer plays on as 相公


def test_shapes_fourteen_unrelated_yes_thirteen_orphans_no():
    s = score(win("147m258p369sESWC", "F"))
    assert s.win and [k for k, _ in s.fans] == ["fourteen_unrelated"]
    assert not score(win("19m19p19sESWNCFP", "1m")).win


@pytest.mark.parametrize("hand, tile, melds, fan", [
    ("123m456p789s11sEE", "E", [], "mixed_straight"),
    ("123456789p55sEE", "E", [], "pure_straight"),
    ("1122m3344p5566sE", "E", [], "seven_pairs"),
    ("222m555p888sEEEN", "N", [], "all_pungs"),
    ("1234567899m", "9m", ["111m"], "full_flush"),
    ("N", "N", ["123m", "EEE", "555p", "678s"], "melded_single_wait"),
    ("789m789p789s555sN", "N", [], "upper_chows"),
    ("456m456p456s999sN", "N", [], "middle_chows"),
    ("123m123p123s999sN", "N", [], "lower_chows"),
])
def test_each_fan_from_its_definition(hand, tile, melds, fan):
    assert fan in [k for k, _ in score(win(hand, tile, melds)).fans]


def test_melded_single_wait_with_all_pungs_also_scores_all_pungs():
    fans = [k for k, _ in score(win("N", "N", ["111m", "EEE", "555p", "999s"])).fans]
    assert "melded_single_wait" in fans and "all_pungs" in fans


def test_single_wait_only_when_genuine():
    assert "single_wait" in [k for k, _, _ in score(win("12m456p789s55sEEE", "3m")).extras]       # edge
    assert "single_wait" not in [k for k, _, _ in score(win("23m456p789s55sEEE", "4m")).extras]   # two-sided
    assert "single_wait" not in [k for k, _, _ in score(win("1122m3344p5566sE", "E")).extras]     # 七对


def test_every_item_has_a_chinese_name_a_key_and_an_english_name():
    s = RULES.score(win("123345678mN", "N", ["EEE"], flowers=2, self_drawn=True))
    assert s.items and all(i.name and i.key.isascii() and i.en for i in s.items)


def test_the_chips_floor_and_a_win_off_a_player_with_no_points():
    s = settle("competition", *HALF_FLUSH, "0 win N from 2 hand 123345678mN flowers 2", chips=(100, 100, 30, 100))
    assert s.deltas() == [30, 0, -30, 0]                              # "盘面100分付完为止"
    refused = settle("competition", *HALF_FLUSH, "0 win N from 2 hand 123345678mN flowers 2",
                     chips=(100, 100, 0, 100))
    v = refused.verdicts[0]
    # "出现对无分者和牌，应向无分者罚分和牌得分，并向三家各赔付10分": S 28 to the player with no points, 10 to each
    assert not v.legal and "no points" in v.reason
    assert refused.deltas() == [-58, 10, 38, 10]
    assert {p.reason.key for p in refused.payments} == {"refused_win"}


def test_several_winners_on_one_discard_are_paid_in_turn():
    # side 2 discards 5s; sides 3 and 1 both win on it (counter-clockwise from the discarder: 3 first)
    s = settle("competition", "3 pung E from 0", "1 pung W from 0",
               "3 win N from 2 hand 123345678mN", "1 win N from 2 hand 123456789pN", chips=(100, 100, 60, 100))
    assert [v.side for v in s.verdicts if v.legal] == [3, 1]
    assert s.deltas() == [0, 12, -60, 48]                # 2·24 to side 3, then what is left (12) to side 1


SEED_PAYING_ORDER = "一家打出牌张，数家同时和牌，点炮方按逆时针顺序付分"      # S001 §35


@pytest.mark.parametrize("order", [(3, 1), (1, 3)], ids=["in-order", "reversed"])
def test_several_winners_are_paid_counter_clockwise_from_the_discarder_whatever_the_records_order(order):
    """SEED_PAYING_ORDER: the discarder pays 下家 first, then 对家, then 上家; when it cannot pay everyone in full, the
    order decides who is paid.  Side 2 discards with 60: its 下家 (side 3) gets 2·24 = 48, its 上家 (side 1) the
    12 left, whichever win the record names first (a record read from JSON, ``mjtable score`` and ``diag judge
    --hand-record``, is put in paying order)."""
    import json

    from firmware.rules.hand_record import HandRecord

    wins = {3: "3 win N from 2 hand 123345678mN", 1: "1 win N from 2 hand 123456789pN"}
    data = {"rules": "competition", "chips": [100, 100, 60, 100],
            "actions": ["3 pung E from 0", "1 pung W from 0", *(wins[s] for s in order)]}
    s = settle_hand(RULES, HandRecord.from_json(json.loads(json.dumps(data))))
    assert [v.side for v in s.verdicts if v.legal] == [3, 1]
    assert s.deltas() == [0, 12, -60, 48]


def test_a_win_taken_after_one_it_comes_before_on_the_same_discard_is_refused():
    """Taken one at a time (a referee at the table), a win on one discard recorded after a later one in the paying
    order (SEED_PAYING_ORDER) cannot be paid in that order: the record is refused, naming the order, and nothing
    of it is taken; the same side twice on one discard too."""
    from firmware.rules.hand_record import BadRecord

    with pytest.raises(BadRecord, match="counter-clockwise from the discarder.*side 3's win.*before side 1's"):
        settle("competition", "3 pung E from 0", "1 pung W from 0",
               "1 win N from 2 hand 123456789pN", "3 win N from 2 hand 123345678mN", chips=(100, 100, 60, 100))
    with pytest.raises(BadRecord, match="has won on side 2's N already"):
        settle("competition", "3 pung E from 0", "3 win N from 2 hand 123345678mN", "3 win N from 2 hand 123345678mN",
               chips=(100, 100, 60, 100))


def test_a_later_winner_on_one_discard_is_judged_by_the_chips_at_the_discard():
    # side 2 holds 48 when it discards: side 3 takes all of it (2·24); side 1 may still win on the same discard
    # ("数家同时和牌，点炮方按逆时针顺序付分"): it gets what is left (nothing, "盘面100分付完为止"), and is not
    # punished for winning off a player with no points (side 2 had points when it discarded)
    s = settle("competition", "3 pung E from 0", "1 pung W from 0",
               "3 win N from 2 hand 123345678mN", "1 win N from 2 hand 123456789pN", chips=(100, 100, 48, 100))
    assert [v.side for v in s.verdicts if v.legal] == [3, 1]
    assert s.deltas() == [0, 0, -48, 48] and s.verdicts[1].payments == []
    # a discarder with no points before the discard is still refused, for every winner on it
    broke = settle("competition", "3 pung E from 0", "1 pung W from 0",
                   "3 win N from 2 hand 123345678mN", "1 win N from 2 hand 123456789pN", chips=(100, 100, 0, 100))
    assert [v.legal for v in broke.verdicts] == [False, False]
    assert all(p.reason.key == "refused_win" for p in broke.payments)
    # side 3's win ends the 局 with side 3 first (sides 1 and 2 have no points); side 0's win on the same
    # discard moves nothing, so it ends nothing the wrong way (禁止非胜式局结) and costs side 0 nothing
    ended = settle("competition", "3 pung E from 1", "0 pung W from 1",
                   "3 win N from 2 hand 123345678mN", "0 win N from 2 hand 123456789pN", chips=(100, 0, 48, 100))
    assert [v.legal for v in ended.verdicts] == [True, True] and ended.deltas() == [0, 0, -48, 48]


def test_penalties_from_the_rules_text():
    base = ("0 pung E from 1",)
    wrong = settle("competition", *base, "2 pung W from 1", "2 penalty wrong_claim",
                   "2 win N from 0 hand 123456789pN", chips=FULL)
    assert by_reason(wrong)["penalty:wrong_claim"] == [10, 10, -30, 10]   # 错碰: 10 to each ...
    assert not wrong.verdicts[0].legal and "相公" in wrong.verdicts[0].reason   # ... and no win that hand
    early = settle("competition", "1 penalty early_draw", "1 penalty early_draw")
    assert early.deltas() == [30, -90, 30, 30]                                  # 10 each, then 20 each
    assert settle("competition", "3 penalty early_exposure").deltas() == [10, 10, 10, -30]    # 30: 10 to each
    assert settle("competition", "0 penalty named_discard").deltas() == [-30, 10, 10, 10]
    late = settle("competition", "2 penalty late_claim", "2 penalty late_claim", "2 penalty late_claim")
    assert late.deltas() == [30, 30, -90, 30]                       # a warning, then 10 each, then 20 each
    harmed = settle("competition", "1 penalty early_draw to 2")
    assert harmed.deltas() == [0, -30, 30, 0]                                   # all to the harmed player
    with pytest.raises(ValueError, match="no penalty 'sneeze'"):
        settle("competition", "1 penalty sneeze")


def test_full_flush_danger_and_three_claims_from_one_feeder_make_one_seat_pay():
    # side 0 claims three times from side 3 (its left): side 3 pays alone, 3·S, even for a self-drawn win
    s = settle("competition", "0 chow 123m from 3", "0 pung E from 3", "0 chow 456p from 3",
               "0 win N hand 789sN", chips=FULL)
    v = s.verdicts[0]
    assert v.legal and v.liable == 3 and s.deltas()[3] == -3 * v.score.total and s.deltas()[1] == 0


def test_a_melded_single_wait_on_its_hung_tile_makes_the_discarder_pay_for_all():
    # side 0 (the dealer, its tiles followed from the deal) claims four sets and waits on N, the hung tile
    lines = ["0 deal 123m555p789sEEWWN", "0 discard 8s",
             "3 discard E", "0 pung E from 3", "0 discard 1m", "3 discard W", "0 pung W from 3", "0 discard 2m",
             "1 discard 5p", "0 pung 5p from 1", "0 discard 3m", "3 discard 8s", "0 chow 789s from 3",
             "0 discard 5p"]
    hung = settle("competition", *lines, "1 discard N", "0 win N from 1 hand N", chips=FULL)
    v = hung.verdicts[0]
    assert v.legal and v.liable == 1 and hung.deltas()[1] == -3 * v.score.total
    swapped = settle("competition", *lines, "0 draw S", "0 discard N", "1 discard S", "0 win S from 1 hand S",
                     chips=FULL)
    assert swapped.verdicts[0].legal and swapped.verdicts[0].liable is None   # swapped: a plain 点炮
    with pytest.raises(ValueError, match="does not hold"):
        settle("competition", *lines, "0 discard 9m")                          # a tile side 0 never had


def test_the_match_ends_when_two_players_have_no_points_and_may_not_end_the_wrong_way():
    assert RULES.match_end([200, 0, 0, 200], 0) is not None
    assert RULES.match_end([200, 0, 100, 100], 0) is None
    assert RULES.match_end([100, 100, 100, 100], 4) is not None           # the four 圈 are played
    # side 0 wins off side 2 (20 left) while side 1 has no points: side 3 would be first -> not allowed
    s = settle("competition", *HALF_FLUSH, "0 win N from 2 hand 123345678mN flowers 2", chips=(40, 0, 20, 340))
    assert not s.verdicts[0].legal and "局结" in s.verdicts[0].reason
    # the same win when side 0 ends first is allowed
    ok = settle("competition", *HALF_FLUSH, "0 win N from 2 hand 123345678mN flowers 2", chips=(300, 0, 20, 80))
    assert ok.verdicts[0].legal and ok.deltas() == [20, 0, -20, 0]
    # kong money that would end it with another first is held off the board (挂于盘外)
    held = settle("competition", "0 kong 5m from 2", chips=(10, 0, 12, 378))
    assert held.payments and all(p.held for p in held.payments) and held.deltas() == [0, 0, 0, 0]
    assert held.deltas(include_held=True) == [12, 0, -12, 0]


def test_a_false_win_penalty_that_would_end_the_match_the_wrong_way_is_held():
    # side 1 has no points; side 2 (5 left) declares a false win: paying it would leave two players with no
    # points and side 3 first, a 非胜式局结 "任何杠牌或处罚而导致分数变化": held off the board (挂于盘外), in full
    # (the board's floor is not the floor of what is off it): 10 to each
    s = settle("competition", "2 win 1m from 0 hand 1358m2468p1357s9p", chips=(40, 0, 5, 355))
    assert not s.verdicts[0].legal and s.payments and all(p.held for p in s.payments)
    assert s.deltas() == [0, 0, 0, 0] and s.deltas(include_held=True) == [10, 10, -30, 10]
    # with the 局 not at stake it is paid on the board, where the floor holds (side 2 has 5: 5 to side 0)
    paid = settle("competition", "2 win 1m from 0 hand 1358m2468p1357s9p", chips=(40, 20, 5, 335))
    assert not any(p.held for p in paid.payments) and paid.deltas() == [5, 0, -5, 0]


SEED_BOARD = "盘面100分付完为止"                       # S001 付分: the board's points are paid until they are gone
SEED_OFF_BOARD = "杠牌和处罚的得失分只能挂于盘外，局结后累积得分"   # S001 §32: held off the board, added after the 局
SEED_DEAD_POINTS = "处理成盘外的死分，不再计算为盘内分"           # S001 罚分: a penalty off the board is dead points


def test_held_money_is_owed_in_full_and_a_final_score_may_be_below_nothing():
    """The seed's floor is the board's (SEED_BOARD); money held off the board is added to the 局's scores when it
    ends (SEED_OFF_BOARD), like a penalty made dead points off the board (SEED_DEAD_POINTS): nothing floors it.
    So kong money held off the board is owed in full, and a final score (board + held) may be below nothing, as
    in ``mjtable sim --rules competition --hands 200 --seed 202``'s ninth game (side 2: 0 on the board, 8 held
    -> -8)."""
    # 点杠 12 from side 2, who holds 8: held (it would end the 局 with side 3 first), all 12 of it
    held = settle("competition", "0 kong 5m from 2", chips=(10, 0, 8, 382))
    assert all(p.held for p in held.payments) and held.deltas(include_held=True) == [12, 0, -12, 0]
    # a second held payment from the same side is owed in full too
    twice = settle("competition", "0 kong 5m from 2", "0 kong 6m from 2", chips=(10, 0, 8, 382))
    assert twice.deltas() == [0, 0, 0, 0]
    after = [c + d for c, d in zip((10, 0, 8, 382), twice.deltas(include_held=True))]
    assert after == [34, 0, -16, 382]


def test_random_legal_hands_settle_to_zero_and_respect_the_chips_floor():
    from bench.mcr_hands import generated_wins
    from firmware.rules.hand_record import Action, Verb
    from firmware.rules.win import Win

    rng = random.Random(11)
    settled = 0
    for w in generated_wins(rng, 1500):
        w = Win(w.hand, w.melds, w.win_tile, w.self_drawn, False, w.kong_win, w.last_tile, flowers=w.flowers)
        chips = tuple(rng.randrange(1, 150) for _ in range(4))
        rec = record("competition", chips=chips, streak=int(rng.random() < 0.3))
        for m in w.melds:
            if m.concealed:
                rec.actions.append(Action(Verb.CONCEALED_KONG, 0, m.tile))
            else:
                verb = {"chow": Verb.CHOW, "pung": Verb.PUNG, "kong": Verb.KONG}[m.kind.value]
                rec.actions.append(Action(verb, 0, m.tile, 3))
        rec.actions.append(Action(Verb.WIN, 0, w.win_tile, None if w.self_drawn else rng.choice([1, 2, 3]),
                                  w.hand, frozenset(["kong_win"] if w.kong_win else []), w.flowers))
        s = settle_hand(RULES, rec)
        assert sum(s.deltas(include_held=True)) == 0
        after = [c + d for c, d in zip(chips, s.deltas())]
        assert all(a >= 0 for a in after), (chips, s.deltas())
        settled += s.verdicts[0].legal
    assert settled > 300


def test_a_dead_hand_may_not_win():
    import io
    import json

    from firmware.rules.case_scoring import score_stream

    case = {"id": "d", "rules": "competition", "hand": "123345678mN", "win_tile": "N", "seat_wind": "E",
            "round_wind": "E", "melds": [{"kind": "pung", "tiles": "EEE", "from": "left"}], "discarder": "W",
            "table": {"dead_hands": ["E"]}}
    out = io.StringIO()
    score_stream(io.StringIO(json.dumps(case) + "\n"), out)
    result = json.loads(out.getvalue())
    assert result["meets_minimum"] is True and "相公" in result["reason"]
    assert result["payments"] == {"E": -30, "S": 10, "W": 10, "N": 10}


def test_an_amount_of_zero_pays_nothing():
    import tomllib
    from pathlib import Path

    from firmware.config_paths import rules_file
    from firmware.rules.config import parse_ruleset_config
    from firmware.rules.registry import from_config

    data = tomllib.loads(rules_file("competition", None).read_text(encoding="utf-8"))
    zero = ("melded_kong_from_discard", "added_kong_each", "concealed_kong_each", "flower_kong_each", "chase_each",
            "false_win_each", "refused_win_each")
    data["competition"]["settlement"].update({k: 0 for k in zero})
    data["competition"]["extras"]["flower"] = 0
    rules = from_config(parse_ruleset_config(data, Path("competition.toml")))
    lines = ("1 kong 5m from 3", "2 concealed_kong 9p", "0 pung E from 3", "0 added_kong E",
             *[f"3 flower {k}f" for k in (1, 2, 3, 4)], "1 discard 2s", "2 discard 2s", "3 discard 2s",
             "0 discard 2s", "2 win 1m from 1 hand 1358m2468p13s")
    s = settle_hand(rules, record("competition", *lines, chips=FULL, streak=1))
    assert s.payments == [] and not s.verdicts[0].legal                 # no kong money, 追牌 or 诈和 penalty
    flowers = settle_hand(rules, record("competition", *HALF_FLUSH, "0 win N from 2 hand 123345678mN flowers 2",
                                        chips=FULL))
    assert flowers.verdicts[0].score.total == 24 and flowers.deltas() == [48, 0, -48, 0]   # no flower points
    refused = settle_hand(rules, record("competition", *HALF_FLUSH, "0 win N from 2 hand 123345678mN",
                                        chips=(100, 100, 0, 100)))
    assert refused.deltas() == [-24, 0, 24, 0]          # S to the player with no points, no 10 to each
