"""辽宁 and 锦州: winning conditions, the doubling settlement (rules §C.6, §D.4), on-the-spot money, rotation."""

import random

import pytest

from firmware.rules.northeast.scoring import legal_waits
from firmware.rules.registry import from_config, load_ruleset
from firmware.rules.ruleset import Dealership, HandOutcome, PlayRules
from firmware.rules.settlement import settle_hand
from tests.support.record_builder import by_reason, record, settle
from tests.support.win_builder import make_win

LN = load_ruleset("liaoning")
JZ = load_ruleset("jinzhou")


def variant(rules, **doubling):
    cfg = rules.config
    return from_config(cfg.model_copy(update={"doubling": cfg.doubling.model_copy(update=doubling)}))


def items(breakdown) -> dict[str, int]:
    return {i.key: i.points * i.count for i in breakdown.items}


# -- 辽宁 (§C.6, base 1) ---------------------------------------------------------------
def test_liaoning_example_1_self_drawn_plain_hand():
    # A (side 0, open) self-draws; B = side 1 the dealer (open), C = side 2 open, D = side 3 closed
    s = settle("liaoning", "0 chow 123m from 3", "1 opened", "2 opened", "0 win 6p hand 45p789s555s99m", dealer=1)
    assert s.deltas() == [10, -4, -2, -4]
    shares = {b.payer: items(b) for b in s.verdicts[0].breakdown}
    assert shares[1] == {"self_drawn": 1, "dealer": 1} and shares[3] == {"self_drawn": 1, "payer_closed": 1}


def test_liaoning_example_2_closed_wait_on_a_discard():
    s = settle("liaoning", "0 chow 123m from 3", "1 opened", "2 opened", "3 opened",
               "0 win 5p from 2 hand 46p789s555s99m", dealer=1)
    assert s.deltas() == [4, 0, -4, 0]
    assert items(s.verdicts[0].breakdown[0]) == {"single_wait": 1, "discard": 1}


def test_liaoning_example_3_all_pungs_last_single_from_the_dealer_hits_the_cap():
    s = settle("liaoning", "0 pung 1m from 3", "0 pung 5p from 3", "0 pung 9s from 2", "0 pung E from 1",
               "1 opened", "2 opened", "3 opened", "0 win N from 1 hand N", dealer=1)
    assert s.deltas() == [64, -64, 0, 0]
    assert items(s.verdicts[0].breakdown[0]) == {"all_pungs": 3, "last_single": 1, "discard": 1, "dealer": 1}


def test_liaoning_last_single_is_not_also_a_single_wait():
    # 飘 3 + 手把一 1 + 点炮 1 = 5 off a discarder who is not the dealer: 32 (一口听 too would make 6, 64)
    lines = ("0 pung 1m from 3", "0 pung 5p from 3", "0 pung 9s from 2", "0 pung E from 1", "1 opened", "2 opened",
             "3 opened", "0 win N from 2 hand N")
    s = settle("liaoning", *lines, dealer=1)
    assert s.deltas() == [32, 0, -32, 0]
    assert items(s.verdicts[0].breakdown[0]) == {"all_pungs": 3, "last_single": 1, "discard": 1}
    # where 手把一 is not scored, the single wait still is
    no_last = variant(LN, items={**LN.config.doubling.items, "last_single": 0})
    assert items(settle_hand(no_last, record("liaoning", *lines, dealer=1)).verdicts[0].breakdown[0]) == \
        {"all_pungs": 3, "single_wait": 1, "discard": 1}


def test_liaoning_example_4_pet_style_base_two():
    pet = variant(LN, base=2, items={**LN.config.doubling.items, "self_drawn": 0, "single_wait": 0,
                                     "last_single": 0})
    rec = record("liaoning", "0 pung 1m from 3", "0 pung 5p from 3", "0 pung 9s from 2", "0 pung E from 1",
                 "1 opened", "0 win N hand N")
    assert settle_hand(pet, rec).deltas()[3] == -64   # 2 x 8 (飘) x 2 (庄: side 0 deals) x 2 (side 3 closed)


