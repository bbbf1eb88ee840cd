"""The fleet's message envelopes: strict compact JSON, ids (``msg_id``, ``boot_id``), size limits, decoding.

Every message is one JSON object with ``v`` (the envelope version), ``kind``,
``site``, ``table``, ``boot_id`` and ``ts`` (the table's wall clock, Unix
seconds, when it was published).  Events add ``msg_id``, ``seq`` and
``data``; retained leaves add ``data``.

* ``seq`` is the table's persisted event counter (the outbox's row number):
  it only grows, across reboots and power cuts.
* ``msg_id`` is ``<table>:<db_id>:<seq>``: ``db_id`` is drawn once when the
  table database gets its outbox, so a database that was moved aside and
  started afresh (seq from 1 again) never repeats an id.  A republished
  event keeps its ``msg_id``: consumers de-duplicate on it.
* ``boot_id`` is ``<db_id>-<boot>``, ``boot`` the persisted boot counter.
  An event carries the boot that wrote it (not the one that republished it).

Sizes are bounded both ways: what the table sends (an event's data over
:data:`MAX_EVENT_BYTES` is replaced by a stub saying so, never refused inside
the caller's transaction) and what anyone decodes (:func:`decode` refuses
oversized, non-UTF-8, non-object, too deeply nested or non-finite JSON).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from firmware.event_json import MAX_DEPTH, dumps, encode_data

VERSION = 1
MAX_RETAINED_BYTES = 32 * 1024       # a retained leaf's data
MAX_COMMAND_BYTES = 8 * 1024         # a command as received
MAX_MESSAGE_BYTES = 128 * 1024       # anything a consumer decodes


class MessageError(ValueError):
    """A payload that is not a valid fleet message (the text says why)."""


def msg_id(table: str, db_id: str, seq: int) -> str:
    return f"{table}:{db_id}:{seq}"


def parse_msg_id(text: str) -> tuple[str, str, int] | None:
    """(table, db_id, seq) of a ``msg_id``; None if it is not one of ours."""
    parts = text.split(":") if isinstance(text, str) else []
    if len(parts) != 3 or not parts[2].isdigit():
        return None
    return parts[0], parts[1], int(parts[2])


def boot_id(db_id: str, boot: int) -> str:
    return f"{db_id}-{boot}"


@dataclass(frozen=True)
class Source:
    """Who publishes: the site, the table, this boot."""

    site: str
    table: str
    boot_id: str

    def header(self, kind: str, ts: float) -> dict[str, Any]:
        return {"v": VERSION, "kind": kind, "site": self.site, "table": self.table, "boot_id": self.boot_id,
                "ts": round(ts, 3)}


def event(source: Source, kind: str, seq: int, db_id: str, row_boot: int, data_text: str, ts: float) -> bytes:
    """An event from an outbox row (``data_text`` is the row's JSON, embedded as it is)."""
    head = source.header(kind, ts)
    head.update(msg_id=msg_id(source.table, db_id, seq), seq=seq, boot_id=boot_id(db_id, row_boot))
    return (dumps(head)[:-1] + ',"data":' + data_text + "}").encode("utf-8")


def retained(source: Source, leaf: str, data: Any, ts: float) -> bytes:
    """A retained leaf (``meta``, ``state``, ``faults``, ``counters``)."""
    head = source.header(leaf, ts)
    return (dumps(head)[:-1] + ',"data":' + encode_data(data, MAX_RETAINED_BYTES) + "}").encode("utf-8")


def avail(source: Source, online: bool, boot: int, session: int, ts: float,
          birth: dict[str, Any] | None = None) -> bytes:
    """``avail``: online or offline, naming the boot and the connection (session) it is about.  The offline one is
    the connection's Will: a consumer applies an offline only to the session it names.  An online one is the
    table's birth and carries ``birth``: who it is and where its events resume (see docs/fleet.md, Lifecycle)."""
    head = source.header("avail", ts)
    head["data"] = {"online": online, "boot": boot, "session": session, **(birth or {})}
    return dumps(head).encode("utf-8")


def response(verb: str, ok: bool, error: str | None = None, result: Any = None) -> bytes:
    """The answer to a command, on the requester's response topic with its correlation data."""
    return dumps({"v": VERSION, "kind": "response", "verb": verb, "ok": ok, "error": error,
                  "result": json.loads(encode_data(result, MAX_RETAINED_BYTES))}).encode("utf-8")


def decode(payload: bytes, max_bytes: int = MAX_MESSAGE_BYTES) -> dict[str, Any]:
    """A received payload as a JSON object; MessageError says what is wrong with it."""
    if len(payload) > max_bytes:
        raise MessageError(f"{len(payload)} bytes, over the limit of {max_bytes}")
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MessageError(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    _check_depth(text)                               # (before parsing: no deep recursion)
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except ValueError as exc:
        raise MessageError(f"not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise MessageError("not a JSON object")
    return value


def _check_depth(text: str) -> None:
    depth, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise MessageError(f"nested deeper than {MAX_DEPTH}")
        elif ch in "]}":
            depth -= 1


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")
