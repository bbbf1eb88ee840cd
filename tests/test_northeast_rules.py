"""辽宁 and 锦州: winning conditions, the doubling settlement (rules §C.6, §D.4), kong money, dealer rotation."""

import random

import pytest

from tests.win_builder import make_win
from firmware.rules.northeast import TableContext, dealer_pays_each, kong_money, score_northeast, settle
from firmware.rules.ruleset import load_ruleset

LN = load_ruleset("liaoning")
JZ = load_ruleset("jinzhou")


def win(hand, win_tile, melds=(), rules="liaoning", seat="E", **kw):
    return make_win(hand, win_tile, melds, rules=rules, seat=seat, **kw)


def pay(w, rules, winner, discarder, **ctx):
    s = score_northeast(w, rules)
    assert s.legal, s.reason
    return settle(w, s, winner, discarder, TableContext(**ctx), rules)


# -- 辽宁 (§C.6, base 1) ---------------------------------------------------------------
def test_liaoning_example_1_self_drawn_plain_hand():
    w = win("45p789s555s99m", "6p", ["123m"], self_drawn=True)
    result = pay(w, LN, 0, None, dealer=1, open_seats=frozenset({1, 2}))
    assert result.deltas == [10, -4, -2, -4]
    assert dict(result.breakdown[1]) == {"self_drawn": 1, "dealer": 1}
    assert dict(result.breakdown[3]) == {"self_drawn": 1, "payer_closed": 1}


def test_liaoning_example_2_closed_wait_on_a_discard():
    w = win("46p789s555s99m", "5p", ["123m"])
    result = pay(w, LN, 0, 2, dealer=1, open_seats=frozenset({1, 2, 3}))
    assert result.deltas == [4, 0, -4, 0]
    assert dict(result.breakdown[2]) == {"single_wait": 1, "discard": 1}


def test_liaoning_example_3_all_pungs_last_single_from_the_dealer_hits_the_cap():
    w = win("N", "N", ["111m", "555p", "999s", "EEE"])
    result = pay(w, LN, 0, 1, dealer=1, open_seats=frozenset({1, 2, 3}))
    assert result.deltas == [64, -64, 0, 0]
    names = [n for n, _ in result.breakdown[1]]
    assert {"all_pungs", "last_single", "discard", "dealer"} <= set(names)


@pytest.mark.parametrize("hand, tile, melds, reason", [
    ("123m456p789s555sE", "E", [], "开门"),                       # closed
    ("456p789s555s9m", "9m", ["1111m*"], "开门"),                  # a concealed kong does not open
    ("456p789s678s9m", "9m", ["123m"], "刻"),                     # no pung
    ("45p678s555s66m", "6p", ["234m"], "幺九"),                    # no 1, 9 or honour
    ("456m789m555s9m", "9m", ["123m"], "三门齐"),
])
def test_liaoning_conditions(hand, tile, melds, reason):
    s = score_northeast(win(hand, tile, melds), LN)
    assert s.win and not s.legal and reason in s.reason


def test_liaoning_stand_ins_and_seven_pairs():
    assert score_northeast(win("456p789s678sC", "C", ["123m"]), LN).legal                # a 中 pair stands in
    assert not score_northeast(win("456p789s678sE", "E", ["123m"]), LN).legal            # an East pair does not
    assert score_northeast(win("11m22p33s44m55p66sC", "C"), LN).legal                    # 七对, closed
    assert not score_northeast(win("11m22m33m44m55m66mC", "C"), LN).legal               # 七对 without 三门齐


# -- 锦州 (§D.4) -----------------------------------------------------------------------------
JZ_OFF = JZ.model_copy(update={"doubling": JZ.doubling.model_copy(update={"who_pays": "discarder"})})


@pytest.mark.parametrize("hand, tile, melds, amount", [
    ("45p789s555s99m", "6p", ["123m"], 2),           # 平胡 点炮
    ("46p789s555s99m", "5p", ["123m"], 4),           # 洞
    ("555p999s22s88s", "2s", ["111m"], 8),           # 飘
    ("555p222s888s5m", "5m", ["111m"], 16),          # 楼
])
def test_jinzhou_example_1_discarder_pays(hand, tile, melds, amount):
    result = pay(win(hand, tile, melds, rules="jinzhou"), JZ_OFF, 0, 2, dealer=1, open_seats=frozenset({1, 2, 3}))
    assert result.deltas[2] == -amount


