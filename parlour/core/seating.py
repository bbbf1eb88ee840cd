"""Tournament seating: who sits at which table, in which seat, round after round.

Seating a tournament is the Social Golfer Problem.  Players sit in groups of four (a table, seats E, S, W, N) for
R rounds; two players *meet* when they share a table in a round, and a good seating lets as few pairs as possible
meet twice.  The measure is ``pairs_repeated``: the sum over pairs of ``max(0, meetings - 1)``.

Where mathematics gives a perfect answer it is used as such:

* the lines of the affine space AG(m, 4) over GF(4): 4, 16, 64 and 256 players, (4**m - 1) / 3 rounds in which
  no pair meets twice (16 players: the affine plane AG(2, 4), 5 rounds);
* for 32 players the published 10-round solution of the 8-4-10 Social Golfer instance (CSPLib problem 010), held
  here as data and checked when the module is imported; the one pair each player has not met forms an 11th round.

Past the last round of a design its rounds come round again, which meets every pair before any pair meets a
second time and is therefore optimal for every number of rounds.  Everywhere else (other counts of players, byes,
teams, rounds already played) a simulated-annealing search swaps two players between tables of one round.  Its
moves cost ``budget`` iterations at most and it stops as soon as the caller's ``deadline()`` says so (this module
reads no clock) or as soon as it reaches the proven lower bound.

Every plan carries a :class:`Certificate`: the repeated pairs recounted from the seating and a lower bound proven
for the same players, rounds and byes (see :func:`lower_bound_of` for the three arguments).  ``optimal`` means the
two are equal.

Teams (players of one club, say) should never share a table.  A team clash (two team-mates at one table in one
round) is counted before repeated pairs: the search never buys fewer repeats with a clash.  With teams and no
clash, the bound counts only the pairs that may meet (team-mates may not), so it is the bound among clash-free
seatings.

Byes: when the count of players is not a multiple of four, ``n % 4`` players sit each round out, always those who
have sat out least so far (a player absent from a played round, a late replacement say, counts as having sat it
out), so no one sits out twice before everyone has once.

Seat winds are dealt last, as they never change who meets whom: each player should sit each wind as often as any
other, give or take one.  The players and the tables of a round form a bipartite graph, and by de Werra's theorem
its edges have a 4-colouring that is equitable at every vertex; the colouring is reached by flipping alternating
paths, each of which lowers the sum of squared wind counts (see :func:`_balance_winds`).

Re-planning after rounds were played keeps those rounds exactly; only the rounds after them are planned, with the
meetings already made counting in the certificate and steering the search.
"""

from __future__ import annotations

import itertools
import logging
import math
import random
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

log = logging.getLogger(__name__)

WINDS = ("E", "S", "W", "N")
TABLE_SIZE = 4


# --- the public data ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TableSeats:
    """One table in one round: its name and the players sitting E, S, W and N."""

    table: str
    seats: tuple[str, str, str, str]


@dataclass(frozen=True)
class RoundSeating:
    """One round: its number (from 1), its tables, and the players sitting it out."""

    round: int
    tables: tuple[TableSeats, ...]
    bye: tuple[str, ...] = ()


@dataclass(frozen=True)
class Certificate:
    """How good a seating is, and what it cannot beat.

    ``pairs_repeated`` is recounted from the seating; ``lower_bound`` is proven for the same players, the same
    players seated in each round (so the same byes) and the same fixed rounds, among seatings with no more team
    clashes; ``optimal`` says the two are equal.  ``method`` says how the seating was made.
    """

    pairs_repeated: int
    lower_bound: int
    optimal: bool
    method: str
    team_clashes: int = 0


@dataclass(frozen=True)
class Plan:
    """A whole tournament's seating, the played rounds first, with its certificate.

    ``wind_spread`` is the largest difference, over players, between the winds a player sat most and least often;
    ``team_clashes`` counts team-mates sharing a table, once per pair and round.
    """

    rounds: tuple[RoundSeating, ...]
    certificate: Certificate
    wind_spread: int = 0
    team_clashes: int = 0


# --- counting -----------------------------------------------------------------------------------------------------


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


def _even_pairs(k: int, groups: int) -> int:
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
            best = max(best, sum(_even_pairs(k, g_t) for k in sizes))
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


# --- exact constructions ------------------------------------------------------------------------------------------

_GF4_LOG = {1: 0, 2: 1, 3: 2}
_GF4_EXP = (1, 2, 3)


def _gf4_mul(a: int, b: int) -> int:
    """Multiplication in GF(4) = {0, 1, w, w + 1} coded 0, 1, 2, 3 (addition is XOR)."""
    if a == 0 or b == 0:
        return 0
    return _GF4_EXP[(_GF4_LOG[a] + _GF4_LOG[b]) % 3]


