"""A tournament's facts, the only thing stored, and their fold into what the tournament is now.

Facts are appended, never changed: the event's format, enrolments and
withdrawals, seatings, rounds opened, tables' results (from the fleet or typed
in), referees' confirmations and corrections, penalties and appeals.  Anything
shown (seats, results, standings) is derived from them by :func:`fold`, so a
correction is a new fact that wins over the result it corrects, and standings
can always be rebuilt from the facts alone.
"""

from __future__ import annotations

import copy
import enum
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from parlour.core.event import SEATS, EventFormat, FormatError, Seat, check_player_name
from parlour.core.words import worded


class FactKind(str, enum.Enum):
    """What a fact records."""

    EVENT = "event"              # the format and a key drawn for it: {"format": {...}, "key": "3f9a0c1b"}
    ENROL = "enrol"              # {"name", "team"}
    WITHDRAW = "withdraw"        # {"name", "from_round"}
    SEATING = "seating"          # {"round", "tables": [{"table", "seats": {"E": name, ...}}], "bye", "certificate"}
    ROUND_OPEN = "round_open"    # {"round", "ends_at"}: the tables were told their players
    RESULT = "result"            # {"round", "table", "score": {"E": n, ...}, "hands", "reason", "source"}
    HAND = "hand"                # {"round", "table", "msg_id", "hand", "score": {...}}: one hand as a table told it
    CONFIRM = "confirm"          # {"round", "table", "referee"}
    CORRECTION = "correction"    # {"round", "table", "score": {...}, "referee", "note"}
    PENALTY = "penalty"          # {"round", "name", "points", "reason", "referee"}
    APPEAL = "appeal"            # {"round", "table", "by", "text"}


@dataclass(frozen=True)
class Fact:
    """One stored fact: its kind and body; ``seq`` and ``recorded_at`` are the store's."""

    kind: FactKind
    body: Mapping[str, Any]
    seq: int | None = None
    recorded_at: str | None = None


@dataclass
class TableRound:
    """One table's round as the facts now say: who sat where, the score by seat, how it came."""

    round: int
    table: str
    seats: dict[Seat, str]
    score: dict[Seat, int] | None = None
    hands: int | None = None
    reason: str | None = None
    source: str | None = None
    confirmed: bool = False
    corrected: bool = False
    hands_told: int = 0


@dataclass
class TournamentState:
    """What the tournament is now (derived: never stored)."""

    fmt: EventFormat
    key: str = ""                                                      # drawn once per event (its tables' tag)
    teams: dict[str, str | None] = field(default_factory=dict)        # every player ever enrolled
    withdrawn: dict[str, int] = field(default_factory=dict)           # name -> the first round missed
    seatings: dict[int, dict[str, Any]] = field(default_factory=dict)
    opened: dict[int, float | None] = field(default_factory=dict)      # round -> ends_at
    tables: dict[tuple[int, str], TableRound] = field(default_factory=dict)
    penalties: list[dict[str, Any]] = field(default_factory=list)
    appeals: list[dict[str, Any]] = field(default_factory=list)
    hand_ids: set[str] = field(default_factory=set)

    @property
    def tag(self) -> str:
        """What the tables are told the event is: its name and its key (``cup-3f9a0c1b``), so that an event made
        again under the same name (a new database) is never taken for the old one by a table or a result."""
        return f"{self.fmt.name}-{self.key}" if self.key else self.fmt.name

    @property
    def active(self) -> list[str]:
        """The players still in, in enrolment order."""
        return [name for name in self.teams if name not in self.withdrawn]

    def played_rounds(self) -> list[int]:
        """Rounds opened (their seating is kept when the rest is planned again)."""
        return sorted(self.opened)

    def round_complete(self, round_no: int) -> bool:
        seating = self.seatings.get(round_no)
        if not seating:
            return False
        return all(self.tables.get((round_no, t["table"])) is not None
                   and self.tables[(round_no, t["table"])].score is not None for t in seating["tables"])

    def snapshot(self) -> TournamentState:
        """A copy that facts applied to it (:func:`apply`) leave this state as it is: its containers and each
        table's round are copied (what they hold, the facts' bodies, seats and scores, is replaced by the facts,
        never changed in place)."""
        return TournamentState(self.fmt, self.key, dict(self.teams), dict(self.withdrawn), dict(self.seatings),
                               dict(self.opened), {key: copy.copy(table) for key, table in self.tables.items()},
                               list(self.penalties), list(self.appeals), set(self.hand_ids))

    def table_round(self, round_no: int, table: str) -> TableRound:
        """The table's round; FormatError when the round has no such table."""
        found = self.tables.get((round_no, table))
        if found is None:
            if round_no in self.seatings:
                raise worded(FormatError, "round %(round)s has no table %(table)r", round=round_no, table=table)
            raise worded(FormatError, "round %(round)s is not seated", round=round_no)
        return found


