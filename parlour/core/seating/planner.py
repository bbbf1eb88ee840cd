"""Plan a tournament's seating: byes, starting points, the search, winds, and the certificate."""

from __future__ import annotations

import itertools
import logging
import random
from collections import Counter
from typing import Callable, Mapping, Sequence

from parlour.core.seating.certificate import certify, even_pairs, lower_bound_of, team_clashes_of, wind_spread_of
from parlour.core.seating.designs import design_for, team_aligned
from parlour.core.seating.model import TABLE_SIZE, Plan, RoundSeating, TableSeats
from parlour.core.seating.search import SearchState, anneal, greedy_round
from parlour.core.seating.winds import balance_winds

log = logging.getLogger(__name__)



def _bye_schedule(players: Sequence[str], played: Sequence[RoundSeating], future: int,
                  rng: random.Random) -> list[tuple[str, ...]]:
    """The byes of each future round: those who have sat out least so far, in a seeded rotation."""
    n = len(players)
    per_round = n % TABLE_SIZE if n >= TABLE_SIZE else n
    sat_out = Counter({p: 0 for p in players})
    last = {p: -1 for p in players}
    for i, r in enumerate(played):
        seated = {p for t in r.tables for p in t.seats}
        for p in players:
            if p not in seated:
                sat_out[p] += 1
                last[p] = i
    key = {p: rng.random() for p in players}
    byes = []
    for i in range(future):
        chosen = sorted(players, key=lambda p: (sat_out[p], last[p], key[p]))[:per_round]
        for p in chosen:
            sat_out[p] += 1
            last[p] = len(played) + i
        byes.append(tuple(sorted(chosen, key=players.index)))
    return byes


def _validate(players: Sequence[str], rounds: int, played: Sequence[RoundSeating]) -> None:
    if len(set(players)) != len(players):
        raise ValueError("a player is named twice")
    if any(not isinstance(p, str) or not p for p in players):
        raise ValueError("every player needs a non-empty name")
    if rounds < len(played):
        raise ValueError(f"{len(played)} rounds are played already, more than the {rounds} planned")
    for i, r in enumerate(played, 1):
        if r.round != i:
            raise ValueError(f"played round {i} is numbered {r.round}")
        seen = [p for t in r.tables for p in t.seats]
        if len(set(seen)) != len(seen) or any(len(t.seats) != TABLE_SIZE for t in r.tables):
            raise ValueError(f"played round {i} is not a seating of distinct players in tables of 4")


def plan_seating(
    players: Sequence[str],
    rounds: int,
    *,
    teams: Mapping[str, str] | None = None,
    played: Sequence[RoundSeating] = (),
    seed: int = 0,
    budget: int = 200_000,
    deadline: Callable[[], bool] | None = None,
) -> Plan:
    """Seat ``players`` for ``rounds`` rounds in all, the ``played`` ones kept as they are.

    The result is the same for the same arguments.  ``budget`` bounds the search's iterations (swaps tried);
    ``deadline`` is asked now and then and ends the search when it answers True.
    """
    players = list(players)
    played = tuple(played)
    _validate(players, rounds, played)
    rng = random.Random(seed)
    future = rounds - len(played)
    byes = _bye_schedule(players, played, future, rng)
    team_map = {p: t for p, t in (teams or {}).items()}

    people = list(players) + sorted({p for r in played for t in r.tables for p in t.seats} - set(players))
    index = {p: i for i, p in enumerate(people)}
    team_ids: dict[str, int] = {}
    team_of = []
    for i, p in enumerate(people):
        if p in team_map:
            team_of.append(team_ids.setdefault(team_map[p], len(team_ids)))
        else:
            team_of.append(-1 - i)
    seated_future = [[index[p] for p in players if p not in set(bye)] for bye in byes]
    fixed_tables = [[[index[p] for p in t.seats] for t in r.tables] for r in played]
    clash_weight = 1 + sum(6 * len(s) // TABLE_SIZE for s in seated_future) + sum(6 * len(r.tables) for r in played)

    # what cannot be beaten
    seated_sets = [frozenset(p for t in r.tables for p in t.seats) for r in played]
    seated_sets += [frozenset(people[i] for i in s) for s in seated_future]
    clash_bound = team_clashes_of(played, team_map)
    for s in seated_future:
        per_team = Counter(team_of[i] for i in s if people[i] in team_map)
        clash_bound += sum(even_pairs(k, len(s) // TABLE_SIZE) for k in per_team.values())
    bound = lower_bound_of(players, seated_sets, played, team_map, clash_free=clash_bound == 0)
    target = (clash_bound, bound)

    # starting points: the exact design where one fits, else a greedy seating
    starts: list[tuple[str, list[list[list[int]]]]] = []
    design = design_for(len(players)) if not played and future else None
    if design is not None:
        name, classes = design
        mapping = list(range(len(players)))
        rng.shuffle(mapping)
        starts.append((name, [[[mapping[p] for p in line] for line in classes[r % len(classes)]]
                              for r in range(future)]))
        aligned = team_aligned(classes, [team_of[i] for i in range(len(players))], future, rng)
        if aligned is not None:
            starts.append((name, aligned))
    met = [[0] * len(people) for _ in range(len(people))]
    for tables in fixed_tables:
        for table in tables:
            for a, b in itertools.combinations(table, 2):
                met[a][b] += 1
                met[b][a] += 1
    greedy = [greedy_round(met, team_of, s, rng, clash_weight) for s in seated_future]
    starts.append(("local search", greedy))

    best_method, best_tables, best_cost = "", greedy, None
    for method, free in starts:
        state = SearchState(len(people), team_of, free, fixed_tables, clash_weight)
        if best_cost is None or state.cost() < best_cost:
            best_method, best_tables, best_cost = method, free, state.cost()
    used = 0
    if best_cost is not None and best_cost > target and not (deadline is not None and deadline()):
        state = SearchState(len(people), team_of, best_tables, fixed_tables, clash_weight)
        found, used = anneal(state, rng, budget, deadline, target)
        cost = SearchState(len(people), team_of, found, fixed_tables, clash_weight).cost()
        if cost < best_cost:
            best_tables, best_cost = found, cost
            if best_method != "local search":
                best_method += " + local search"
    log.debug("seating %d players, %d rounds: cost %s, bound %s, %d iterations", len(players), rounds,
              best_cost, target, used)

    # winds, then the public form
    counts = [[0, 0, 0, 0] for _ in people]
    for tables in fixed_tables:
        for table in tables:
            for w, p in enumerate(table):
                counts[p][w] += 1
    flat = [table for tables in best_tables for table in tables]
    seats = balance_winds(flat, counts)
    planned = []
    k = 0
    for r, tables in enumerate(best_tables):
        out = []
        for j in range(len(tables)):
            order = seats[k]
            k += 1
            out.append(TableSeats(f"T{j + 1}", (people[order[0]], people[order[1]], people[order[2]],
                                                people[order[3]])))
        planned.append(RoundSeating(len(played) + r + 1, tuple(out), byes[r]))
    all_rounds = played + tuple(planned)
    if not future:
        best_method = "as played"
    elif len(players) < TABLE_SIZE:
        best_method = "no table"
    certificate = certify(players, all_rounds, team_map, fixed=len(played), method=best_method)
    return Plan(all_rounds, certificate, wind_spread_of(all_rounds, players), certificate.team_clashes)
