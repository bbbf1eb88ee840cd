"""辽宁 and 锦州: the northeastern winning conditions and the doubling settlement (base x 2^N per payer).

A legal win needs the rule set's conditions (``[conditions]`` of its TOML:
opened or not, a pung or a stand-in pair, a 1/9 or honour, all three suits,
seven pairs allowed or free).  Scoring is per payer: N sums the winner's
items (自摸, 飘, 一口听, 杠开, kongs ...) and the items that concern that
payer (点炮, 庄, the payer closed), each worth the +N of ``[doubling.items]``;
the payer owes base x 2^min(N, cap).  Who pays on a discard is an option:
the discarder only, every seat, or the discarder for all three (一家炮 /
包三家).  Kong money, 黄庄 and 跟庄 are paid on the spot.  Every amount
comes with its breakdown, so a player can check it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from firmware.hands.analysis import STANDARD_AND_PAIRS, STANDARD_ONLY, decompositions, waits, win_shapes
from firmware.rules.ruleset import ConditionsSection, RuleSetConfig
from firmware.rules.transfers import each_pays_one, one_pays_each
from firmware.rules.win import MeldKind, Win
from firmware.tiles.tile import parse_one

SEATS = 4
RED = parse_one("C")
DRAGONS = (parse_one("C"), parse_one("F"), parse_one("P"))


@dataclass(frozen=True)
class TableContext:
    """What the hand's circumstances add: the dealer, who opened, streaks, chips."""

    dealer: int = 0
    open_seats: frozenset[int] = frozenset()   # seats (other than the winner) with a chow, pung or melded kong
    chips: tuple[int, ...] | None = None
    long_hair: int = 0                         # 长毛: 黄庄 carried into this hand (辽宁)
    wild_in_play: bool = False                 # a 会儿/宝 wild tile is in play (锦州 穷)
    kong_discard: bool = False                 # won on the discard made right after a kong replacement


@dataclass
class NortheastScore:
    win: bool
    legal: bool
    reason: str = ""
    items: list[tuple[str, int]] = field(default_factory=list)    # the winner's items: (name, +N), for every payer
    shape: str = ""


def _opened(win: Win) -> bool:
    return any(not m.concealed for m in win.melds)


def score_northeast(win: Win, rules: RuleSetConfig) -> NortheastScore:
    cond, dbl = rules.conditions, rules.doubling
    assert cond is not None and dbl is not None
    counts = win.concealed_counts()
    declared = len(win.melds)
    shapes = win_shapes(counts, declared, STANDARD_AND_PAIRS if cond.seven_pairs else STANDARD_ONLY)
    if not shapes:
        return NortheastScore(False, False, "not a winning shape")
    merged = list(counts)
    for meld in win.melds:
        for k in meld.tiles:
            merged[k] += 1
    names = [s.value for s in shapes]
    # A hand that reads both ways is legal if either reading is; the better legal reading counts.
    best: NortheastScore | None = None
    for seven in ([True] if "seven_pairs" in names else []) + ([False] if "standard" in names else []):
        reason = _conditions(win, counts, merged, seven, cond)
        items = _items(win, counts, merged, seven, rules.rules.name, dbl.items)
        candidate = NortheastScore(True, reason == "", reason, items, "seven_pairs" if seven else "standard")
        if best is None or (candidate.legal, sum(n for _, n in items)) > (best.legal, sum(n for _, n in best.items)):
            best = candidate
    assert best is not None
    return best


