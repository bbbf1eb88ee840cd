"""Standings derived from a tournament's state: per round points by the rule set's policy, individual and team ranks.

Individual ranking (S000: 个人名次，按运动员在各轮次比赛所得标准分排定，相同标准分情况下，根据比赛总局分判定名次排序，
总局分相同，并列名次): the sum of the points a player's places earned
(``table_points``: MCR's table points, 竞技麻将's 标准分), then the sum of
the scores (``score``: net points, 总局分); players equal in every key of the
chain share a rank (1, 2, 2, 4).  Team ranking (团体名次): the sum of the
members' points, then of their scores.  Penalties come off the player's score
in their round before places are decided.  Only results there are count: a
round still being played ranks what its tables have told.  A round's byes
are credited when its last table's result is in (the policy's bye points:
:mod:`parlour.core.points`; a penalty in that round comes off the bye's
score as off a seated player's); ``rounds`` and ``places`` count the games
played, ``byes`` the rounds sat out.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Sequence

from parlour.core.facts import TournamentState
from parlour.core.points import RoundPoints, TableResult, policy_for


@dataclass(frozen=True)
class Standing:
    """One player's line."""

    rank: int
    name: str
    team: str | None
    table_points: Fraction
    score: int
    rounds: int
    places: tuple[int, ...]
    advanced: int
    withdrawn: bool
    byes: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "name": self.name, "team": self.team, "table_points": number(self.table_points),
                "score": self.score, "rounds": self.rounds, "places": list(self.places),
                "advanced": self.advanced, "withdrawn": self.withdrawn, "byes": self.byes}


@dataclass(frozen=True)
class TeamStanding:
    rank: int
    team: str
    members: tuple[str, ...]
    table_points: Fraction
    score: int

    def as_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "team": self.team, "members": list(self.members),
                "table_points": number(self.table_points), "score": self.score}


def number(value: Fraction) -> int | float:
    """A fraction for JSON: whole numbers stay whole, others to 4 places."""
    return int(value) if value.denominator == 1 else round(float(value), 4)


def penalties(state: TournamentState, round_no: int) -> dict[str, int]:
    """The points off each player's score in round ``round_no``."""
    penalty: dict[str, int] = defaultdict(int)
    for item in state.penalties:
        if int(item["round"]) == round_no:
            penalty[item["name"]] += int(item["points"])
    return penalty


def table_results(state: TournamentState, round_no: int) -> list[TableResult]:
    """The round's tables that have a score, by player, penalties applied."""
    penalty = penalties(state, round_no)
    out = []
    for (rnd, table), told in sorted(state.tables.items()):
        if rnd != round_no or told.score is None:
            continue
        score = {told.seats[seat]: value - penalty.get(told.seats[seat], 0) for seat, value in told.score.items()}
        seats = dict(told.seats)
        out.append(TableResult(rnd, table, seats, score, told.confirmed, told.source or ""))
    return out


def round_points(state: TournamentState) -> dict[int, dict[str, RoundPoints]]:
    """Every round's points per player, by the event's policy."""
    policy = policy_for(state.fmt.rules)
    rounds = sorted({rnd for rnd, _ in state.tables})
    out = {rnd: policy.round_points(state.fmt, rnd, table_results(state, rnd)) for rnd in rounds}
    for rnd in rounds:
        if state.round_complete(rnd):
            penalty = penalties(state, rnd)
            for name in state.seatings[rnd].get("bye", ()):
                credit = policy.bye_points(state.fmt, rnd)
                out[rnd][name] = replace(credit, score=credit.score - penalty.get(name, 0))    # (late, absent ...)
    return out


def shared_ranks(keys: Sequence[tuple]) -> list[int]:
    """Competition ranks of already sorted keys: equal keys share the rank of the first of them (1, 2, 2, 4)."""
    ranks: list[int] = []
    for i, key in enumerate(keys):
        ranks.append(ranks[-1] if i and key == keys[i - 1] else i + 1)
    return ranks


def standings(state: TournamentState) -> list[Standing]:
    """Every player ever enrolled, best first."""
    per_round = round_points(state)
    rows = []
    for name, team in state.teams.items():
        taken = [per_round[r][name] for r in sorted(per_round) if name in per_round[r]]
        rows.append((sum((t.points for t in taken), Fraction(0)), sum(t.score for t in taken), name, team, taken))
    rows.sort(key=lambda row: (-row[0], -row[1], row[2]))
    ranks = shared_ranks([(row[0], row[1]) for row in rows])
    return [Standing(rank, name, team, points, score, sum(1 for t in taken if not t.bye),
                     tuple(t.place for t in taken if not t.bye), sum(1 for t in taken if t.advanced),
                     name in state.withdrawn, sum(1 for t in taken if t.bye))
            for rank, (points, score, name, team, taken) in zip(ranks, rows)]


def team_standings(state: TournamentState) -> list[TeamStanding]:
    """Teams by the sum of their members' points, then of their scores (团体名次)."""
    members: dict[str, list[Standing]] = defaultdict(list)
    for row in standings(state):
        if row.team:
            members[row.team].append(row)
    rows = sorted(((sum((m.table_points for m in ms), Fraction(0)), sum(m.score for m in ms), team, ms)
                   for team, ms in members.items()), key=lambda row: (-row[0], -row[1], row[2]))
    ranks = shared_ranks([(row[0], row[1]) for row in rows])
    return [TeamStanding(rank, team, tuple(m.name for m in ms), points, score)
            for rank, (points, score, team, ms) in zip(ranks, rows)]
