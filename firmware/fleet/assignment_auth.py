"""The hall's signed assignment of a table for a tournament round: signing (the hall) and checking (the table).

The hall's tournament service publishes it **retained** on the table's
assignment topic, ``mj/v1/<site>/tbl/<table>/assign``, signed exactly as a
command (:mod:`firmware.fleet.command_auth`: the same keys, the same
canonical JSON, ``issued_at`` / ``expires_at``)::

    {"v": 1, "kind": "assignment", "site": "hall1", "table": "t07",
     "assignment": {"id": "spring-open/2/t07", "event": "spring-open", "round": 2, "rules": "mcr", "hands": 4,
                    "seats": {"E": "Alice", "S": "Bob", "W": "Chen", "N": "Dong"}, "ends_at": 1799999999.0},
     "issued_at": 1750000000.0, "expires_at": 1750086400.0, "alg": "ed25519", "key_id": "5f0c...",
     "sig": "base64..."}

A retained message is delivered again at every reconnect, so it carries no
single-use nonce: the table takes it once per ``id`` (the same id again
changes nothing) and refuses it once ``expires_at`` has passed unless it
has that id already.  It may live up to :data:`MAX_ASSIGNMENT_TTL_S` (a
round is hours, not the seconds of a command).  An empty retained payload
withdraws the table's assignment waiting.

:class:`AssignmentVerifier` refuses, with a one-line reason (the table logs
it once, counts it and shows it on its status, ``assignment: refused:
...``): a payload that is not JSON, a field missing or of the wrong type,
another version or kind, another site or table (of the message, or of the
assignment's id), an unknown key, a bad signature, an expired assignment
(with :data:`~firmware.fleet.command_auth.CLOCK_SKEW_S` of tolerance), one
issued in the future, one living too long, and bad assignment data
(:func:`firmware.game.assignment.parse_assignment`).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, Callable

from firmware.fleet.command_auth import CLOCK_SKEW_S, MAX_TIME_S, CommandRefused, SigningKey, VerifyKey, \
    signed_bytes, verify_signature
from firmware.fleet.messages import MAX_COMMAND_BYTES, MessageError, decode, dumps
from firmware.game.assignment import Assignment, AssignmentError, parse_assignment

MAX_ASSIGNMENT_TTL_S = 7 * 24 * 3600.0
KIND = "assignment"


class AssignmentRefused(Exception):
    """An assignment the table does not take; the text is the reason."""


def sign_assignment(key: SigningKey, *, site: str, table: str, assignment: dict[str, Any], issued_at: float,
                    expires_at: float) -> bytes:
    """The signed payload the hall publishes, retained, on ``mj/v1/<site>/tbl/<table>/assign`` (``issued_at`` and
    ``expires_at``: the hall's wall clock, Unix seconds).  The assignment's data is published as given (the table
    checks it)."""
    body = {"v": 1, "kind": KIND, "site": site, "table": table, "assignment": assignment,
            "issued_at": issued_at, "expires_at": expires_at, "alg": key.alg, "key_id": key.key_id}
    body["sig"] = base64.b64encode(key.sign(signed_bytes(body))).decode()
    return dumps(body).encode("utf-8")


@dataclass
class AssignmentVerifier:
    """Checks the assignments of one table (``wall_clock_s``: Unix seconds, injected)."""

    site: str
    table: str
    keys: list[VerifyKey]
    wall_clock_s: Callable[[], float]

    def verify(self, payload: bytes, known_id: Callable[[str], bool] = lambda _id: False) -> Assignment:
        """The assignment, or AssignmentRefused saying why.  ``known_id(id)``: the table has this id already (taken
        or played): then an expired one is no refusal (the retained message outlives its ``expires_at``)."""
        try:
            body = decode(payload, MAX_COMMAND_BYTES)
        except MessageError as exc:
            raise AssignmentRefused(f"not an assignment: {exc}") from None
        for name, kind in (("v", int), ("kind", str), ("site", str), ("table", str), ("assignment", dict),
                           ("alg", str), ("key_id", str), ("sig", str)):
            if not isinstance(body.get(name), kind) or isinstance(body.get(name), bool):
                what = "object" if kind is dict else kind.__name__
                raise AssignmentRefused(f"field '{name}' missing or not a {what}")
        for name in ("issued_at", "expires_at"):
            value = body.get(name)
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise AssignmentRefused(f"field '{name}' missing or not a number")
            if not -MAX_TIME_S <= value <= MAX_TIME_S:
                raise AssignmentRefused(f"field '{name}' out of range (Unix seconds, at most {MAX_TIME_S:.0f})")
        extra = set(body) - {"v", "kind", "site", "table", "assignment", "issued_at", "expires_at", "alg", "key_id",
                             "sig"}
        if extra:
            raise AssignmentRefused(f"unknown field '{sorted(extra)[0][:32]}'")
        if body["v"] != 1 or body["kind"] != KIND:
            raise AssignmentRefused(f"version {body['v']} kind {body['kind'][:32]!r} (this table reads 1, "
                                    f"'{KIND}')")
        if body["site"] != self.site or body["table"] != self.table:
            raise AssignmentRefused(f"addressed to table {body['table'][:64]!r} of site {body['site'][:64]!r}, "
                                    f"this is {self.table!r} of {self.site!r}")
        try:
            verify_signature(body, self.keys)
        except CommandRefused as exc:
            raise AssignmentRefused(str(exc)) from None
        try:
            assignment = parse_assignment(body["assignment"])
        except AssignmentError as exc:
            raise AssignmentRefused(str(exc)) from None
        if assignment.table != self.table:
            raise AssignmentRefused(f"assignment {assignment.id!r} is for table {assignment.table!r}, this is "
                                    f"{self.table!r}")
        if known_id(assignment.id):
            return assignment                        # (this table has it: a redelivery, whatever its age)
        now = self.wall_clock_s()
        issued, expires = float(body["issued_at"]), float(body["expires_at"])
        if expires < now - CLOCK_SKEW_S:
            raise AssignmentRefused(f"expired {now - expires:.0f} s ago")
        if issued > now + CLOCK_SKEW_S:
            raise AssignmentRefused(f"issued {issued - now:.0f} s in the future (clocks apart?)")
        if not 0 < expires - issued <= MAX_ASSIGNMENT_TTL_S:
            raise AssignmentRefused(f"lives {expires - issued:g} s (from 0 to {MAX_ASSIGNMENT_TTL_S:g} s allowed)")
        return assignment
