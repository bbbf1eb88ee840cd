"""MCR payments for one hand (1998 rules, 成绩计算).

B is the base score: every fan, flowers included.  A legal win pays:

* self-drawn (自摸, 杠上开花 included): each other seat pays 8 + B;
* on a discard: the discarder pays 8 + B and each of the other two pays 8;
  抢杠和 is paid the same way with the robbed kong's owner as discarder.

A declared win that is not a winning shape, or scores under 8 without
flowers, is a false win (诈和): the declarer pays 10 to each other seat.
A drawn hand (荒牌) pays nothing.  Seats are 0..3 (seat winds E S W N).
"""

from __future__ import annotations

from firmware.rules.mcr.scorer import MCRScore
from firmware.rules.transfers import one_pays_each

BASE = 8
FALSE_WIN_EACH = 10
SEATS = 4


def win_payments(score: MCRScore, winner: int, discarder: int | None) -> list[int]:
    """Chip changes per seat (sum zero); ``discarder`` None for a self-drawn win."""
    if not score.meets_minimum:
        return false_win_payments(winner)
    deltas = [0] * SEATS
    for seat in range(SEATS):
        if seat == winner:
            continue
        pay = BASE + score.total if discarder is None or seat == discarder else BASE
        deltas[seat] -= pay
        deltas[winner] += pay
    return deltas


def false_win_payments(declarer: int) -> list[int]:
    return one_pays_each(declarer, FALSE_WIN_EACH)
