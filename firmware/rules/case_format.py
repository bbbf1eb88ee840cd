"""The JSON-lines hand format of ``mjtable score``: one case per line in, one result per line out.

A case names its rule set, the standing tiles without the winning tile,
the melds in the order they were made, the winning tile and how it was won
(see the README).  Parsing errors become :class:`CaseError` with the field
at fault, so the scorer can answer the line with an ``error`` result and go
on with the next.
"""

from __future__ import annotations

import json
import math
import re
from difflib import get_close_matches
from functools import lru_cache
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from firmware.frozen import quick_init
from firmware.rules.win import WIND_CODES, HandError, Meld, MeldKind, Win, wind_index
from firmware.tiles.tile import TileError, parse, parse_one, show

SOURCES = ("left", "opposite", "right")
BOOL_FIELDS = ("self_drawn", "last_of_kind", "kong_win", "last_tile", "flower_win", "first_turn")
NOTES = ("expected", "source", "text", "note")        # fields a known-answer line carries for people, not scored
CASE_FIELDS = ("id", "rules", "hand", "melds", "win_tile", *BOOL_FIELDS, "kong_discard", "seat_wind", "round_wind",
               "flowers", "discarder", "table", *NOTES)
_CASE_FIELD_SET = frozenset(CASE_FIELDS)
MAX_DEPTH = 32                  # nesting of arrays and objects in a line (a case needs 3)
MAX_INT_DIGITS = 20             # a longer integer is out of range (and Python refuses > 4300 digits)
MAX_ID = 2**53 - 1              # an integer id must be exact in every JSON reader (I-JSON)
ONE_CASE_PER_LINE = "the format is one case per line (JSON lines)"


class CaseError(ValueError):
    """A line that is not a valid case; the message names the field."""


class UnreadableLine(CaseError):
    """A line that is not one strict JSON object: the input's format is at fault, not the case.

    ``case_id`` is the line's id when it could still be read (else None)."""

    def __init__(self, message: str, case_id: Any = None) -> None:
        super().__init__(message)
        self.case_id = case_id


@dataclass(frozen=True)
class _BadNumber:
    """What the JSON reader makes of a number it must not keep (found and named by :func:`_first_problem`)."""
    problem: str


# How many _BadNumber the reader has made (ever): a line whose reading left it unchanged holds none, so it need
# not be searched for one.  (Another thread's reading may change it too: that line is then searched, no more.)
_BAD_NUMBERS = [0]


def _bad(problem: str) -> _BadNumber:
    _BAD_NUMBERS[0] += 1
    return _BadNumber(problem)


def _int(text: str) -> int | _BadNumber:
    digits = len(text) - text.startswith("-")
    if digits > MAX_INT_DIGITS:
        return _bad(f"an integer of {digits} digits is out of range (at most {MAX_INT_DIGITS})")
    return int(text)


def _float(text: str) -> float | _BadNumber:
    value = float(text)
    return value if math.isfinite(value) else _bad(f"{show(text, 24)} is out of range (not a finite number)")


def _constant(name: str) -> _BadNumber:
    return _bad(f"{name} is not a JSON number")


_STRINGS = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"?', re.S)      # possessive: no backtracking, linear
_NOT_BRACKETS = re.compile(r"[^\[\]{}]++")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def nesting(text: str, depth: int = 0) -> tuple[int, int]:
    """(depth at the end, deepest depth) of the arrays and objects of ``text``, strings skipped, starting at
    ``depth``: linear, and run before ``json.loads`` (which recurses once per level)."""
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    if not brackets:
        return depth, depth
    depths = list(accumulate(map(_STEP.__getitem__, brackets), initial=depth))
    return depths[-1], max(depths)


# json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant), its decoder made once
_DECODE = json.JSONDecoder(parse_int=_int, parse_float=_float, parse_constant=_constant).decode


