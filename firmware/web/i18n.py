"""The web page's languages: Simplified Chinese (the default) and English, through a gettext catalogue.

The messages are English in the code and the templates (``_()``,
``ngettext()``, ``N_()`` for the word tables below); Babel extracts them
(``babel.cfg``, ``make i18n``) into ``locale/messages.pot``, the
translations are ``locale/LANG/LC_MESSAGES/messages.po`` and the compiled
``.mo`` ship in the wheel (a test checks they agree); the table reads them
with the standard library's :mod:`gettext` (Babel is a tool of the build,
not a dependency of the table).  A fault's text and hint are the
registry's (``firmware/faults.py``): :func:`extract_faults` is the
extractor that puts them in the catalogue too.

A request's language (:func:`choose`): the ``mjtable_lang`` cookie the
page's switch sets, else the browser's ``Accept-Language``, else zh-CN.
The word tables (:func:`words`) turn every identifier a status carries (a
state, a sensor, a mechanism, a reader counter, a seat) into words; the
page's script gets them as JSON, so it never shows an identifier either.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import Any, Callable, Iterator

from firmware.i18n import LOCALES, N_, catalogue, locale_of_tag

log = logging.getLogger(__name__)

__all__ = ["LOCALES", "N_"]
DEFAULT = "zh_CN"
LANG_COOKIE = "mjtable_lang"
THEME_COOKIE = "mjtable_theme"
THEMES = ("auto", "light", "dark")
HTML_LANG = {"zh_CN": "zh-CN", "en": "en"}
LANGUAGE_NAMES = {"zh_CN": "中文", "en": "English"}     # (each in its own language: never translated)
SIDES = 4
WINDS = "ESWN"


# -- what a status carries, in words ---------------------------------------------------------------------
STATES = {                   # short: they name the boxes of the state diagram too
    "boot": N_("Starting"), "service": N_("Service mode"), "homing": N_("Homing"), "idle": N_("Idle"),
    "stacking": N_("Shuffling"), "paused": N_("Paused"), "ready": N_("Walls ready"), "raising": N_("Raising walls"),
    "dice": N_("Roll the dice"), "in_play": N_("Playing"), "rejected": N_("Walls rejected"),
    "center_up": N_("Centre rising"), "open": N_("Push tiles in"), "center_down": N_("Centre lowering"),
    "hold": N_("Held"), "latched": N_("Stopped"),
}
STATE_HINTS = {              # what the people at the table do next, where they do something
    "paused": N_("Add the missing tiles, then press a lift key."),
    "ready": N_("Press a lift key to raise the walls."),
    "dice": N_("The dealer presses the dice key."),
    "rejected": N_("Take out the tiles named, then press a lift key."),
    "open": N_("Push the tiles into the centre, then press a lift key."),
    "hold": N_("Clear the cause, then press a lift key."),
    "latched": N_("Call a technician."),
    "service": N_("A technician is testing the table."),
}
STATE_TONE = {"boot": "busy", "service": "service", "homing": "busy", "idle": "calm", "stacking": "busy",
              "paused": "warn", "ready": "go", "raising": "busy", "dice": "go", "in_play": "play", "rejected": "warn",
              "center_up": "busy", "open": "go", "center_down": "busy", "hold": "warn", "latched": "fault"}
POSITIONS = (N_("East"), N_("South"), N_("West"), N_("North"))          # a side's name when nobody is named
SEAT_WINDS = (N_("East wind"), N_("South wind"), N_("West wind"), N_("North wind"))   # its seat this hand
ROUNDS = (N_("East round"), N_("South round"), N_("West round"), N_("North round"))
TIERS = {"latched": N_("needs a technician"), "hold": N_("holds the table"), "recoverable": N_("recovers by itself")}
ROUND_STATES = {"playing": N_("playing"), "ended": N_("over"), "pending": N_("waiting for the game in play to end")}
MECHANISMS = {
    "stacker0": N_("Stacking head 1"), "stacker1": N_("Stacking head 2"), "stacker2": N_("Stacking head 3"),
    "stacker3": N_("Stacking head 4"), "wall_lift0": N_("Wall lift 1"), "wall_lift1": N_("Wall lift 2"),
    "wall_lift2": N_("Wall lift 3"), "wall_lift3": N_("Wall lift 4"), "center_lift": N_("Centre lift"),
    "turntable": N_("Turntable"), "dice": N_("Dice"),
}
TESTS = {"stackers": N_("All stacking heads"), "lifts": N_("All wall lifts"), "center": N_("Centre lift"),
         "disk": N_("Turntable"), "dice": N_("Dice")}
SENSORS = {
    "center_up": N_("Centre up"), "center_down": N_("Centre down"), "supply_ok": N_("Power supply good"),
    "key_reset": N_("Reset key"), "lid": N_("Service lid open"),
}
SENSOR_SERIES = {           # a sensor per side: its name and the side's number (1 to 4)
    "stacker_home": N_("Stacking head %(n)s home"), "tile_in": N_("Tile in head %(n)s"),
    "feed_full": N_("Feed %(n)s full"), "lift_home": N_("Wall lift %(n)s down"),
    "key_lift": N_("Lift key %(n)s"), "key_dice": N_("Dice key %(n)s"),
}
READER = {
    "frames_ok": N_("Messages read"), "crc_errors": N_("Damaged messages"), "resyncs": N_("Resynchronised"),
    "noise_bytes": N_("Noise bytes"), "drops": N_("Dropped"), "unexpected_replies": N_("Unexpected replies"),
    "unknown_messages": N_("Unknown messages"), "bad_payloads": N_("Bad contents"), "not_tiles": N_("Tags not tiles"),
    "tags": N_("Tiles read"), "heartbeats": N_("Heartbeats"), "retries": N_("Retries"),
    "commands_failed": N_("Commands failed"), "link_losses": N_("Link losses"), "reconnects": N_("Reconnects"),
    "event_gaps": N_("Gaps in events"), "events_lost": N_("Events lost"), "overflows": N_("Overflows"),
    "antenna_faults": N_("Antenna faults"), "board_errors": N_("Board errors"),
}
TRIGGERS = {
    "acknowledge": N_("acknowledged"), "acknowledge_service": N_("acknowledged (service)"),
    "close_center": N_("lift key: close"), "closed": N_("closed"), "dealt": N_("dealt"), "hold": N_("a fault holds"),
    "homed": N_("all home"), "latch": N_("a fault latches"), "leave_service": N_("service ends"),
    "open_center": N_("hand over"), "opened": N_("centre up"), "pause": N_("pause to add tiles"),
    "power_on": N_("power on"), "raise_walls": N_("lift key"), "raised": N_("walls up"),
    "reject": N_("walls rejected"), "release": N_("released"), "resume": N_("resume"),
    "resume_dice": N_("back to the dice"), "resume_play": N_("back to play"),
    "resume_rejected": N_("back to the rejected walls"), "service": N_("lift keys at power on"),
    "set_ready": N_("a set is ready"), "stack": N_("stack a set"), "stacking_over": N_("set stacked"),
}
UNITS = {"fan": N_("Fans"), "point": N_("Points"), "doubling": N_("Doublings"), "item": N_("Items")}
# the script's own sentences (its keys are this table's; their words are the catalogue's)
SCRIPT = {
    "lost": N_("The connection to the table was lost; reconnecting…"),
    "not_answering": N_("The controller is not answering: %(reason)s"),
    # why (the hub's link: firmware/web/hub.py LINK_WHY), said in the sentence above
    "link_connecting": N_("connecting to the controller"),
    "link_stale": N_("it has not answered for %(detail)s s"),
    "link_refused": N_("it refused the page's subscription (%(detail)s)"),
    "link_ended": N_("it ended the subscription"),
    "link_lost": N_("the connection to it was lost (%(detail)s)"),
    "link_unexpected": N_("unexpected error in the page's server (%(detail)s)"),
    "none": N_("none"), "no_deal": N_("no deal yet"), "not_read": N_("hand %(hand)s: not read (counted walls)"),
    "deal_line": N_("hand %(hand)s, dealer %(dealer)s, dice %(dice)s"),
    "lamps": N_("lamps %(lamps)s"), "on": N_("on"), "off": N_("off"),
    "needs_service": N_("Motor tests need service mode (both lift keys held at power-on); the table is: %(state)s."),
    "lid_open": N_("The service lid is open: close it to run a motor."),
    "refused_while": N_("Refused while: %(what)s"),
    "service_ready": N_("Service mode: hold a button to run; let go to stop."),
    "no_answer": N_("no answer from the table"), "done": N_("done"), "failed": N_("failed"),
    "ok": N_("ok"), "fail": N_("FAILED"), "running": N_("running (hold)…"),
    "ran": N_("ran %(s)s s, %(revolutions)s revolutions"),
    "acknowledged": N_("acknowledged: the table is: %(state)s"), "stopped": N_("stopped: %(what)s"),
    "dark": N_("Dark"), "light": N_("Light"), "auto": N_("Light or dark as the phone is set"),
    "hand_n": N_("hand %(n)s"), "dealer_is": N_("dealer %(who)s"), "stacking_n": N_("stacking: %(n)s tiles"),
    "chips_are": N_("chips %(chips)s"), "seat": N_("%(who)s (%(wind)s)"),
    "then": N_("%(first)s, then %(second)s"),
    # the staff's block (static/staff.js)
    "staff_done": N_("Done."), "staff_refused": N_("Refused: %(why)s"),
    "no_session": N_("No session open: the table plays freely."),
    "session_over": N_("The session is over: the table is closed (hands played: %(hands)s)."),
    "session_open": N_("Open: %(minutes)s minutes left, hands played: %(hands)s."),
    "session_last": N_("Open: %(minutes)s minutes left, hands played: %(hands)s; this is the last hand."),
    "session_warning": N_("Warning: %(minutes)s minutes left!"),
    # the verify page's own check (static/verify.js): what differs between the revealed walls and the hand
    "v_ok": N_("Checked in this browser: the revealed walls, dealt with dice %(dice)s, give exactly this hand's "
               "starting hands and its %(n)s draws."),
    "v_not_ok": N_("This hand does NOT match its committed walls:"),
    "v_hash_only": N_("No hand's record to replay here: only the hash was checked (open this page from a hand's "
                      "page to check its deal and draws too)."),
    "v_no_commitment": N_("No commitment was recorded for this hand."),
    "v_hash": N_("The reveal does not hash to the commitment (walls, dice seed or nonce changed)."),
    "v_encoding": N_("The reveal is not in the canonical encoding (line %(line)s)."),
    "v_set": N_("The reveal seals set %(revealed)s; the hand was dealt from set %(dealt)s."),
    "v_no_record": N_("The hand's record is missing."),
    "v_bad_record": N_("The hand's record cannot be read (%(what)s)."),
    "v_no_rules": N_("The table did not send the dealing rules of rule set %(rules)s."),
    "v_dealer": N_("The record's dealer is %(record)s; the deal's dealer is %(deal)s."),
    "v_dice_seed": N_("Electronic dice %(dice)s: the revealed seed gives %(seed)s."),
    "v_dice_by": N_("Dice thrown by %(by)s: physical or electronic."),
    "v_cannot_deal": N_("The revealed walls cannot be dealt with dice %(dice)s."),
    "v_dealt": N_("%(who)s was dealt %(dealt)s; the revealed walls dealt with dice %(dice)s give %(walls)s."),
    "v_start_hand": N_("Action %(n)s: %(who)s's starting hand is not what the walls deal."),
    "v_action": N_("Action %(n)s: the walls give %(want)s (%(where)s); the record has: %(got)s."),
    "v_want_draw": N_("%(who)s draws %(tile)s"), "v_want_flower": N_("%(who)s shows flower %(tile)s"),
    "v_where_dealt": N_("a flower dealt"), "v_where_live": N_("live wall, %(place)s"),
    "v_where_tail": N_("replacement from the tail, %(place)s"),
    "v_place": N_("%(who)s's wall, stack %(stack)s, %(level)s"), "v_top": N_("top"), "v_bottom": N_("bottom"),
    "v_record_end": N_("the record's end"),
    "v_tail_out": N_("Action %(n)s: the tail ran out, the record goes on."),
    "v_live_out": N_("Action %(n)s: a draw after the live wall ran out."),
    "v_wall_end": N_("Action %(n)s: the record ends the wall with %(left)s tiles still to draw."),
}


def phrase(message: str, **values: Any) -> dict[str, Any]:
    """A message of the page's own (marked ``N_``) with its values, kept language-neutral until it is shown
    (:meth:`Words.answer`); a value may be a phrase itself."""
    return {"say": message, "values": values}


def said(message: str, **values: Any) -> dict[str, Any]:
    """The page's own refusal: ``error`` in the code's English (for the log), and the phrase the page words in
    the request's language."""
    return {"ok": False, "error": english(phrase(message, **values)), **phrase(message, **values)}


