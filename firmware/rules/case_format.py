"""The JSON-lines hand format of ``mjtable score``: one case per line in, one result per line out.

A case names its rule set, the standing tiles without the winning tile,
the melds in the order they were made, the winning tile and how it was won
(see the README).  Parsing errors become :class:`CaseError` with the field
at fault, so the scorer can answer the line with an ``error`` result and go
on with the next.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from firmware.rules.win import HandError, Meld, MeldKind, Win, wind_index
from firmware.tiles.tile import TileError, parse, parse_one

SOURCES = ("left", "opposite", "right")
BOOL_FIELDS = ("self_drawn", "last_of_kind", "kong_win", "last_tile", "flower_win")


class CaseError(ValueError):
    """A line that is not a valid case; the message names the field."""


@dataclass(frozen=True)
class Case:
    id: Any
    rules: str | None          # None: the scorer's default
    win: Win
    discarder: int | None      # seat wind index of the discarder, None when self-drawn or not given


def parse_line(line: str) -> tuple[Any, Case]:
    """(id or None, case); raises CaseError after the id is known so the result can carry it."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise CaseError(f"not JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(data, dict):
        raise CaseError("a case is a JSON object")
    return data.get("id"), parse_case(data)


def parse_case(data: dict) -> Case:
    case_id = data.get("id")
    try:
        rules = _field(data, "rules", str, None)
        hand = tuple(_tiles(data, "hand"))
        melds = tuple(_meld(m, i) for i, m in enumerate(_field(data, "melds", list, [])))
        win_tile = _tile(data, "win_tile")
        flags = {name: _field(data, name, bool, False) for name in BOOL_FIELDS}
        seat = _wind(data, "seat_wind")
        round_wind = _wind(data, "round_wind")
        flowers = _field(data, "flowers", int, 0)
        discarder = _wind(data, "discarder") if data.get("discarder") is not None else None
        win = Win(hand, melds, win_tile, seat_wind=seat, round_wind=round_wind, flowers=flowers, **flags)
        win.validate()
    except (HandError, TileError) as exc:
        raise CaseError(str(exc)) from None
    if discarder is not None:
        if win.self_drawn:
            raise CaseError("'discarder' given for a self-drawn win")
        if discarder == seat:
            raise CaseError("'discarder' is the winner's own seat")
    return Case(case_id, rules, win, discarder)


def _field(data: dict, name: str, kind: type, default: Any = ...) -> Any:
    if name not in data or data[name] is None:
        if default is ...:
            raise CaseError(f"missing field '{name}'")
        return default
    value = data[name]
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        raise CaseError(f"field '{name}' must be {kind.__name__}, got {value!r}")
    return value


def _tiles(data: dict, name: str) -> list[int]:
    text = _field(data, name, str)
    try:
        return parse(text)
    except TileError as exc:
        raise CaseError(f"field '{name}': {exc}") from None


def _tile(data: dict, name: str) -> int:
    try:
        return parse_one(_field(data, name, str))
    except TileError as exc:
        raise CaseError(f"field '{name}': {exc}") from None


def _wind(data: dict, name: str) -> int:
    try:
        return wind_index(_field(data, name, str))
    except TileError as exc:
        raise CaseError(f"field '{name}': {exc}") from None


def _meld(raw: Any, index: int) -> Meld:
    where = f"melds[{index}]"
    if not isinstance(raw, dict):
        raise CaseError(f"{where} must be an object")
    try:
        kind = MeldKind(raw.get("kind"))
    except ValueError:
        raise CaseError(f"{where}: kind must be chow, pung or kong, got {raw.get('kind')!r}") from None
    try:
        tiles = sorted(parse(str(raw.get("tiles", ""))))
    except TileError as exc:
        raise CaseError(f"{where}: {exc}") from None
    size = 4 if kind is MeldKind.KONG else 3
    if len(tiles) != size:
        raise CaseError(f"{where}: a {kind.value} has {size} tiles, got {len(tiles)}")
    if kind is MeldKind.CHOW:
        if tiles != [tiles[0], tiles[0] + 1, tiles[0] + 2] or tiles[0] >= 27 or tiles[0] % 9 > 6:
            raise CaseError(f"{where}: a chow is three consecutive tiles of one suit")
    elif len(set(tiles)) != 1:
        raise CaseError(f"{where}: a {kind.value} is {size} identical tiles")
    concealed = bool(raw.get("concealed", False))
    source = raw.get("from")
    if concealed:
        if kind is not MeldKind.KONG:
            raise CaseError(f"{where}: only a kong can be concealed")
        source = None
    elif source not in SOURCES:
        raise CaseError(f"{where}: 'from' must be left, opposite or right")
    return Meld(kind, tiles[0], source)
