"""Tiles, sets, walls, the break from the dice, the deal and the draw order."""

import pytest

from firmware.cli.main import main
from firmware.rules.config import DealSection
from firmware.rules.names import RULE_NAMES
from firmware.rules.registry import load_ruleset
from firmware.tiles.dealing import DealRules, deal, find_break, live_sequence
from firmware.tiles.sets import TILE_SETS, tile_set
from firmware.tiles.tile import TileError, format_tiles, parse
from firmware.tiles.wall import Position, Wall

ONE, TWO = DealRules(throws=1), DealRules(throws=2)


def test_notation_round_trip():
    text = "123m55p789sEEECFP1f"
    assert format_tiles(parse(text)) == text


@pytest.mark.parametrize("bad,message", [("12", "without a suit"), ("0m", "unknown tile code '0'"),
                                         ("X", "unknown tile code 'X'"), ("9f", "9f")])
def test_bad_codes_are_named(bad, message):
    with pytest.raises(TileError, match=message):
        parse(bad)


@pytest.mark.parametrize("size", [144, 136, 112, 108])
def test_tile_sets_have_their_size(size):
    assert len(tile_set(size).all_tiles()) == size


def test_set_validation_errors():
    s = TILE_SETS[112]
    with pytest.raises(TileError, match="5 copies of 1m"):
        s.check_counts(parse("11111m"))
    with pytest.raises(TileError, match="E is not in the 112-tile set"):
        s.check_counts(parse("E"))
    with pytest.raises(TileError, match="missing from the 112-tile set"):
        s.check_counts(parse("123m"), complete=True)
    TILE_SETS[144].check_counts(TILE_SETS[144].all_tiles(), complete=True)


@pytest.mark.parametrize("total,seat", [(5, 0), (9, 0), (2, 1), (6, 1), (10, 1), (3, 2), (7, 2), (11, 2),
                                        (4, 3), (8, 3), (12, 3)])
