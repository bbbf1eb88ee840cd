"""The API's request bodies, validated by pydantic before anything is asked of the controller.

Every POST under ``/api/`` reads its body through :func:`parse` with the
model of its route: :data:`HOLD` for ``/api/hold`` (``{"kind": "jog",
"name": MECHANISM}``, ``"to": "up"|"down"`` for the centre lift only, or
``{"kind": "test", "name": TEST}``), :data:`NOTHING` for the others (no
body, or ``{}``: the page sends ``{}``).  pydantic parses the bytes itself
(its JSON parser refuses nesting past its limit, text that is not UTF-8,
numbers out of range and lone surrogates with an error, not an exception),
strictly: a field of the wrong type is not converted (``"to": ["up"]``,
``"name": 7``), a field not named here is refused, and the top level must
be an object.  What does not validate is answered 400 with the problems
(where and what, at most ``MAX_PROBLEMS``, each cut to ``MAX_PROBLEM_CHARS``),
and nothing is sent to the controller: no body ever moves a motor or
answers 500.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

log = logging.getLogger(__name__)

MAX_PROBLEMS = 3
TAGS = ("jog", "test")              # a hold's kinds (pydantic names the one it tried first in a problem's place)
MAX_PROBLEM_CHARS = 240

Mechanism = Literal["stacker0", "stacker1", "stacker2", "stacker3", "wall_lift0", "wall_lift1", "wall_lift2",
                    "wall_lift3", "center_lift", "turntable", "dice"]
GroupTest = Literal["stackers", "lifts", "center", "disk", "dice"]   # (GROUP_TESTS: a test checks they agree)
MECHANISMS = frozenset(get_args(Mechanism))
MECHANISM_BUTTONS: tuple[str, ...] = get_args(Mechanism)            # the service page's buttons, in its order
TEST_BUTTONS: tuple[str, ...] = get_args(GroupTest)


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Nothing(_Body):
    """The body of ``/api/ack``, ``/api/stop`` and a hold's keep-alive and release: nothing, or ``{}``."""


class JogHold(_Body):
    kind: Literal["jog"]
    name: Mechanism
    to: Literal["up", "down"] | None = None

    @model_validator(mode="after")
    def _to_only_for_the_centre(self) -> "JogHold":
        if self.to is not None and self.name != "center_lift":
            raise ValueError("to: only the center_lift is jogged to a stop (up or down)")
        return self

    def action(self) -> dict[str, Any]:
        """The controller's request."""
        return {"cmd": "jog", "mechanism": self.name, "hold": True, **({"to": self.to} if self.to else {})}


class GroupTestHold(_Body):
    kind: Literal["test"]
    name: GroupTest

    def action(self) -> dict[str, Any]:
        return {"cmd": "test", "name": self.name}


HOLD: TypeAdapter[JogHold | GroupTestHold] = TypeAdapter(
    Annotated[Union[JogHold, GroupTestHold], Field(discriminator="kind")])
NOTHING: TypeAdapter[Nothing] = TypeAdapter(Nothing)


# -- staff's bodies (names, games, the table session) ---------------------------------------------------------------
Name = Annotated[str, Field(min_length=1, max_length=40)]


class Seats(_Body):
    E: Name
    S: Name
    W: Name
    N: Name


class PlayersBody(_Body):
    """``/api/staff/players``: ``{"players": {"E": ..., "S": ..., "W": ..., "N": ...}}`` or ``{"players": null}``."""

    players: Seats | None


class SessionBody(_Body):
    """``/api/staff/session``: ``{"action": "open", "minutes": N}`` or ``{"action": "close"}``."""

    action: Literal["open", "close"]
    minutes: Annotated[int, Field(ge=1, le=24 * 60)] | None = None

    @model_validator(mode="after")
    def _minutes_to_open(self) -> "SessionBody":
        if (self.action == "open") != (self.minutes is not None):
            raise ValueError("minutes: given to open (1 to 1440), not to close")
        return self


class GameBody(_Body):
    """``/api/staff/game``: ``{"action": "start", "rules": NAME?, "chips": N?}`` or ``{"action": "end"}``."""

    action: Literal["start", "end"]
    rules: Annotated[str, Field(min_length=1, max_length=32)] | None = None
    chips: Annotated[int, Field(ge=1, le=10_000_000)] | None = None


PLAYERS: TypeAdapter[PlayersBody] = TypeAdapter(PlayersBody)
SESSION: TypeAdapter[SessionBody] = TypeAdapter(SessionBody)
GAME: TypeAdapter[GameBody] = TypeAdapter(GameBody)


class BadBody(ValueError):
    """A request body that is not what its route takes (the message says where and what)."""


def parse(adapter: TypeAdapter, raw: bytes, empty: bool = False) -> Any:
    """``raw`` as ``adapter``'s model; an empty body as ``{}`` when ``empty``; :class:`BadBody` otherwise."""
    if empty and not raw.strip():
        raw = b"{}"
    try:
        return adapter.validate_json(raw)
    except ValidationError as exc:
        raise BadBody(problems(exc)) from None


def problems(exc: ValidationError) -> str:
    """The first problems of a failed validation: where (the field, or the body) and what, never the value."""
    said = []
    for error in exc.errors(include_url=False, include_input=False)[:MAX_PROBLEMS]:
        loc = error["loc"][1:] if len(error["loc"]) > 1 and error["loc"][0] in TAGS else error["loc"]
        where = ".".join(str(p) for p in loc) or "the body"
        said.append(f"{where}: {error['msg']}"[:MAX_PROBLEM_CHARS])
    more = exc.error_count() - len(said)
    return "; ".join(said) + (f" (and {more} more)" if more > 0 else "")

