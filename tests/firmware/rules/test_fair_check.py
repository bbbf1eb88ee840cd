"""Checking a hand against its committed walls: whatever is changed (a tile, the order, the dice, a draw) fails,
with a message that says what."""

import copy

import pytest

from firmware.rules.fair_check import SealedHand, check_hand
from firmware.rules.registry import load_ruleset
from firmware.store.seal_rows import SealRows
from firmware.store.table_store import TableStore
from firmware.tiles.dealing import deal
from firmware.tiles.fair_walls import dice_faces, parse_preimage, seal
from firmware.tiles.wall import Wall
from tests.support.sealed_run import sealed_game


@pytest.fixture(scope="module")
def hands(tmp_path_factory):
    path = tmp_path_factory.mktemp("fair") / "table.db"
    sealed_game(path, hands=2, seed=3)
    store = TableStore(path)
    try:
        return [SealedHand.from_json(r) for r in SealRows(store).sealed_hands()]
    finally:
        store.close()


def _check(hand):
    return check_hand(hand, load_ruleset)


def _resealed(hand, edit):
    """The hand as a tamperer who also rewrote the commitment leaves it: ``edit(sides, deal)`` changes the walls."""
    sealed = parse_preimage(hand.reveal)
    sides = [[list(stack) for stack in side] for side in sealed.sides]
    wall = Wall.from_sides([[tuple(s) for s in side] for side in sides])
    edit(sides, deal(wall, load_ruleset("mcr").deal_rules, hand.dice, hand.dealer), wall)
    again = seal(sealed.set_id, sides, sealed.dice_mode, sealed.seed, sealed.nonce)
    out = copy.deepcopy(hand)
    out.reveal, out.commitment = again.preimage(), again.commitment()
    return out


def _set(sides, position, kind):
    sides[position.side][position.stack - 1][0 if position.level == "bottom" else 1] = kind


def test_the_table_s_own_hands_pass(hands):
    for hand in hands:
        check = _check(hand)
        assert check.ok and not check.pending and check.draws > 20, check.problems


def test_a_reveal_changed_after_the_commitment_fails(hands):
    hand = copy.deepcopy(hands[0])
    hand.reveal = hand.reveal.replace("side 1 ", "side 1 " + ("1m," if "side 1 1m" not in hand.reveal else "2m,"), 1)
    assert _check(hand).problems == ["the reveal does not hash to the commitment (walls, dice seed or nonce changed)"]


def test_one_dealt_tile_changed_fails_even_with_a_new_commitment(hands):
    def edit(sides, dealt, wall):
        first = dealt.hands[dealt.brk.dealer_side][0]
        _set(sides, first, (wall[first] + 1) % 27)
    problems = _check(_resealed(hands[0], edit)).problems
    assert problems and f"side {hands[0].dealer} was dealt" in problems[0]


def test_one_drawn_tile_changed_fails(hands):
    def edit(sides, dealt, wall):
        position = dealt.draw()
        _set(sides, position, 33 if wall[position] != 33 else 32)
    problems = _check(_resealed(hands[1], edit)).problems
    assert problems and "live draw from" in problems[0]


def test_two_tiles_swapped_fail(hands):
    def edit(sides, dealt, wall):
        a = dealt.hands[dealt.brk.dealer_side][0]
        b = next(p for p in dealt.live if wall[p] != wall[a])
        first, second = wall[a], wall[b]
        _set(sides, a, second)
        _set(sides, b, first)
    assert not _check(_resealed(hands[0], edit)).ok


def test_other_dice_fail(hands):
    hand = copy.deepcopy(hands[0])
    hand.dice = tuple(7 - d for d in hand.dice)
    assert not _check(hand).ok


def test_electronic_dice_that_are_not_the_seed_s_fail(hands):
    hand = copy.deepcopy(hands[0])
    hand.dice_by = "electronic"
    seeded = dice_faces(parse_preimage(hand.reveal).seed, 2)
    assert hand.dice != seeded                       # (these were physical dice: for this seed, other faces)
    assert any(p.endswith(f"the revealed seed gives {'+'.join(map(str, seeded))}") for p in _check(hand).problems)


def test_a_draw_changed_in_the_record_fails(hands):
    hand = copy.deepcopy(hands[1])
    actions = hand.record["actions"]
    i = next(i for i, a in enumerate(actions) if a.split()[1:2] == ["draw"] and i > 8)
    side, _, tile = actions[i].split()
    actions[i] = f"{side} draw {'1m' if tile != '1m' else '2m'}"
    problems = _check(hand).problems
    assert problems and problems[0].startswith(f"action {i + 1}: the walls give") and "the record has" in problems[0]


def test_a_wall_ended_early_fails(hands):
    hand = copy.deepcopy(hands[0])
    actions = hand.record["actions"]
    i = next(i for i, a in enumerate(actions) if a.split()[1:2] == ["discard"] and i > 20)
    hand.record["actions"] = actions[:i + 1] + ["wall_end"]
    assert any("ends the wall with" in p for p in _check(hand).problems)


def test_a_hand_without_a_commitment_fails_and_one_in_play_waits(hands):
    hand = copy.deepcopy(hands[0])
    hand.commitment = ""
    assert "no commitment" in _check(hand).problems[0]
    hand = copy.deepcopy(hands[0])
    hand.reveal = None
    check = _check(hand)
    assert check.pending and check.ok


def test_a_record_of_another_dealer_or_set_fails(hands):
    hand = copy.deepcopy(hands[0])
    hand.set_id = "Z"
    assert any("seals set" in p for p in _check(hand).problems)
    hand = copy.deepcopy(hands[0])
    hand.dealer = (hand.dealer + 1) % 4
    assert any("dealer" in p for p in _check(hand).problems)


@pytest.mark.parametrize("data, words", [
    ([], "JSON object"), ({"hand": 1}, "missing"),
    ({"hand": 1, "set_id": "A", "dealer": 0, "dice": "34", "dice_by": "physical", "commitment": "x"}, "dice"),
])
def test_an_exported_line_of_the_wrong_shape_is_refused(data, words):
    with pytest.raises(ValueError, match=words):
        SealedHand.from_json(data)


def test_an_export_round_trips(hands):
    for hand in hands:
        assert SealedHand.from_json(hand.to_json()) == hand
