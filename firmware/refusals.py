"""Why the table refuses what a person asked: a code and its values, worded where it is shown (never here).

The controller and the staff's desk are language-neutral: a refusal is a
:class:`Reason` with its values (:class:`Refusal`, a ``str`` whose text is
the code's own English, for the log, the command line and the fleet).  The
control socket's answer carries ``refusal`` (the code) and ``params`` (the
values) beside ``error`` (:meth:`Refusal.answer`); the web page words the
code in the page's language from :data:`TEXTS` (its messages are in the
page's catalogue: ``babel.cfg`` extracts this file).  A value named
``state`` is a controller state, ``moving`` a list of mechanisms, ``seat``
a seat (E, S, W, N) and ``fault`` a fault's code: where the refusal is
worded they are named in words, the fault by its text and hint
(``%(fault_text)s``, ``%(hint)s``).
"""

from __future__ import annotations

import enum
from typing import Any, Callable

from firmware.i18n import N_


class Reason(str, enum.Enum):
    SESSION_OVER = "session_over"
    HAND_IN_PLAY = "hand_in_play"
    ROUND_IN_PLAY = "round_in_play"
    PLAYERS_SHAPE = "players_shape"
    PLAYER_NAME = "player_name"
    NAMES_NOT_KEPT = "names_not_kept"
    CHIPS_RANGE = "chips_range"
    RULES_UNKNOWN = "rules_unknown"
    RULES_TILE_SET = "rules_tile_set"
    RULES_FIXED = "rules_fixed"
    GAME_NOT_KEPT = "game_not_kept"
    GAME_ENDED = "game_ended"
    GAME_END_NOT_KEPT = "game_end_not_kept"
    MINUTES_RANGE = "minutes_range"
    SESSION_NOT_KEPT = "session_not_kept"
    NO_SESSION = "no_session"
    NO_DESK = "no_desk"
    NEEDS_SERVICE = "needs_service"
    INTERLOCK = "interlock"
    STILL_MOVING = "still_moving"
    DISK_TIMED = "disk_timed"
    NOTHING_TO_ACK = "nothing_to_ack"
    NO_DATABASE = "no_database"


TEXTS: dict[Reason, str] = {
    Reason.SESSION_OVER: N_("the table session is over: open a session to play (the page, mjtable diag session "
                            "open MINUTES)"),
    Reason.HAND_IN_PLAY: N_("a hand is in play: do this between hands"),
    Reason.ROUND_IN_PLAY: N_("a tournament round's game is in play: the hall decides its games"),
    Reason.PLAYERS_SHAPE: N_("players: an object of the four seats E, S, W, N with a name each, or null"),
    Reason.PLAYER_NAME: N_("the name at seat %(seat)s: 1 to 40 printable characters"),
    Reason.NAMES_NOT_KEPT: N_("the names could not be written to the table database"),
    Reason.CHIPS_RANGE: N_("chips: a whole number from 1 to %(max)s"),
    Reason.RULES_UNKNOWN: N_("rule set %(rules)s cannot be loaded: %(problem)s"),
    Reason.RULES_TILE_SET: N_("rule set %(rules)s plays %(tiles)s tiles; this table's set has %(table_tiles)s (a "
                              "table plays the rule sets of its tile set)"),
    Reason.RULES_FIXED: N_("this table cannot switch its rule set"),
    Reason.GAME_NOT_KEPT: N_("the new game could not be written to the table database"),
    Reason.GAME_ENDED: N_("game %(game)s has ended already: the next hand starts a new one"),
    Reason.GAME_END_NOT_KEPT: N_("the game's end could not be written to the table database"),
    Reason.MINUTES_RANGE: N_("minutes: a whole number from 1 to %(max)s"),
    Reason.SESSION_NOT_KEPT: N_("the session could not be written to the table database"),
    Reason.NO_SESSION: N_("no table session is open"),
    Reason.NO_DESK: N_("this table has no staff's desk"),
    Reason.NEEDS_SERVICE: N_("motor tests need service mode (both lift keys at power-on); the table is: %(state)s"),
    Reason.INTERLOCK: N_("refused: %(fault_text)s (%(fault)s); %(hint)s"),
    Reason.STILL_MOVING: N_("still moving: %(moving)s; wait for the running test (or mjtable diag stop)"),
    Reason.DISK_TIMED: N_("the stopped disk run is still timed: the disk may run again in %(s)s s"),
    Reason.NOTHING_TO_ACK: N_("nothing to acknowledge (the table is: %(state)s)"),
    Reason.NO_DATABASE: N_("refused: the table database could not be opened (%(detail)s); fix the card or the path, "
                           "then restart the table"),
}

A_TEST = N_("a test")            # (what is moving when no mechanism is named)


