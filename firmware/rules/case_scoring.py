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
from typing import Any, BinaryIO, Callable, Iterable, Iterator, TextIO

from firmware.rules.case_format import (MAX_DEPTH, NOTES, ONE_CASE_PER_LINE, CaseError, UnreadableLine, describe,
                                        id_problem, load_object, nesting, parse_case, valid_id)
from firmware.rules.case_json import case_json
from firmware.rules.case_record import case_outcome, case_result, outcome_answer, record_result, table_context
from firmware.rules.hand_record import BadRecord, HandRecord
from firmware.rules.names import DEFAULT, RULE_NAMES
from firmware.rules.registry import load_ruleset
from firmware.tiles.tile import show
MAX_LINE_BYTES = 64 * 1024              # a case is a few hundred bytes
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024   # read ahead at most this much to tell a multi-line JSON document
MAX_ERROR_CHARS = 1000
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


CHUNK_BYTES = 64 * 1024                # a binary stream is read this much at a time (at most)


def iter_lines(source: BinaryIO | TextIO | Iterable[str | bytes], limit: int = MAX_LINE_BYTES,
               before_wait: Callable[[], object] | None = None) -> Iterator[bytes | TooLong]:
    """The lines of ``source`` as bytes without the newline (a text stream is UTF-8 encoded; a lone surrogate
    then fails to decode like a bad byte).  A stream is read with ``readline(limit + 1)``: a line over
    ``limit`` bytes is dropped chunk by chunk to its newline and comes out as :class:`TooLong`, so memory
    stays bounded whatever the input.  A byte-order mark before the first line is dropped.

    A binary stream with ``read1`` (a file, standard input) is read in chunks of what is there, at most
    CHUNK_BYTES, and cut into lines here, with the same answers; ``before_wait`` is called before each read
    that may wait for input (the caller's answers so far then go out: one write a chunk, not one a line)."""
    read1 = getattr(source, "read1", None)
    if read1 is not None and before_wait is not None:
        yield from _chunked_lines(read1, limit, before_wait)
        return
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


def _chunked_lines(read1: Callable[[int], bytes], limit: int,
                   before_wait: Callable[[], object]) -> Iterator[bytes | TooLong]:
    """:func:`iter_lines` of a binary stream read by ``read1``: the same lines, TooLong sizes and BOM rule."""
    first = True
    rest = b""                  # the start of a line whose newline has not come yet (at most ``limit`` bytes)
    dropping = -1               # >= 0: the bytes so far of a line over the limit, being dropped to its newline
    while True:
        before_wait()
        chunk = read1(CHUNK_BYTES)
        if not chunk:
            break
        start = 0
        if dropping >= 0:
            end = chunk.find(b"\n")
            if end < 0:
                dropping += len(chunk)
                continue
            first = False
            yield TooLong(dropping + end)
            dropping, start = -1, end + 1
        elif rest:
            end = chunk.find(b"\n")
            if end < 0 or len(rest) + end > limit:
                if len(rest) + (len(chunk) if end < 0 else end) <= limit:      # still short, no newline yet
                    rest += chunk
                    continue
                if end < 0:
                    dropping, rest = len(rest) + len(chunk), b""
                    continue
                first = False
                yield TooLong(len(rest) + end)
                rest, start = b"", end + 1
            else:
                line, rest, start = rest + chunk[:end], b"", end + 1
                raw = line[:-1] if line.endswith(b"\r") else line
                raw, first = (raw.removeprefix(_BOM) if first else raw), False
                yield raw
        find = chunk.find
        while True:
            end = find(b"\n", start)
            if end < 0:
                break
            if end - start > limit:
                first = False
                yield TooLong(end - start)
            else:
                raw = chunk[start:end - 1] if end > start and chunk[end - 1] == 13 else chunk[start:end]
                raw, first = (raw.removeprefix(_BOM) if first else raw), False
                yield raw
            start = end + 1
        if start < len(chunk):
            if len(chunk) - start > limit:
                dropping = len(chunk) - start
            else:
                rest = chunk[start:]
    if dropping >= 0:
        yield TooLong(dropping)
    elif rest:
        if len(rest) > limit:
            yield TooLong(len(rest))
        else:
            raw = _chomp(rest)
            yield raw.removeprefix(_BOM) if first else raw