def load_object(text: str) -> dict[str, Any]:
    """One line as a strict JSON object, or :class:`UnreadableLine` naming the problem: nested more than
    ``MAX_DEPTH`` deep (checked before parsing), not JSON, NaN or Infinity, a number out of range, a string
    with a lone surrogate, or not an object."""
    if text.count("[") + text.count("{") > MAX_DEPTH and nesting(text)[1] > MAX_DEPTH:
        raise UnreadableLine(f"nested too deeply: more than {MAX_DEPTH} levels of arrays and objects")
    bad_before = _BAD_NUMBERS[0]
    try:
        if text.startswith("\ufeff"):                  # (as json.loads says it)
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        data = _DECODE(text)
    except json.JSONDecodeError as exc:
        hint = f"; {ONE_CASE_PER_LINE}, and this line looks like part of a case spread over several lines" \
            if looks_partial(text, exc) else ""
        raise UnreadableLine(f"not JSON: {exc.msg} at column {exc.colno}{hint}") from None
    except RecursionError:                              # (not reached: the nesting is checked first)
        raise UnreadableLine(f"nested too deeply: more than {MAX_DEPTH} levels of arrays and objects") from None
    if isinstance(data, _BadNumber):
        raise UnreadableLine(f"not JSON: {data.problem}")
    if not isinstance(data, dict):
        hint = f" (not an array of cases: {ONE_CASE_PER_LINE})" if isinstance(data, list) else ""
        raise UnreadableLine(f"a case is a JSON object, got {describe(data)}{hint}")
    # a lone surrogate comes from a \u escape, or is in the text already (a str given to score_line)
    suspect = _BAD_NUMBERS[0] != bad_before or "\\u" in text or not (text.isascii() or _is_unicode(text))
    problem = _first_problem(data, "") if suspect else None
    if problem:
        path, what = problem
        in_id = path == "id" or path.startswith(("id.", "id["))
        case_id = None if in_id or not valid_id(data.get("id")) else data.get("id")
        raise UnreadableLine(f"field '{path}': {what}" + ("; the answer's id is null" if in_id else ""), case_id)
    return data


def looks_partial(text: str, exc: json.JSONDecodeError) -> bool:
    """Whether a line that is not JSON looks like a piece of JSON spread over several lines."""
    stripped = text.strip()
    return bool(stripped) and (exc.pos >= len(text.rstrip()) or stripped[0] in '"}]' or stripped[-1] in ",{[:")


def _first_problem(value: Any, path: str) -> tuple[str, str] | None:
    """(path, problem) of the first number out of range or string with a lone surrogate, depth first."""
    if isinstance(value, _BadNumber):
        return path, value.problem
    if isinstance(value, str):
        return None if value.isascii() or _is_unicode(value) else (path, _surrogate(value))
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else key
            if not (key.isascii() or _is_unicode(key)):
                return where, "the key " + _surrogate(key)
            found = _first_problem(item, where)
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _first_problem(item, f"{path}[{i}]")
            if found:
                return found
    return None


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _surrogate(text: str) -> str:
    lone = next(c for c in text if "\ud800" <= c <= "\udfff")
    return f"holds a lone surrogate \\u{ord(lone):04x}, which is not a character"


def valid_id(value: Any) -> bool:
    """An id the answer can echo: a string, an integer within ±MAX_ID, or null."""
    return value is None or isinstance(value, str) or (type(value) is int and -MAX_ID <= value <= MAX_ID)


def id_problem(value: Any) -> str | None:
    """Why ``value`` cannot be echoed as an id (None when it can)."""
    if valid_id(value):
        return None
    what = f"an integer out of range ({value})" if type(value) is int else describe(value)
    return (f"field 'id' must be a string, an integer within ±{MAX_ID} or null, got {what}; "
            "the answer's id is null")


_JSON_TYPES = {type(None): "null", bool: "a bool", int: "an integer", float: "a float", str: "a string",
               list: "an array", dict: "an object"}
_EXPECTED = {str: "a string", int: "an integer", bool: "true or false", list: "an array", dict: "an object"}


def describe(value: Any) -> str:
    """A value's JSON type and a short rendering of it, for error messages: ``a string "false"``."""
    kind = _JSON_TYPES.get(type(value), type(value).__name__)
    if value is None:
        return kind
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):                     # (an array holding a number out of range)
        return kind
    return f"{kind} {text if len(text) <= 40 else text[:40] + f'… ({len(text)} characters)'}"


