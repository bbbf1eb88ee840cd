"""The staff's requests of a table: the table session (开台), the names at the seats, a game's start and end."""

from __future__ import annotations

from typing import TYPE_CHECKING

from firmware.game.staff import StaffError
from firmware.i18n import worded
from firmware.refusals import Reason, Refusal
from firmware.diagnostics.request_fields import BadField, Reply, requested_by

if TYPE_CHECKING:
    from firmware.game.session import TableSession
    from firmware.game.staff import Staff



def _staff(session: "TableSession", reply: Reply) -> "Staff | None":
    """The table's staff desk, or the refusal when this table has none."""
    staff = session.staff
    if staff is None:
        reply(Refusal(Reason.NO_DESK).answer())
    return staff


def session_request(session: "TableSession", request: dict, reply: Reply) -> None:
    """``{"action": "open", "minutes": N}``, ``{"action": "close"}`` or ``{"action": "status"}`` (default)."""
    staff = _staff(session, reply)
    if staff is None:
        return
    action, by = request.get("action", "status"), requested_by(request)
    try:
        if action == "open":
            answer = staff.open(request.get("minutes"), by)
        elif action == "close":
            answer = staff.close(by)
        elif action == "status":
            answer = staff.status()
        else:
            raise worded(BadField, "session: action is open, close or status")
    except StaffError as exc:
        reply(exc.refusal.answer())
        return
    reply({"ok": True, "session": answer, **({"sessions": staff.sessions(10)} if action == "status" else {})})


def players_request(session: "TableSession", request: dict, reply: Reply) -> None:
    """The names at the seats: ``{"players": {"E": ..., "S": ..., "W": ..., "N": ...}}`` sets them, ``null``
    clears them, no field reads them."""
    staff = _staff(session, reply)
    if staff is None:
        return
    if "players" not in request:
        reply({"ok": True, "players": staff.players})
        return
    try:
        reply({"ok": True, "players": staff.set_players(request["players"], requested_by(request))})
    except StaffError as exc:
        reply(exc.refusal.answer())


def game_request(session: "TableSession", request: dict, reply: Reply) -> None:
    """``{"action": "start", "rules": NAME?, "chips": N?}`` or ``{"action": "end"}`` (between hands)."""
    staff = _staff(session, reply)
    if staff is None:
        return
    action, rules, chips = request.get("action"), request.get("rules"), request.get("chips")
    if rules is not None and not isinstance(rules, str):
        raise worded(BadField, "game: rules is a rule set's name")
    try:
        if action == "start":
            answer = staff.start_game(rules, chips, requested_by(request))
        elif action == "end":
            answer = staff.end_game(requested_by(request))
        else:
            raise worded(BadField, "game: action is start or end")
    except StaffError as exc:
        reply(exc.refusal.answer())
        return
    reply({"ok": True, "game": answer})