def test_liaoning_a_lone_terminal_wait_is_a_single_wait():
    """单和幺: 23m with no 1 or 9 elsewhere can win only on 1m (4m would lack 幺九): 一口听 (issue 15)."""
    w = make_win("23m345p456s66s", "1m", ["777p"], rules="liaoning")
    assert legal_waits(w, LN.config.conditions) == [0]
    assert "single_wait" in [i.key for i in LN.score(w).items]
    two_sided = make_win("23m345p456s99s", "1m", ["777p"], rules="liaoning")      # 99s: 4m is legal too
    assert "single_wait" not in [i.key for i in LN.score(two_sided).items]


@pytest.mark.parametrize("hand, tile, melds, reason", [
    ("123m456p789s555sE", "E", [], "开门"),                       # closed
    ("456p789s555s9m", "9m", ["1111m*"], "开门"),                  # a concealed kong does not open
    ("456p789s678s9m", "9m", ["123m"], "刻"),                     # no pung
    ("45p678s555s66m", "6p", ["234m"], "幺九"),                    # no 1, 9 or honour
    ("456m789m555s9m", "9m", ["123m"], "三门齐"),
])
def test_liaoning_conditions(hand, tile, melds, reason):
    s = LN.score(make_win(hand, tile, melds, rules="liaoning"))
    assert s.shape and not s.legal and reason in s.reason


def test_liaoning_stand_ins_and_seven_pairs():
    assert LN.score(make_win("456p789s678sC", "C", ["123m"], rules="liaoning")).legal     # a 中 pair stands in
    assert not LN.score(make_win("456p789s678sE", "E", ["123m"], rules="liaoning")).legal  # an East pair does not
    assert LN.score(make_win("11m22p33s44m55p66sC", "C", rules="liaoning")).legal           # 七对, closed
    assert not LN.score(make_win("11m22m33m44m55m66mC", "C", rules="liaoning")).legal      # 七对 without 三门齐


def test_liaoning_draws_and_following_carry_long_hair():
    d = LN.next_dealer(Dealership(1), HandOutcome(drawn=True))
    assert d == Dealership(1, 0, 1)                                    # 黄庄: the dealer stays, 长毛 +1
    d = LN.next_dealer(d, HandOutcome(drawn=True, followed=True))
    assert d == Dealership(1, 0, 3)                                    # it accumulates; 跟庄 adds one
    assert LN.next_dealer(d, HandOutcome((1,))) == Dealership(1, 1, 0)  # a dealer win keeps the seat
    assert LN.next_dealer(d, HandOutcome((2,), followed=True)) == Dealership(2, 0, 1)
    s = settle("liaoning", "0 chow 123m from 3", "1 opened", "2 opened", "3 opened",
               "0 win 5p from 2 hand 46p789s555s99m", dealer=1, long_hair=2)
    assert items(s.verdicts[0].breakdown[0])["long_hair"] == 2 and s.deltas()[2] == -16


# -- 锦州 (§D.4) -----------------------------------------------------------------------------
ONE_PAYS = variant(JZ, who_pays="discarder")
OPEN = ("1 opened", "2 opened", "3 opened")


@pytest.mark.parametrize("hand, tile, melds, amount", [
    ("45p789s555s99m", "6p", "0 chow 123m from 3", 2),           # 平胡 点炮
    ("46p789s555s99m", "5p", "0 chow 123m from 3", 4),           # 洞
    ("555p999s22s88s", "2s", "0 pung 1m from 3", 8),             # 飘
    ("555p222s888s5m", "5m", "0 pung 1m from 3", 16),            # 楼
])
def test_jinzhou_example_1_discarder_pays(hand, tile, melds, amount):
    rec = record("jinzhou", melds, *OPEN, f"0 win {tile} from 2 hand {hand}", dealer=1)
    assert settle_hand(ONE_PAYS, rec).deltas()[2] == -amount


def test_jinzhou_example_2_the_dealer_s_closed_self_drawn_lou_after_a_red_dragon_kong():
    """"胡1 庄家2 自摸4 楼32 闭门64 红中杠开256 对方闭门512 四清1024 穷楼 2048, 另外再加8块钱红中暗杠钱": without a
    wild tile in play (会儿 off) there is no 穷, so 1024 from each, plus the 红中暗杠 money of 8 from each."""
    s = settle("jinzhou", "0 concealed_kong C", "0 win 5m hand 111m555p888s5m kong_win")
    assert by_reason(s)["win"] == [3 * 1024, -1024, -1024, -1024]
    assert by_reason(s)["concealed_kong"] == [24, -8, -8, -8]
    assert s.deltas() == [3 * 1032, -1032, -1032, -1032]
    assert all(sum(i.points * i.count for i in b.items) == 10 for b in s.verdicts[0].breakdown)


