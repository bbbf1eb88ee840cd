"""Chip transfers shared by every rule set's settlement (four seats, amounts summing to zero)."""

from __future__ import annotations

SEATS = 4


def one_pays_each(payer: int, amount: int) -> list[int]:
    """``payer`` pays ``amount`` to each other seat (a false win, 黄庄 / 跟庄, 追牌)."""
    deltas = [amount] * SEATS
    deltas[payer] = -amount * (SEATS - 1)
    return deltas


def each_pays_one(receiver: int, amount: int) -> list[int]:
    """Each other seat pays ``amount`` to ``receiver`` (on-the-spot kong money)."""
    return [-a for a in one_pays_each(receiver, amount)]
