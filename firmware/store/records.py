"""The typed shapes of what the table database keeps: every document is validated when it is read.

A record that does not fit its model (a wrong type, a missing key, ``null``
where a document must be) is never replaced by defaults: reading it raises
:class:`RecordError`, and the composition root moves the database aside
with a latched E98 that names the file.  Shapes change only with the schema
version (:mod:`firmware.store.schema`), whose migrations turn
the previous version's documents into these.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from firmware.faults import TableError

Side = Annotated[int, Field(ge=0, le=3)]
Count = Annotated[int, Field(ge=0, le=1000)]


class RecordError(TableError):
    """A stored document or row does not have the shape of this release."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class StackingRecord(_Record):
    """A stacking cycle under way; its progress is the cycle's rows in ``stack_log``."""

    set_id: str | None
    cycle: Annotated[int, Field(ge=1)]


class BookRecord(_Record):
    """The set bookkeeping (:class:`firmware.controller.bookkeeping.Bookkeeping`) as stored."""

    sets: dict[str, Literal["none", "disk", "stacking", "stacked", "table"]]
    unknown_on_disk: bool
    stacking: StackingRecord | None
    hand: Annotated[int, Field(ge=0)]
    dealer: Side
    dealer_streak: Annotated[int, Field(ge=0)]
    long_hair: Annotated[int, Field(ge=0)]
    last_winner: Side | None
    last_followed: bool = False
    last_discarder: Side | None = None
    hand_open: bool
    hand_over: bool
    raising: bool
    players_waited_s: Annotated[float, Field(ge=0)]
    cycles: Annotated[int, Field(ge=0)]
    rejected: dict[str, list[str]]


_STRICT = ConfigDict(strict=True)
StateName = Literal["boot", "service", "homing", "idle", "stacking", "paused", "ready", "raising", "dice", "in_play",
                    "rejected", "center_up", "open", "center_down", "hold", "latched"]

BOOK = TypeAdapter(BookRecord)
NOMINAL = TypeAdapter(dict[str, list[Annotated[float, Field(gt=0, allow_inf_nan=False)]]], config=_STRICT)
STATE = TypeAdapter(StateName, config=_STRICT)
DETAIL = TypeAdapter(dict[str, Any], config=_STRICT)
class ItemRecord(_Record):
    """A scored fan or item of a hand's result (key and en are empty for hands recorded before schema 2)."""

    name: str
    key: str
    en: str
    points: int
    count: Annotated[int, Field(ge=0)]
    side: Side | None = None           # the winner who scored it (several may win one discard)


FANS = TypeAdapter(list[ItemRecord])
SIDES = TypeAdapter(list[Side], config=_STRICT)
DICE = TypeAdapter(list[Annotated[int, Field(ge=1, le=6)]], config=_STRICT)


def validate(adapter: TypeAdapter, data: Any, what: str) -> Any:
    """``data`` (read from typed columns) as ``adapter``'s type, or :class:`RecordError`."""
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        raise _record_error(exc, what) from None


def from_json(adapter: TypeAdapter, text: str, what: str) -> Any:
    """The stored JSON ``text`` as ``adapter``'s type, or :class:`RecordError` naming what and why."""
    try:
        return adapter.validate_json(text)
    except ValidationError as exc:
        raise _record_error(exc, what) from None


def _record_error(exc: ValidationError, what: str) -> RecordError:
    """The first problem of a failed validation, naming the record, the field and the value."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(the whole record)"
    return RecordError(f"{what}: {where}: {first['msg']} (got {str(first.get('input'))[:60]!r})")
