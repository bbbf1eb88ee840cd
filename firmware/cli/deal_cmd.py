"""``mjtable deal``: the four walls, the break, every starting hand and the first draws."""

from __future__ import annotations

import argparse
import random

from firmware.cli.arg_types import add_rules_option
from firmware.cli.words import N_, _
from firmware.tiles.wall import SIDES

# the broken wall's owner seen from the dealer (the seats' Chinese names are the table's in English too)
SEATS = (N_("dealer"), N_("下家"), N_("对家"), N_("上家"))
LEVELS = {"top": N_("top"), "bottom": N_("bottom")}

FIRST_DRAWS = 8


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("deal", help=_("show the walls, break, hands and draw order for a shuffle"),
                            description=_("Deal a shuffled wall by a rule set's procedure."))
    add_rules_option(parser, _("the rule set whose deal to follow"))
    parser.add_argument("--seed", type=int, default=1, help=_("seed of the shuffle (and of the dice if not given)"))
    parser.add_argument("--dice", type=_dice, help=_("faces, e.g. 3,4 (one throw) or 3,4,2,5 (two throws)"))
    parser.add_argument("--dealer", type=int, choices=range(SIDES), default=0, metavar="SIDE",
                        help=_("physical side 0..3 of the dealer (default 0)"))
    parser.set_defaults(func=run)


def _dice(text: str) -> tuple[int, ...]:
    try:
        faces = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(_("dice must be numbers like 3,4 or 3,4,2,5, not %(text)r")
                                         % {"text": text}) from None
    if len(faces) not in (2, 4) or any(not 1 <= f <= 6 for f in faces):
        raise argparse.ArgumentTypeError(_("dice must be 2 or 4 faces of 1..6, not %(text)r") % {"text": text})
    return faces


def run(args: argparse.Namespace) -> int:
    from firmware.rules.registry import load_ruleset
    from firmware.tiles.dealing import deal
    from firmware.tiles.sets import tile_set
    from firmware.tiles.tile import format_tiles
    from firmware.tiles.wall import Wall
    from firmware.web.i18n import SEAT_WINDS

    rs = load_ruleset(args.rules)
    rng = random.Random(args.seed)
    tiles = tile_set(rs.tile_set).all_tiles()
    rng.shuffle(tiles)
    stacks = (len(tiles) // SIDES + 1) // 2
    wall = Wall.from_sequence(tiles, stacks)
    dice = args.dice or tuple(rng.randint(1, 6) for _ in range(2 * rs.throws))
    d = deal(wall, rs.deal_rules, dice, args.dealer)
    print(_("%(rules)s: %(tiles)s tiles, %(stacks)s stacks per side, dealer on side %(dealer)s")
          % {"rules": rs.title, "tiles": len(tiles), "stacks": stacks, "dealer": args.dealer})
    print(wall.render(_wall_label))
    brk = d.brk
    said = _("dice %(dice)s -> wall of side %(side)s (%(seat)s), stack %(stack)s from its right end") % {
        "dice": "+".join(map(str, brk.dice)), "side": brk.wall_side,
        "seat": _(SEATS[(brk.wall_side - brk.dealer_side) % SIDES]), "stack": brk.stack}
    second = _(" (second thrower: side %(side)s)") % {"side": brk.thrower_side} if rs.throws == 2 else ""
    print(_("break: %(break)s%(second)s") % {"break": said, "second": second})
    for i in range(SIDES):
        side = (args.dealer + i) % SIDES
        hand = d.hand_tiles(wall, side)
        print(_("side %(side)s (%(wind)s): %(tiles)s  [%(count)s tiles]")
              % {"side": side, "wind": _(SEAT_WINDS[i]), "tiles": format_tiles(hand), "count": len(hand)})
    draws = [d.draw() for _draw in range(FIRST_DRAWS)]
    print(_("first draws: %(draws)s") % {"draws": ", ".join(f"{format_tiles([wall[p]])} ({_position(p)})"
                                                            for p in draws if p)})
    print(_("first replacement: %(tile)s (%(where)s); drawable after the deal: %(count)s tiles")
          % {"tile": format_tiles([wall[d.tail[0]]]), "where": _position(d.tail[0]),
             "count": len(d.live) - rs.deal_rules.kept_tail})
    return 0


def _position(p) -> str:
    """A wall position in words (side 1 stack 4 bottom)."""
    return _("side %(side)s stack %(stack)s %(level)s") % {"side": p.side, "stack": p.stack,
                                                          "level": _(LEVELS.get(p.level, p.level))}


def _wall_label(side: int, level: str) -> str:
    """A wall line's head, padded so that the tiles line up (a Chinese character takes two columns)."""
    import unicodedata

    heads = {lv: _("side %(side)s %(level)s") % {"side": side, "level": _(word)} for lv, word in LEVELS.items()}
    width = max(sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in h) for h in heads.values())
    head = heads.get(level, f"{side} {level}")
    used = sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in head)
    return head + " " * (width - used + 1)
