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
paths, each of which lowers the sum of squared wind counts (see :func:`parlour.core.seating.winds.balance_winds`).

Re-planning after rounds were played keeps those rounds exactly; only the rounds after them are planned, with the
meetings already made counting in the certificate and steering the search.
"""

from __future__ import annotations

from parlour.core.seating.certificate import (
    certify,
    lower_bound_of,
    meetings,
    pairs_repeated_of,
    team_clashes_of,
    wind_counts,
    wind_spread_of,
)
from parlour.core.seating.designs import affine_classes, design_for
from parlour.core.seating.model import TABLE_SIZE, WINDS, Certificate, Plan, RoundSeating, TableSeats
from parlour.core.seating.planner import plan_seating

__all__ = [
    "TABLE_SIZE", "WINDS", "Certificate", "Plan", "RoundSeating", "TableSeats", "affine_classes", "certify",
    "design_for", "lower_bound_of", "meetings", "pairs_repeated_of", "plan_seating", "team_clashes_of",
    "wind_counts", "wind_spread_of",
]