def _encode(chunk: str | bytes) -> bytes:
    return chunk.encode("utf-8", "surrogatepass") if isinstance(chunk, str) else bytes(chunk)


def _chomp(raw: bytes) -> bytes:
    raw = raw[:-1] if raw.endswith(b"\n") else raw
    return raw[:-1] if raw.endswith(b"\r") else raw


def score_stream(lines: BinaryIO | TextIO | Iterable[str | bytes], out: TextIO, rules: str | None = None) -> int:
    """Score every non-blank line; returns how many lines were answered (see :func:`score_input`)."""
    return score_input(lines, out, rules).answered


def score_input(source: BinaryIO | TextIO | Iterable[str | bytes], out: TextIO,
                rules: str | None = None, answers: Answers | None = None) -> Summary:
    """Write one strict-JSON answer per non-blank line of ``source`` to ``out``, in order (blank lines are
    skipped); ``answers`` (default :func:`answer_lines`) turns the lines into answers.  When the first
    non-blank line opens a JSON array or object that later lines close, and the whole parses, the input is
    one JSON document, not JSON lines: one error answer says so, and nothing more is read."""
    summary = Summary()
    chunked = getattr(source, "read1", None) is not None
    lines = iter_lines(source, before_wait=out.flush if chunked else None)
    ahead, document = _read_ahead(lines)
    if document:
        summary.document = True
        _write(out, {"id": None, "error": document})
        summary.answered = 1
        return summary
    write, flush = out.write, (out.flush if not chunked else None)     # (chunked: flushed before each wait)
    for text, answered, unreadable, invalid in (answers or answer_lines)(chain(ahead, lines), rules):
        write(text)
        if flush is not None:
            flush()
        summary.answered += answered
        summary.unreadable += unreadable
        summary.invalid += invalid
    out.flush()
    return summary


# Answers to consecutive lines: their JSON lines (each with its newline), how many, how many of them unreadable
# (or an internal error), how many not valid cases
Answered = tuple[str, int, int, int]
# What answers a stream's lines in order: :func:`answer_lines` here (a line at a time), or the same spread over
# worker processes (a chunk of lines at a time)
Answers = Callable[[Iterator[bytes | TooLong], str | None], Iterator[Answered]]


def answer_lines(items: Iterable[bytes | TooLong], rules: str | None) -> Iterator[Answered]:
    """The answer to each line, in order, one at a time (:func:`answer_chunk` of each)."""
    for item in items:
        yield answer_chunk((item,), rules)


def answer_chunk(items: Iterable[bytes | TooLong], rules: str | None) -> Answered:
    """The answers to consecutive lines, together (a worker's job: one text to send back, not one a line)."""
    texts: list[str] = []
    unreadable = invalid = 0
    for item in items:
        answered = answer_item(item, rules)
        if answered is not None:
            text, verdict = answered
            texts.append(text)
            unreadable += verdict in (UNREADABLE, INTERNAL)
            invalid += verdict == INVALID
    return ("\n".join(texts) + "\n" if texts else ""), len(texts), unreadable, invalid


def answer_item(item: bytes | TooLong, rules: str | None) -> tuple[str, str] | None:
    """(the answer's JSON text, its verdict) for one line as :func:`iter_lines` gives it; None for a blank line
    (which gets no answer).  Never raises."""
    if isinstance(item, TooLong):
        answer, verdict = {"id": None, "error": f"line too long: {item.size} bytes, the limit is "
                                                f"{MAX_LINE_BYTES} bytes; {ONE_CASE_PER_LINE}"}, UNREADABLE
    elif not item.strip(_BLANK):
        return None
    else:
        try:
            text = item.decode("utf-8")
        except UnicodeDecodeError as exc:
            answer, verdict = {"id": None, "error": f"not UTF-8: byte 0x{item[exc.start]:02x} at byte "
                                                    f"{exc.start + 1} of the line"}, UNREADABLE
        else:
            answer, verdict = _answer(text, rules, True)
    return (answer if type(answer) is str else to_json(answer)), verdict


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