def english(said_: dict[str, Any]) -> str:
    return said_["say"] % {k: english(v) if _is_phrase(v) else v for k, v in said_["values"].items()}


def _is_phrase(value: Any) -> bool:
    return isinstance(value, dict) and "say" in value and isinstance(value.get("values"), dict)


def side_number(side: int) -> int:
    """A side as people count it (1 to 4): the page never shows the controller's 0 to 3."""
    return int(side) + 1


# -- the catalogue -----------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def translations(locale: str) -> Any:
    """The page's compiled catalogue (domain ``messages``) of ``locale`` (:func:`firmware.i18n.catalogue`)."""
    return catalogue("firmware.web", "messages", locale)


def parse_accept_language(header: str | None) -> list[str]:
    """The languages of an ``Accept-Language`` header, most wanted first (q=0 left out)."""
    wanted: list[tuple[float, int, str]] = []
    for i, part in enumerate((header or "")[:512].split(",")):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        if tag and q > 0:
            wanted.append((-q, i, tag.strip()))
    return [tag for _, _, tag in sorted(wanted)]


def negotiate(header: str | None) -> str:
    """The locale for an ``Accept-Language`` header: zh (any zh-*: the table's characters are simplified) or en,
    whichever comes first; zh-CN when neither is asked for."""
    for tag in parse_accept_language(header):
        chosen = locale_of_tag(tag)
        if chosen:
            return chosen
    return DEFAULT


