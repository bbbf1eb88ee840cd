"""中国竞技麻将: legal wins, fans, extra points, settlement (rules §A worked examples), dealer rotation."""

import pytest

from tests.win_builder import make_win
from firmware.rules.competition.scorer import score_competition
from firmware.rules.competition.settlement import WinRefused, chase_payments, kong_payments, win_payments
from firmware.rules.ruleset import load_ruleset

CFG = load_ruleset("competition").competition


def win(hand, win_tile, melds=(), **kw):
    return make_win(hand, win_tile, melds, rules="competition", **kw)


def score(w):
    return score_competition(w, CFG)


HALF_FLUSH_SINGLE = dict(hand="123345678mN", win_tile="N", melds=["EEE"], flowers=2)


def test_example_1_discard_win_pays_twice_s():
    s = score(win(**HALF_FLUSH_SINGLE))
    assert [k for k, _ in s.fans] == ["half_flush"] and s.total == 28
    assert win_payments(s, 0, 2, CFG.settlement) == [56, 0, -56, 0]


def test_example_2_self_drawn_and_concealed():
    s = score(win(**HALF_FLUSH_SINGLE, self_drawn=True))
    assert s.total == 28 and win_payments(s, 0, None, CFG.settlement) == [84, -28, -28, -28]
    concealed = score(win("123345678mEEEN", "N", flowers=2, self_drawn=True))
    assert concealed.total == 36
    assert win_payments(concealed, 0, None, CFG.settlement) == [108, -36, -36, -36]


def test_example_3_double_during_a_dealer_streak():
    concealed = score(win("123345678mEEEN", "N", flowers=2, self_drawn=True))
    assert win_payments(concealed, 0, None, CFG.settlement, double=True) == [216, -72, -72, -72]


def test_example_4_robbed_kong_pays_three_times():
    s = score(win(**HALF_FLUSH_SINGLE, kong_win=True))
    assert s.total == 28
    assert win_payments(s, 0, 3, CFG.settlement, robbed_kong=True) == [84, 0, 0, -84]


def test_example_5_kong_money_on_the_spot():
    assert kong_payments("melded", 1, 3, CFG.settlement) == [0, 12, 0, -12]
    assert kong_payments("concealed", 1, None, CFG.settlement) == [-6, 18, -6, -6]
    assert kong_payments("flower", 2, None, CFG.settlement) == [-8, -8, 24, -8]
    assert kong_payments("added", 0, None, CFG.settlement) == [12, -4, -4, -4]
    assert chase_payments(2, CFG.settlement) == [4, 4, -12, 4]


def test_no_fan_no_win():
    s = score(win("234m456p78s11s", "9s", ["EEE"]))          # a plain hand: no 技术型番种
    assert s.win and not s.meets_minimum
    assert win_payments(s, 0, 1, CFG.settlement) == [-30, 10, 10, 10]


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


def test_chips_floor_and_refused_win():
    s = score(win(**HALF_FLUSH_SINGLE))
    assert win_payments(s, 0, 2, CFG.settlement, chips=[100, 100, 30, 100]) == [30, 0, -30, 0]
    with pytest.raises(WinRefused):
        win_payments(s, 0, 2, CFG.settlement, chips=[100, 100, 0, 100])


def test_random_legal_hands_settle_to_zero_and_respect_the_chips_floor():
    import random

    from bench.mcr_hands import generated_wins
    from firmware.rules.win import Win

    rng = random.Random(11)
    settled = 0
    for w in generated_wins(rng, 1500):
        w = Win(w.hand, w.melds, w.win_tile, w.self_drawn, False, w.kong_win, w.last_tile, flowers=w.flowers)
        s = score(w)
        if not s.win:
            continue
        chips = [rng.randrange(1, 150) for _ in range(4)]
        discarder = None if w.self_drawn else rng.choice([1, 2, 3])
        deltas = win_payments(s, 0, discarder, CFG.settlement, double=rng.random() < 0.3, chips=chips)
        assert sum(deltas) == 0
        if s.meets_minimum:
            assert all(chips[p] + deltas[p] >= 0 for p in range(1, 4))
        settled += 1
    assert settled > 500


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
    assert result["win"] is False and "相公" in result["reason"]
    assert result["payments"] == {"E": -30, "S": 10, "W": 10, "N": 10}