@quick_init
@dataclass(frozen=True)
class Case:
    id: Any
    rules: str | None          # None: the scorer's default
    win: Win
    discarder: int | None      # seat wind index of the discarder, None when self-drawn or not given
    kong_discard: bool = False  # won on the discard made right after a kong (杠流泪)


def parse_line(line: str) -> tuple[Any, Case]:
    """(id or None, case); raises CaseError (UnreadableLine when the line is not a strict JSON object)."""
    data = load_object(line)
    return data.get("id"), parse_case(data)


def parse_case(data: dict) -> Case:
    case_id = data.get("id")
    unknown = sorted(k for k in data if k not in _CASE_FIELD_SET) if not data.keys() <= _CASE_FIELD_SET else None
    if unknown:
        near = get_close_matches(unknown[0], CASE_FIELDS, n=1)
        raise CaseError(f"field {show(unknown[0], 30)} is not a case field"
                        + (f" (did you mean '{near[0]}'?)" if near else f"; fields: {', '.join(CASE_FIELDS)}"))
    # (each field's common case, its exact type, is taken as it is; anything else goes to the checks that name it)
    get = data.get
    try:
        rules = get("rules")
        if rules is not None and type(rules) is not str:
            rules = _field(data, "rules", str, None)
        hand = tuple(_tiles(data, "hand"))
        raw_melds = get("melds")
        if type(raw_melds) is not list:
            raw_melds = _field(data, "melds", list, [])
        if len(raw_melds) > 4:
            raise CaseError(f"field 'melds': {len(raw_melds)} melds; a hand has at most 4")
        melds = tuple(_meld(m, i) for i, m in enumerate(raw_melds)) if raw_melds else ()
        win_tile = _tile(data, "win_tile")
        flags = {}
        for name in BOOL_FIELDS:
            value = get(name)
            flags[name] = value if type(value) is bool else False if value is None else _field(data, name, bool)
        seat = _wind(data, "seat_wind")
        round_wind = _wind(data, "round_wind")
        flowers = get("flowers")
        if type(flowers) is not int:
            flowers = _field(data, "flowers", int, 0)
        discarder = _wind(data, "discarder") if get("discarder") is not None else None
        win = Win(hand, melds, win_tile, seat_wind=seat, round_wind=round_wind, flowers=flowers, **flags)
        win.validate()
    except (HandError, TileError) as exc:
        raise CaseError(str(exc)) from None
    if discarder is not None:
        if win.self_drawn:
            raise CaseError("'discarder' given for a self-drawn win")
        if discarder == seat:
            raise CaseError("'discarder' is the winner's own seat")
    kong_discard = get("kong_discard")
    if type(kong_discard) is not bool:
        kong_discard = _field(data, "kong_discard", bool, False)
    if kong_discard and win.self_drawn:
        raise CaseError("'kong_discard' (杠流泪) is a win on a discard, not self-drawn")
    return Case(case_id, rules, win, discarder, kong_discard)


def _field(data: dict, name: str, kind: type, default: Any = ..., where: str = "") -> Any:
    """``data[name]`` of exactly the JSON type ``kind`` (a bool is not an integer); ``default`` when missing or
    null (no default: an error).  ``where`` prefixes the field's name in messages (``melds[0]``)."""
    value = data.get(name)
    if value is None:
        if default is ...:
            raise CaseError(f"missing field '{where}.{name}'" if where else f"missing field '{name}'")
        return default
    if type(value) is kind:                         # (the common case: exactly the type asked)
        return value
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        full = f"{where}.{name}" if where else name
        raise CaseError(f"field '{full}' must be {_EXPECTED.get(kind, kind.__name__)}, got {describe(value)}")
    return value


def _tiles(data: dict, name: str) -> list[int]:
    text = data.get(name)
    if type(text) is not str:
        text = _field(data, name, str)
    try:
        return parse(text)
    except TileError as exc:
        raise CaseError(f"field '{name}': {exc}") from None


def _tile(data: dict, name: str) -> int:
    text = data.get(name)
    if type(text) is not str:
        text = _field(data, name, str)
    try:
        return parse_one(text)
    except TileError as exc:
        raise CaseError(f"field '{name}': {exc}") from None