def _conditions(win: Win, counts: list[int], merged: list[int], seven: bool, c: ConditionsSection) -> str:
    if seven and c.seven_pairs_free:
        return ""
    if c.all_three_suits and len({k // 9 for k in range(27) if merged[k]}) < 3:
        return "三门齐: characters, bamboo and dots must all be there"
    if c.must_have_terminal and not any(merged[k] for k in (0, 8, 9, 17, 18, 26, *range(27, 34))):
        return "幺九: the hand needs a 1 or 9 (or an honour)"
    if seven:
        return ""
    if c.must_open and not _opened(win):
        return "开门: the hand must have a chow, pung or melded kong (a concealed kong does not open)"
    if c.must_have_pung:
        stand_ins = {parse_one(t) for t in c.pung_stand_ins}
        has_pung = any(m.kind is not MeldKind.CHOW for m in win.melds)
        readings = decompositions(counts, len(win.melds), STANDARD_ONLY)
        ok = any(has_pung or any(kind == "pung" for kind, _ in d.sets) or d.pair in stand_ins
                 or any(kind == "pung" and k in stand_ins for kind, k in d.sets) for d in readings)
        if not ok:
            return "刻: the hand needs a pung" + (" (or a pair of " + "/".join(c.pung_stand_ins) + ")"
                                                  if c.pung_stand_ins else "")
    return ""


def _items(win: Win, counts: list[int], merged: list[int], seven: bool, name: str,
           values: dict[str, int]) -> list[tuple[str, int]]:
    found: list[str] = []
    standing = list(counts)
    standing[win.win_tile] -= 1
    single = len(waits(standing, len(win.melds), STANDARD_AND_PAIRS)) == 1
    all_pungs = False
    if seven:
        found.append("seven_pairs")
    else:
        readings = decompositions(counts, len(win.melds), STANDARD_ONLY)
        all_pungs = any(all(kind == "pung" for kind, _ in d.sets) for d in readings) and \
            all(m.kind is not MeldKind.CHOW for m in win.melds)
    if name == "jinzhou" and all_pungs and single and win.hand.count(win.win_tile) == 1:
        found.append("all_pungs_single")                 # 楼
    elif all_pungs:
        found.append("all_pungs")                        # 飘
        if len([m for m in win.melds if not m.concealed]) == 4:
            found.append("last_single")                  # 手把一
    if single and "all_pungs_single" not in found and not seven:
        found.append("single_wait")
    if win.self_drawn:
        found.append("self_drawn")
    red_kong = any(m.kind is MeldKind.KONG and m.tile == RED for m in win.melds)
    if win.kong_win and win.self_drawn:
        found.append("kong_replacement")
        if name == "jinzhou" and red_kong:
            found.append("kong_replacement")             # 红中杠开 doubles again
    elif win.kong_win:
        found.append("robbed_kong")
    if win.last_tile:
        found.append("last_tile")
    if not _opened(win):
        found.append("winner_closed")
    if name == "liaoning":
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
    return [(item, values[item]) for item in found if values.get(item, 0) > 0]


@dataclass
class Settlement:
    deltas: list[int]
    breakdown: dict[int, list[tuple[str, int]]]      # payer -> items (name, +N) that made their amount


def settle(win: Win, score: NortheastScore, winner: int, discarder: int | None, ctx: TableContext,
           rules: RuleSetConfig) -> Settlement:
    """Payments for a legal win (an illegal one pays nothing here: the referee decides)."""
    dbl = rules.doubling
    assert dbl is not None
    v = dbl.items
    others = [s for s in range(SEATS) if s != winner]
    closed = {s for s in range(SEATS) if s not in ctx.open_seats}
    if _opened(win):
        closed.discard(winner)
    else:
        closed.add(winner)
    per_payer: dict[int, list[tuple[str, int]]] = {}
    for payer in others:
        items = list(score.items)
        if discarder is not None and payer == discarder:
            items.append(("discard", v.get("discard", 0)))
        if ctx.dealer in (winner, payer):
            items.append(("dealer", v.get("dealer", 0)))
        if payer in closed:
            items.append(("payer_closed", v.get("payer_closed", 0)))
        if len(closed) == SEATS:
            items.append(("four_closed", v.get("four_closed", 0)))
        elif all(s in closed for s in others):
            items.append(("three_closed", v.get("three_closed", 0)))
        if ctx.long_hair:
            items.append(("long_hair", v.get("long_hair", 0) * ctx.long_hair))
        if ctx.wild_in_play:
            items.append(("no_wild", v.get("no_wild", 0)))
        if ctx.kong_discard and not win.self_drawn:
            items.append(("kong_discard", v.get("kong_discard", 0)))
        per_payer[payer] = [(name, n) for name, n in items if n > 0]
    amounts = {}
    for payer, items in per_payer.items():
        n = sum(x for _, x in items)
        if dbl.cap is not None:
            n = min(n, dbl.cap)
        amounts[payer] = dbl.base * 2 ** n
    if discarder is not None and dbl.who_pays != "all":
        if dbl.who_pays == "discarder_for_all":
            amounts = {discarder: sum(amounts.values())}
        else:
            amounts = {discarder: amounts[discarder]}
    deltas = [0] * SEATS
    for payer, amount in amounts.items():
        if ctx.chips is not None:
            amount = min(amount, max(0, ctx.chips[payer]))
        deltas[payer] -= amount
        deltas[winner] += amount
    return Settlement(deltas, {p: per_payer[p] for p in amounts})


def kong_money(kind: str, maker: int, tile: int, rules: RuleSetConfig) -> list[int]:
    """On-the-spot kong money from each other seat (``melded`` or ``concealed``); 红中 kongs x factor."""
    dbl = rules.doubling
    assert dbl is not None
    each = dbl.kong_each.get(kind, 0) * (dbl.red_dragon_kong_factor if tile == RED else 1)  # type: ignore[call-overload]
    return each_pays_one(maker, each)


def dealer_pays_each(dealer: int, amount: int) -> list[int]:
    """黄庄 / 跟庄 (锦州): the dealer pays ``amount`` to each other seat."""
    return one_pays_each(dealer, amount)