def affine_classes(m: int) -> list[list[list[int]]]:
    """The parallel classes of lines of AG(m, 4): points 0 .. 4**m - 1, each class a partition into lines of 4.

    A point is a vector over GF(4) (its base-4 digits); a direction is a non-zero vector whose first non-zero
    coordinate is 1, (4**m - 1) / 3 of them; the lines of a direction are the sets {p + t d : t in GF(4)}.  Two
    points lie on exactly one common line, so no pair meets twice over all the classes.
    """
    size = 4**m

    def digits(x: int) -> list[int]:
        return [(x >> (2 * i)) & 3 for i in range(m)]

    def number(v: Sequence[int]) -> int:
        return sum(c << (2 * i) for i, c in enumerate(v))

    classes = []
    for d in range(1, size):
        dv = digits(d)
        if next(c for c in dv if c) != 1:
            continue
        seen: set[int] = set()
        lines = []
        for p in range(size):
            if p in seen:
                continue
            pv = digits(p)
            line = [number([pc ^ _gf4_mul(t, dc) for pc, dc in zip(pv, dv)]) for t in range(4)]
            seen.update(line)
            lines.append(sorted(line))
        classes.append(lines)
    return classes


# The 10 rounds of the 8-4-10 Social Golfer instance: 32 players (0-9, a-v in base 32), 8 tables of 4 a round,
# no pair twice.  Published by Wolfram MathWorld's "Social Golfer Problem" demonstration (as collected in the
# literature notes of github.com/fpvandoorn/Dagstuhl-tables; CSPLib problem 010 links Harvey's tables and another),
# its letters A-P, a-p recoded 0-f, g-v.  _check_design verifies it on import.
_GOLF_8_4_10 = (
    "0123 4567 89ab cdef ghij klmn opqr stuv",
    "048s 1im7 35av jlqf gkoc h26n pbdu 9rte",
    "0lru 1nqs 36od g5be h7ac 2k9f i4pv jm8t",
    "0iob 1jpa h39q 5muf l6ev g28r 4nct k7sd",
    "0mad 14rf 378u jnoe hkbv 2lps i59c g6qt",
    "0n9v 15ot i3se hl8d k6ar 2jcu 4mqb g7pf",
    "0jk5 169u g34l inrd oasf 27bt hmpe 8qcv",
    "0htf g1dv 3mrc ikqu l7o9 24ae 5n8p j6bs",
    "06pc 1k8e 3nbf gm9s ilat 25qd h4ou j7rv",
    "07qe 1lbc 3kpt h5rs i68f 2mov j49d gnau",
)


def _check_design(points: int, classes: list[list[list[int]]]) -> None:
    """Every class a partition of the points into tables of 4 and no pair in two tables; else ValueError."""
    met: set[tuple[int, int]] = set()
    for lines in classes:
        if sorted(p for line in lines for p in line) != list(range(points)):
            raise ValueError("a class of the design is not a partition of its points")
        for line in lines:
            if len(line) != TABLE_SIZE:
                raise ValueError("a table of the design does not seat 4")
            for pair in itertools.combinations(sorted(line), 2):
                if pair in met:
                    raise ValueError(f"the design meets pair {pair} twice")
                met.add(pair)


def _complete_matching(points: int, classes: list[list[list[int]]]) -> list[list[list[int]]]:
    """Add one class when the pairs never met are a perfect matching: its tables are two such pairs each."""
    met = {frozenset(pair) for lines in classes for line in lines for pair in itertools.combinations(line, 2)}
    unmet = [
        (a, b) for a, b in itertools.combinations(range(points), 2) if frozenset((a, b)) not in met
    ]
    if len(unmet) * 2 != points or len({p for pair in unmet for p in pair}) != points or points % 4:
        return classes
    extra = [list(unmet[i]) + list(unmet[i + 1]) for i in range(0, len(unmet), 2)]
    return classes + [extra]


def _golf_8_4_10() -> list[list[list[int]]]:
    return [[[int(c, 32) for c in table] for table in row.split()] for row in _GOLF_8_4_10]


def design_for(n: int) -> tuple[str, list[list[list[int]]]] | None:
    """The exact construction for ``n`` players, if there is one: its name and its classes (rounds)."""
    if n == 32:
        classes = _golf_8_4_10()
        _check_design(32, classes)
        return "resolvable design (8-4-10)", _complete_matching(32, classes)
    for m, name in ((1, "one table"), (2, "affine plane AG(2,4)"), (3, "affine space AG(3,4)"),
                    (4, "affine space AG(4,4)")):
        if n == 4**m:
            return name, affine_classes(m)
    return None


_check_design(32, _golf_8_4_10())


_CYCLE = 100_000  # iterations of one cooling, from _T_HOT to _T_COLD (a longer budget cools again from hot)
_T_HOT = 0.5
_T_COLD = 0.03
_TRIES = 6  # draws for a player with a repeat or a team-mate at their table

# --- the search ---------------------------------------------------------------------------------------------------


class _State:
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


