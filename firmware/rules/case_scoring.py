"""Scoring cases in the JSON-lines format: one strict-JSON answer per line, whatever the line holds."""

# Every non-blank input line gets exactly one answer, in order: a result, or {"id", "error"} naming the
# problem (and the next line is still scored).  Lines are read as bytes, in chunks of at most
# MAX_LINE_BYTES + 1, and decoded one by one; a longer line is skipped to its newline and answered "too
# long".  The nesting is checked before json.loads, numbers must be finite with at most 20 digits, fields
# must have their JSON type.  An input that is one JSON document (a multi-line array or object at the
# start) is answered once.

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import chain
from typing import Any, BinaryIO, Iterable, Iterator, TextIO

from firmware.rules.case_format import (MAX_DEPTH, ONE_CASE_PER_LINE, Case, CaseError, UnreadableLine, describe,
                                        id_problem, load_object, nesting, parse_case, valid_id)
from firmware.rules.mcr.payment import false_win_payments, win_payments
from firmware.rules.mcr.scorer import score
from firmware.rules.names import RULE_NAMES
from firmware.rules.win import WIND_CODES
from firmware.tiles.tile import show

SCORERS = RULE_NAMES
MAX_LINE_BYTES = 64 * 1024              # a case is a few hundred bytes
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024   # read ahead at most this much to tell a multi-line JSON document
MAX_ERROR_CHARS = 1000
MAX_DEALER_STREAK = 1000
MAX_CHIPS = 10**12
_BOM = b"\xef\xbb\xbf"
_BLANK = b" \t\r"                       # JSON's white space (the newline is gone)
# characters (in strings only) that some readers take for a line break (str.splitlines, JavaScript): escaped
_LINE_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}

SCORED, INVALID, UNREADABLE, INTERNAL = "scored", "invalid", "unreadable", "internal"


@dataclass(frozen=True)
class TooLong:
    """A line over the limit, read and dropped: its size in bytes (without the newline)."""
    size: int


@dataclass
class Summary:
    """What :func:`score_input` answered.  ``unreadable``: lines that were not one strict JSON object (not
    UTF-8, too long, too deep, not JSON, NaN, a number out of range, a lone surrogate, not an object) and
    internal errors; ``invalid``: JSON objects that are not valid cases (still read)."""
    answered: int = 0
    unreadable: int = 0
    invalid: int = 0
    document: bool = False      # the input was one multi-line JSON document, answered once

    @property
    def exit_status(self) -> int:
        """0: every line read (some may be invalid cases or not wins); 1: some line unreadable; 2: a document."""
        return 2 if self.document else 1 if self.unreadable else 0


def iter_lines(source: BinaryIO | TextIO | Iterable[str | bytes],
               limit: int = MAX_LINE_BYTES) -> Iterator[bytes | TooLong]:
    """The lines of ``source`` as bytes without the newline (a text stream is UTF-8 encoded; a lone surrogate
    then fails to decode like a bad byte).  A stream is read with ``readline(limit + 1)``: a line over
    ``limit`` bytes is dropped chunk by chunk to its newline and comes out as :class:`TooLong`, so memory
    stays bounded whatever the input.  A byte-order mark before the first line is dropped."""
    readline = getattr(source, "readline", None)
    first = True
    if readline is None:                                        # an iterable of lines (e.g. a list)
        for line in source:
            raw = _chomp(_encode(line))
            raw, first = (raw.removeprefix(_BOM) if first else raw), False
            yield raw if len(raw) <= limit else TooLong(len(raw))
        return
    while True:
        chunk = readline(limit + 1)
        if not chunk:
            return
        raw = _encode(chunk)
        if not raw.endswith(b"\n") and len(chunk) > limit:    # over the limit: drop the rest of the line
            size = len(raw)
            while True:
                more = readline(limit + 1)
                if not more:
                    break
                more_raw = _encode(more)
                size += len(more_raw)
                if more_raw.endswith(b"\n"):
                    size -= 1
                    break
            first = False
            yield TooLong(size)
            continue
        raw = _chomp(raw)
        raw, first = (raw.removeprefix(_BOM) if first else raw), False
        yield raw if len(raw) <= limit else TooLong(len(raw))


def _encode(chunk: str | bytes) -> bytes:
    return chunk.encode("utf-8", "surrogatepass") if isinstance(chunk, str) else bytes(chunk)


def _chomp(raw: bytes) -> bytes:
    raw = raw[:-1] if raw.endswith(b"\n") else raw
    return raw[:-1] if raw.endswith(b"\r") else raw