def test_jinzhou_red_dragon_kong_replacement_is_the_kong_whose_replacement_won():
    # a 红中 暗杠, then a 5m 暗杠: the win on the 5m kong's replacement is a plain 杠开 (+1), not 红中杠开 (+2)
    plain = settle("jinzhou", "0 concealed_kong C", "0 concealed_kong 5m", "0 win 8s hand 111m555p8s kong_win")
    assert {i.key: i.count for i in plain.verdicts[0].items}["kong_replacement"] == 1
    # 楼 3 + 庄, 自摸, 杠开, 闭门, 对方闭门, 四清 1 each: N = 9
    assert by_reason(plain)["win"] == [3 * 512, -512, -512, -512]
    red = settle("jinzhou", "0 concealed_kong 5m", "0 concealed_kong C", "0 win 8s hand 111m555p8s kong_win")
    assert {i.key: i.count for i in red.verdicts[0].items}["kong_replacement"] == 2
    assert by_reason(red)["win"] == [3 * 1024, -1024, -1024, -1024]


def test_jinzhou_one_family_pays_for_all_and_the_breakdown_names_every_share():
    s = settle("jinzhou", "0 chow 123m from 3", *OPEN, "0 win 6p from 2 hand 45p789s555s99m", dealer=1)
    # the discarder pays its own 2 (点炮), the dealer's 2 (庄) and the third seat's 1
    assert s.deltas() == [5, 0, -5, 0]
    shares = {b.payer: (b.amount, items(b)) for b in s.verdicts[0].breakdown}
    assert shares == {1: (2, {"dealer": 1}), 2: (2, {"discard": 1}), 3: (1, {})}


def test_jinzhou_example_3_kong_money_and_example_4_draw_and_follow():
    money = by_reason(settle("jinzhou", "1 kong 5m from 0", "2 concealed_kong 5p", "3 concealed_kong C"))
    assert money["melded_kong"] == [-2, 6, -2, -2]                 # 明杠: 2 from each
    assert money["concealed_kong"] == [-12, -12, 12 - 8, 24 - 4]   # 暗杠 4 each; 红中暗杠 8 each
    assert settle("jinzhou", "wall_end").deltas() == [-6, 2, 2, 2]           # 黄庄: the dealer pays 2 each
    follow = settle("jinzhou", "0 discard 9p", "1 discard 9p", "2 discard 9p", "3 discard 9p")
    assert follow.followed and by_reason(follow) == {"follow": [-6, 2, 2, 2]}   # 跟庄 detected from the discards
    not_first = settle("jinzhou", "0 discard 1m", "1 discard 9p", "2 discard 9p", "3 discard 9p", "0 discard 9p")
    assert not not_first.followed and not_first.payments == []


def test_jinzhou_a_discard_right_after_a_kong_is_kong_discard():
    s = settle("jinzhou", "0 chow 123m from 3", *OPEN[1:], "1 concealed_kong C", "1 draw 4s", "1 discard 6p",
               "0 win 6p from 1 hand 45p789s555s99m", dealer=2)
    assert s.verdicts[0].legal
    counts = {i.key: i.count for i in s.verdicts[0].items}
    assert counts["kong_discard"] == 2                  # 杠流泪, and once more after a 红中 kong


SEED_ROBBED_KONG = "只有摸到杠的玩家将这张牌过杠了，才可以抢杠，同时，这个杠也就不算分了"     # S002-D (6)

ROBBED = ("1 pung 5m from 2", "2 opened", "3 opened", "0 pung 1p from 3", "1 added_kong 5m")


