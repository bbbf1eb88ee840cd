"""``mjtable deal``: the four walls, the break, every starting hand and the first draws."""

from __future__ import annotations

import argparse
import random

from firmware.cli.arg_types import add_rules_option
from firmware.tiles.wall import SIDES

FIRST_DRAWS = 8


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("deal", help="show the walls, break, hands and draw order for a shuffle",
                            description="Deal a shuffled wall by a rule set's procedure.")
    add_rules_option(parser, "the rule set whose deal to follow")
    parser.add_argument("--seed", type=int, default=1, help="seed of the shuffle (and of the dice if not given)")
    parser.add_argument("--dice", type=_dice, help="faces, e.g. 3,4 (one throw) or 3,4,2,5 (two throws)")
    parser.add_argument("--dealer", type=int, choices=range(SIDES), default=0, metavar="SIDE",
                        help="physical side 0..3 of the dealer (default 0)")
    parser.set_defaults(func=run)


def _dice(text: str) -> tuple[int, ...]:
    try:
        faces = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"dice must be numbers like 3,4 or 3,4,2,5, not {text!r}") from None
    if len(faces) not in (2, 4) or any(not 1 <= f <= 6 for f in faces):
        raise argparse.ArgumentTypeError(f"dice must be 2 or 4 faces of 1..6, not {text!r}")
    return faces


def run(args: argparse.Namespace) -> int:
    from firmware.rules.registry import load_ruleset
    from firmware.tiles.dealing import deal
    from firmware.tiles.sets import tile_set
    from firmware.tiles.tile import format_tiles
    from firmware.tiles.wall import Wall

    rs = load_ruleset(args.rules)
    rng = random.Random(args.seed)
    tiles = tile_set(rs.tile_set).all_tiles()
    rng.shuffle(tiles)
    stacks = (len(tiles) // SIDES + 1) // 2
    wall = Wall.from_sequence(tiles, stacks)
    dice = args.dice or tuple(rng.randint(1, 6) for _ in range(2 * rs.throws))
    d = deal(wall, rs.deal_rules, dice, args.dealer)
    print(f"{rs.title}: {len(tiles)} tiles, {stacks} stacks per side, dealer on side {args.dealer}")
    print(wall.render())
    second = f" (second thrower: side {d.brk.thrower_side})" if rs.throws == 2 else ""
    print(f"break: {d.brk.describe()}{second}")
    winds = "ESWN"
    for i in range(SIDES):
        side = (args.dealer + i) % SIDES
        hand = d.hand_tiles(wall, side)
        print(f"side {side} ({winds[i]}): {format_tiles(hand)}  [{len(hand)} tiles]")
    draws = [d.draw() for _ in range(FIRST_DRAWS)]
    print("first draws: " + ", ".join(f"{format_tiles([wall[p]])} ({p})" for p in draws if p))
    print(f"first replacement: {format_tiles([wall[d.tail[0]]])} ({d.tail[0]}); "
          f"drawable after the deal: {len(d.live) - rs.deal_rules.kept_tail} tiles")
    return 0