# json.dumps(answer, ensure_ascii=False, allow_nan=False), its encoder made once rather than once a line
_ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def to_json(answer: dict[str, Any]) -> str:
    """An answer as one line of strict JSON (no NaN or Infinity, valid UTF-8), whatever it holds."""
    if not valid_id(answer.get("id")):
        answer = {"id": None, "error": f"internal error: the answer's id is {describe(answer['id'])}"}
    error = answer.get("error")
    if isinstance(error, str) and len(error) > MAX_ERROR_CHARS:
        answer = dict(answer, error=error[:MAX_ERROR_CHARS] + f"… ({len(error)} characters)")
    try:
        text = _ENCODE(answer)
    except (TypeError, ValueError) as exc:
        return json.dumps({"id": None, "error": f"internal error: the answer is not JSON ({type(exc).__name__})"})
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:                              # a lone surrogate: escaped, still strict JSON
        text = json.dumps(answer, allow_nan=False)
    if "\x85" in text or "\u2028" in text or "\u2029" in text:      # (rare: three scans beat a translate)
        return text.translate(_LINE_BREAKS)
    return text


def _record_answer(case_id: Any, data: dict[str, Any], default_rules: str | None) -> tuple[dict[str, Any], str]:
    """A line holding a whole hand's record (``{"id", "record": {...}}``, and the rule set's switches in play in
    ``options``): settled as it is."""
    extra = sorted(k for k in data if k not in ("id", "record", "options", *NOTES))
    if extra:
        return {"id": case_id, "error": f"a line with a 'record' holds 'id', 'record', 'options' and notes "
                                        f"({', '.join(NOTES)}), not {extra[0]!r}"}, INVALID
    try:
        record = HandRecord.from_json(data["record"])
    except BadRecord as exc:
        return {"id": case_id, "error": f"field 'record': {exc}"}, INVALID
    if record.rules not in RULE_NAMES:
        return {"id": case_id, "error": f"rules {show(record.rules)} cannot be scored yet; scorers: "
                                        f"{', '.join(RULE_NAMES)}"}, INVALID
    if default_rules and record.rules != default_rules:
        return {"id": case_id, "error": f"the record is for rules {show(record.rules)}, --rules says "
                                        f"{show(default_rules)}"}, INVALID
    options = data.get("options") or {}
    try:
        if not isinstance(options, dict):
            raise ValueError("must be an object of the rule set's switches")
        ruleset = load_ruleset(record.rules).with_options(options)
    except ValueError as exc:
        return {"id": case_id, "error": f"field 'options': {exc}"}, INVALID
    try:
        return record_result(case_id, ruleset, record), SCORED
    except BadRecord as exc:
        return {"id": case_id, "error": f"field 'record': {exc}"}, INVALID


def score_line(line: str, default_rules: str | None = None) -> dict[str, Any]:
    """The answer to one line: a result, or ``{"id", "error"}``; never raises."""
    answer = _answer(line, default_rules)[0]
    assert not isinstance(answer, str)
    return answer


def _answer(line: str, default_rules: str | None, as_text: bool = False) -> tuple[dict[str, Any] | str, str]:
    """(answer, verdict): SCORED, INVALID (a JSON object that is not a valid case), UNREADABLE or INTERNAL;
    ``as_text``: a scored case's answer may be given as its JSON text already (``to_json``'s)."""
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
        if "record" in data:
            return _record_answer(case_id, data, default_rules)
        try:
            case = parse_case(data)
            table = table_context(data)
        except CaseError as exc:
            return {"id": case_id, "error": str(exc)}, INVALID
        rules = case.rules or default_rules or DEFAULT
        if default_rules and case.rules and case.rules != default_rules:
            return {"id": case_id, "error": f"case is for rules {show(case.rules)}, --rules says "
                                            f"{show(default_rules)}"}, INVALID
        if rules not in RULE_NAMES:
            return {"id": case_id, "error": f"rules {show(rules)} cannot be scored yet; scorers: "
                                            f"{', '.join(RULE_NAMES)}"}, INVALID
        try:
            if not as_text:
                return case_result(case, load_ruleset(rules), data, table), SCORED
            wants = "discarder" in data
            verdict, payments = case_outcome(case, load_ruleset(rules), table, wants)
            text = case_json(case, verdict, payments, wants)
            return (text if text is not None else outcome_answer(case, verdict, payments, wants)), SCORED
        except (CaseError, BadRecord) as exc:
            return {"id": case_id, "error": str(exc)}, INVALID
    except Exception as exc:                                # a bug of ours: this line's answer, not a crash
        return {"id": case_id, "error": f"internal error ({type(exc).__name__}): {exc}; please report"}, INTERNAL
