"""What the parlour's staff do at a table: names at the seats, a game started or ended, and a table session (开台).

* **Names and seats.** Staff name the player at each side (E = side 0, S,
  W, N: the shape of a tournament assignment's ``seats``,
  :class:`firmware.game.assignment.Seats`); they are kept in the table
  database, shown wherever the status shows a round's ``players`` when no
  round's assignment is shown, and carried by every ``evt/hand`` and
  ``evt/game`` (``players``).  ``None`` clears them.
* **A game** started by staff between hands (never during a hand or a
  tournament round's game): the game in play ends (reason ``staff``), a new
  one starts with the rule set and chips chosen (a rule set of the same
  tile set as the table's: the table's session switches it, see
  :meth:`firmware.game.session.TableSession.switch_rules`); the choice is
  kept for the next games and across a power cut.  A game ended by staff
  ends after the last hand; the next hand dealt starts a new one.
* **A table session** (开台) opened for N minutes (the page, ``mjtable diag
  session open N``, the fleet's ``session_open``): at 10 and 5 minutes
  before its end a warning (the log, the live line, the page, the fleet's
  ``evt/session``); at its end (or when staff close it) the hand in play
  is played to its result and then no wall rises: the table stands
  ``ready`` and a key raises nothing until a session is opened again (what
  a parlour's power relay did).  Opening again while one is open sets its
  end anew.  A table where no session was ever opened plays freely.  Each
  session's row keeps its minutes, when it ended and why (``time_up``,
  ``closed``) and the hands played; ``evt/session`` publishes it
  (``opened``, ``warning``, ``ended``).

Time is the table's wall clock (``wall_clock_s``, injected: the host's on a
table, the simulated one in the simulator); timers run on the table's loop.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable

from pydantic import ValidationError

from firmware.game.assignment import SEATS, Seats
from firmware.loop import Handle, Loop
from firmware.refusals import Reason, Refusal
from firmware.rules.registry import load_ruleset
from firmware.store.staff_rows import StaffRows

if TYPE_CHECKING:
    from firmware.controller.record import TableRecord
    from firmware.events import EventBus
    from firmware.game.rounds import Rounds
    from firmware.game.scoreboard import Scoreboard
    from firmware.rules.ruleset import RuleSet

log = logging.getLogger(__name__)

WARN_AT_MINUTES = (10, 5)
MAX_MINUTES = 24 * 60
MAX_CHIPS = 10_000_000
TIME_UP, CLOSED, STAFF = "time_up", "closed", "staff"
OPEN, ENDING, ENDED = "open", "ending", "closed"



class StaffError(ValueError):
    """What staff asked cannot be done: its :class:`~firmware.refusals.Refusal` (a code and values, worded where
    it is shown; the text is its English, one line)."""

    def __init__(self, code: Reason, **params: Any) -> None:
        self.refusal = Refusal(code, **params)
        super().__init__(str(self.refusal))


def parse_players(data: Any) -> dict[str, str] | None:
    """Names by seat (``{"E": ..., "S": ..., "W": ..., "N": ...}``, 1..40 printable characters each) or None (no
    names); StaffError naming the problem."""
    if data is None:
        return None
    if not isinstance(data, dict):
        raise StaffError(Reason.PLAYERS_SHAPE)
    try:
        return Seats.model_validate(data).model_dump()
    except ValidationError as exc:
        where = exc.errors()[0]["loc"]
        if len(where) == 1 and where[0] in SEATS and where[0] in data:
            raise StaffError(Reason.PLAYER_NAME, seat=where[0]) from None
        raise StaffError(Reason.PLAYERS_SHAPE) from None


class Staff:
    def __init__(self, record: "TableRecord", scoreboard: "Scoreboard", bus: "EventBus", loop: Loop,
                 wall_clock_s: Callable[[], float], tile_set: int, in_play: Callable[[], bool],
                 rounds: "Rounds | None" = None) -> None:
        self.record, self.scoreboard, self.bus, self.loop = record, scoreboard, bus, loop
        self.store = record.store
        self.wall_clock_s, self.tile_set, self.in_play, self.rounds = wall_clock_s, tile_set, in_play, rounds
        self.switch_rules: Callable[["RuleSet"], None] | None = None    # (the table's session, set by the root)
        self.rows = StaffRows(self.store)
        settings = self.rows.settings()
        try:
            self.players = parse_players(settings.get("players"))
        except StaffError as exc:
            log.error("the names in the table database are not readable: %s", exc)
            self.players = None
        chips = settings.get("chips")
        self.chips: int | None = chips if isinstance(chips, int) and 0 < chips <= MAX_CHIPS else None
        scoreboard.chosen_chips = self.chips
        self.session: dict[str, Any] | None = self.rows.last()
        self.closing_by: str | None = None        # a close asked while a hand is in play (it ends after it)
        self.warned: int | None = None            # the minutes of the last warning given
        self._timers: list[Handle] = []
        self._arm()

    # -- names ----------------------------------------------------------------------------------------------
    def set_players(self, data: Any, by: str) -> dict[str, str] | None:
        players = parse_players(data)
        with self.store.batch("names at the seats"):
            self.rows.put_settings({**self.rows.settings(), "players": players})
        if self.store.failing:
            raise StaffError(Reason.NAMES_NOT_KEPT)
        self.players = players
        log.info("names at the seats set by %s: %s", by,
                 " ".join(f"{s} {n}" for s, n in players.items()) if players else "none")
        self.bus.publish("staff.players", players=players)
        return players

    def tags(self) -> dict[str, Any]:
        """What a game's events carry when staff named the players."""
        return {"players": dict(self.players)} if self.players else {}

    # -- games ----------------------------------------------------------------------------------------------
    def remember_rules(self, name: str) -> None:
        """The table switched its rule set (staff, a round): kept for the next power-on."""
        self.rows.put_settings({**self.rows.settings(), "rules": name})
        if self.store.failing:
            log.error("the rule set %s could not be kept in the table database", name)

    def _between_hands(self) -> None:
        if self.in_play():
            raise StaffError(Reason.HAND_IN_PLAY)
        if self.rounds is not None and self.rounds.in_round():
            raise StaffError(Reason.ROUND_IN_PLAY)

    def start_game(self, rules: str | None, chips: int | None, by: str) -> dict[str, Any]:
        """A new game now (between hands), of ``rules`` (None: the one played) with ``chips`` each (None: the
        chips chosen before, else the rule set's)."""
        self._between_hands()
        if chips is not None and (isinstance(chips, bool) or not isinstance(chips, int)
                                  or not 0 < chips <= MAX_CHIPS):
            raise StaffError(Reason.CHIPS_RANGE, max=MAX_CHIPS)
        board = self.scoreboard
        if rules is not None and rules != board.rules.name:
            try:
                new = load_ruleset(rules)
            except Exception as exc:  # noqa: BLE001 - an unknown name or a broken file: said
                raise StaffError(Reason.RULES_UNKNOWN, rules=repr(rules[:32]), problem=str(exc)) from None
            if new.tile_set != self.tile_set:
                raise StaffError(Reason.RULES_TILE_SET, rules=rules, tiles=new.tile_set, table_tiles=self.tile_set)
            if self.switch_rules is None:
                raise StaffError(Reason.RULES_FIXED)
            self.switch_rules(new)
            log.warning("rule set switched to %s by %s", rules, by)
        b = self.record.book
        start = chips if chips is not None else self.chips
        with self.store.batch("a game started by staff"):
            if not board.rows.ended(board.game):
                board.end_game(b.hand, STAFF, {**self.tags(), "by": by})
            game = board.start_game(b.hand + 1, {**self.tags(), "by": by}, chips=start)
            b.dealer, b.dealer_streak, b.long_hair = 0, 0, 0
            self.record.persist()
            self.rows.put_settings({**self.rows.settings(), "rules": board.rules.name, "chips": start})
        if self.store.failing:
            raise StaffError(Reason.GAME_NOT_KEPT)
        self.chips = board.chosen_chips = start
        log.info("game %d started by %s: %s, %d chips each", game, by, board.rules.name, board.start_chips)
        self.bus.publish("staff.game", event="started", game=game, rules=board.rules.name, chips=board.start_chips)
        return {"game": game, "rules": board.rules.name, "chips": board.start_chips}

    def end_game(self, by: str) -> dict[str, Any]:
        """The game in play ends after the last hand (between hands); the next hand dealt starts a new one."""
        self._between_hands()
        board, b = self.scoreboard, self.record.book
        if board.rows.ended(board.game):
            raise StaffError(Reason.GAME_ENDED, game=board.game)
        with self.store.batch("a game ended by staff"):
            board.end_game(b.hand, STAFF, {**self.tags(), "by": by})
        if self.store.failing:
            raise StaffError(Reason.GAME_END_NOT_KEPT)
        log.info("game %d ended by %s after hand %d", board.game, by, b.hand)
        self.bus.publish("staff.game", event="ended", game=board.game)
        return {"game": board.game, "ended_after": b.hand}

    # -- the table session (开台) ---------------------------------------------------------------------------
    @property
    def state(self) -> str | None:
        s = self.session
        if s is None:
            return None
        if s["ended_s"] is not None:
            return ENDED
        return ENDING if self.closing_by is not None or self._time_is_up() else OPEN

    def closed(self) -> str | None:
        """Why no wall may rise (None: they may): the last session ended."""
        return Refusal(Reason.SESSION_OVER) if self.state == ENDED else None

    def open(self, minutes: Any, by: str) -> dict[str, Any]:
        """Open the table for ``minutes`` from now (a session open already: its end is set anew)."""
        if isinstance(minutes, bool) or not isinstance(minutes, int) or not 1 <= minutes <= MAX_MINUTES:
            raise StaffError(Reason.MINUTES_RANGE, max=MAX_MINUTES)
        now = self.wall_clock_s()
        ends = now + minutes * 60.0
        s = self.session
        with self.store.batch("table session opened"):
            if s is not None and s["ended_s"] is None:
                total = max(1, round((ends - s["opened_s"]) / 60.0))
                self.rows.extend(s["id"], total, ends)
                ident, event = s["id"], "extended"
            else:
                ident = self.rows.open(now, minutes, ends, self.record.book.hand + 1, by)
                event = "opened"
            self.store.add_event("session", {"event": event, "session": ident, "minutes": minutes, "opened_at": now,
                                             "ends_at": ends, "by": by, **self.tags()})
        if self.store.failing:
            raise StaffError(Reason.SESSION_NOT_KEPT)
        self.session = self.rows.last()
        self.closing_by, self.warned = None, None
        log.info("table session %d %s by %s: %d minutes, ends at %.0f", ident, event, by, minutes, ends)
        self.bus.publish("table_session", state=event, session=ident, minutes=minutes, ends_at=ends)
        self._arm()
        return self.status()

    def close(self, by: str) -> dict[str, Any]:
        """End the session now; a hand in play is played to its result first."""
        if self.state not in (OPEN, ENDING):
            raise StaffError(Reason.NO_SESSION)
        if self.in_play():
            self.closing_by = by
            log.info("table session %d: closed by %s; the hand in play is finished first", self.session["id"], by)
            self.bus.publish("table_session", state="ending", session=self.session["id"], reason=CLOSED)
        else:
            self._end(CLOSED, by)
        return self.status()

    def _time_is_up(self) -> bool:
        s = self.session
        return s is not None and s["ended_s"] is None and self.wall_clock_s() >= s["ends_s"]

    def may_raise(self) -> bool:
        """(between hands) A session due or closed ends now; False while the table is closed."""
        self.check()
        return self.closed() is None

    def check(self) -> None:
        """Between hands: a session whose time is up, or that staff closed, ends now."""
        if self.state == ENDING and not self.in_play():
            self._end(CLOSED if self.closing_by is not None else TIME_UP, self.closing_by or "table")

    def after_hand(self) -> None:
        """A hand's result was written: the session ends here if it is due (the hand in play was its last)."""
        self.check()

    def _end(self, reason: str, by: str) -> None:
        s = self.session
        assert s is not None
        now = self.wall_clock_s()
        hands = self.rows.hands_since(s["first_hand"])
        played = round(max(0.0, min(now, s["ends_s"]) - s["opened_s"]) / 60.0, 1)
        with self.store.batch("table session ended"):
            self.rows.end(s["id"], now, hands, reason, by)
            self.store.add_event("session", {"event": "ended", "session": s["id"], "minutes": s["minutes"],
                                             "played_minutes": played, "opened_at": s["opened_s"], "ended_at": now,
                                             "hands": hands, "reason": reason, "by": by, **self.tags()})
        if self.store.failing:
            return                                  # (E98 says why; the next look tries again)
        self.session = self.rows.last()
        self.closing_by = None
        self._cancel()
        log.warning("table session %d ended (%s): %.1f of %d minutes, %d hands; no wall rises until a session is "
                    "opened", s["id"], reason, played, s["minutes"], hands)
        self.bus.publish("table_session", state="ended", session=s["id"], reason=reason, hands=hands,
                         minutes=s["minutes"])

    def _warn(self, minutes: int) -> None:
        s = self.session
        if s is None or s["ended_s"] is not None:
            return
        left = max(0.0, s["ends_s"] - self.wall_clock_s())
        self.warned = minutes
        with self.store.batch("table session warning"):
            self.store.add_event("session", {"event": "warning", "session": s["id"], "minutes_left": minutes,
                                             "seconds_left": round(left, 1), "ends_at": s["ends_s"], **self.tags()})
        log.warning("table session %d: %d minutes left", s["id"], minutes)
        self.bus.publish("table_session", state="warning", session=s["id"], minutes_left=minutes,
                         seconds_left=round(left, 1))

    def _at_end_time(self) -> None:
        if not self._time_is_up():
            self._arm()                             # (the wall clock and the loop drift apart: look again)
            return
        s = self.session
        assert s is not None
        if self.in_play():
            log.warning("table session %d: time is up; the hand in play is finished, then no wall rises", s["id"])
            self.bus.publish("table_session", state="ending", session=s["id"], reason=TIME_UP)
        self.check()

    def _arm(self) -> None:
        self._cancel()
        s = self.session
        if s is None or s["ended_s"] is not None:
            return
        now = self.wall_clock_s()
        for minutes in WARN_AT_MINUTES:
            at = s["ends_s"] - minutes * 60.0
            if at <= s["opened_s"]:
                continue                            # (a shorter session has no such warning)
            if at > now:
                self._timers.append(self.loop.call_later(at - now, self._warn, minutes))
            elif self.warned is None or minutes < self.warned:
                self.warned = minutes               # (given before a power cut or an extension)
        self._timers.append(self.loop.call_later(max(0.0, s["ends_s"] - now), self._at_end_time))

    def _cancel(self) -> None:
        for handle in self._timers:
            handle.cancel()
        self._timers = []

    # -- what people see ------------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """The ``session`` component of the table's status (fixed keys)."""
        s, state = self.session, self.state
        live = state in (OPEN, ENDING)
        hands = self.rows_hands(s) if s is not None else None
        return {"state": state, "id": s["id"] if s else None, "minutes": s["minutes"] if s else None,
                "opened_at": s["opened_s"] if s else None, "ends_at": s["ends_s"] if s else None,
                "seconds_left": round(max(0.0, s["ends_s"] - self.wall_clock_s()), 1) if s and live else None,
                "warning": self.warned if live else None, "hands": hands,
                "reason": s["reason"] if s and not live else None, "players": dict(self.players) if self.players
                else None, "rules": self.scoreboard.rules.name, "chips": self.chips}

    def rows_hands(self, s: dict[str, Any]) -> int:
        """Hands played in session ``s`` (from memory: the status never reads the database)."""
        if s["hands"] is not None:
            return int(s["hands"])
        b = self.record.book
        return max(0, b.hand - s["first_hand"] + 1 - (1 if b.hand_open and not b.hand_over else 0))

    def sessions(self, limit: int = 20) -> list[dict[str, Any]]:
        return self.rows.sessions(limit)


NO_SESSION = {"state": None, "id": None, "minutes": None, "opened_at": None, "ends_at": None, "seconds_left": None,
              "warning": None, "hands": None, "reason": None, "players": None, "rules": None, "chips": None}


def session_line(status: dict[str, Any], round_shown: bool, _: Callable[[str], str] = str) -> str:
    """The session's part of the live line ('' without a session or names); ``_``: a catalogue's gettext
    (English without one)."""
    out = ""
    players = status.get("players")
    if players and not round_shown:
        out += " | " + " ".join(f"{s} {players.get(s, '?')}" for s in SEATS)
    state = status.get("state")
    if state in (OPEN, ENDING):
        left = status.get("seconds_left") or 0.0
        out += _(" | session %(minutes)s min left") % {"minutes": f"{left / 60:.0f}"} + (
            "!" if status.get("warning") else "")
        if state == ENDING:
            out += _(", last hand")
    elif state == ENDED:
        out += _(" | session over: table closed")
    return out
