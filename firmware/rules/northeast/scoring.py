"""辽宁 and 锦州: the winning conditions and the winner's doubling items of a declared win.

A legal win needs the rule set's conditions (``[conditions]`` of its TOML:
opened or not, a pung or a stand-in pair, a 1/9 or honour, all three suits,
seven pairs allowed or free).  The winner's items are the doublings every
payer counts (自摸, 飘 / 楼, 一口听 / 洞, 杠开, 抢杠, 海底, kongs, 四归一 ...),
each worth the +N of ``[doubling.items]``; an item with no value there is
not scored, so each rule set's TOML switches its own items on.  A single
wait (一口听) counts the waits that would be *legal* wins: ``23m`` waiting on
1m or 4m with no 1/9 elsewhere can only win on 1m (单和幺), so it is a single
wait.  A hand that reads both as seven pairs and as four sets is legal if
either reading is, and the better legal reading counts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from firmware.hands.analysis import STANDARD_AND_PAIRS, STANDARD_ONLY, decompositions, waits, win_shapes
from firmware.rules.config import ConditionsSection, DoublingSection
from firmware.rules.money import Item
from firmware.rules.win import MeldKind, Win
from firmware.tiles.tile import DRAGONS, TERMINALS_AND_HONOURS

ITEM_NAMES: dict[str, tuple[str, str]] = {
    "discard": ("点炮", "discarder"), "self_drawn": ("自摸", "self-drawn"), "dealer": ("庄", "dealer"),
    "winner_closed": ("闭门", "closed hand"), "payer_closed": ("对方闭门", "payer closed"),
    "three_closed": ("三清", "three closed"), "four_closed": ("四清", "four closed"),
    "single_wait": ("一口听", "single wait"), "all_pungs": ("飘", "all pungs"),
    "all_pungs_single": ("楼", "all pungs on a single wait"), "last_single": ("手把一", "won on the last single"),
    "seven_pairs": ("七小对", "seven pairs"), "kong_replacement": ("杠上开花", "out on a kong replacement"),
    "kong_discard": ("杠流泪", "won on the discard after a kong"), "robbed_kong": ("抢杠", "robbing the kong"),
    "last_tile": ("海底捞月", "last tile"), "tile_hog": ("四归一", "tile hog"), "melded_kong": ("明杠", "melded kong"),
    "concealed_kong": ("暗杠", "concealed kong"), "dragon_pung": ("中发白刻", "dragon pung"),
    "dragon_melded_kong": ("中发白明杠", "dragon melded kong"),
    "dragon_concealed_kong": ("中发白暗杠", "dragon concealed kong"), "long_hair": ("长毛", "draws carried over"),
    "no_wild": ("穷", "no wild tile used"),
}
_TERMINALS = frozenset(TERMINALS_AND_HONOURS)


@dataclass
class NortheastScore:
    shape: bool
    legal: bool
    reason: str = ""
    items: list[tuple[str, int]] = field(default_factory=list)    # the winner's items: (key, +N), for every payer
    reading: str = ""                                             # "seven_pairs" or "standard"
    opened: bool = False


def item(key: str, n: int, dbl: DoublingSection, count: int = 1) -> Item:
    name, en = ITEM_NAMES[key]
    return Item(key, dbl.names.get(key, name), en, n, count)   # type: ignore[call-overload]


def opened(win: Win) -> bool:
    return any(not m.concealed for m in win.melds)


def score_northeast(win: Win, cond: ConditionsSection, dbl: DoublingSection) -> NortheastScore:
    counts = win.concealed_counts()
    shapes = win_shapes(counts, len(win.melds), STANDARD_AND_PAIRS if cond.seven_pairs else STANDARD_ONLY)
    if not shapes:
        return NortheastScore(False, False, "not a winning shape")
    names = [s.value for s in shapes]
    best: NortheastScore | None = None
    for seven in ([True] if "seven_pairs" in names else []) + ([False] if "standard" in names else []):
        reason = conditions_unmet(win, counts, seven, cond)
        items = _items(win, counts, seven, cond, dbl) if not reason else []
        candidate = NortheastScore(True, reason == "", reason, items, "seven_pairs" if seven else "standard",
                                   opened(win))
        if best is None or (candidate.legal, sum(n for _, n in items)) > (best.legal, sum(n for _, n in best.items)):
            best = candidate
    assert best is not None
    return best


def _merged(win: Win, counts: list[int]) -> list[int]:
    merged = list(counts)
    for meld in win.melds:
        for k in meld.tiles:
            merged[k] += 1
    return merged


def conditions_unmet(win: Win, counts: list[int], seven: bool, c: ConditionsSection) -> str:
    """Which winning condition the hand misses ("" when it meets them all)."""
    if seven and c.seven_pairs_free:
        return ""
    merged = _merged(win, counts)
    if c.all_three_suits and len({k // 9 for k in range(27) if merged[k]}) < 3:
        return "三门齐: characters, bamboo and dots must all be there"
    if c.must_have_terminal and not any(merged[k] for k in _TERMINALS):
        return "幺九: the hand needs a 1 or 9 (or an honour)"
    if seven:
        return ""
    if c.must_open and not opened(win):
        return "开门: the hand must have a chow, pung or melded kong (a concealed kong does not open)"
    if c.must_have_pung:
        stand_ins = {_STAND_IN[t] for t in c.pung_stand_ins}
        has_pung = any(m.kind is not MeldKind.CHOW for m in win.melds)
        readings = decompositions(counts, len(win.melds), STANDARD_ONLY)
        ok = any(has_pung or any(kind == "pung" for kind, _ in d.sets) or d.pair in stand_ins
                 or any(kind == "pung" and k in stand_ins for kind, k in d.sets) for d in readings)
        if not ok:
            return "刻: the hand needs a pung" + (" (or a pair of " + "/".join(c.pung_stand_ins) + ")"
                                                  if c.pung_stand_ins else "")
    return ""


_STAND_IN = {"C": DRAGONS[0], "F": DRAGONS[1], "P": DRAGONS[2]}


def legal_waits(win: Win, cond: ConditionsSection) -> list[int]:
    """The tiles the standing hand (without the winning tile) would win on legally."""
    standing = list(win.concealed_counts())
    standing[win.win_tile] -= 1
    shapes = STANDARD_AND_PAIRS if cond.seven_pairs else STANDARD_ONLY
    out = []
    for tile in waits(standing, len(win.melds), shapes):
        trial = dataclasses.replace(win, win_tile=tile)
        counts = trial.concealed_counts()
        readings = [s.value for s in win_shapes(counts, len(win.melds), shapes)]
        if any(not conditions_unmet(trial, counts, r == "seven_pairs", cond) for r in readings):
            out.append(tile)
    return out


def _items(win: Win, counts: list[int], seven: bool, cond: ConditionsSection,
           dbl: DoublingSection) -> list[tuple[str, int]]:
    values = dbl.items
    found: list[str] = []
    merged = _merged(win, counts)
    single = len(legal_waits(win, cond)) == 1
    all_pungs = False
    if seven:
        found.append("seven_pairs")
    else:
        readings = decompositions(counts, len(win.melds), STANDARD_ONLY)
        all_pungs = any(all(kind == "pung" for kind, _ in d.sets) for d in readings) and \
            all(m.kind is not MeldKind.CHOW for m in win.melds)
    lou = all_pungs and single and win.hand.count(win.win_tile) == 1 and values.get("all_pungs_single", 0) > 0
    last_single = False
    if lou:
        found.append("all_pungs_single")                 # 楼: 飘 won on a single (单骑) wait
    elif all_pungs:
        found.append("all_pungs")                        # 飘
        if len([m for m in win.melds if not m.concealed]) == 4:
            found.append("last_single")                  # 手把一
            last_single = values.get("last_single", 0) > 0
    if single and not lou and not seven and not last_single:
        found.append("single_wait")                      # (手把一 is its own single wait: not 一口听 too, §C.6 ex. 3)
    if win.self_drawn:
        found.append("self_drawn")
    if win.kong_win and win.self_drawn:
        found.append("kong_replacement")                 # (红中杠开's +1 more: the settlement knows which kong)
    elif win.kong_win:
        found.append("robbed_kong")
    if win.last_tile:
        found.append("last_tile")
    if not opened(win):
        found.append("winner_closed")
    hogs = sum(1 for k in range(34) if merged[k] == 4) - sum(1 for m in win.melds if m.kind is MeldKind.KONG)
    found += ["tile_hog"] * max(0, hogs)
    for m in win.melds:
        if m.kind is MeldKind.KONG:
            dragon = m.tile in DRAGONS
            found.append(("dragon_concealed_kong" if dragon else "concealed_kong") if m.concealed
                         else ("dragon_melded_kong" if dragon else "melded_kong"))
        elif m.kind is MeldKind.PUNG and m.tile in DRAGONS:
            found.append("dragon_pung")
    found += ["dragon_pung"] * sum(1 for k in DRAGONS if counts[k] >= 3)
    return [(key, values[key]) for key in found if values.get(key, 0) > 0]  # type: ignore[index]
