"""A tournament round's assignment of one table: who sits where, which rule set, how many hands, until when.

The hall's tournament service writes it, signed, retained, on the table's
assignment topic (``mj/v1/<site>/tbl/<table>/assign``,
:mod:`firmware.fleet.assignment_auth` checks the signature); the table plays
it (:mod:`firmware.game.rounds`).  Its data::

    {"id": "spring-open/2/t07", "event": "spring-open", "round": 2, "rules": "mcr", "hands": 4,
     "seats": {"E": "Alice", "S": "Bob", "W": "Chen", "N": "Dong"}, "ends_at": 1799999999.0}

``id`` is ``<event>/<round>/<table>``; ``seats`` names the player at each
side, E = side 0 at the game's start, S side 1, W side 2, N side 3 (players
keep their side for the whole game); ``ends_at`` (Unix seconds on the
table's wall clock, or null) is the round's time limit.  Validation is
strict: no extra field, no field missing, no type converted (``"2"`` is not
a round, ``true`` not a number of hands); :func:`parse_assignment` raises
:class:`AssignmentError` with one line saying what is wrong.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator, \
    model_validator

from firmware.rules.names import RULE_NAMES

SEATS = ("E", "S", "W", "N")          # side 0, 1, 2, 3 at the game's start
MAX_HANDS = 64
MAX_TIME_S = 2.0**53
EVENT_RE = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
TABLE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")

Name = Annotated[str, StringConstraints(min_length=1, max_length=40)]


class AssignmentError(ValueError):
    """An assignment the table does not take; the text says why (one line)."""


class Seats(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    E: Name
    S: Name
    W: Name
    N: Name

    @field_validator("E", "S", "W", "N")
    @classmethod
    def _printable(cls, value: str) -> str:
        if not value.isprintable() or value != value.strip():
            raise ValueError("a name is 1 to 40 printable characters, no leading or trailing space")
        return value

    def by_side(self) -> list[str]:
        return [self.E, self.S, self.W, self.N]


class Assignment(BaseModel):
    """One table's seats for one round (see the module)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    id: Annotated[str, StringConstraints(min_length=5, max_length=160)]
    event: Annotated[str, StringConstraints(pattern=EVENT_RE)]
    round: Annotated[int, Field(ge=1, le=10_000)]
    rules: str
    hands: Annotated[int, Field(ge=1, le=MAX_HANDS)]
    seats: Seats
    ends_at: float | int | None

    @field_validator("rules")
    @classmethod
    def _rules(cls, value: str) -> str:
        if value not in RULE_NAMES:
            raise ValueError(f"unknown rule set {value[:32]!r} (one of {', '.join(RULE_NAMES)})")
        return value

    @field_validator("ends_at")
    @classmethod
    def _ends_at(cls, value: float | int | None) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not math.isfinite(value) or not 0 < value <= MAX_TIME_S:
            raise ValueError("Unix seconds (a finite number, at most 2^53) or null")
        return float(value)

    @model_validator(mode="after")
    def _id(self) -> "Assignment":
        event, _, rest = self.id.partition("/")
        round_text, _, table = rest.partition("/")
        if event != self.event or round_text != str(self.round) or not TABLE_RE.match(table):
            raise ValueError(f"id {self.id[:80]!r} is not <event>/<round>/<table> of this event and round")
        return self

    @property
    def table(self) -> str:
        return self.id.rsplit("/", 1)[1]

    def tag(self) -> dict[str, Any]:
        """What every event of the assigned game carries: ``assignment`` (id, event, round, table)."""
        return {"id": self.id, "event": self.event, "round": self.round, "table": self.table}

    def players(self) -> dict[str, str]:
        """The names by seat (E = side 0 ...)."""
        return self.seats.model_dump()

    def to_json(self) -> dict[str, Any]:
        return self.model_dump()


def parse_assignment(data: Any) -> Assignment:
    """The assignment in ``data`` (a decoded JSON object), or AssignmentError naming the first problem."""
    if not isinstance(data, dict):
        raise AssignmentError("the assignment is not a JSON object")
    try:
        return Assignment.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "assignment"
        message = err["msg"].removeprefix("Value error, ")
        raise AssignmentError(f"assignment field '{where}': {message}") from None