def choose(request: Any) -> str:
    """A request's locale: its cookie (the page's switch), else its ``Accept-Language``, else zh-CN."""
    chosen = request.cookies.get(LANG_COOKIE)
    if chosen in LOCALES:
        return chosen
    return negotiate(request.headers.get("accept-language"))


def theme(request: Any) -> str:
    chosen = request.cookies.get(THEME_COOKIE)
    return chosen if chosen in THEMES else "auto"


class Words:
    """A locale's words for what a status carries; ``gettext`` and ``ngettext`` are its catalogue's."""

    def __init__(self, locale: str) -> None:
        self.locale = locale
        self.tr = translations(locale)
        self.gettext: Callable[[str], str] = self.tr.gettext
        self.ngettext: Callable[[str, str, int], str] = self.tr.ngettext
        self._script_json: str | None = None

    def state(self, state: str | None) -> str:
        if state in STATES:
            return self.gettext(STATES[state])
        return self.gettext("Waiting for the table") if state is None else self.gettext("Unknown state")

    def state_hint(self, state: str | None) -> str:
        return self.gettext(STATE_HINTS[state]) if state in STATE_HINTS else ""

    def position(self, side: int) -> str:
        return self.gettext(POSITIONS[int(side) % SIDES])

    def seat_wind(self, wind: str | int) -> str:
        return self.gettext(SEAT_WINDS[WINDS.index(wind) if isinstance(wind, str) else int(wind) % SIDES])

    def seat(self, side: int, wind: str, name: str | None = None) -> str:
        """A side with its seat wind this hand: 南（西家）, South (West wind)."""
        return self.gettext("%(who)s (%(wind)s)") % {"who": name or self.position(side), "wind": self.seat_wind(wind)}

    def round_wind(self, wind: str | int | None) -> str:
        if wind is None or wind == "?":
            return "–"
        return self.gettext(ROUNDS[WINDS.index(wind) if isinstance(wind, str) else int(wind) % SIDES])

    def tier(self, tier: str) -> str:
        return self.gettext(TIERS.get(tier, N_("fault")))

    def lamps(self, pattern: str) -> str:
        """A fault's lamp pattern (``0+1 then none``: the sides lit for the tens digit, then for the ones) with the
        sides by their positions: 东+南，再 无; East+South, then none."""
        def lit(part: str) -> str:
            if part.strip() == "none":
                return self.gettext("none")
            return "+".join(self.position(int(d)) if d.strip().isdigit() else d for d in part.split("+"))
        first, _, second = pattern.partition(" then ")
        return self.gettext("%(first)s, then %(second)s") % {"first": lit(first), "second": lit(second)}

    def fault_text(self, text: str) -> str:
        return self.gettext(text) if text else ""

    def refusal(self, answer: dict[str, Any]) -> str:
        """Why the controller refused (its answer's ``refusal`` code and ``params``: :mod:`firmware.refusals`), in
        this language; an answer without a code this table knows says its ``error`` as it is."""
        from firmware.refusals import worded

        return worded(answer, self.gettext, self.state, self.mechanism, self.seat_name) or str(answer.get("error", ""))

    def phrase(self, said_: dict[str, Any]) -> str:
        """A :func:`phrase` in this language: its values that are phrases too, a held action (``what``: ``jog
        turntable``, ``test lifts``) by its name."""
        def value(key: str, v: Any) -> Any:
            if _is_phrase(v):
                return self.phrase(v)
            if key == "what" and isinstance(v, str):
                kind, _, name = v.partition(" ")
                return self.mechanism(name) if kind == "jog" else self.test(name)
            return v
        try:
            return self.gettext(said_["say"]) % {k: value(k, v) for k, v in said_["values"].items()}
        except (KeyError, TypeError, ValueError):
            return english(said_)

    def seat_name(self, seat: str) -> str:
        """A seat (E, S, W, N: where staff name the players) by its position's name."""
        return self.position(WINDS.index(seat)) if len(seat) == 1 and seat in WINDS else seat

    def answer(self, answer: dict[str, Any]) -> dict[str, Any]:
        """A controller's answer as the page shows it: a refusal's ``error`` in this language (the held action's
        own answer inside it too); the rest as it is."""
        if not isinstance(answer, dict):
            return answer
        out = dict(answer)
        if "refusal" in out:
            out["error"] = self.refusal(out)
        if _is_phrase(out):
            out["error"] = self.phrase({"say": out.pop("say"), "values": out.pop("values")})
        if isinstance(out.get("answer"), dict):
            out["answer"] = self.answer(out["answer"])
        return out

    def mechanism(self, name: str) -> str:
        return self.gettext(MECHANISMS[name]) if name in MECHANISMS else self.gettext("a mechanism")

    def test(self, name: str) -> str:
        return self.gettext(TESTS[name]) if name in TESTS else self.gettext("a test")

    def sensor(self, name: str) -> str:
        if name in SENSORS:
            return self.gettext(SENSORS[name])
        stem = name.rstrip("0123456789")
        if stem in SENSOR_SERIES and stem != name:
            return self.gettext(SENSOR_SERIES[stem]) % {"n": int(name[len(stem):]) + 1}
        return self.gettext("Input %(n)s") % {"n": name.rsplit("_", 1)[-1]}

    def trigger(self, name: str) -> str:
        return self.gettext(TRIGGERS[name]) if name in TRIGGERS else self.gettext("a step")

    def unit(self, key: str) -> str:
        return self.gettext(UNITS.get(key, UNITS["item"]))

    def script_json(self) -> str:
        """:meth:`script` as the page's JSON block carries it (made once per language)."""
        if self._script_json is None:
            import json

            self._script_json = json.dumps(self.script(), ensure_ascii=False).replace("</", "<\\/")
        return self._script_json

    def script(self) -> dict[str, Any]:
        """What the page's script needs to speak this language: its sentences, and every name a status carries."""
        g = self.gettext
        return {"text": {key: g(message) for key, message in SCRIPT.items()},
                "states": {key: g(message) for key, message in STATES.items()},
                "hints": {key: g(message) for key, message in STATE_HINTS.items()},
                "tones": STATE_TONE,
                "positions": [g(p) for p in POSITIONS], "winds": [g(w) for w in SEAT_WINDS],
                "rounds": [g(r) for r in ROUNDS],
                "tiers": {key: g(message) for key, message in TIERS.items()},
                "mechanisms": {key: g(message) for key, message in MECHANISMS.items()},
                "tests": {key: g(message) for key, message in TESTS.items()},
                "sensors": {key: g(message) for key, message in SENSORS.items()},
                "sensor_series": {key: g(message) for key, message in SENSOR_SERIES.items()},
                "reader": {key: g(message) for key, message in READER.items()},
                "faults": _fault_words(g)}


def _fault_words(gettext: Callable[[str], str]) -> dict[str, dict[str, str]]:
    from firmware.faults import registry

    return {f.code: {"text": gettext(f.text), "hint": gettext(f.hint)} for f in registry()}


@lru_cache(maxsize=None)
def words(locale: str) -> Words:
    return Words(locale if locale in LOCALES else DEFAULT)


# -- the catalogue's extraction (Babel) -------------------------------------------------------------------------
def extract_faults(fileobj: Any, keywords: Any, comment_tags: Any, options: Any) -> Iterator[tuple]:
    """Babel's extractor for ``firmware/faults.py`` (``babel.cfg``): each fault's text and hint, as the registry
    has them (the file is named so that the catalogue says where they come from; it is not parsed)."""
    from firmware.faults import registry

    for info in registry():
        yield 0, "_", info.text, [f"fault {info.code}: text"]
        yield 0, "_", info.hint, [f"fault {info.code}: hint"]
