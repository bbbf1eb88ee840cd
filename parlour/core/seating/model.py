"""The public form of a seating: tables, rounds, and the certificate a plan carries."""

from __future__ import annotations

from dataclasses import dataclass

WINDS = ("E", "S", "W", "N")
TABLE_SIZE = 4




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
