"""What a table's places earn in a round, one policy per rule set: MCR's table points, 竞技麻将's 标准分 and 替补.

A round's results are the tables' scores per player (net points of the game,
after penalties).  Places at a table are by score; equal scores share a
place.  Each policy turns a whole round (every table, since 替补 compares
tables) into :class:`RoundPoints` per player.

* **MCR** (S003 标准分: 同组第一名得分等于参赛选手的人数, 其他人得分为参赛选手数减本人所得名次):
  4 / 2 / 1 / 0 for first to fourth; players sharing places share those
  places' points equally (two first: (4 + 2) / 2 = 3 each).
* **竞技麻将** (S000/S001 轮次): the table's first place (first and second when
  the event advances two) advances and takes the round's 标准分; the other
  places take none, but the best of the next place across all tables (by
  score, 总局分) advance as 替补 and take it too.  Players sharing a place
  that advances all advance [inferred: the seeds rank equal 总局分 as 并列];
  equal scores at the 替补 cut all advance [inferred likewise].

A player who sits a round out (a bye: the players are not a multiple of
four) is credited by the policy once the round is complete, with no score
and no place: under 竞技麻将 the bye advances and takes the round's 标准分
(S000: 缺三席多一人，缺两席多两人按抽签轮空晋级处理); under MCR, which
names no rule for a bye, the mean of what a table's four places take, 7/4
[inferred: what a seated player takes on average, so a bye neither gains
nor loses a player ground against the field].
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping, Protocol, Sequence

from parlour.core.event import EventFormat, EventRules, Seat

MCR_PLACE_POINTS = (4, 2, 1, 0)


@dataclass(frozen=True)
class TableResult:
    """One table's game in one round: who sat where and each player's score (net points, penalties applied)."""

    round: int
    table: str
    seats: Mapping[Seat, str]
    score: Mapping[str, int]
    confirmed: bool = False
    source: str = "fleet"


@dataclass(frozen=True)
class RoundPoints:
    """What one player took from one round."""

    points: Fraction
    score: int
    place: int                 # 1-4 at the table, shared places share the number
    advanced: bool = False     # 竞技麻将: advanced from the table (or as 替补)
    alternate: bool = False    # 竞技麻将: advanced as 替补
    bye: bool = False          # sat the round out: the policy's :meth:`~PointsPolicy.bye_points`, no score, place 0


class PointsPolicy(Protocol):
    """Turns a round's table results into points per player."""

    chain: tuple[str, ...]      # the standings' tie-break keys, in order (each: greater is better)

    def round_points(self, fmt: EventFormat, round_no: int,
                     results: Sequence[TableResult]) -> dict[str, RoundPoints]: ...

    def bye_points(self, fmt: EventFormat, round_no: int) -> RoundPoints:
        """What a player who sat round ``round_no`` out takes from it."""
        ...


def places(score: Mapping[str, int]) -> dict[str, int]:
    """Each player's place at a table (1 best); equal scores share the better place (1, 2, 2, 4)."""
    ordered = sorted(score.values(), reverse=True)
    return {name: ordered.index(value) + 1 for name, value in score.items()}


class McrTablePoints:
    """MCR: 4 / 2 / 1 / 0 by place, shared places sharing their points."""

    chain = ("table_points", "score")

    def round_points(self, fmt: EventFormat, round_no: int,
                     results: Sequence[TableResult]) -> dict[str, RoundPoints]:
        out: dict[str, RoundPoints] = {}
        for result in results:
            place_of = places(result.score)
            for name, place in place_of.items():
                sharing = sum(1 for p in place_of.values() if p == place)
                share = Fraction(sum(MCR_PLACE_POINTS[place - 1:place - 1 + sharing]), sharing)
                out[name] = RoundPoints(share, result.score[name], place)
        return out

    def bye_points(self, fmt: EventFormat, round_no: int) -> RoundPoints:
        return RoundPoints(Fraction(sum(MCR_PLACE_POINTS), len(MCR_PLACE_POINTS)), 0, 0, bye=True)


class CompetitionStandardPoints:
    """竞技麻将: the table's advancing places and the round's 替补 take the round's 标准分."""

    chain = ("table_points", "score")

    def round_points(self, fmt: EventFormat, round_no: int,
                     results: Sequence[TableResult]) -> dict[str, RoundPoints]:
        worth = Fraction(fmt.standard_points + round_no - 1)
        out: dict[str, RoundPoints] = {}
        candidates: list[tuple[int, str]] = []
        for result in results:
            for name, place in places(result.score).items():
                score = result.score[name]
                if place <= fmt.advance_per_table:
                    out[name] = RoundPoints(worth, score, place, advanced=True)
                else:
                    out[name] = RoundPoints(Fraction(0), score, place)
                    if place == fmt.advance_per_table + 1:
                        candidates.append((score, name))
        if fmt.alternates and candidates:
            candidates.sort(reverse=True)
            cut = candidates[min(fmt.alternates, len(candidates)) - 1][0]
            for score, name in candidates:
                if score >= cut:
                    out[name] = RoundPoints(worth, score, out[name].place, advanced=True, alternate=True)
        return out

    def bye_points(self, fmt: EventFormat, round_no: int) -> RoundPoints:
        return RoundPoints(Fraction(fmt.standard_points + round_no - 1), 0, 0, advanced=True, bye=True)


POLICIES: dict[EventRules, PointsPolicy] = {
    EventRules.MCR: McrTablePoints(),
    EventRules.COMPETITION: CompetitionStandardPoints(),
}


def policy_for(rules: EventRules) -> PointsPolicy:
    return POLICIES[rules]
