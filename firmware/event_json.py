"""Strict compact JSON for what the table keeps and sends (events, retained leaves): never raising, bounded.

Keys are sorted so that equal values give equal bytes; NaN and Infinity
are not JSON (a non-finite number becomes null); values JSON cannot carry
become their text; data nested deeper than :data:`MAX_DEPTH` or larger than
a limit becomes a stub saying so.  The outbox encodes every event with it,
inside the transaction of what the event reports, so it must never raise.
"""

from __future__ import annotations

import enum
import json
import math
from typing import Any

MAX_EVENT_BYTES = 64 * 1024          # an event's data (a hand's record and payments is a few KB)
MAX_DEPTH = 32


def dumps(value: Any) -> str:
    """Strict compact JSON (no NaN or Infinity; keys sorted so equal values give equal bytes)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def encode_data(value: Any, limit_bytes: int = MAX_EVENT_BYTES) -> str:
    """An event's or a leaf's data as JSON text, never raising: values JSON cannot carry become their text,
    non-finite numbers null, and data over ``limit_bytes`` a stub ``{"truncated": true, "bytes": N}``."""
    try:
        text = dumps(plain(value, 0))
    except (TypeError, ValueError, RecursionError) as exc:
        return dumps({"unencodable": str(exc)[:200]})
    size = len(text.encode("utf-8"))
    if size > limit_bytes:
        return dumps({"truncated": True, "bytes": size})
    return text


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON can carry it (see the module's docstring); ValueError past :data:`MAX_DEPTH`."""
    if depth > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH}")
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v, depth + 1) for v in value]
    if isinstance(value, enum.Enum):
        return plain(value.value, depth + 1)
    return str(value)
