"""The simulated-annealing search that swaps players between tables of a round."""

from __future__ import annotations

import itertools
import logging
import math
import random
from typing import Callable, Sequence

from parlour.core.seating.model import TABLE_SIZE

log = logging.getLogger(__name__)

_CYCLE = 100_000  # iterations of one cooling, from _T_HOT to _T_COLD (a longer budget cools again from hot)
_T_HOT = 0.5
_T_COLD = 0.03
_TRIES = 6  # draws for a player with a repeat or a team-mate at their table

# --- the search ---------------------------------------------------------------------------------------------------


class SearchState:
    """The seating being searched: the free rounds' tables and the meeting counts of all rounds, by index."""

    def __init__(self, n: int, team_of: list[int], free: list[list[list[int]]], fixed: list[list[list[int]]],
                 clash_weight: int) -> None:
        self.n = n
        self.team_of = team_of
        self.weight = clash_weight
        self.met = [[0] * n for _ in range(n)]
        self.fixed_clashes = 0
        for tables in fixed:
            for table in tables:
                self._meet(table, 1)
                self.fixed_clashes += self._clashes(table)
        self.free = [[list(t) for t in tables] for tables in free]
        self.where = []
        for tables in self.free:
            where = [-1] * n
            for i, table in enumerate(tables):
                self._meet(table, 1)
                for p in table:
                    where[p] = i
            self.where.append(where)
        self.repeats = sum(m - 1 for row in self.met for m in row if m > 1) // 2
        self.clashes = self.fixed_clashes + sum(self._clashes(t) for tables in self.free for t in tables)

    def _meet(self, table: Sequence[int], step: int) -> None:
        met = self.met
        for a, b in itertools.combinations(table, 2):
            met[a][b] += step
            met[b][a] += step

    def _clashes(self, table: Sequence[int]) -> int:
        team_of = self.team_of
        return sum(1 for a, b in itertools.combinations(table, 2) if team_of[a] == team_of[b])

    def cost(self) -> tuple[int, int]:
        return self.clashes, self.repeats

    def snapshot(self) -> list[list[list[int]]]:
        return [[list(t) for t in tables] for tables in self.free]


def greedy_round(state_met: list[list[int]], team_of: list[int], seated: list[int], rng: random.Random,
                  weight: int) -> list[list[int]]:
    """Seat one round greedily: each player (in a shuffled order) joins the open table it adds least cost to."""
    order = list(seated)
    rng.shuffle(order)
    tables: list[list[int]] = [[] for _ in range(len(order) // TABLE_SIZE)]
    for p in order:
        row = state_met[p]
        best, best_cost = -1, None
        for i, table in enumerate(tables):
            if len(table) == TABLE_SIZE:
                continue
            cost = (sum(weight * (team_of[q] == team_of[p]) + (row[q] > 0) for q in table), len(table))
            if best_cost is None or cost < best_cost:
                best, best_cost = i, cost
        tables[best].append(p)
    for table in tables:
        for a, b in itertools.combinations(table, 2):
            state_met[a][b] += 1
            state_met[b][a] += 1
    return tables


def anneal(state: SearchState, rng: random.Random, budget: int, deadline: Callable[[], bool] | None,
            target: tuple[int, int]) -> tuple[list[list[list[int]]], int]:
    """Simulated annealing on swaps of two players between tables of one free round; the best seating found.

    A move picks a round, a player with a repeated pair or a team-mate at their table (a few random draws, the last
    one kept if none has), and a player at another table; the change of cost (clashes weighted above every repeat,
    then repeats) is counted from the pairs that change.  Worse moves pass with probability exp(-delta / T), T
    falling geometrically from 0.5 to 0.03 over each 100 000 iterations (over the budget, if shorter).  Every
    iteration counts against ``budget``; ``deadline()`` is asked every 256 iterations.  Returns the best tables
    and the iterations used.
    """
    rounds = [i for i, tables in enumerate(state.free) if len(tables) > 1]
    best = state.snapshot()
    best_cost = state.cost()
    if not rounds or best_cost <= target:
        return best, 0
    met, team_of, weight = state.met, state.team_of, state.weight
    cycle_len = max(1, min(budget, _CYCLE))
    t_hot, t_cold = _T_HOT, _T_COLD
    used = 0
    randrange, random_ = rng.randrange, rng.random
    exp = math.exp
    repeats, clashes = state.repeats, state.clashes
    while used < budget:
        phase = (used % cycle_len) / cycle_len
        temperature = t_hot * (t_cold / t_hot) ** phase
        if used & 255 == 0 and used and deadline is not None and deadline():
            log.debug("seating search stopped by the deadline after %d iterations", used)
            break
        used += 1
        r = rounds[randrange(len(rounds))]
        tables, where = state.free[r], state.where[r]
        g = len(tables)
        for _ in range(_TRIES):
            ta = randrange(g)
            xa = randrange(TABLE_SIZE)
            x = tables[ta][xa]
            row, tx = met[x], team_of[x]
            if any(q != x and (row[q] > 1 or team_of[q] == tx) for q in tables[ta]):
                break
        tb = randrange(g - 1)
        if tb >= ta:
            tb += 1
        yb = randrange(TABLE_SIZE)
        table_a, table_b = tables[ta], tables[tb]
        y = table_b[yb]
        mx, my, ty = met[x], met[y], team_of[y]
        d_rep = d_clash = 0
        for q in table_a:
            if q != x:
                d_rep += (my[q] > 0) - (mx[q] > 1)
                tq = team_of[q]
                d_clash += (ty == tq) - (tx == tq)
        for q in table_b:
            if q != y:
                d_rep += (mx[q] > 0) - (my[q] > 1)
                tq = team_of[q]
                d_clash += (tx == tq) - (ty == tq)
        delta = weight * d_clash + d_rep
        if delta > 0 and random_() >= exp(-delta / temperature):
            continue
        for q in table_a:
            if q != x:
                mx[q] -= 1
                met[q][x] -= 1
                my[q] += 1
                met[q][y] += 1
        for q in table_b:
            if q != y:
                my[q] -= 1
                met[q][y] -= 1
                mx[q] += 1
                met[q][x] += 1
        table_a[xa], table_b[yb] = y, x
        where[x], where[y] = tb, ta
        repeats += d_rep
        clashes += d_clash
        if (clashes, repeats) < best_cost:
            best_cost = (clashes, repeats)
            best = [[list(t) for t in ts] for ts in state.free]
            if best_cost <= target:
                break
    state.repeats, state.clashes = repeats, clashes
    return best, used


# --- seat winds ---------------------------------------------------------------------------------------------------