def fold(facts: Iterable[Fact]) -> TournamentState:
    """The state the facts give, applied in order; the first fact must be the event's format."""
    state: TournamentState | None = None
    for fact in facts:
        if state is None:
            if fact.kind is not FactKind.EVENT:
                raise worded(FormatError, "a tournament's first fact must be its format")
            state = TournamentState(EventFormat.from_dict(dict(fact.body["format"])), str(fact.body.get("key", "")))
            continue
        _APPLY[fact.kind](state, fact.body)
    if state is None:
        raise worded(FormatError, "no tournament here: create one with mjtable tourney new")
    return state


def apply(state: TournamentState, facts: Iterable[Fact]) -> TournamentState:
    """``state`` (changed in place) with the facts that came after those it was folded from, in order: the
    same state :func:`fold` gives of all of them."""
    for fact in facts:
        _APPLY[fact.kind](state, fact.body)
    return state


def score_by_seat(raw: Mapping[str, Any], what: str = "score") -> dict[Seat, int]:
    """A score per seat (``{"E": n, "S": n, "W": n, "N": n}``, whole numbers) checked; FormatError names the key."""
    if not isinstance(raw, Mapping):
        raise worded(FormatError, "%(what)s: an object with the seats E, S, W and N", what=what)
    keys = set(raw)
    wanted = {s.value for s in SEATS}
    if keys != wanted:
        raise worded(FormatError, "%(what)s: the seats E, S, W and N, each once (got %(keys)s)", what=what,
                     keys=", ".join(sorted(map(str, keys))))
    out: dict[Seat, int] = {}
    for seat in SEATS:
        value = raw[seat.value]
        if isinstance(value, bool) or not isinstance(value, int) or abs(value) > 10**9:
            raise worded(FormatError, "%(what)s.%(seat)s: a whole number of points (got %(value)r)", what=what,
                         seat=seat.value, value=value)
        out[seat] = value
    return out


def _enrol(state: TournamentState, body: Mapping[str, Any]) -> None:
    name = check_player_name(body["name"])
    state.teams[name] = body.get("team") or None
    state.withdrawn.pop(name, None)


def _withdraw(state: TournamentState, body: Mapping[str, Any]) -> None:
    state.withdrawn[body["name"]] = int(body.get("from_round", 1))


def _seating(state: TournamentState, body: Mapping[str, Any]) -> None:
    round_no = int(body["round"])
    if round_no in state.opened:
        return                          # a played round's seating stands
    for key in [k for k in state.tables if k[0] == round_no]:
        del state.tables[key]
    state.seatings[round_no] = dict(body)
    for table in body["tables"]:
        seats = {Seat(k): v for k, v in table["seats"].items()}
        state.tables[(round_no, table["table"])] = TableRound(round_no, table["table"], seats)


def _round_open(state: TournamentState, body: Mapping[str, Any]) -> None:
    state.opened.setdefault(int(body["round"]), body.get("ends_at"))


def _result(state: TournamentState, body: Mapping[str, Any]) -> None:
    table = state.tables.get((int(body["round"]), body["table"]))
    if table is None or table.score is not None:
        return                          # the first result stands; a referee corrects it
    table.score = score_by_seat(body["score"])
    table.hands = body.get("hands")
    table.reason = body.get("reason")
    table.source = body.get("source")


def _hand(state: TournamentState, body: Mapping[str, Any]) -> None:
    if body.get("msg_id"):
        state.hand_ids.add(body["msg_id"])
    table = state.tables.get((int(body["round"]), body["table"]))
    if table is not None:
        table.hands_told += 1


def _confirm(state: TournamentState, body: Mapping[str, Any]) -> None:
    table = state.tables.get((int(body["round"]), body["table"]))
    if table is not None and table.score is not None:
        table.confirmed = True


def _correction(state: TournamentState, body: Mapping[str, Any]) -> None:
    table = state.tables.get((int(body["round"]), body["table"]))
    if table is None:
        return
    table.score = score_by_seat(body["score"])
    table.source = "correction"
    table.corrected = True
    table.confirmed = True


def _penalty(state: TournamentState, body: Mapping[str, Any]) -> None:
    state.penalties.append(dict(body))


def _appeal(state: TournamentState, body: Mapping[str, Any]) -> None:
    state.appeals.append(dict(body))


_APPLY = {
    FactKind.ENROL: _enrol, FactKind.WITHDRAW: _withdraw, FactKind.SEATING: _seating,
    FactKind.ROUND_OPEN: _round_open, FactKind.RESULT: _result, FactKind.HAND: _hand,
    FactKind.CONFIRM: _confirm, FactKind.CORRECTION: _correction, FactKind.PENALTY: _penalty,
    FactKind.APPEAL: _appeal,
}
