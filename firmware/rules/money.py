"""What a rule set hands out: scored items (fans, extra points, doublings) and payments with their reasons.

Every fan or item of every rule set is an :class:`Item` with the same three
names: ``name`` (Chinese, as players say it), ``key`` (stable ASCII, for
scripts and the database) and ``en``.  Every movement of chips is a
:class:`Payment` from one seat to another with a :class:`Reason` (和牌,
明杠, 追牌, 跟庄, 黄庄, a penalty ...), the index of the action of the hand's
record that caused it, and ``held`` when the 竞技麻将 局结 rule keeps it off the
board until the 局 ends.  Seats are physical sides 0..3.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from firmware.frozen import quick_init

SEATS = 4


@quick_init
@dataclass(frozen=True)
class Item:
    """A fan, extra point or doubling item as scored: ``points`` in the rule set's unit, ``count`` times."""

    key: str
    name: str
    en: str
    points: int
    count: int = 1

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "key": self.key, "en": self.en, "points": self.points, "count": self.count}


@quick_init
@dataclass(frozen=True)
class Reason:
    """Why chips moved: ``key`` is stable ASCII (kept in the database), ``name`` Chinese, ``en`` English."""

    key: str
    name: str
    en: str

    def to_json(self) -> dict[str, str]:
        return {"key": self.key, "name": self.name, "en": self.en}


WIN = Reason("win", "和牌", "win")
LIABLE_WIN = Reason("liable_win", "包付", "win paid by the liable seat")
FALSE_WIN = Reason("false_win", "诈和", "false win")
REFUSED_WIN = Reason("refused_win", "对无分者和牌", "win off a player with no points")
MELDED_KONG = Reason("melded_kong", "点杠", "kong on a discard")
ADDED_KONG = Reason("added_kong", "加杠", "added kong")
CONCEALED_KONG = Reason("concealed_kong", "暗杠", "concealed kong")
FLOWER_KONG = Reason("flower_kong", "花杠", "flower kong")
CHASE = Reason("chase", "追牌", "four discards of one tile in a row")
FOLLOW = Reason("follow", "跟庄", "the dealer's first discard followed")
DRAW = Reason("draw", "黄庄", "drawn hand")
ROBBED_KONG = Reason("robbed_kong", "抢杠退杠钱", "a robbed kong's money returned")
KONG_TRANSFER = Reason("kong_transfer", "呼叫转移", "a kong's money passed to the winner on its discard (杠上炮)")
KONG_REFUND = Reason("kong_refund", "退税", "kong money returned (not ready at the drawn end, a false win)")
PIG = Reason("flower_pig", "查花猪", "a tile of the void suit still held at the drawn end")
NOT_READY = Reason("not_ready", "查大叫", "not ready at the drawn end: each ready player is paid")
KONG_REASONS = frozenset({"melded_kong", "added_kong", "concealed_kong"})
LEGACY = Reason("hand", "和牌", "hand (recorded before reasons were kept)")

REASONS: dict[str, Reason] = {r.key: r for r in (WIN, LIABLE_WIN, FALSE_WIN, REFUSED_WIN, MELDED_KONG, ADDED_KONG,
                                                 CONCEALED_KONG, FLOWER_KONG, CHASE, FOLLOW, DRAW, ROBBED_KONG,
                                                 KONG_TRANSFER, KONG_REFUND, PIG, NOT_READY, LEGACY)}
PENALTY_PREFIX = "penalty:"


def penalty_reason(kind: str, name: str, en: str) -> Reason:
    return Reason(PENALTY_PREFIX + kind, name, en)


@quick_init
@dataclass(frozen=True)
class Payment:
    """``payer`` pays ``amount`` (> 0) to ``payee`` because of ``reason``; ``event`` is the index of the
    action in the hand's record that caused it; ``held``: kept off the board until the 局 ends (局结)."""

    payer: int
    payee: int
    amount: int
    reason: Reason
    event: int = 0
    held: bool = False

    def __post_init__(self) -> None:
        if not (0 <= self.payer < SEATS and 0 <= self.payee < SEATS) or self.payer == self.payee:
            raise ValueError(f"a payment from side {self.payer} to side {self.payee}")
        if self.amount <= 0:
            raise ValueError(f"a payment of {self.amount}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"payer": self.payer, "payee": self.payee, "amount": self.amount,
                               "reason": self.reason.key, "name": self.reason.name, "en": self.reason.en,
                               "event": self.event}
        if self.held:
            out["held"] = True
        return out


@dataclass
class Breakdown:
    """The items behind one payer's amount (the northeastern doubling: base x 2^N); printed for players."""

    payer: int
    items: list[Item] = field(default_factory=list)
    amount: int = 0


def deltas(payments: list[Payment], include_held: bool = False) -> list[int]:
    """Each side's gain (+) or loss (-) from ``payments``: sums to zero."""
    out = [0] * SEATS
    for p in payments:
        if p.held and not include_held:
            continue
        out[p.payer] -= p.amount
        out[p.payee] += p.amount
    return out


def one_pays_one(payer: int, payee: int, amount: int, reason: Reason, event: int = 0) -> list[Payment]:
    """``payer`` pays ``amount`` to ``payee`` (点杠 money ...): nothing when the amount is 0."""
    if amount <= 0:
        return []
    return [Payment(payer, payee, amount, reason, event)]


def one_pays_each(payer: int, amount: int, reason: Reason, event: int = 0) -> list[Payment]:
    """``payer`` pays ``amount`` to each other seat (a false win, 黄庄 / 跟庄, 追牌, a penalty)."""
    if amount <= 0:
        return []
    return [Payment(payer, s, amount, reason, event) for s in range(SEATS) if s != payer]


def each_pays_one(payee: int, amount: int, reason: Reason, event: int = 0) -> list[Payment]:
    """Each other seat pays ``amount`` to ``payee`` (on-the-spot kong money)."""
    if amount <= 0:
        return []
    return [Payment(s, payee, amount, reason, event) for s in range(SEATS) if s != payee]

