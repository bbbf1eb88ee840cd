"""MCR scoring: the known-answer case files, the rule book's examples, each principle, the payments."""

import json
import re
from tests.support.win_builder import make_win
from collections import Counter
from pathlib import Path

import pytest

from firmware.rules.case_format import parse_case
from firmware.rules.mcr.fans import Fan
from tests.support.record_builder import settle_win
from firmware.rules.mcr.scorer import score

DATA = Path(__file__).parents[2] / "data"


def _lines(name):
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines()]


def win(hand, win_tile, melds=(), seat="E", round="E", **kw):
    """Melds as "123m" (chow), "EEE" (pung), "EEEE" (melded kong), "EEEE*" (concealed)."""
    return make_win(hand, win_tile, melds, rules="mcr", seat=seat, round_wind=round, **kw)


def fans_of(w):
    return {f: n for f, n in score(w).fans}


# -- the case files --------------------------------------------------------------
@pytest.mark.parametrize("case", _lines("mcr-random.jsonl") + _lines("mcr-curated.jsonl"), ids=lambda c: c["id"])
def test_known_answer_cases(case):
    """Every case gets its expected totals and, as a multiset, its expected fans.  (No case of these
    files needed the either/or allowance for equal-total readings; see the known answers below.)"""
    result = score(parse_case(case).win)
    expected = case["expected"]
    assert result.win
    assert (result.total, result.total_without_flowers, result.meets_minimum) == \
        (expected["total"], expected["total_without_flowers"], expected["meets_minimum"])
    assert Counter({f.zh: n for f, n in result.fans}) == Counter({f["name"]: f["count"] for f in expected["fans"]})


@pytest.mark.parametrize("case", _lines("mcr-negative.jsonl"), ids=lambda c: c["id"])
def test_near_misses_are_not_wins(case):
    assert not score(parse_case(case).win).win


# -- the rule book's worked examples (score_definition 【牌例】) ---------------------
_ALIASES = {"边张": "独听・边张", "嵌张": "独听・嵌张", "单钓": "独听・单钓"}
_KNOWN = json.loads((DATA / "mcr_known_answers.json").read_text(encoding="utf-8"))
# 123m 55789m 12789s, 3s self-drawn: four chows where 套算一次 allows 2 老少副 + 1 喜相逢 or
# 1 老少副 + 2 喜相逢 (the definitions list the first, the reference tables choose the second).
_EITHER_OR = {"[123m]  [55789m12789s]自摸[3s]": [{"老少副": 1, "喜相逢": 2}, {"老少副": 2, "喜相逢": 1}]}


def _parse_example(example):
    src = example["src"]
    groups = re.findall(r"\[([^\]]*)\]", src.replace("\xa0", " "))
    *melds, hand, win_tile = groups
    return win(hand, win_tile, melds, self_drawn="自摸" in src, seat="ESWN"[example["seat"]],
               round="ESWN"[example["prev"]])


@pytest.mark.parametrize("example", _KNOWN, ids=lambda e: e["src"])
def test_rule_book_examples(example):
    result = score(_parse_example(example))
    got = Counter({_ALIASES.get(f.zh, f.zh): n for f, n in result.fans})
    expected = Counter({_ALIASES.get(k, k): n for k, n in example["expected"].items()})
    assert result.total == example["total"]
    if example["src"].replace("\xa0", " ") in _EITHER_OR:
        rest = {k: n for k, n in got.items() if k not in ("老少副", "喜相逢")}
        assert rest == {k: n for k, n in expected.items() if k not in ("老少副", "喜相逢")}
        assert {k: got[k] for k in ("老少副", "喜相逢")} in _EITHER_OR[example["src"].replace("\xa0", " ")]
    else:
        assert got == expected


