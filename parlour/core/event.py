"""A tournament's format: its rule set, rounds, hands per round, teams, time limit and what a table's places earn.

A tournament here is a number of rounds (轮次); in each round every player sits
at one table of four (or has a bye) and the table plays one game (局) of a set
number of hands.  Players are seated again for every round
(:mod:`parlour.core.seating`), so a round is where seats change; the tables'
results turn into points by the rule set's policy (:mod:`parlour.core.points`).
"""

from __future__ import annotations

import enum
import re
import unicodedata
from dataclasses import dataclass

from parlour.core.words import worded

NAME_RE = re.compile(r"^[^\x00-\x1f\x7f]{1,40}$")
EVENT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")
MAX_ROUNDS = 64
MAX_HANDS = 64


class Seat(str, enum.Enum):
    """A seat at a table for a round: East is the dealer of the round's first hand (the table's side 0)."""

    E = "E"
    S = "S"
    W = "W"
    N = "N"


SEATS: tuple[Seat, ...] = (Seat.E, Seat.S, Seat.W, Seat.N)


class EventRules(str, enum.Enum):
    """The rule sets a tournament can be played under (each has its points policy)."""

    MCR = "mcr"
    COMPETITION = "competition"


class FormatError(ValueError):
    """A tournament format, player or result that cannot be run (the text names the field)."""


@dataclass(frozen=True)
class EventFormat:
    """What stays fixed for a whole event.

    ``standard_points`` (竞技麻将): the 标准分 a table's first place takes in
    round 1; each later round is worth one more (S001: 原则上一个轮次追加1分).
    ``advance_per_table``: 1 (the first place) or 2 (first and second), and
    ``alternates`` the best second places across all tables that advance as
    替补 in each round (by their score, 总局分).  MCR ignores these: its
    tables give 4 / 2 / 1 / 0 (S003: 同组第一名得分等于参赛选手的人数).
    ``round_minutes``: the time limit of a round (None: none).
    """

    name: str
    rules: EventRules
    rounds: int
    hands_per_round: int
    teams: bool = False
    round_minutes: int | None = None
    standard_points: int = 8
    advance_per_table: int = 1
    alternates: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not EVENT_RE.match(self.name):
            raise worded(FormatError, "name %(name)r: 1 to 40 letters, digits, '_' or '-', starting with a letter "
                         "or digit (it is part of the tables' topics)", name=self.name)
        object.__setattr__(self, "rules", _rules(self.rules))
        _int_in("rounds", self.rounds, 1, MAX_ROUNDS)
        _int_in("hands_per_round", self.hands_per_round, 1, MAX_HANDS)
        if self.round_minutes is not None:
            _int_in("round_minutes", self.round_minutes, 6, 24 * 60)
        _int_in("standard_points", self.standard_points, 1, 1000)
        _int_in("advance_per_table", self.advance_per_table, 1, 2)
        _int_in("alternates", self.alternates, 0, 1000)
        competition_only = (self.standard_points, self.advance_per_table, self.alternates)
        if self.rules is EventRules.MCR and competition_only != (8, 1, 0):
            raise worded(FormatError, "standard_points, advance_per_table and alternates are 竞技麻将's (--rules "
                         "competition): MCR's tables give 4 / 2 / 1 / 0")

    def as_dict(self) -> dict:
        return {"name": self.name, "rules": self.rules.value, "rounds": self.rounds,
                "hands_per_round": self.hands_per_round, "teams": self.teams, "round_minutes": self.round_minutes,
                "standard_points": self.standard_points, "advance_per_table": self.advance_per_table,
                "alternates": self.alternates}

    @classmethod
    def from_dict(cls, data: dict) -> "EventFormat":
        return cls(**data)


def _rules(value: object) -> EventRules:
    try:
        return EventRules(value)
    except ValueError:
        raise worded(FormatError, "rules %(rules)r: one of %(choices)s", rules=value,
                     choices=", ".join(r.value for r in EventRules)) from None


def _int_in(field: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise worded(FormatError, "%(field)s %(value)r: a whole number from %(low)s to %(high)s", field=field,
                     value=value, low=low, high=high)


def check_player_name(name: object) -> str:
    """``name`` stripped if it can be a player's name (1-40 printable characters, some of them visible); else
    FormatError (quoting at most the first 40 characters of what was given)."""
    text = name.strip() if isinstance(name, str) else ""
    visible = any(unicodedata.category(c)[0] not in "CZ" for c in text)
    if not NAME_RE.match(text) or not visible:
        shown = name[:40] + "..." if isinstance(name, str) and len(name) > 40 else name
        raise worded(FormatError, "player name %(name)r: 1 to 40 printable characters, not only spaces or invisible "
                     "ones", name=shown)
    return text