def values(params: dict[str, Any], gettext: Callable[[str], str] = str, state: Callable[[str], str] = str,
           mechanism: Callable[[str], str] = str, seat: Callable[[str], str] = str) -> dict[str, Any]:
    """A refusal's values as its text takes them: ``state`` named by ``state``, ``moving`` (mechanisms) by
    ``mechanism``, ``seat`` (E, S, W, N) by ``seat``, ``fault`` with its text and hint from the registry (through
    ``gettext``)."""
    out = dict(params)
    if "seat" in out:
        out["seat"] = seat(str(out["seat"]))
    if "state" in out:
        out["state"] = state(str(out["state"]))
    if "moving" in out:
        out["moving"] = ", ".join(mechanism(str(m)) for m in out["moving"] or ()) or gettext(A_TEST)
    if "fault" in out:
        from firmware.faults import FaultCode

        try:
            code = FaultCode(out["fault"])
        except ValueError:
            out.update(fault_text="", hint="")
        else:
            out.update(fault_text=gettext(code.text), hint=gettext(code.hint))
    return out


class Refusal(str):
    """A refusal: the code's English (it is a ``str``), its :class:`Reason` and values (plain JSON values)."""

    code: Reason
    params: dict[str, Any]

    def __new__(cls, code: Reason, **params: Any) -> "Refusal":
        self = super().__new__(cls, TEXTS[code] % values(params))
        self.code, self.params = code, params
        return self

    def answer(self, **more: Any) -> dict[str, Any]:
        """The control socket's answer: ``error`` in English, ``refusal`` and ``params`` for the page's words."""
        return {"ok": False, "error": str(self), "refusal": self.code.value, "params": self.params, **more}


def part(why: BaseException | str) -> Any:
    """A value of a :func:`worded_answer` that is a reason itself (``not recorded: %(why)s``): its parts where it
    was made with them (said in the language too), else its English."""
    template, params = getattr(why, "template", None), getattr(why, "values", None)
    if isinstance(template, str) and isinstance(params, dict):
        return {"words": template, "params": _parts(params), "error": str(why)}
    return str(why)


def _parts(params: dict[str, Any]) -> dict[str, Any]:
    """Values of a worded error or text as an answer carries them: a value that is a reason itself (an error, a
    worded text: ``action 3 (…): %(why)s``) in its parts, as :func:`part` makes them."""
    return {k: part(v) if isinstance(v, BaseException) or hasattr(v, "template") else v for k, v in params.items()}


def _english(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v["error"] if isinstance(v, dict) and "words" in v else v for k, v in params.items()}


def worded_answer(template: str, /, **params: Any) -> dict[str, Any]:
    """An answer that is no refusal of the table's rules but a request it cannot take (a diag command's: no hand
    recorded, a side out of range): ``error`` the English, ``words`` its template and ``params`` its values (plain
    JSON, named as a refusal's are), so that where it is shown it is said in that language.  ``make i18n`` extracts
    the template into the command line's catalogue (``-k worded_answer``)."""
    return {"ok": False, "error": template % values(_english(params)), "words": template, "params": params}


def answer_of(why: BaseException | str, **more: Any) -> dict[str, Any]:
    """The answer of a request refused by an error or a reason's text: worded where it was made with its parts
    (:func:`firmware.i18n.worded`, :func:`~firmware.i18n.worded_text`: plain values), else its English alone."""
    template, params = getattr(why, "template", None), getattr(why, "values", None)
    if isinstance(template, str) and isinstance(params, dict):
        return {"ok": False, "error": str(why), "words": template, "params": _parts(params), **more}
    return {"ok": False, "error": str(why), **more}


def worded(answer: dict[str, Any], gettext: Callable[[str], str], state: Callable[[str], str] = str,
           mechanism: Callable[[str], str] = str, seat: Callable[[str], str] = str) -> str | None:
    """An answer's refusal in a language (``gettext``: its catalogue; ``state``, ``mechanism``: their names in
    it): its code's text, or the template of a :func:`worded_answer`; None when the answer carries neither (then
    its ``error`` is all there is)."""
    params = answer.get("params") if isinstance(answer.get("params"), dict) else {}
    try:
        code = Reason(answer.get("refusal"))
    except ValueError:
        words = answer.get("words")
        if not isinstance(words, str):
            return None
        text = words
    else:
        text = TEXTS[code]
    params = {k: (worded(v, gettext, state, mechanism, seat) or v.get("error")) if isinstance(v, dict) and "words" in v
              else v for k, v in params.items()}
    try:
        return gettext(text) % values(params, gettext, state, mechanism, seat)
    except (KeyError, TypeError, ValueError):            # (values missing or of another kind: said in English)
        return None
