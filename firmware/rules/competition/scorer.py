"""Scoring a 竞技麻将 win: the 技术型番种 of the best reading, the 附加分, and S.

A win needs one of the seven shapes (four sets and a pair in any mix, 七对,
十四不靠 / 大乱; no 十三幺) and at least one fan ("无番禁和牌").  Fans of
different kinds add up; a fan is not scored again inside one that contains
it (清一色 is not also 混一色).  Extra points (flowers, a genuine single
wait, the way of winning, 门清) are added to the fans to give S, which the
settlement multiplies.  Values come from ``config/rules/competition.toml``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from firmware.hands.analysis import COMPETITION_SHAPES, Shape, decompositions, waits
from firmware.rules.config import CompetitionSection
from firmware.rules.win import MeldKind, Win

FAN_NAMES = {"mixed_straight": ("花龙", "mixed straight"), "pure_straight": ("清龙", "pure straight"),
             "seven_pairs": ("七对", "seven pairs"), "all_pungs": ("对对和", "all pungs"),
             "half_flush": ("混一色", "half flush"), "full_flush": ("清一色", "full flush"),
             "fourteen_unrelated": ("大乱", "fourteen unrelated (十四不靠)"),
             "melded_single_wait": ("全求独钓", "melded hand won on a single wait"),
             "upper_chows": ("全大", "three 789 chows"), "middle_chows": ("全中", "three 456 chows"),
             "lower_chows": ("全小", "three 123 chows")}
EXTRA_NAMES = {"flower": ("花牌", "flower"), "single_wait": ("单张和牌", "single wait"),
               "flower_replacement_win": ("补花和", "won on a flower replacement"),
               "kong_replacement_win": ("杠上开花", "out on a kong replacement"),
               "last_claim": ("海底捞月", "last tile claim"), "last_draw": ("妙手回春", "last tile draw"),
               "concealed": ("门清", "concealed hand")}


@dataclass
class CompetitionScore:
    win: bool
    fans: list[tuple[str, int]] = field(default_factory=list)            # (key, points)
    extras: list[tuple[str, int, int]] = field(default_factory=list)     # (key, points each, count)
    reason: str = ""

    @property
    def fan_points(self) -> int:
        return sum(p for _, p in self.fans)

    @property
    def total(self) -> int:
        """S: fans plus extra points (flowers included)."""
        return self.fan_points + sum(p * n for _, p, n in self.extras)

    @property
    def flower_points(self) -> int:
        return sum(p * n for key, p, n in self.extras if key == "flower")

    @property
    def meets_minimum(self) -> bool:
        """无番禁和牌: a legal win needs at least one 技术型番种."""
        return self.win and bool(self.fans)


def score_competition(win: Win, rules: CompetitionSection) -> CompetitionScore:
    counts = win.concealed_counts()
    declared = len(win.melds)
    readings = decompositions(counts, declared, COMPETITION_SHAPES)
    if not readings:
        return CompetitionScore(False, reason="not a winning shape (standard, 七对 or 十四不靠)")
    merged = list(counts)
    for meld in win.melds:
        for k in meld.tiles:
            merged[k] += 1
    flush = _flush(merged)
    best: list[tuple[str, int]] = []
    for reading in readings:
        fans = _reading_fans(reading, win, flush)
        scored = [(key, rules.fans[key]) for key in fans if rules.fans.get(key, 0) > 0]
        if sum(p for _, p in scored) > sum(p for _, p in best) or not best:
            best = scored
    seven_only = all(r.shape is Shape.SEVEN_PAIRS for r in readings)
    extras = _extras(win, counts, seven_only, rules)
    return CompetitionScore(True, best, extras)


def _flush(merged: list[int]) -> str | None:
    suits = {k // 9 for k in range(27) if merged[k]}
    honours = any(merged[27:34])
    if len(suits) == 1:
        return "half_flush" if honours else "full_flush"
    return None


def _reading_fans(reading, win: Win, flush: str | None) -> list[str]:
    fans = [flush] if flush else []
    if reading.shape is Shape.SEVEN_PAIRS:
        return ["seven_pairs", *fans]
    if reading.shape is Shape.FOURTEEN_UNRELATED:
        return ["fourteen_unrelated", *fans]
    chows = sorted([k for kind, k in reading.sets if kind == "chow"]
                   + [m.tile for m in win.melds if m.kind is MeldKind.CHOW])
    n_sets = len(reading.sets) + len(win.melds)
    if n_sets == 4 and not chows:
        fans.append("all_pungs")
    starts = {(k // 9, k % 9) for k in chows}
    if any({(s, 0), (s, 3), (s, 6)} <= starts for s in range(3)):
        fans.append("pure_straight")
    elif any({(a, 0), (b, 3), (c, 6)} <= starts for a in range(3) for b in range(3) for c in range(3)
             if len({a, b, c}) == 3):
        fans.append("mixed_straight")
    for rank, key in ((6, "upper_chows"), (3, "middle_chows"), (0, "lower_chows")):
        if sum(1 for k in chows if k % 9 == rank) >= 3:
            fans.append(key)
    claimed = [m for m in win.melds if not m.concealed]
    if len(claimed) == 4 and len(win.hand) == 1 and win.hand[0] == win.win_tile:
        fans.append("melded_single_wait")      # with all pungs, 对对和 is already there too
    return fans


def _extras(win: Win, counts: list[int], seven_only: bool, rules: CompetitionSection) -> list[tuple[str, int, int]]:
    e = rules.extras
    out: list[tuple[str, int, int]] = []
    if win.flowers:
        out.append(("flower", e.flower, win.flowers))
    standing = list(counts)
    standing[win.win_tile] -= 1
    if not seven_only and len(waits(standing, len(win.melds), COMPETITION_SHAPES)) == 1:
        out.append(("single_wait", e.single_wait, 1))
    if win.self_drawn:
        if win.flower_win:
            out.append(("flower_replacement_win", e.flower_replacement_win, 1))
        if win.kong_win and any(m.kind is MeldKind.KONG for m in win.melds):
            out.append(("kong_replacement_win", e.kong_replacement_win, 1))
        if win.last_tile:
            out.append(("last_draw", e.last_draw, 1))
    elif win.last_tile:
        out.append(("last_claim", e.last_claim, 1))
    if all(m.concealed for m in win.melds):
        out.append(("concealed", e.concealed, 1))
    return [x for x in out if x[1] > 0]