def score_stream(lines: BinaryIO | TextIO | Iterable[str | bytes], out: TextIO, rules: str | None = None) -> int:
    """Score every non-blank line; returns how many lines were answered (see :func:`score_input`)."""
    return score_input(lines, out, rules).answered


def score_input(source: BinaryIO | TextIO | Iterable[str | bytes], out: TextIO,
                rules: str | None = None) -> Summary:
    """Write one strict-JSON answer per non-blank line of ``source`` to ``out``, in order (blank lines are
    skipped).  When the first non-blank line opens a JSON array or object that later lines close, and the
    whole parses, the input is one JSON document, not JSON lines: one error answer says so, and nothing
    more is read."""
    summary = Summary()
    lines = iter_lines(source)
    ahead, document = _read_ahead(lines)
    if document:
        summary.document = True
        _write(out, {"id": None, "error": document})
        summary.answered = 1
        return summary
    for item in chain(ahead, lines):
        if isinstance(item, TooLong):
            answer, verdict = {"id": None, "error": f"line too long: {item.size} bytes, the limit is "
                                                    f"{MAX_LINE_BYTES} bytes; {ONE_CASE_PER_LINE}"}, UNREADABLE
        elif not item.strip(_BLANK):
            continue
        else:
            try:
                text = item.decode("utf-8")
            except UnicodeDecodeError as exc:
                answer, verdict = {"id": None, "error": f"not UTF-8: byte 0x{item[exc.start]:02x} at byte "
                                                        f"{exc.start + 1} of the line"}, UNREADABLE
            else:
                answer, verdict = _answer(text, rules)
        _write(out, answer)
        summary.answered += 1
        summary.unreadable += verdict in (UNREADABLE, INTERNAL)
        summary.invalid += verdict == INVALID
    return summary


def _read_ahead(lines: Iterator[bytes | TooLong]) -> tuple[list[bytes | TooLong], str | None]:
    """(the lines read, None) or (..., the error answer) when the input is one multi-line JSON document.

    Reads past the first non-blank line only when that line opens an array or object it does not close,
    and then only until the nesting closes (bounded by MAX_DOCUMENT_BYTES and MAX_DEPTH)."""
    ahead: list[bytes | TooLong] = []
    for item in lines:
        ahead.append(item)
        if isinstance(item, TooLong) or item.strip(_BLANK):
            break
    else:
        return ahead, None
    texts: list[str] = []
    depth, size = 0, 0
    for item in chain([ahead.pop()], lines):
        ahead.append(item)
        if isinstance(item, TooLong):
            return ahead, None
        try:
            text = item.decode("utf-8")
        except UnicodeDecodeError:
            return ahead, None
        if not texts and not text.lstrip(" \t\r").startswith(("[", "{")):
            return ahead, None
        size += len(item) + 1
        depth, deepest = nesting(text, depth)
        if size > MAX_DOCUMENT_BYTES or deepest > MAX_DEPTH or depth < 0:
            return ahead, None
        texts.append(text)
        if depth == 0:
            break
    else:
        return ahead, None
    if len(texts) == 1:                                     # complete on its own line: JSON lines after all
        return ahead, None
    try:
        value = json.loads("\n".join(texts), parse_constant=lambda _: None, parse_int=lambda _: 0,
                           parse_float=lambda _: 0.0)
    except ValueError:
        return ahead, None
    n_lines = sum(1 for item in ahead if isinstance(item, bytes) and item.strip(_BLANK))
    if isinstance(value, list):
        return ahead, (f"the input is one JSON document (an array of {len(value)} items over {n_lines} lines), "
                       f"not JSON lines: {ONE_CASE_PER_LINE}, each a JSON object; e.g. jq -c '.[]' FILE")
    if isinstance(value, dict):
        return ahead, (f"the input is one JSON document (an object over {n_lines} lines), not JSON lines: "
                       f"{ONE_CASE_PER_LINE}; e.g. jq -c . FILE")
    return ahead, None


def _write(out: TextIO, answer: dict[str, Any]) -> None:
    out.write(to_json(answer) + "\n")
    out.flush()


