"""四川 血战到底's fans: a win's pattern, its 根 and the way it was won, each counted in doublings.

A hand is worth base x 2^min(F, cap); F adds (docs/rules.md, 四川):

* the **pattern**, the best reading of the tiles: 平胡 0, 对对胡 1 (all
  pungs and kongs), 金钩钓 2 (对对胡 with four sets exposed, won on the
  pair), 七对 2 (seven pairs, concealed; four alike are two pairs),
  龙七对 3 (七对 with four alike: 七对 and that 根), with 清一色 (one suit)
  2 more: 清一色 2, 清对 3, 清金钩钓 4, 清七对 4, 清龙七对 5; 十八罗汉 (金钩钓 of
  four kongs) 6, its four 根 included; switches add 将对 (all pungs of 2, 5
  and 8) and 将七对 2 more, 带幺九 2 (every set and the pair hold a 1 or 9);
* **根**: 1 for each four alike held (a kong of any kind, four in the hand,
  a pung and its fourth), those the pattern counts already left out;
* the **way it was won**: 杠上开花 (self-drawn on a kong's replacement), 抢杠胡
  (robbing a 补杠), 海底捞月 (self-drawn, the last tile), 海底炮 (on the
  discard after it), 自摸 in the 自摸加番 setting, 门清 and 中张 where
  switched on, each 1; 杠上炮 is the situation's (the settlement adds it).

天胡 and 地胡, switched on, are worth the cap and nothing else.  A win is
legal when its tiles make a winning shape, it holds no tile of its void suit
(定缺) and no chow.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from firmware.hands.analysis import STANDARD_AND_PAIRS, Decomposition, Shape, decompositions
from firmware.rules.config import SichuanSection
from firmware.rules.money import Item
from firmware.rules.win import MeldKind, Win
from firmware.tiles.tile import SUITS, code

NAMES: dict[str, tuple[str, str]] = {
    "plain": ("平胡", "plain hand"),
    "all_pungs": ("对对胡", "all pungs"),
    "golden_single": ("金钩钓", "golden single wait"),
    "pungs_258": ("将对", "all pungs of 2, 5 and 8"),
    "golden_single_258": ("将金钩钓", "golden single wait of 2, 5 and 8"),
    "terminals_in_all": ("带幺九", "a 1 or 9 in every set"),
    "eighteen_arhats": ("十八罗汉", "four kongs, single wait"),
    "seven_pairs": ("七对", "seven pairs"),
    "dragon_seven_pairs": ("龙七对", "seven pairs with four alike"),
    "seven_pairs_258": ("将七对", "seven pairs of 2, 5 and 8"),
    "dragon_seven_pairs_258": ("将龙七对", "seven pairs of 2, 5 and 8 with four alike"),
    "full_flush": ("清一色", "full flush"),
    "flush_all_pungs": ("清对", "full flush, all pungs"),
    "flush_golden_single": ("清金钩钓", "full flush, golden single wait"),
    "flush_terminals": ("清幺九", "full flush, a 1 or 9 in every set"),
    "flush_eighteen_arhats": ("清十八罗汉", "full flush, four kongs, single wait"),
    "flush_seven_pairs": ("清七对", "full flush, seven pairs"),
    "flush_dragon_seven_pairs": ("清龙七对", "full flush, seven pairs with four alike"),
    "root": ("根", "four alike"),
    "kong_replacement": ("杠上开花", "self-drawn on a kong's replacement"),
    "kong_discard": ("杠上炮", "won on the discard after a kong"),
    "robbed_kong": ("抢杠胡", "robbing a kong"),
    "last_tile": ("海底捞月", "self-drawn, the last tile"),
    "last_discard": ("海底炮", "won on the last discard"),
    "self_drawn": ("自摸加番", "self-drawn (one doubling more)"),
    "concealed": ("门清", "concealed hand"),
    "all_simples": ("中张", "no 1 or 9"),
    "heavenly": ("天胡", "heavenly hand (the dealer's first fourteen)"),
    "earthly": ("地胡", "earthly hand (on the dealer's first discard)"),
}
FLUSH = 2                       # 清一色's doublings, on top of the pattern it goes with


def item(key: str, points: int, count: int = 1) -> Item:
    name, en = NAMES[key]
    return Item(key, name, en, points, count)


@dataclass
class Pattern:
    """The best reading of a winning hand: its pattern's key and doublings, and the 根 the pattern counts."""

    key: str
    doublings: int
    roots_in_pattern: int = 0


@dataclass
class SichuanScore:
    shape: bool
    legal: bool
    reason: str = ""
    items: list[Item] = field(default_factory=list)
    doublings: int = 0               # F before the cap: pattern + 根 + the way it was won
    hand_doublings: int = 0          # pattern + 根 (+ 门清 / 中张): what a ready hand is worth at a drawn end


def all_tiles(win: Win) -> Counter[int]:
    tiles = Counter(win.hand)
    tiles[win.win_tile] += 1
    for meld in win.melds:
        tiles.update(meld.tiles)
    return tiles


