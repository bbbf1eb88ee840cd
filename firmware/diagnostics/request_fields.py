"""Checking a technician's request fields before anything moves: a field of the wrong type is answered, never obeyed."""

from __future__ import annotations

import math
from typing import Any, Callable

from firmware.i18n import worded

Reply = Callable[[dict[str, Any]], None]     # (how a request is answered: called once with the answer)


class BadField(ValueError):
    """A request field of the wrong type: answered with the reason, nothing moves."""


def requested_by(request: dict) -> str:
    """Who asked (the web page names its user, the fleet its issuer; else the technician's socket)."""
    by = request.get("by")
    return by[:64] if isinstance(by, str) and by.isprintable() and by else "technician"


def seconds_of(request: dict, key: str, default: float | None) -> Any:
    """A request's number of seconds: finite, or the default when it is not there."""
    value = request.get(key)
    if value is None:
        return default
    try:
        seconds = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan
    except OverflowError:
        seconds = math.nan
    if not math.isfinite(seconds):
        raise worded(BadField, "%(key)s: a number of seconds, not %(got)s", key=key, got=f"{value!r:.60}")
    return seconds


def whole_of(request: dict, key: str, default: int) -> int:
    """A request's count: a whole number, or the default when it is not there (the test checks the range)."""
    value = request.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        if not (isinstance(value, float) and value.is_integer()):
            raise worded(BadField, "%(key)s: a whole number, not %(got)s", key=key, got=f"{value!r:.60}")
        value = int(value)
    return value
