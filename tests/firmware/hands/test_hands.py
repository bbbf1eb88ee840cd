"""Hand analysis: the known-answer cases, the special shapes, and properties against a reference."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware.hands.analysis import (COMPETITION_SHAPES, MCR_SHAPES, Shape, decompositions, is_win,
                                     shanten, waits, win_shapes)
from firmware.tile_constants import TERMINALS_AND_HONOURS
from firmware.tiles.tile import counts_of, parse
from tests.support import hand_reference as ref

DATA = Path(__file__).parents[2] / "data"


def c(text: str) -> list[int]:
    return counts_of(parse(text))


def _cases():
    for name in ("mcr-random", "mcr-curated", "mcr-negative"):
        for line in (DATA / f"{name}.jsonl").read_text().splitlines():
            yield json.loads(line)


CASES = list(_cases())


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case_files_classify(case):
    counts = counts_of(parse(case["hand"]) + [parse(case["win_tile"])[0]])
    assert is_win(counts, len(case["melds"])) is case["expected"]["win"]


def test_case_files_are_all_here():
    assert len(CASES) == 490


@pytest.mark.parametrize("hand,shape", [
    ("11223344556677m", Shape.SEVEN_PAIRS),
    ("11112233445566m", Shape.SEVEN_PAIRS),            # four identical tiles as two pairs
    ("19m19p19sESWNCFPP", Shape.THIRTEEN_ORPHANS),
    ("147m258p369sESWNC", Shape.HONOURS_KNITTED),      # 全不靠
    ("14m25p369sESWNCFP", Shape.HONOURS_KNITTED),      # 七星不靠
    ("147m258p369s123mEE", Shape.KNITTED_STRAIGHT),    # 组合龙 + a set + a pair
])
def test_special_shapes(hand, shape):
    assert shape in win_shapes(c(hand))


def test_knitted_straight_with_a_declared_set():
    assert Shape.KNITTED_STRAIGHT in win_shapes(c("258m369p1478s8s"), declared=1)


def test_fourteen_unrelated_is_broader_than_honours_and_knitted():
    hand = c("148m258p369sESWNC")   # 1m 4m 8m are 3+ apart but not 147
    assert not is_win(hand, 0, MCR_SHAPES)
    assert Shape.FOURTEEN_UNRELATED in win_shapes(hand, 0, COMPETITION_SHAPES)
    assert not is_win(c("128m258p369sESWNC"), 0, COMPETITION_SHAPES)  # 1m 2m adjacent


def test_competition_has_no_thirteen_orphans():
    assert not is_win(c("19m19p19sESWNCFPP"), 0, COMPETITION_SHAPES)


def test_every_decomposition_is_listed():
    found = {str(d) for d in decompositions(c("11122233344455m"))}
    assert len(found) == 4
    assert "standard[111m 222m 333m 444m 55m]" in found
    assert "standard[123m 123m 123m 444m 55m]" in found


def test_decompositions_of_seven_pairs_that_is_also_standard():
    shapes = {d.shape for d in decompositions(c("11223344556677m"))}
    assert shapes == {Shape.STANDARD, Shape.SEVEN_PAIRS}


def test_nine_gates_waits_on_all_nine():
    assert waits(c("1112345678999m")) == list(range(9))


def test_waits_exclude_a_kind_whose_four_copies_are_held():
    assert waits(c("1111m234p567s789s")) == []          # only 1m would complete: all four are held
    assert waits(c("1111234m"), declared=2) == [3]      # 4m; 1m is excluded


def test_thirteen_orphans_thirteen_sided_wait():
    assert len(waits(c("19m19p19sESWNCFP"))) == 13


def test_seven_star_needs_all_honours():
    from firmware.hands.shapes import seven_star
    assert seven_star(c("14m25p369sESWNCFP")) and not seven_star(c("147m258p369sESWNC"))


def test_shanten_values():
    assert shanten(c("1112345678999m9m")) == -1
    assert shanten(c("1112345678999m")) == 0
    assert shanten(c("159m159p159sESWNC")) >= 1
    assert shanten(c("19m19p19sESWNCFP")) == 0


def _valid(kinds):
    counts = [0] * 34
    for k in kinds:
        counts[k] += 1
    return counts if max(counts) <= 4 else None


@settings(max_examples=400, deadline=None)
@given(st.lists(st.integers(0, 33), min_size=14, max_size=14))
def test_win_check_matches_reference_on_random_hands(kinds):
    counts = _valid(kinds)
    if counts is None:
        return
    assert is_win(counts) == ref.mcr_win(list(counts), 0)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 8), min_size=14, max_size=14), st.integers(0, 2))
def test_win_check_matches_reference_on_one_suit_hands(ranks, suit):
    counts = _valid([suit * 9 + r for r in ranks])
    if counts is None:
        return
    assert is_win(counts) == ref.mcr_win(list(counts), 0)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 17), min_size=13, max_size=13), st.integers(0, 1))
def test_waits_match_reference(kinds, declared):
    counts = _valid(kinds[: 13 - 3 * declared])
    if counts is None:
        return
    assert waits(list(counts), declared) == ref.mcr_waits(list(counts), declared)


# Hands drawn from one 组合龙 arrangement, the honours and the terminals: dense in the
# special shapes (全不靠, 七星不靠, 十三幺, 组合龙, 十四不靠, seven pairs), which random hands
# almost never reach.
_SPECIAL_POOL = sorted(set(ref.YAO) | {0, 3, 6, 10, 13, 16, 20, 23, 26})
_special_kinds = st.lists(st.sampled_from(_SPECIAL_POOL), min_size=14, max_size=14, unique=True) | \
    st.lists(st.sampled_from(_SPECIAL_POOL + [1, 2, 4, 5]), min_size=14, max_size=14)


@settings(max_examples=400, deadline=None)
@given(_special_kinds)
def test_special_shapes_match_reference(kinds):
    counts = _valid(kinds)
    if counts is None:
        return
    assert is_win(counts) == ref.mcr_win(list(counts), 0)
    assert is_win(counts, 0, COMPETITION_SHAPES) == ref.competition_win(list(counts), 0)
    assert bool(win_shapes(counts)) == is_win(counts)


@settings(max_examples=300, deadline=None)
@given(_special_kinds, st.integers(0, 13))
def test_special_waits_match_reference(kinds, drop):
    counts = _valid(kinds[:drop] + kinds[drop + 1:])
    if counts is None:
        return
    assert waits(list(counts)) == ref.mcr_waits(list(counts), 0)
    assert waits(list(counts), 0, COMPETITION_SHAPES) == ref.waits_for(ref.competition_win, list(counts), 0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 33), min_size=13, max_size=13))
def test_shanten_zero_iff_waiting(kinds):
    counts = _valid(kinds)
    if counts is None:
        return
    has_waits = bool(ref.mcr_waits(list(counts), 0))
    if has_waits:
        assert shanten(counts) == 0
    assert shanten(counts) >= 0


@pytest.mark.parametrize("hand, wait", [("14m255678p369sEE", "7m"), ("147m258p369s111sE", "E"),
                                         ("147m25p369s567sEE", "8p")])
def test_waits_of_knitted_straight(hand, wait):
    counts = c(hand)
    assert parse(wait)[0] in waits(counts)
    assert waits(list(counts)) == ref.mcr_waits(list(counts), 0)


_SPECIAL_POOL = sorted({*TERMINALS_AND_HONOURS, 0, 3, 6, 10, 13, 16, 20, 23, 26})   # orphans, honours, a knit


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 33), st.sampled_from(_SPECIAL_POOL)), min_size=14, max_size=14),
       st.integers(0, 1), st.sampled_from([MCR_SHAPES, COMPETITION_SHAPES, frozenset({Shape.STANDARD})]))
def test_the_shanten_after_each_discard_is_the_shanten_of_each_discard(kinds, declared, shapes):
    """The players' discard weighing (groups combined once) against shanten computed discard by discard."""
    from firmware.hands.analysis import discard_shanten

    counts = _valid(kinds)
    if counts is None:
        return
    counts = list(counts)
    if declared:
        for k in range(34):                 # a declared set: three tiles fewer in the hand
            if counts[k] >= 3:
                counts[k] -= 3
                break
        else:
            declared = 0
    expected = {}
    for k in range(34):
        if counts[k]:
            counts[k] -= 1
            expected[k] = shanten(counts, declared, shapes)
            counts[k] += 1
    assert discard_shanten(counts, declared, shapes) == expected