# Fans whose definitions need flags or kongs the worked examples do not carry.
DIRECT = {
    Fan.FOUR_KONGS: (win("5p", "5p", ["1111m", "EEEE", "9999s*", "2222p"]),
                     {Fan.FOUR_KONGS: 1, Fan.TWO_CONCEALED_PUNGS: 0}),
    Fan.THREE_KONGS: (win("345s5p", "5p", ["1111m", "EEEE", "9999s"]), {Fan.THREE_KONGS: 1}),
    Fan.LAST_TILE_DRAW: (win("123m456p789s123sE", "E", self_drawn=True, last_tile=True),
                         {Fan.LAST_TILE_DRAW: 1, Fan.SELF_DRAWN: 0}),
    Fan.LAST_TILE_CLAIM: (win("123m456p789s123sE", "E", last_tile=True), {Fan.LAST_TILE_CLAIM: 1}),
    Fan.OUT_WITH_REPLACEMENT_TILE: (win("456p789s123sE", "E", ["1111m"], self_drawn=True, kong_win=True),
                                    {Fan.OUT_WITH_REPLACEMENT_TILE: 1, Fan.SELF_DRAWN: 0}),
    Fan.ROBBING_THE_KONG: (win("123m456p78s123sEE", "9s", kong_win=True, last_of_kind=True),
                           {Fan.ROBBING_THE_KONG: 1, Fan.LAST_TILE: 0}),
    Fan.TWO_CONCEALED_KONGS: (win("456p123sE", "E", ["1111m*", "9999s*"]), {Fan.TWO_CONCEALED_KONGS: 1}),
    Fan.CONCEALED_KONG: (win("456p789s123sE", "E", ["1111m*"]), {Fan.CONCEALED_KONG: 1}),
    Fan.CONCEALED_KONG_AND_MELDED_KONG: (win("456p123sE", "E", ["1111m*", "9999s"]),
                                         {Fan.CONCEALED_KONG_AND_MELDED_KONG: 1, Fan.MELDED_KONG: 0,
                                          Fan.CONCEALED_KONG: 0}),
    Fan.EDGE_WAIT: (win("12m456p789s123sEE", "3m"), {Fan.EDGE_WAIT: 1}),
    Fan.CLOSED_WAIT: (win("13m456p789s123sEE", "2m"), {Fan.CLOSED_WAIT: 1}),
    Fan.SINGLE_WAIT: (win("123m456p789s123sE", "E"), {Fan.SINGLE_WAIT: 1}),
    Fan.FLOWER_TILES: (win("123m456p789s123sE", "E", flowers=3), {Fan.FLOWER_TILES: 3}),
}


@pytest.mark.parametrize("fan", list(DIRECT), ids=lambda f: f.zh)
def test_fans_from_their_definitions(fan):
    hand, expected = DIRECT[fan]
    got = fans_of(hand)
    for f, n in expected.items():
        assert got.get(f, 0) == n, f"{f.zh}: {got.get(f, 0)} != {n}"


def test_every_fan_has_a_direct_test():
    in_examples = {_ALIASES.get(k, k) for e in _KNOWN for k in e["expected"]}
    missing = [f.zh for f in Fan if f.zh not in in_examples and f not in DIRECT]
    assert missing == []


# -- the way of winning, corrected by what the tiles prove ------------------------
def test_last_of_kind_needs_the_winning_tile_to_be_alone():
    assert Fan.LAST_TILE not in fans_of(win("123m456p789s11sEE", "E", last_of_kind=True))   # 对倒: one E standing
    assert Fan.LAST_TILE in fans_of(win("123m456p78s111sEE", "9s", last_of_kind=True))


def test_a_melded_pung_of_the_winning_tile_makes_it_the_last_of_its_kind():
    assert Fan.LAST_TILE in fans_of(win("23m456p789sEE", "1m", ["111m"]))


def test_replacement_win_needs_a_kong_and_robbing_needs_an_unseen_tile():
    assert Fan.OUT_WITH_REPLACEMENT_TILE not in fans_of(win("123m456p789s123sE", "E", self_drawn=True, kong_win=True))
    assert Fan.ROBBING_THE_KONG not in fans_of(win("456p789s23sEE", "1s", ["111s"], kong_win=True))


# -- the five principles ------------------------------------------------------------
def test_no_repetition_applies_per_instance():
    """不重复: 大三元 takes its own pungs out of 幺九刻, a fourth terminal pung still counts;
    and it is a single fan's implication only: 绿一色 with 清一色 still scores 断幺."""
    got = fans_of(win("CCCFFFPPP999m5p", "5p"))
    assert got[Fan.BIG_THREE_DRAGONS] == 1 and got[Fan.PUNG_OF_TERMINALS_OR_HONORS] == 1
    green = fans_of(win("234s234s666s888s2s", "2s"))
    assert green[Fan.ALL_GREEN] and green[Fan.FULL_FLUSH] and green[Fan.ALL_SIMPLES]