def _wind(data: dict, name: str) -> int:
    text = data.get(name)
    seat = _WIND_INDEX.get(text) if type(text) is str else None
    if seat is not None:
        return seat
    text = _field(data, name, str)
    if len(text) != 1:
        raise CaseError(f"field '{name}': wind {show(text)}: use E, S, W or N")
    try:
        return wind_index(text)
    except TileError as exc:
        raise CaseError(f"field '{name}': {exc}") from None


_MELD_FIELDS = frozenset(("kind", "tiles", "from", "concealed", "added"))
_WIND_INDEX = {wind: i for i, wind in enumerate(WIND_CODES)}
_MELD_KINDS = {kind.value: kind for kind in MeldKind}
MELD_TEXT_CACHED = 16           # a meld's tile string this short is parsed once (a few hundred name every meld)


@lru_cache(maxsize=512)         # (bounded: at most 512 strings of at most MELD_TEXT_CACHED characters)
def _meld_tiles(text: str) -> tuple[int, ...]:
    """A meld's tiles, sorted; TileError as :func:`~firmware.tiles.tile.parse` says it (not cached)."""
    return tuple(sorted(parse(text)))


def _meld(raw: Any, index: int) -> Meld:
    where = f"melds[{index}]"
    if not isinstance(raw, dict):
        raise CaseError(f"{where} must be an object, got {describe(raw)}")
    unknown = sorted(k for k in raw if k not in _MELD_FIELDS) if not raw.keys() <= _MELD_FIELDS else None
    if unknown:
        raise CaseError(f"field '{where}.{show(unknown[0], 30)[1:-1]}' is not a meld field (kind, tiles, from, "
                        "concealed, added)")
    kind_name = raw.get("kind")
    kind = _MELD_KINDS.get(kind_name) if type(kind_name) is str else None     # (MeldKind(kind_name), no call)
    if kind is None:
        kind_name = _field(raw, "kind", str, where=where)
        raise CaseError(f"field '{where}.kind' must be chow, pung or kong, got {show(kind_name)}")
    text = raw.get("tiles")
    if type(text) is not str:
        text = _field(raw, "tiles", str, where=where)
    try:
        tiles = _meld_tiles(text) if len(text) <= MELD_TEXT_CACHED else tuple(sorted(parse(text)))
    except TileError as exc:
        raise CaseError(f"field '{where}.tiles': {exc}") from None
    size = 4 if kind is MeldKind.KONG else 3
    if len(tiles) != size:
        raise CaseError(f"{where}: a {kind.value} has {size} tiles, got {len(tiles)}")
    if kind is MeldKind.CHOW:
        if tiles != (tiles[0], tiles[0] + 1, tiles[0] + 2) or tiles[0] >= 27 or tiles[0] % 9 > 6:
            raise CaseError(f"{where}: a chow is three consecutive tiles of one suit")
    elif len(set(tiles)) != 1:
        raise CaseError(f"{where}: a {kind.value} is {size} identical tiles")
    concealed = raw.get("concealed", False)
    if type(concealed) is not bool:
        concealed = _field(raw, "concealed", bool, False, where)
    added = raw.get("added", False)
    if type(added) is not bool:
        added = _field(raw, "added", bool, False, where)
    source = raw.get("from")
    if (concealed or added) and kind is not MeldKind.KONG:
        raise CaseError(f"{where}: only a kong can be {'concealed' if concealed else 'added'}")
    if concealed and added:
        raise CaseError(f"{where}: a kong is concealed or added to a pung, not both")
    if concealed:
        source = None
    elif not isinstance(source, str) or source not in SOURCES:
        raise CaseError(f"field '{where}.from' must be left, opposite or right, got {describe(source)}")
    return Meld(kind, tiles[0], source, added)


def _integer(raw: dict[str, Any], name: str, where: str, low: int, high: int) -> int:
    value = raw.get(name)
    if value is None:
        return 0
    if type(value) is not int or not low <= value <= high:
        raise CaseError(f"field '{where}.{name}' must be an integer from {low} to {high}, got {describe(value)}")
    return value


def _winds(raw: dict[str, Any], name: str) -> list[str]:
    value = raw.get(name)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(w, str) and w in WIND_CODES and len(w) == 1
                                              for w in value):
        raise CaseError(f"field 'table.{name}' must be an array of seat winds (E, S, W or N), got {describe(value)}")
    return value
