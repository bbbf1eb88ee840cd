"""Counting a seating (meetings, repeats, clashes, winds) and the lower bound that certifies it."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Iterable, Mapping, Sequence

from parlour.core.seating.model import TABLE_SIZE, Certificate, RoundSeating



def meetings(rounds_seating: Iterable[RoundSeating]) -> Counter[frozenset[str]]:
    """How many times each pair of players shared a table."""
    count: Counter[frozenset[str]] = Counter()
    for seating in rounds_seating:
        for table in seating.tables:
            for a, b in itertools.combinations(table.seats, 2):
                count[frozenset((a, b))] += 1
    return count


def pairs_repeated_of(count: Mapping[frozenset[str], int]) -> int:
    """The sum over pairs of ``max(0, meetings - 1)``."""
    return sum(m - 1 for m in count.values() if m > 1)


def team_clashes_of(rounds_seating: Iterable[RoundSeating], teams: Mapping[str, str] | None) -> int:
    """Team-mates sharing a table, counted once per pair and round."""
    if not teams:
        return 0
    clashes = 0
    for seating in rounds_seating:
        for table in seating.tables:
            for a, b in itertools.combinations(table.seats, 2):
                if a in teams and b in teams and teams[a] == teams[b]:
                    clashes += 1
    return clashes


def wind_counts(rounds_seating: Iterable[RoundSeating]) -> dict[str, list[int]]:
    """How often each player sat E, S, W and N."""
    counts: dict[str, list[int]] = {}
    for seating in rounds_seating:
        for table in seating.tables:
            for wind, player in enumerate(table.seats):
                counts.setdefault(player, [0, 0, 0, 0])[wind] += 1
    return counts


def wind_spread_of(rounds_seating: Iterable[RoundSeating], players: Iterable[str] | None = None) -> int:
    """The largest ``max - min`` of a player's wind counts (over ``players``, or everyone seated)."""
    counts = wind_counts(rounds_seating)
    names = counts if players is None else [p for p in players if p in counts]
    return max((max(counts[p]) - min(counts[p]) for p in names), default=0)


# --- the lower bound ----------------------------------------------------------------------------------------------


def even_pairs(k: int, groups: int) -> int:
    """Pairs inside groups when ``k`` items are spread as evenly as possible over ``groups`` groups."""
    if groups <= 0:
        return 0
    q, r = divmod(k, groups)
    return r * (q + 1) * q // 2 + (groups - r) * q * (q - 1) // 2