def test_no_splitting_once_a_fan_is_formed():
    """不拆移: 123 234 345 456 is 一色四步高; its 123 and 456 are not also 连六."""
    got = fans_of(win("123234345456m9s", "9s"))
    assert got[Fan.FOUR_PURE_SHIFTED_CHOWS] == 1 and Fan.SHORT_STRAIGHT not in got


def test_no_same_fan_twice_from_a_used_set():
    """不得相同: in 234s 234p 234p 567p the second 234p may not make 喜相逢 with 234s again:
    一般高, 喜相逢 and 连六, not 喜相逢 x2 and 连六."""
    got = fans_of(win("234s223344567pE", "E"))
    assert got.get(Fan.MIXED_DOUBLE_CHOW) == 1 and got.get(Fan.PURE_DOUBLE_CHOW) == 1 \
        and got.get(Fan.SHORT_STRAIGHT) == 1


def test_the_highest_reading_counts():
    """就高不就低: 111222333m as three pungs (一色三节高 24 + 三暗刻) beats three chows 123 x3."""
    got = fans_of(win("111222333m456p9s", "9s", self_drawn=True))
    assert got.get(Fan.PURE_SHIFTED_PUNGS) == 1 and got.get(Fan.THREE_CONCEALED_PUNGS) == 1
    assert Fan.PURE_TRIPLE_CHOW not in got


def test_a_fresh_set_combines_once_only():
    """套算一次: 123m 789m 123s 789s give three two-chow fans, not four."""
    got = fans_of(win("123m789m123s789sE", "E"))
    pairs = got.get(Fan.TWO_TERMINAL_CHOWS, 0) + got.get(Fan.MIXED_DOUBLE_CHOW, 0)
    assert pairs == 3 and {got.get(Fan.TWO_TERMINAL_CHOWS), got.get(Fan.MIXED_DOUBLE_CHOW)} == {1, 2}


# -- payments (rules §B.7) -------------------------------------------------------------
def _pay(w, discarder):
    return settle_win("mcr", w, discarder).deltas()


def test_payment_chicken_hand_on_a_discard():
    w = win("56s678pWW", "7s", ["123m", "345m"], seat="S")
    assert score(w).total == 8
    assert _pay(w, 0) == [-16, 32, -8, -8]


def test_payment_self_drawn_with_a_flower():
    w = win("1112223334445m", "5m", self_drawn=True, last_tile=True, flowers=1)
    assert score(w).total == 146
    assert _pay(w, None) == [462, -154, -154, -154]


def test_payment_discard_with_a_melded_kong_and_two_flowers():
    w = win("2223334445m", "5m", ["1111m"], flowers=2, seat="S")
    assert score(w).total == 92
    assert _pay(w, 2) == [-8, 116, -100, -8]


def test_payment_half_flush_straight_edge_wait():
    """SLO #289: 混一色 6 + 清龙 16 + 边张 1 + 门前清 2 = 25; the discarder pays 33, the others 8."""
    w = win("12456789m234mEE", "3m", seat="W")
    assert score(w).total == 25
    assert _pay(w, 3) == [-8, -8, 49, -33]


def test_under_eight_is_a_false_win():
    w = win("445566m2277779s", "8s")
    s = score(w)
    assert s.win and s.total == 7 and not s.meets_minimum
    assert _pay(w, 1) == [-30, 10, 10, 10]


def test_payment_half_flush_dragon_pung():
    w = win("1112344478p", "9p", ["CCC"], seat="N")
    assert score(w).total == 9
    assert _pay(w, 0) == [-17, -8, -8, 33]


def test_random_wins_settle_to_zero():
    import random

    from bench.mcr_hands import generated_wins

    for w in generated_wins(random.Random(3), 500):
        discarder = None if w.self_drawn else (w.seat_wind + 1) % 4
        settled = settle_win("mcr", w, discarder)
        assert sum(settled.deltas()) == 0 and settled.payments