def test_jinzhou_example_2_the_2048_chain():
    w = win("111m555p888s5m", "5m", ["CCCC*"], rules="jinzhou", self_drawn=True, kong_win=True)
    result = pay(w, JZ, 0, None, dealer=0, open_seats=frozenset(), wild_in_play=True)
    assert result.deltas == [3 * 2048, -2048, -2048, -2048]
    assert sum(n for _, n in result.breakdown[1]) == 11
    assert kong_money("concealed", 0, w.melds[0].tile, JZ) == [24, -8, -8, -8]       # + 8 each: 2056


def test_jinzhou_one_family_pays_for_all():
    w = win("45p789s555s99m", "6p", ["123m"], rules="jinzhou")
    result = pay(w, JZ, 0, 2, dealer=1, open_seats=frozenset({1, 2, 3}))
    # the discarder pays its own 2 (点炮), the dealer's 2 (庄) and the third seat's 1
    assert result.deltas == [5, 0, -5, 0]


def test_jinzhou_kongs_draw_and_follow():
    red = win("45p789s555s99m", "6p", ["123m"], rules="jinzhou").melds[0].tile  # any tile; red below
    from firmware.tiles.tile import parse_one
    assert kong_money("melded", 1, parse_one("5m"), JZ) == [-2, 6, -2, -2]
    assert kong_money("concealed", 1, parse_one("5m"), JZ) == [-4, 12, -4, -4]
    assert kong_money("concealed", 1, parse_one("C"), JZ) == [-8, 24, -8, -8]
    assert dealer_pays_each(0, JZ.doubling.draw_dealer_pays_each) == [-6, 2, 2, 2]
    assert dealer_pays_each(0, JZ.doubling.follow_dealer_pays_each) == [-6, 2, 2, 2]
    assert red is not None


def test_jinzhou_conditions():
    assert score_northeast(win("123m456p789s55sCC", "C", [], rules="jinzhou"), JZ).legal          # 红中 pair
    assert not score_northeast(win("123m456p789s678s5s", "5s", [], rules="jinzhou"), JZ).legal    # no pung
    assert score_northeast(win("22m33m44m55m66m77mC", "C", rules="jinzhou"), JZ).legal          # 七对 free


@pytest.mark.parametrize("rules", [LN, JZ])
def test_random_legal_hands_settle_to_zero_and_respect_the_floor(rules):
    from bench.mcr_hands import generated_wins
    from firmware.rules.win import Win

    rng = random.Random(5)
    settled = 0
    for w in generated_wins(rng, 3000):
        if rules.rules.name == "jinzhou" and any(k in range(27, 31) or k in (32, 33)
                                                 for k in (*w.hand, w.win_tile, *[m.tile for m in w.melds])):
            continue
        w = Win(w.hand, w.melds, w.win_tile, w.self_drawn, False, w.kong_win, w.last_tile)
        s = score_northeast(w, rules)
        if not s.legal:
            continue
        chips = tuple(rng.randrange(0, 200) for _ in range(4))
        discarder = None if w.self_drawn else rng.choice([1, 2, 3])
        ctx = TableContext(dealer=rng.randrange(4), open_seats=frozenset(rng.sample([1, 2, 3], rng.randrange(4))),
                           chips=chips)
        result = settle(w, s, 0, discarder, ctx, rules)
        assert sum(result.deltas) == 0
        assert all(chips[p] + result.deltas[p] >= 0 for p in range(1, 4))
        settled += 1
    assert settled > 50


def test_liaoning_example_4_pet_style_base_two():
    pet = LN.model_copy(update={"doubling": LN.doubling.model_copy(update={
        "base": 2, "items": {**LN.doubling.items, "self_drawn": 0, "single_wait": 0, "last_single": 0}})})
    w = win("N", "N", ["111m", "555p", "999s", "EEE"], self_drawn=True)
    result = pay(w, pet, 0, None, dealer=0, open_seats=frozenset({2, 3}))
    assert result.deltas[1] == -64           # 2 x 8 (飘) x 2 (庄) x 2 (the payer closed)