def to_json(answer: dict[str, Any]) -> str:
    """An answer as one line of strict JSON (no NaN or Infinity, valid UTF-8), whatever it holds."""
    if not valid_id(answer.get("id")):
        answer = {"id": None, "error": f"internal error: the answer's id is {describe(answer['id'])}"}
    error = answer.get("error")
    if isinstance(error, str) and len(error) > MAX_ERROR_CHARS:
        answer = dict(answer, error=error[:MAX_ERROR_CHARS] + f"… ({len(error)} characters)")
    try:
        text = json.dumps(answer, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return json.dumps({"id": None, "error": f"internal error: the answer is not JSON ({type(exc).__name__})"})
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:                              # a lone surrogate: escaped, still strict JSON
        text = json.dumps(answer, allow_nan=False)
    return text.translate(_LINE_BREAKS)


def score_line(line: str, default_rules: str | None = None) -> dict[str, Any]:
    """The answer to one line: a result, or ``{"id", "error"}``; never raises."""
    return _answer(line, default_rules)[0]


def _answer(line: str, default_rules: str | None) -> tuple[dict[str, Any], str]:
    """(answer, verdict): SCORED, INVALID (a JSON object that is not a valid case), UNREADABLE or INTERNAL."""
    case_id = None
    try:
        try:
            data = load_object(line)
        except UnreadableLine as exc:
            return {"id": exc.case_id, "error": str(exc)}, UNREADABLE
        problem = id_problem(data.get("id"))
        if problem:
            return {"id": None, "error": problem}, INVALID
        case_id = data.get("id")
        try:
            case = parse_case(data)
            table = table_context(data)
        except CaseError as exc:
            return {"id": case_id, "error": str(exc)}, INVALID
        rules = case.rules or default_rules or "mcr"
        if default_rules and case.rules and case.rules != default_rules:
            return {"id": case_id, "error": f"case is for rules {show(case.rules)}, --rules says "
                                            f"{show(default_rules)}"}, INVALID
        if rules not in SCORERS:
            return {"id": case_id, "error": f"rules {show(rules)} cannot be scored yet; scorers: "
                                            f"{', '.join(SCORERS)}"}, INVALID
        try:
            if rules == "competition":
                return competition_result(case, data, table), SCORED
            if rules in ("liaoning", "jinzhou"):
                return northeast_result(case, data, rules, table), SCORED
        except ValueError as exc:
            return {"id": case_id, "error": str(exc)}, INVALID
        return mcr_result(case, "discarder" in data), SCORED
    except Exception as exc:                                # a bug of ours: this line's answer, not a crash
        return {"id": case_id, "error": f"internal error ({type(exc).__name__}): {exc}; please report"}, INTERNAL


def mcr_result(case: Case, with_payments: bool) -> dict[str, Any]:
    result = score(case.win)
    winner = case.win.seat_wind
    if not result.win:
        out: dict[str, Any] = {"id": case.id, "win": False, "reason": result.reason}
        if with_payments:
            out["payments"] = _by_wind(false_win_payments(winner))
        return out
    out = {"id": case.id, "win": True, "total": result.total, "total_without_flowers": result.total_without_flowers,
           "meets_minimum": result.meets_minimum,
           "fans": [{"name": fan.zh, "en": fan.en, "points": fan.points, "count": n} for fan, n in result.fans]}
    if with_payments:
        out["payments"] = _by_wind(win_payments(result, winner, None if case.win.self_drawn else case.discarder))
    return out


def _by_wind(deltas: list[int]) -> dict[str, int]:
    return {WIND_CODES[seat]: delta for seat, delta in enumerate(deltas)}


def competition_result(case: Case, data: dict[str, Any], table: dict[str, Any] | None = None) -> dict[str, Any]:
    from firmware.rules.competition.scorer import EXTRA_NAMES, FAN_NAMES, score_competition
    from firmware.rules.competition.settlement import WinRefused, false_win_payments, win_payments
    from firmware.rules.ruleset import load_ruleset

    cfg = load_ruleset("competition").competition
    assert cfg is not None
    result = score_competition(case.win, cfg)
    winner = case.win.seat_wind
    table = table if table is not None else table_context(data)
    if WIND_CODES[winner] in table["dead_hands"] and result.win:
        result.win = False
        result.reason = "相公: a dead hand (a discarded flower, a wrong count, a false win) may not win"
    wants = "discarder" in data
    if not result.win:
        out: dict[str, Any] = {"id": case.id, "win": False, "reason": result.reason}
        if wants:
            out["payments"] = _by_wind(false_win_payments(winner))
        return out
    out = {"id": case.id, "win": True, "total": result.total,
           "total_without_flowers": result.total - result.flower_points, "meets_minimum": result.meets_minimum,
           "fans": [{"name": FAN_NAMES[k], "key": k, "points": p, "count": 1} for k, p in result.fans],
           "extras": [{"name": EXTRA_NAMES[k], "key": k, "points": p, "count": n} for k, p, n in result.extras]}
    if not result.meets_minimum:
        out["reason"] = "no fan: 无番禁和牌"
    if wants:
        discarder = None if case.win.self_drawn else case.discarder
        try:
            deltas = win_payments(result, winner, discarder, cfg.settlement,
                                  robbed_kong=case.win.kong_win and not case.win.self_drawn,
                                  double=table["dealer_streak"] > 0, chips=table["chips"], liable=table["liable"])
            out["payments"] = _by_wind(deltas)
            out["breakdown"] = {
                "items": [{"item": FAN_NAMES[k], "points": p} for k, p in result.fans]
                + [{"item": EXTRA_NAMES[k], "points": p * n} for k, p, n in result.extras],
                "S": result.total, "double": table["dealer_streak"] > 0,
                "liable": WIND_CODES[table["liable"]] if table["liable"] is not None else None}
        except WinRefused as exc:
            out["refused"] = str(exc)
            out["payments"] = _by_wind(false_win_payments(winner))
    return out


def table_context(data: dict[str, Any]) -> dict[str, Any]:
    """The optional ``"table"`` context of a case (dealer streak, open seats, chips, liability, 跟庄, dead
    hands), every field of its exact JSON type; CaseError names the field at fault."""
    raw = data.get("table")
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise CaseError(f"field 'table' must be an object, got {describe(raw)}")
    winds = tuple(WIND_CODES)
    chips = raw.get("chips")
    if chips is not None:
        if not isinstance(chips, dict):
            raise CaseError(f"field 'table.chips' must be an object of seat winds to integers, got {describe(chips)}")
        unknown = [key for key in chips if key not in winds]
        if unknown:
            raise CaseError(f"field 'table.chips': {describe(unknown[0])} is not a seat wind (E, S, W or N)")
        chips = [_integer(chips, w, "table.chips", -MAX_CHIPS, MAX_CHIPS) for w in winds]
    liable = raw.get("liable")
    if liable is not None and not (isinstance(liable, str) and liable in winds):
        raise CaseError(f"field 'table.liable' must be a seat wind (E, S, W or N) or null, got {describe(liable)}")
    followed = raw.get("first_discard_followed")
    if followed is not None and not isinstance(followed, bool):
        raise CaseError(f"field 'table.first_discard_followed' must be true or false, got {describe(followed)}")
    return {"dealer_streak": _integer(raw, "dealer_streak", "table", 0, MAX_DEALER_STREAK),
            "open_seats": frozenset(winds.index(w) for w in _winds(raw, "open_seats")),
            "chips": chips,
            "liable": winds.index(liable) if liable is not None else None,
            "first_discard_followed": bool(followed),
            "dead_hands": _winds(raw, "dead_hands")}


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


def northeast_result(case: Case, data: dict[str, Any], rules_name: str,
                     table: dict[str, Any] | None = None) -> dict[str, Any]:
    from firmware.rules.northeast import TableContext, dealer_pays_each, score_northeast, settle
    from firmware.rules.ruleset import load_ruleset

    rules = load_ruleset(rules_name)
    result = score_northeast(case.win, rules)
    winner = case.win.seat_wind
    if not result.win:
        return {"id": case.id, "win": False, "reason": result.reason}
    out: dict[str, Any] = {"id": case.id, "win": True, "meets_minimum": result.legal,
                           "fans": [{"name": name, "points": n, "count": 1} for name, n in result.items]}
    if not result.legal:
        out["reason"] = result.reason
    if "discarder" in data and result.legal:
        table = table if table is not None else table_context(data)
        ctx = TableContext(dealer=0, open_seats=table["open_seats"] - {winner},
                           chips=tuple(table["chips"]) if table["chips"] else None)
        settlement = settle(case.win, result, winner, None if case.win.self_drawn else case.discarder, ctx, rules)
        deltas = settlement.deltas
        breakdown = {WIND_CODES[p]: [{"item": name, "n": n} for name, n in items]
                     for p, items in settlement.breakdown.items()}
        if table["first_discard_followed"] and rules.doubling and rules.doubling.follow_dealer_pays_each:
            follow = dealer_pays_each(0, rules.doubling.follow_dealer_pays_each)
            deltas = [a + b for a, b in zip(deltas, follow)]
            breakdown["跟庄"] = [{"item": "dealer pays each", "n": rules.doubling.follow_dealer_pays_each}]
        out["total"] = out["total_without_flowers"] = deltas[winner]
        out["payments"] = _by_wind(deltas)
        out["breakdown"] = breakdown
    return out