def test_one_throw_total_picks_the_wall_counter_clockwise_from_the_dealer(total, seat):
    dice = (total // 2, total - total // 2) if total > 2 else (1, 1)
    brk = find_break(ONE, dice, dealer_side=1)
    assert brk.wall_side == (1 + seat) % 4
    assert brk.stack == total


def test_competition_example_seven_deals_from_the_opposite_walls_seventh_stack():
    wall = Wall.from_sequence(list(range(144)), 18)   # tile = index, so positions are traceable
    d = deal(wall, ONE, (3, 4), dealer_side=0)
    assert d.brk.wall_side == 2 and d.brk.stack == 7
    assert d.hands[0][:4] == [Position(2, 7, "top"), Position(2, 7, "bottom"),
                              Position(2, 8, "top"), Position(2, 8, "bottom")]


def test_sichuan_counts_the_stack_by_the_smaller_die_and_draws_every_tile():
    rules = load_ruleset("sichuan").deal_rules
    brk = find_break(rules, (3, 5), 0)
    assert (brk.wall_side, brk.stack) == (3, 3)               # 8: 上家's wall, its 3rd stack (the smaller die)
    tiles = tile_set(108).all_tiles()
    d = deal(Wall.from_sequence(tiles, 14), rules, (3, 5), 0)
    assert d.remaining() == 108 - 53                          # no dead wall: 55 left after the deal
    with pytest.raises(ValueError, match="stack_by"):
        DealSection.model_validate({"throws": 1, "stack_by": "bigger_die"})


def test_mcr_two_throws_first_total_picks_the_second_thrower():
    brk = find_break(TWO, (1, 2, 4, 5), dealer_side=0)   # first 3 -> 对家 throws; 3 + 9 = 12
    assert brk.thrower_side == 2 and brk.wall_side == 2 and brk.stack == 12


def test_long_count_runs_into_the_next_wall_clockwise():
    wall = Wall.from_sequence(list(range(144)), 18)
    brk = find_break(TWO, (6, 6, 6, 6), dealer_side=0)  # 12 -> 上家 (side 3); 24 -> 6th stack of side 2
    order = live_sequence(wall, brk)
    assert order[0] == Position(2, 6, "top")
    assert len(order) == 144 and len(set(order)) == 144


def test_the_deal_gives_14_and_13_with_jump_tiles():
    wall = Wall.from_sequence(list(range(144)), 18)
    d = deal(wall, ONE, (3, 4), dealer_side=1)
    order = live_sequence(wall, d.brk)
    assert {s: len(p) for s, p in d.hands.items()} == {1: 14, 2: 13, 3: 13, 0: 13}
    dealer, south, west, north = 1, 2, 3, 0
    assert d.hands[dealer][-2:] == [order[48], order[52]]       # tops of stacks 25 and 27
    assert (d.hands[south][-1], d.hands[west][-1], d.hands[north][-1]) == (order[49], order[50], order[51])
    assert d.draw() == order[53]
    assert d.draw() == order[54]


def test_replacements_come_from_the_tail_top_first():
    wall = Wall.from_sequence(list(range(144)), 18)
    d = deal(wall, ONE, (3, 4), dealer_side=0)
    first = d.replacement(kong=True)
    assert first == Position(2, 6, "top")     # the stack before the break
    assert d.replacement() == Position(2, 6, "bottom")


@pytest.mark.parametrize("name,drawable", [("mcr", 144 - 53), ("competition", 144 - 53),
                                           ("liaoning", 136 - 53 - 16), ("jinzhou", 112 - 53 - 16)])
def test_hand_ends_at_the_kept_tail(name, drawable):
    rs = load_ruleset(name)
    size = rs.tile_set
    wall = Wall.from_sequence(list(range(size)), (size // 4 + 1) // 2)
    dice = (2, 3) if rs.throws == 1 else (2, 3, 1, 1)
    d = deal(wall, rs.deal_rules, dice, 0)
    drawn = 0
    while d.draw() is not None:
        drawn += 1
    assert drawn == drawable


def test_each_kong_keeps_two_more_in_the_northeast():
    rs = load_ruleset("liaoning")
    wall = Wall.from_sequence(list(range(136)), 17)
    d = deal(wall, rs.deal_rules, (2, 3), 0)
    d.replacement(kong=True)
    drawn = 0
    while d.draw() is not None:
        drawn += 1
    assert drawn == 136 - 53 - 16 - 2 - 1


def test_108_set_half_stack_is_dealt():
    wall = Wall.from_sequence(list(range(108)), 14)
    assert len(wall.stack_levels(0, 14)) == 1
    d = deal(wall, ONE, (6, 6), 0)
    assert sum(len(p) for p in d.hands.values()) == 53
    assert len(d.live) == 108 - 53


@pytest.mark.parametrize("name", RULE_NAMES)
def test_every_rule_set_config_loads(name):
    assert load_ruleset(name).name == name


def test_deal_command_prints_walls_hands_and_draws(capsys):
    assert main(["deal", "--rules", "competition", "--seed", "3", "--dice", "3,4"]) == 0
    out = capsys.readouterr().out
    assert "wall of side 2 (对家), stack 7" in out
    assert out.count("[13 tiles]") == 3 and out.count("[14 tiles]") == 1
    assert "first draws:" in out


def test_deal_command_rejects_wrong_dice(capsys):
    assert main(["deal", "--rules", "mcr", "--dice", "3,4"]) == 2
    assert "two throws" in capsys.readouterr().err


def test_a_wall_with_no_stacks_cannot_be_dealt_it_never_loops():
    from firmware.tiles.dealing import Break, live_sequence
    from firmware.tiles.wall import Wall

    with pytest.raises(ValueError, match="no stacks"):
        live_sequence(Wall(0, 0), Break((3, 4), 0, 0, 2, 7))