def refusal(win: Win) -> str:
    """Why the tiles of ``win`` may not win in 四川 whatever their shape ("" when they may)."""
    tiles = all_tiles(win)
    other = sorted(k for k in tiles if k >= 27)
    if other:
        return f"{code(other[0])} is not a tile of 四川's 108 (suits only)"
    if any(m.kind is MeldKind.CHOW for m in win.melds):
        return "四川 has no chows (吃)"
    if win.void is None:
        return "定缺: the winner named no void suit"
    held = sorted(k for k in tiles if k // 9 == win.void)
    if held:
        return f"定缺 {SUITS[win.void]}: holds {code(held[0])} of its void suit"
    return ""


def best_pattern(win: Win, cfg: SichuanSection) -> Pattern | None:
    """The pattern of the best reading of ``win``'s tiles (None: no winning shape)."""
    counts = win.concealed_counts()
    readings = decompositions(counts, len(win.melds), STANDARD_AND_PAIRS)
    if not readings:
        return None
    tiles = all_tiles(win)
    flush = len({k // 9 for k in tiles}) == 1
    return max((_pattern(d, win, tiles, flush, cfg) for d in readings), key=lambda p: p.doublings)


def _pattern(d: Decomposition, win: Win, tiles: Counter[int], flush: bool, cfg: SichuanSection) -> Pattern:
    only_258 = all(k % 9 in (1, 4, 7) for k in tiles)
    if d.shape is Shape.SEVEN_PAIRS:
        fours = sum(1 for n in win.concealed_counts() if n == 4)
        dragon = 1 if fours else 0
        key = "dragon_seven_pairs" if dragon else "seven_pairs"
        value = 2 + dragon * (1 + cfg.dragon_seven_pairs_extra)
        if cfg.seven_pairs_258 and only_258:
            key, value = key + "_258", value + 2
        elif flush:
            key, value = "flush_" + key, value + FLUSH
        return Pattern(key, value, dragon)
    pungs = all(kind == "pung" for kind, _ in d.sets) and all(m.kind is not MeldKind.CHOW for m in win.melds)
    candidates = [Pattern("plain", 0)]
    if pungs:
        golden = len(win.melds) == 4
        kongs = sum(1 for m in win.melds if m.kind is MeldKind.KONG)
        if golden and kongs == 4:
            candidates.append(Pattern("eighteen_arhats", 6, 4))
        elif golden:
            candidates.append(Pattern("golden_single", 2))
        else:
            candidates.append(Pattern("all_pungs", 1))
        if cfg.pungs_258 and only_258 and not (golden and kongs == 4):
            candidates.append(Pattern("golden_single_258" if golden else "pungs_258", 4 if golden else 3))
    if cfg.terminals_in_all and _terminals_everywhere(d, win):
        candidates.append(Pattern("terminals_in_all", 2))
    best = max(candidates, key=lambda p: p.doublings)
    if flush:
        key = {"plain": "full_flush", "all_pungs": "flush_all_pungs", "terminals_in_all": "flush_terminals"}.get(
            best.key, "flush_" + best.key)
        return Pattern(key, best.doublings + FLUSH, best.roots_in_pattern)
    return best


def _terminals_everywhere(d: Decomposition, win: Win) -> bool:
    """带幺九: every set (exposed ones included) and the pair hold a 1 or 9."""
    def has(kind: str, low: int) -> bool:
        return low % 9 in (0, 6) if kind == "chow" else low % 9 in (0, 8)
    sets = list(d.sets) + [("chow" if m.kind is MeldKind.CHOW else "pung", m.tile) for m in win.melds]
    return d.pair is not None and d.pair % 9 in (0, 8) and all(has(kind, low) for kind, low in sets)


def score_sichuan(win: Win, cfg: SichuanSection, blood_river: bool = False) -> SichuanScore:
    """The items of a declared win (the situation's 杠上炮 aside) and whether it is legal."""
    why = refusal(win)
    pattern = best_pattern(win, cfg)
    if pattern is None:
        return SichuanScore(False, False, why or "not a winning hand (four sets and a pair, or seven pairs)")
    if why:
        return SichuanScore(True, False, why)
    if cfg.heavenly_earthly and win.first_turn and not blood_river:
        key = "heavenly" if win.self_drawn and win.seat_wind == 0 else "earthly"
        return SichuanScore(True, True, "", [item(key, cfg.cap)], cfg.cap, cfg.cap)
    items = [item(pattern.key, pattern.doublings)]
    roots = sum(1 for n in all_tiles(win).values() if n == 4) - pattern.roots_in_pattern
    if roots > 0:
        items.append(item("root", 1, roots))
    items += _hand_switches(win, cfg)
    hand = sum(i.points * i.count for i in items)
    items += _way_of_winning(win, cfg)
    return SichuanScore(True, True, "", items, sum(i.points * i.count for i in items), hand)


def _hand_switches(win: Win, cfg: SichuanSection) -> list[Item]:
    if not cfg.concealed_and_simples:
        return []
    out = []
    if all(m.concealed for m in win.melds):
        out.append(item("concealed", 1))
    if all(k % 9 not in (0, 8) for k in all_tiles(win)):
        out.append(item("all_simples", 1))
    return out


def _way_of_winning(win: Win, cfg: SichuanSection) -> list[Item]:
    out = []
    if win.kong_win:
        out.append(item("kong_replacement" if win.self_drawn else "robbed_kong", 1))
    if win.last_tile and (win.self_drawn or cfg.last_discard):
        out.append(item("last_tile" if win.self_drawn else "last_discard", 1))
    if win.self_drawn and cfg.self_drawn == "add_doubling":
        out.append(item("self_drawn", 1))
    return out
