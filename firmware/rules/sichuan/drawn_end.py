"""四川's drawn end: 查花猪, 查大叫 and 退税 among the players still in when the wall runs out.

When the wall is empty with two or more players still in (血战到底; 血流成河:
everyone), each of them is one of three (docs/rules.md, 四川):

* a **花猪**: still holds a tile of its void suit (定缺);
* **ready** (有叫): not a 花猪, and one tile from a legal win; its value is the
  best win any of its waits could be, scored as a discard win with none of
  the ways of winning (no 自摸, 杠上花, 海底 ...), capped.  A wait on a tile of
  which all four are in its own hand is none; with ``dead_wait_not_ready`` a
  wait whose every other copy is on view is none either;
* **not ready**: the rest.

Then, in this order: 查花猪, each 花猪 pays each player still in who is not
one the ``pig_penalty`` (the cap value by default); 查大叫, each not-ready
player who is not a 花猪 pays each ready player still in its value (winners
collect too where ``ready_winners_collect``, and in 血流成河); 退税, each
not-ready player and each 花猪 returns the kong money it received this hand
and still has (not moved to a winner by 呼叫转移, not returned already).
"""

from __future__ import annotations

from collections import Counter
from typing import Callable

from firmware.i18n import worded
from firmware.rules.money import KONG_REASONS, KONG_REFUND, NOT_READY, PIG, ROBBED_KONG, Payment
from firmware.rules.ruleset import DrawnEnd
from firmware.rules.win import Meld, Win

SUITED = 27

ValueOf = Callable[[Win], "int | None"]       # a win's value at a drawn end (None: not a legal win)


class MissingHand(ValueError):
    """A side still in whose tiles the record does not know: the drawn-end checks cannot be made."""


def classify(end: DrawnEnd, value_of: ValueOf, dead_waits: bool) -> tuple[set[int], dict[int, int], set[int]]:
    """(the 花猪, each ready side's value, the sides not ready) among the sides still in."""
    pigs: set[int] = set()
    ready: dict[int, int] = {}
    not_ready: set[int] = set()
    for side in sorted(end.still_in):
        standing = end.standing[side]
        if standing is None:
            raise worded(MissingHand, "the drawn-end checks (查花猪, 查大叫) need side %(side)s's tiles: record its "
                         "deal and draws, or show them ('%(side)s show TILES')", side=side)
        void = end.voids[side]
        if void is not None and any(n and k // 9 == void for k, n in standing.items()):
            pigs.add(side)
            continue
        value = best_wait_value(standing, end.melds_by_side[side], void, value_of,
                                end.in_view if dead_waits else None)
        if value is None:
            not_ready.add(side)
        else:
            ready[side] = value
    return pigs, ready, not_ready


def best_wait_value(standing: Counter[int], melds: list[Meld], void: int | None, value_of: ValueOf,
                    in_view: Counter[int] | None = None) -> int | None:
    """The best value a hand of ``standing`` tiles beside ``melds`` could win with on any tile (None: not ready)."""
    hand = tuple(sorted(k for k, n in standing.items() for _ in range(n)))
    if len(hand) != 13 - 3 * len(melds):
        return None
    best: int | None = None
    for tile in range(SUITED):
        held = standing[tile] + sum(m.tiles.count(tile) for m in melds)
        if held >= 4 or (in_view is not None and held + in_view[tile] >= 4):
            continue                                    # (no copy left to win on)
        value = value_of(Win(hand, tuple(melds), tile, void=void))
        if value is not None and (best is None or value > best):
            best = value
    return best


def drawn_end_payments(end: DrawnEnd, value_of: ValueOf, pig_penalty: int, winners_collect: bool,
                       dead_waits: bool) -> list[Payment]:
    """Every payment of the drawn-end checks, 查花猪 then 查大叫 then 退税 (MissingHand: a hand is not known)."""
    pigs, ready, not_ready = classify(end, value_of, dead_waits)
    out: list[Payment] = []
    for pig in sorted(pigs):
        out += [Payment(pig, other, pig_penalty, PIG, end.event) for other in sorted(end.still_in - pigs)]
    payees = {side: value for side, value in ready.items() if winners_collect or side not in end.won}
    for payer in sorted(not_ready):
        out += [Payment(payer, side, value, NOT_READY, end.event) for side, value in sorted(payees.items())]
    for side in sorted(pigs | not_ready):
        out += refunds(side, end.paid, end.transferred, end.event)
    return out


def refunds(side: int, paid: tuple[Payment, ...], transferred: frozenset[int], event: int) -> list[Payment]:
    """退税: ``side`` returns to each payer the kong money it received this hand and still has: not of a kong whose
    money went to a winner (呼叫转移), less what it returned already (a robbed kong, a refund before)."""
    owed: Counter[int] = Counter()
    for p in paid:
        if p.held:
            continue
        if p.payee == side and p.reason.key in KONG_REASONS and p.event not in transferred:
            owed[p.payer] += p.amount
        elif p.payer == side and p.reason in (KONG_REFUND, ROBBED_KONG):
            owed[p.payee] -= p.amount
    return [Payment(side, payer, amount, KONG_REFUND, event) for payer, amount in sorted(owed.items()) if amount > 0]