def _greedy_round(state_met: list[list[int]], team_of: list[int], seated: list[int], rng: random.Random,
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


def _anneal(state: _State, rng: random.Random, budget: int, deadline: Callable[[], bool] | None,
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


def _balance_winds(tables: list[list[int]], counts: list[list[int]]) -> list[list[int]]:
    """Order each table's 4 players as E, S, W, N so that every player's wind counts are as even as possible.

    ``tables`` are every free table-round; ``counts[p]`` holds the winds p already sat (in fixed rounds) and is
    updated.  A first pass gives each player the wind they sat least; then, while some player p sits wind a at
    least twice more than wind b, an alternating path is sought: p takes b at one of its a-tables, the player who
    sat b there takes a, and so on, until a player who sat b more than a.  Each flip lowers the sum of squared
    counts, so it ends; with no fixed rounds every player's spread ends at most 1 (the players reachable from p
    would otherwise hold more a-seats than b-seats, yet every table has one of each).
    """
    seats: list[list[int]] = []
    for table in tables:
        order = [-1] * 4
        free_winds = [0, 1, 2, 3]
        for p in sorted(table, key=lambda q: -max(counts[q]) + min(counts[q])):
            w = min(free_winds, key=lambda k: (counts[p][k], k))
            free_winds.remove(w)
            order[w] = p
            counts[p][w] += 1
        seats.append(order)
    at: dict[int, list[int]] = {}
    for i, order in enumerate(seats):
        for p in order:
            at.setdefault(p, []).append(i)

    def improve(p: int) -> bool:
        c = counts[p]
        for a in range(4):
            for b in range(4):
                if c[a] - c[b] < 2:
                    continue
                # BFS over players: an arc x -> y where x sits a and y sits b at the same table
                parent: dict[int, tuple[int, int]] = {p: (-1, -1)}
                queue = [p]
                end = -1
                for x in queue:
                    for i in at[x]:
                        order = seats[i]
                        if order[a] != x:
                            continue
                        y = order[b]
                        if y in parent:
                            continue
                        parent[y] = (x, i)
                        if counts[y][a] - counts[y][b] <= -1:
                            end = y
                            break
                        queue.append(y)
                    if end >= 0:
                        break
                if end < 0:
                    continue
                y = end
                while y != p:
                    x, i = parent[y]
                    order = seats[i]
                    order[a], order[b] = y, x
                    counts[x][a] -= 1
                    counts[x][b] += 1
                    counts[y][b] -= 1
                    counts[y][a] += 1
                    y = x
                return True
        return False

    changed = True
    while changed:
        changed = False
        for p in list(at):
            while improve(p):
                changed = True
    return seats


# --- the planner --------------------------------------------------------------------------------------------------


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
        clash_bound += sum(_even_pairs(k, len(s) // TABLE_SIZE) for k in per_team.values())
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
        aligned = _team_aligned(classes, [team_of[i] for i in range(len(players))], future, rng)
        if aligned is not None:
            starts.append((name, aligned))
    met = [[0] * len(people) for _ in range(len(people))]
    for tables in fixed_tables:
        for table in tables:
            for a, b in itertools.combinations(table, 2):
                met[a][b] += 1
                met[b][a] += 1
    greedy = [_greedy_round(met, team_of, s, rng, clash_weight) for s in seated_future]
    starts.append(("local search", greedy))

    best_method, best_tables, best_cost = "", greedy, None
    for method, free in starts:
        state = _State(len(people), team_of, free, fixed_tables, clash_weight)
        if best_cost is None or state.cost() < best_cost:
            best_method, best_tables, best_cost = method, free, state.cost()
    used = 0
    if best_cost is not None and best_cost > target and not (deadline is not None and deadline()):
        state = _State(len(people), team_of, best_tables, fixed_tables, clash_weight)
        found, used = _anneal(state, rng, budget, deadline, target)
        cost = _State(len(people), team_of, found, fixed_tables, clash_weight).cost()
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
    seats = _balance_winds(flat, counts)
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


def _team_aligned(classes: list[list[list[int]]], team_of: list[int], future: int,
                  rng: random.Random) -> list[list[list[int]]] | None:
    """The design with each team packed onto the lines of its last class, that class played last.

    Team-mates on one line of a class never meet in the other classes, so rounds before that class are clash-free.
    """
    if future < 1:
        return None
    lines = classes[-1]
    teams: dict[int, list[int]] = {}
    for p, t in enumerate(team_of):
        if t >= 0:
            teams.setdefault(t, []).append(p)
    if not teams:
        return None
    room = [TABLE_SIZE] * len(lines)
    slots: list[list[int]] = [[] for _ in lines]
    for members in sorted(teams.values(), key=len, reverse=True):
        line = next((i for i, r in enumerate(room) if r >= len(members)), None)
        if line is None:
            return None
        room[line] -= len(members)
        slots[line].extend(members)
    loose = [p for p, t in enumerate(team_of) if t < 0]
    rng.shuffle(loose)
    for i, r in enumerate(room):
        slots[i].extend(loose[:r])
        loose = loose[r:]
    mapping = [0] * len(team_of)
    for line, members in zip(lines, slots):
        for point, p in zip(line, members):
            mapping[point] = p
    order = classes[:-1] + classes[-1:]
    return [[[mapping[p] for p in line] for line in order[r % len(order)]] for r in range(future)]