def test_jinzhou_a_robbed_added_kong_is_not_paid():
    """SEED_ROBBED_KONG: the 加杠 taken on the spot (2 from each) goes back when a win robs it; the robbed side keeps
    its pung.  A false win on that tile robs nothing: the kong stands."""
    s = settle("jinzhou", *ROBBED, "0 win 5m from 1 hand 67m789p123s99s kong_win")
    money = by_reason(s)
    assert money["added_kong"] == [-2, 6, -2, -2] and money["robbed_kong"] == [2, -6, 2, 2]
    assert s.deltas() == money["win"]
    # two robbers (where several may win): returned once
    two = variant(JZ)
    two.play = PlayRules(several_winners=True)
    both = settle_hand(two, record("jinzhou", *ROBBED, "2 win 5m from 1 hand 67m789p123s99s999m kong_win",
                                   "0 win 5m from 1 hand 67m789p123s99s kong_win"))
    assert [v.legal for v in both.verdicts] == [True, True] and by_reason(both)["robbed_kong"] == [2, -6, 2, 2]
    false = settle("jinzhou", *ROBBED, "0 win 5m from 1 hand 12m789p123s99s kong_win")
    assert not false.verdicts[0].legal and "robbed_kong" not in by_reason(false)
    assert by_reason(false)["added_kong"] == [-2, 6, -2, -2]


def test_liaoning_keeps_a_robbed_kongs_money_where_its_switch_says():
    s = settle_hand(variant(LN, kong_each={"melded": 1, "concealed": 2}),
                    record("liaoning", *ROBBED, "0 win 5m from 1 hand 67m789p123s99s kong_win"))
    assert "robbed_kong" not in by_reason(s) and by_reason(s)["added_kong"] == [-1, 3, -1, -1]
    off = settle_hand(variant(LN, kong_each={"melded": 1, "concealed": 2}, robbed_kong_paid=False),
                      record("liaoning", *ROBBED, "0 win 5m from 1 hand 67m789p123s99s kong_win"))
    assert by_reason(off)["robbed_kong"] == [1, -3, 1, 1]


def test_jinzhou_conditions():
    assert JZ.score(make_win("123m456p789s55sCC", "C", [], rules="jinzhou")).legal          # 红中 pair
    assert not JZ.score(make_win("123m456p789s678s5s", "5s", [], rules="jinzhou")).legal    # no pung
    assert JZ.score(make_win("22m33m44m55m66m77mC", "C", rules="jinzhou")).legal          # 七对 free
    assert JZ.score(make_win("46p789s555s99m", "5p", ["123m"], rules="jinzhou")).items[0].name == "洞"


def test_every_item_has_a_chinese_name_a_key_and_an_english_name():
    from firmware.rules.northeast.scoring import ITEM_NAMES
    assert set(ITEM_NAMES) == set(LN.config.doubling.items) | set(JZ.config.doubling.items)
    assert all(name and en for name, en in ITEM_NAMES.values())


@pytest.mark.parametrize("rules", [LN, JZ])
def test_random_legal_hands_settle_to_zero_and_respect_the_floor(rules):
    from bench.mcr_hands import generated_wins
    from firmware.rules.hand_record import Action, Verb

    rng = random.Random(5)
    settled = 0
    for w in generated_wins(rng, 3000):
        if rules.tile_set == 112 and any(k in range(27, 31) or k in (32, 33)
                                         for k in (*w.hand, w.win_tile, *[m.tile for m in w.melds])):
            continue
        chips = tuple(rng.randrange(0, 200) for _ in range(4))
        rec = record(rules.name, chips=chips, dealer=rng.randrange(4))
        for m in w.melds:
            verb = Verb.CONCEALED_KONG if m.concealed else {"chow": Verb.CHOW, "pung": Verb.PUNG,
                                                            "kong": Verb.KONG}[m.kind.value]
            rec.actions.append(Action(verb, 0, m.tile, None if m.concealed else 3))
        rec.actions += [Action(Verb.OPENED, s) for s in rng.sample([1, 2, 3], rng.randrange(4))]
        rec.actions.append(Action(Verb.WIN, 0, w.win_tile, None if w.self_drawn else rng.choice([1, 2, 3]), w.hand,
                                  frozenset(["kong_win"] if w.kong_win else [])))
        s = settle_hand(rules, rec)
        assert sum(s.deltas()) == 0
        assert all(chips[p] + s.deltas()[p] >= 0 for p in range(4)), (chips, s.deltas())
        settled += s.verdicts[0].legal
    assert settled > 50
