"""The 81 fans of the 1998 rules (plus 明暗杠), with their names and values.

The order is the rule book's (highest values first); results list fans in
this order.  English names are the ones in common tournament use.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING


class Fan(enum.IntEnum):
    BIG_FOUR_WINDS = 0
    BIG_THREE_DRAGONS = enum.auto()
    ALL_GREEN = enum.auto()
    NINE_GATES = enum.auto()
    FOUR_KONGS = enum.auto()
    SEVEN_SHIFTED_PAIRS = enum.auto()
    THIRTEEN_ORPHANS = enum.auto()
    ALL_TERMINALS = enum.auto()
    LITTLE_FOUR_WINDS = enum.auto()
    LITTLE_THREE_DRAGONS = enum.auto()
    ALL_HONORS = enum.auto()
    FOUR_CONCEALED_PUNGS = enum.auto()
    PURE_TERMINAL_CHOWS = enum.auto()
    QUADRUPLE_CHOW = enum.auto()
    FOUR_PURE_SHIFTED_PUNGS = enum.auto()
    FOUR_PURE_SHIFTED_CHOWS = enum.auto()
    THREE_KONGS = enum.auto()
    ALL_TERMINALS_AND_HONORS = enum.auto()
    SEVEN_PAIRS = enum.auto()
    GREATER_HONORS_AND_KNITTED = enum.auto()
    ALL_EVEN_PUNGS = enum.auto()
    FULL_FLUSH = enum.auto()
    PURE_TRIPLE_CHOW = enum.auto()
    PURE_SHIFTED_PUNGS = enum.auto()
    UPPER_TILES = enum.auto()
    MIDDLE_TILES = enum.auto()
    LOWER_TILES = enum.auto()
    PURE_STRAIGHT = enum.auto()
    THREE_SUITED_TERMINAL_CHOWS = enum.auto()
    PURE_SHIFTED_CHOWS = enum.auto()
    ALL_FIVE = enum.auto()
    TRIPLE_PUNG = enum.auto()
    THREE_CONCEALED_PUNGS = enum.auto()
    LESSER_HONORS_AND_KNITTED = enum.auto()
    KNITTED_STRAIGHT = enum.auto()
    UPPER_FOUR = enum.auto()
    LOWER_FOUR = enum.auto()
    BIG_THREE_WINDS = enum.auto()
    MIXED_STRAIGHT = enum.auto()
    REVERSIBLE_TILES = enum.auto()
    MIXED_TRIPLE_CHOW = enum.auto()
    MIXED_SHIFTED_PUNGS = enum.auto()
    CHICKEN_HAND = enum.auto()
    LAST_TILE_DRAW = enum.auto()
    LAST_TILE_CLAIM = enum.auto()
    OUT_WITH_REPLACEMENT_TILE = enum.auto()
    ROBBING_THE_KONG = enum.auto()
    ALL_PUNGS = enum.auto()
    HALF_FLUSH = enum.auto()
    MIXED_SHIFTED_CHOWS = enum.auto()
    ALL_TYPES = enum.auto()
    MELDED_HAND = enum.auto()
    TWO_CONCEALED_KONGS = enum.auto()
    TWO_DRAGONS_PUNGS = enum.auto()
    OUTSIDE_HAND = enum.auto()
    FULLY_CONCEALED_HAND = enum.auto()
    TWO_MELDED_KONGS = enum.auto()
    LAST_TILE = enum.auto()
    DRAGON_PUNG = enum.auto()
    PREVALENT_WIND = enum.auto()
    SEAT_WIND = enum.auto()
    CONCEALED_HAND = enum.auto()
    ALL_CHOWS = enum.auto()
    TILE_HOG = enum.auto()
    DOUBLE_PUNG = enum.auto()
    TWO_CONCEALED_PUNGS = enum.auto()
    CONCEALED_KONG = enum.auto()
    ALL_SIMPLES = enum.auto()
    PURE_DOUBLE_CHOW = enum.auto()
    MIXED_DOUBLE_CHOW = enum.auto()
    SHORT_STRAIGHT = enum.auto()
    TWO_TERMINAL_CHOWS = enum.auto()
    PUNG_OF_TERMINALS_OR_HONORS = enum.auto()
    MELDED_KONG = enum.auto()
    ONE_VOIDED_SUIT = enum.auto()
    NO_HONORS = enum.auto()
    EDGE_WAIT = enum.auto()
    CLOSED_WAIT = enum.auto()
    SINGLE_WAIT = enum.auto()
    SELF_DRAWN = enum.auto()
    FLOWER_TILES = enum.auto()
    CONCEALED_KONG_AND_MELDED_KONG = enum.auto()   # 明暗杠: one melded and one concealed kong

    @property
    def zh(self) -> str:
        return _NAMES[self][0]

    @property
    def en(self) -> str:
        return _NAMES[self][1]

    @property
    def points(self) -> int:
        return POINTS[self]


FAN_COUNT = len(Fan)
FanCounts = tuple[tuple[Fan, int], ...]     # (fan, count) pairs

_NAMES: dict[Fan, tuple[str, str, int]] = {
    Fan.BIG_FOUR_WINDS: ("大四喜", "Big Four Winds", 88),
    Fan.BIG_THREE_DRAGONS: ("大三元", "Big Three Dragons", 88),
    Fan.ALL_GREEN: ("绿一色", "All Green", 88),
    Fan.NINE_GATES: ("九莲宝灯", "Nine Gates", 88),
    Fan.FOUR_KONGS: ("四杠", "Four Kongs", 88),
    Fan.SEVEN_SHIFTED_PAIRS: ("连七对", "Seven Shifted Pairs", 88),
    Fan.THIRTEEN_ORPHANS: ("十三幺", "Thirteen Orphans", 88),
    Fan.ALL_TERMINALS: ("清幺九", "All Terminals", 64),
    Fan.LITTLE_FOUR_WINDS: ("小四喜", "Little Four Winds", 64),
    Fan.LITTLE_THREE_DRAGONS: ("小三元", "Little Three Dragons", 64),
    Fan.ALL_HONORS: ("字一色", "All Honors", 64),
    Fan.FOUR_CONCEALED_PUNGS: ("四暗刻", "Four Concealed Pungs", 64),
    Fan.PURE_TERMINAL_CHOWS: ("一色双龙会", "Pure Terminal Chows", 64),
    Fan.QUADRUPLE_CHOW: ("一色四同顺", "Quadruple Chow", 48),
    Fan.FOUR_PURE_SHIFTED_PUNGS: ("一色四节高", "Four Pure Shifted Pungs", 48),
    Fan.FOUR_PURE_SHIFTED_CHOWS: ("一色四步高", "Four Pure Shifted Chows", 32),
    Fan.THREE_KONGS: ("三杠", "Three Kongs", 32),
    Fan.ALL_TERMINALS_AND_HONORS: ("混幺九", "All Terminals and Honors", 32),
    Fan.SEVEN_PAIRS: ("七对", "Seven Pairs", 24),
    Fan.GREATER_HONORS_AND_KNITTED: ("七星不靠", "Greater Honors and Knitted Tiles", 24),
    Fan.ALL_EVEN_PUNGS: ("全双刻", "All Even Pungs", 24),
    Fan.FULL_FLUSH: ("清一色", "Full Flush", 24),
    Fan.PURE_TRIPLE_CHOW: ("一色三同顺", "Pure Triple Chow", 24),
    Fan.PURE_SHIFTED_PUNGS: ("一色三节高", "Pure Shifted Pungs", 24),
    Fan.UPPER_TILES: ("全大", "Upper Tiles", 24),
    Fan.MIDDLE_TILES: ("全中", "Middle Tiles", 24),
    Fan.LOWER_TILES: ("全小", "Lower Tiles", 24),
    Fan.PURE_STRAIGHT: ("清龙", "Pure Straight", 16),
    Fan.THREE_SUITED_TERMINAL_CHOWS: ("三色双龙会", "Three-Suited Terminal Chows", 16),
    Fan.PURE_SHIFTED_CHOWS: ("一色三步高", "Pure Shifted Chows", 16),
    Fan.ALL_FIVE: ("全带五", "All Five", 16),
    Fan.TRIPLE_PUNG: ("三同刻", "Triple Pung", 16),
    Fan.THREE_CONCEALED_PUNGS: ("三暗刻", "Three Concealed Pungs", 16),
    Fan.LESSER_HONORS_AND_KNITTED: ("全不靠", "Lesser Honors and Knitted Tiles", 12),
    Fan.KNITTED_STRAIGHT: ("组合龙", "Knitted Straight", 12),
    Fan.UPPER_FOUR: ("大于五", "Upper Four", 12),
    Fan.LOWER_FOUR: ("小于五", "Lower Four", 12),
    Fan.BIG_THREE_WINDS: ("三风刻", "Big Three Winds", 12),
    Fan.MIXED_STRAIGHT: ("花龙", "Mixed Straight", 8),
    Fan.REVERSIBLE_TILES: ("推不倒", "Reversible Tiles", 8),
    Fan.MIXED_TRIPLE_CHOW: ("三色三同顺", "Mixed Triple Chow", 8),
    Fan.MIXED_SHIFTED_PUNGS: ("三色三节高", "Mixed Shifted Pungs", 8),
    Fan.CHICKEN_HAND: ("无番和", "Chicken Hand", 8),
    Fan.LAST_TILE_DRAW: ("妙手回春", "Last Tile Draw", 8),
    Fan.LAST_TILE_CLAIM: ("海底捞月", "Last Tile Claim", 8),
    Fan.OUT_WITH_REPLACEMENT_TILE: ("杠上开花", "Out with Replacement Tile", 8),
    Fan.ROBBING_THE_KONG: ("抢杠和", "Robbing The Kong", 8),
    Fan.ALL_PUNGS: ("碰碰和", "All Pungs", 6),
    Fan.HALF_FLUSH: ("混一色", "Half Flush", 6),
    Fan.MIXED_SHIFTED_CHOWS: ("三色三步高", "Mixed Shifted Chows", 6),
    Fan.ALL_TYPES: ("五门齐", "All Types", 6),
    Fan.MELDED_HAND: ("全求人", "Melded Hand", 6),
    Fan.TWO_CONCEALED_KONGS: ("双暗杠", "Two Concealed Kongs", 6),
    Fan.TWO_DRAGONS_PUNGS: ("双箭刻", "Two Dragons Pungs", 6),
    Fan.OUTSIDE_HAND: ("全带幺", "Outside Hand", 4),
    Fan.FULLY_CONCEALED_HAND: ("不求人", "Fully Concealed Hand", 4),
    Fan.TWO_MELDED_KONGS: ("双明杠", "Two Melded Kongs", 4),
    Fan.LAST_TILE: ("和绝张", "Last Tile", 4),
    Fan.DRAGON_PUNG: ("箭刻", "Dragon Pung", 2),
    Fan.PREVALENT_WIND: ("圈风刻", "Prevalent Wind", 2),
    Fan.SEAT_WIND: ("门风刻", "Seat Wind", 2),
    Fan.CONCEALED_HAND: ("门前清", "Concealed Hand", 2),
    Fan.ALL_CHOWS: ("平和", "All Chows", 2),
    Fan.TILE_HOG: ("四归一", "Tile Hog", 2),
    Fan.DOUBLE_PUNG: ("双同刻", "Double Pung", 2),
    Fan.TWO_CONCEALED_PUNGS: ("双暗刻", "Two Concealed Pungs", 2),
    Fan.CONCEALED_KONG: ("暗杠", "Concealed Kong", 2),
    Fan.ALL_SIMPLES: ("断幺", "All Simples", 2),
    Fan.PURE_DOUBLE_CHOW: ("一般高", "Pure Double Chow", 1),
    Fan.MIXED_DOUBLE_CHOW: ("喜相逢", "Mixed Double Chow", 1),
    Fan.SHORT_STRAIGHT: ("连六", "Short Straight", 1),
    Fan.TWO_TERMINAL_CHOWS: ("老少副", "Two Terminal Chows", 1),
    Fan.PUNG_OF_TERMINALS_OR_HONORS: ("幺九刻", "Pung of Terminals or Honors", 1),
    Fan.MELDED_KONG: ("明杠", "Melded Kong", 1),
    Fan.ONE_VOIDED_SUIT: ("缺一门", "One Voided Suit", 1),
    Fan.NO_HONORS: ("无字", "No Honors", 1),
    Fan.EDGE_WAIT: ("独听・边张", "Edge Wait", 1),
    Fan.CLOSED_WAIT: ("独听・嵌张", "Closed Wait", 1),
    Fan.SINGLE_WAIT: ("独听・单钓", "Single Wait", 1),
    Fan.SELF_DRAWN: ("自摸", "Self-Drawn", 1),
    Fan.FLOWER_TILES: ("花牌", "Flower Tiles", 1),
    Fan.CONCEALED_KONG_AND_MELDED_KONG: ("明暗杠", "Concealed Kong and Melded Kong", 5),
}
POINTS: tuple[int, ...] = tuple(_NAMES[f][2] for f in Fan)
assert len(_NAMES) == FAN_COUNT == 82  # the 81 of the rule book (flowers included) + 明暗杠


if TYPE_CHECKING:
    FanIndex = Fan      # (to a type checker the fast class below is the enum: its names are the enum's, ints both)
else:
    class FanIndex:
        """The fans as plain ints (``FanIndex.SELF_DRAWN == Fan.SELF_DRAWN``) for the scoring hot paths,
        where an enum attribute lookup costs four times a class attribute."""

    for _fan in Fan:
        setattr(FanIndex, _fan.name, int(_fan))