def lower_bound_of(
    players: Sequence[str],
    seated: Sequence[frozenset[str]],
    fixed: Sequence[RoundSeating] = (),
    teams: Mapping[str, str] | None = None,
    clash_free: bool = False,
) -> int:
    """A proven lower bound on ``pairs_repeated`` for any seating of these rounds.

    ``seated[t]`` is the set of players at the tables of round t (its byes are the rest); the first
    ``len(fixed)`` rounds are as ``fixed`` has them; the others are free.  With ``clash_free`` (and teams) the
    bound holds among seatings where no team-mates meet.  It is the largest of three counts:

    (a) *pairs*: each table-round makes 6 meetings, and the number of distinct pairs met is at most the pairs met
        in the fixed rounds plus the other pairs of current players that may meet;
    (b) *players*: player i meets 3 others in each of the r_i rounds they play and can meet only so many distinct
        ones, so i's repeats are at least ``3 * r_i - distinct``; each repeat has two players, so halve the sum;
    (c) *pigeonholes*: a round's repeats are at least the pairs it shares with any one earlier round, and a round of
        g tables seats the players of an earlier table (or the k of them it seats) at best spread over g tables.
    """
    current = set(players)
    team = dict(teams or {})
    use_teams = bool(clash_free and team)

    def mates(a: str, b: str) -> bool:
        return use_teams and a in team and b in team and team[a] == team[b]

    fixed_count = meetings(fixed)
    fixed_meetings = sum(fixed_count.values())
    fixed_repeats = pairs_repeated_of(fixed_count)
    future = list(seated[len(fixed):])
    future_meetings = sum(6 * (len(s) // TABLE_SIZE) for s in future)

    # (a) pairs
    n = len(current)
    met_current = sum(1 for pair in fixed_count if pair <= current)
    open_pairs = n * (n - 1) // 2 - met_current
    if use_teams:
        by_team: dict[str, list[str]] = {}
        for p in current:
            if p in team:
                by_team.setdefault(team[p], []).append(p)
        for members in by_team.values():
            for a, b in itertools.combinations(members, 2):
                if frozenset((a, b)) not in fixed_count:
                    open_pairs -= 1
    bound_a = max(fixed_repeats, fixed_meetings + future_meetings - len(fixed_count) - open_pairs)

    # (b) players
    partners: dict[str, set[str]] = {}
    played_with: Counter[str] = Counter()
    for pair, m in fixed_count.items():
        a, b = tuple(pair)
        partners.setdefault(a, set()).add(b)
        partners.setdefault(b, set()).add(a)
        played_with[a] += m
        played_with[b] += m
    rounds_of: Counter[str] = Counter()
    for s in future:
        rounds_of.update(s)
    total = 0
    for person in set(played_with) | current:
        mine = partners.get(person, set())
        fixed_rep = played_with[person] - len(mine)
        if person not in current:
            total += fixed_rep
            continue
        could = len(mine) + sum(1 for q in current if q != person and q not in mine and not mates(person, q))
        total += max(fixed_rep, played_with[person] + 3 * rounds_of[person] - could)
    bound_b = (total + 1) // 2

    # (c) pigeonholes
    bound_c = 0
    all_rounds: list[list[frozenset[str]] | int] = [[frozenset(t.seats) for t in r.tables] for r in fixed]
    all_rounds += [len(s) // TABLE_SIZE for s in future]
    seen: Counter[frozenset[str]] = Counter()
    for r in fixed:
        for table in r.tables:
            for a, b in itertools.combinations(table.seats, 2):
                pair = frozenset((a, b))
                bound_c += seen[pair] > 0
                seen[pair] += 1
    for t in range(len(fixed), len(seated)):
        g_t = len(seated[t]) // TABLE_SIZE
        best = 0
        for s in range(t):
            earlier = all_rounds[s]
            if isinstance(earlier, int):
                k = len(seated[s] & seated[t])
                q, r = divmod(k, earlier) if earlier else (0, 0)
                sizes = [q + 1] * r + [q] * (earlier - r)
            else:
                sizes = [len(table & seated[t]) for table in earlier]
            best = max(best, sum(even_pairs(k, g_t) for k in sizes))
        bound_c += best
    return max(bound_a, bound_b, bound_c)


def certify(
    players: Sequence[str],
    rounds_seating: Sequence[RoundSeating],
    teams: Mapping[str, str] | None = None,
    *,
    fixed: int = 0,
    method: str = "recount",
) -> Certificate:
    """Recount a seating's repeated pairs and team clashes and prove a lower bound for it.

    ``players`` are the current players; anyone else may appear only in the first ``fixed`` rounds (players who
    have withdrawn).  The bound is for the same seated players in each round with the first ``fixed`` rounds kept.
    """
    current = set(players)
    for r in rounds_seating[fixed:]:
        for table in r.tables:
            stray = [p for p in table.seats if p not in current]
            if stray:
                raise ValueError(f"round {r.round} seats {stray}, who are not players")
    repeated = pairs_repeated_of(meetings(rounds_seating))
    clashes = team_clashes_of(rounds_seating, teams)
    seated = [frozenset(p for t in r.tables for p in t.seats) for r in rounds_seating]
    bound = lower_bound_of(players, seated, rounds_seating[:fixed], teams, clash_free=clashes == 0)
    return Certificate(repeated, bound, repeated == bound, method, clashes)
