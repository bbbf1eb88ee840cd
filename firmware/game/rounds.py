"""A tournament round at the table: the hall's assignment taken between games, played, ended by hands or time.

The hall's tournament service writes each table's assignment
(:mod:`firmware.game.assignment`) on the table's assignment topic; the fleet
link checks its signature and hands it here (:meth:`Rounds.offer`, on the
table's loop).  What the table does with it:

* **Waiting.** A valid assignment with a new ``id`` waits (``pending``, kept
  in the table database) until the table is between games: never during a
  hand, and never during an assigned game in play (a round's next
  assignment waits for this round's game to end).  The table's own play
  (no assignment) is not a round: it ends at the end of its hand in play.
  While one waits, the table raises no new wall by itself: it stands
  ``ready`` and the players of the round, seated, press a lift key.
* **Taken** when the walls of the round's first hand rise
  (:meth:`before_raise`): an assignment of another rule set of the
  table's tile set switches the table to it first (the table's session,
  :meth:`firmware.game.session.TableSession.switch_rules`); in one transaction the game in play ends (reason
  ``assignment``), the round's game starts (its ``evt/game`` carries the
  assignment and the names by side), the assignment is marked taken with
  its game, and the dealer is side 0 (E) with no streak.
* **Played**: every ``evt/hand`` and ``evt/game`` of the game carries
  ``assignment`` (id, event, round, table) and ``players`` (the names by
  seat, E = side 0 ...).
* **Ended** in the transaction of the hand that completes its ``hands``
  (reason ``hands_done``), or by its time limit: five minutes before
  ``ends_at`` a warning (``evt/game`` ``{"event": "warning"}`` and the live
  line); at ``ends_at`` the hand in play is played to its end and its
  result ends the game (``time_up``), or, between hands, the game ends
  then.  The end event carries the reason, the number of hands and each
  side's net points (``nets``: the final chips less the start; they sum to
  0).  No new wall rises for the game; the table stands ``ready`` and a key
  starts its own next game (or takes the next assignment).
* The same ``id`` delivered again (the broker sends a retained message at
  every reconnect) changes nothing; an empty payload withdraws the one
  waiting.  After a power cut the taken assignment and its game are read
  back from the database: the same round's game goes on, never starts again.

Time is the table's wall clock (``wall_clock_s``, Unix seconds, injected:
the host's on a table, the simulated one in the simulator); timers run on
the table's loop.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, Callable

from firmware.game.assignment import SEATS, Assignment, AssignmentError, parse_assignment
from firmware.loop import Handle, Loop
from firmware.rules.registry import load_ruleset
from firmware.store.assignment_rows import ENDED, PENDING, TAKEN, AssignmentRows

if TYPE_CHECKING:
    from firmware.controller.record import TableRecord
    from firmware.events import EventBus
    from firmware.game.scoreboard import Scoreboard
    from firmware.rules.ruleset import RuleSet

log = logging.getLogger(__name__)

WARN_BEFORE_S = 300.0
HANDS_DONE, TIME_UP, REPLACED = "hands_done", "time_up", "assignment"


class Rounds:
    def __init__(self, record: "TableRecord", scoreboard: "Scoreboard", rules: "RuleSet", bus: "EventBus",
                 loop: Loop, wall_clock_s: Callable[[], float], tile_set: int,
                 in_play: Callable[[], bool]) -> None:
        self.record, self.scoreboard, self.rules, self.bus, self.loop = record, scoreboard, rules, bus, loop
        self.store = record.store
        self.wall_clock_s = wall_clock_s
        self.tile_set = tile_set
        self.in_play = in_play
        self.rows = AssignmentRows(self.store)
        self.pending: Assignment | None = None
        self.current: Assignment | None = None        # taken, its game (``game``) in play
        self.game: int | None = None
        self.first_hand = 0                           # the first hand of the round's game
        self.last: Assignment | None = None           # the last one played (shown until the next game)
        self.last_reason: str | None = None
        self.done_game: int | None = None             # the ended assigned game the table stands after
        self.warned = False
        self.refusals = 0
        self.last_refusal: str | None = None
        self._timers: list[Handle] = []
        self._ended: tuple | None = None              # the round's game ended in the open transaction
        # the table's session switches the rule set for a round of another of the same tile set (set by the root)
        self.switch_rules: Callable[["RuleSet"], None] | None = None
        self._load()

    # -- reading back ---------------------------------------------------------------------------------------
    def _load(self) -> None:
        for ident, body, game in self.rows.rows(TAKEN):
            a = self._parsed(ident, body)
            if a is not None and game is not None and game == self.scoreboard.game \
                    and not self.scoreboard.rows.ended(game):
                self.current, self.game = a, int(game)
                rows = self.store.read("SELECT first_hand FROM games WHERE id = ?", (game,))
                self.first_hand = int(rows[0][0]) if rows else 0
            elif a is not None and game == self.scoreboard.game:
                self.last, self.done_game = a, int(game)
        waiting = self.rows.rows(PENDING)
        if waiting:
            self.pending = self._parsed(*waiting[-1][:2])
        for ident, body, game in self.rows.rows(ENDED)[-1:]:
            if game is not None and game == self.scoreboard.game:
                self.last, self.done_game = self._parsed(ident, body), int(game)
        if self.current is not None:
            log.info("round %s: its game %d goes on (hand %d)", self.current.id, self.game, self.record.book.hand)
        self._arm()

    @staticmethod
    def _parsed(ident: str, body: str) -> Assignment | None:
        try:
            return parse_assignment(json.loads(body))
        except (AssignmentError, ValueError) as exc:
            log.error("assignment %s in the table database is not readable: %s", ident, exc)
            return None

    # -- what the hall sends --------------------------------------------------------------------------------------
    def offer(self, a: Assignment) -> str:
        """A checked assignment from the hall: ``pending``, or ``unchanged`` (this id was seen); AssignmentError
        when this table cannot play it (the caller counts and shows it: :meth:`refused`)."""
        if a.id in {x.id for x in (self.current, self.pending) if x is not None}:
            return "unchanged"
        if self.rows.state_of(a.id) in (TAKEN, ENDED):
            return "unchanged"                                  # (played already: a redelivery)
        if a.rules != self.rules.name:
            tiles = load_ruleset(a.rules).tile_set
            if tiles != self.tile_set:
                raise AssignmentError(f"rule set {a.rules} plays {tiles} tiles; this table's set has {self.tile_set}")
            if self.switch_rules is None:
                raise AssignmentError(f"rule set {a.rules}: this table plays {self.rules.name} and cannot switch")
        self.rows.put_pending(a.id, a.to_json(), self.wall_clock_s())
        if self.store.failing:
            raise AssignmentError("it could not be written to the table database")
        self.pending = a
        self.last_refusal = None
        log.info("round %s: assigned (%s), waiting for the game in play to end", a.id, _names(a))
        self.bus.publish("assignment", state="pending", assignment=a.tag(), players=a.players())
        return "pending"

    def knows(self, ident: str) -> bool:
        """This id is waiting, in play or played here."""
        if ident in {x.id for x in (self.current, self.pending, self.last) if x is not None}:
            return True
        return self.rows.state_of(ident) in (PENDING, TAKEN, ENDED)

    def withdraw(self) -> bool:
        """The hall cleared the assignment topic: the one waiting is withdrawn (a game in play goes on)."""
        if self.pending is None:
            return False
        self.rows.clear_pending()
        log.info("round %s: withdrawn by the hall before it was played", self.pending.id)
        self.pending = None
        self.bus.publish("assignment", state="withdrawn", assignment=None, players=None)
        return True

    def refused(self, reason: str) -> None:
        """An assignment refused (its signature, its data, a rule set this table cannot play): logged once per
        reason, counted, shown on the status."""
        self.refusals += 1
        if reason != self.last_refusal:
            log.warning("assignment refused: %s", reason)
        self.last_refusal = reason
        self.bus.publish("assignment", state="refused", reason=reason)

    # -- the controller's questions --------------------------------------------------------------------------
    def may_raise(self) -> bool:
        """(between hands, before walls rise by themselves) False: the table stands ready for a key (an assigned
        game ended, or the players of an assignment waiting sit down)."""
        self._check_time()
        if self.current is not None:
            return True
        return self.pending is None and (self.done_game is None or self.done_game != self.scoreboard.game)

    def wants_play(self) -> bool:
        """An assigned game is in play or one waits (the simulated players press the key)."""
        return self.current is not None or self.pending is not None

    def before_raise(self) -> None:
        """The walls rise: a waiting assignment is taken now (see the module), unless a round's game is in play."""
        self._check_time()
        if self.pending is None or self.current is not None or self.in_play():
            return
        a, b, board = self.pending, self.record.book, self.scoreboard
        if a.rules != self.rules.name and self.switch_rules is not None:
            self.switch_rules(load_ruleset(a.rules))      # (between games: the round's game starts below)
            log.warning("round %s: the table switches to rule set %s", a.id, a.rules)
        with self.store.batch(f"round {a.id} taken"):
            if not board.rows.ended(board.game):
                board.end_game(b.hand, REPLACED, None)
            game = board.start_game(b.hand + 1, self.tags(a))
            self.rows.take(a.id, game)
            b.dealer, b.dealer_streak, b.long_hair = 0, 0, 0
            self.record.persist()
        if self.store.failing:
            return
        self.current, self.game, self.pending, self.done_game, self.warned = a, game, None, None, False
        self.first_hand = b.hand + 1
        log.info("round %s: game %d starts, %s, %d hands%s", a.id, game, _names(a), a.hands,
                 f", ends at {a.ends_at:.0f}" if a.ends_at is not None else "")
        self.bus.publish("assignment", state="playing", assignment=a.tag(), players=a.players())
        self._arm()

    # -- the game's end ------------------------------------------------------------------------------------------
    def in_round(self) -> bool:
        return self.current is not None and self.game == self.scoreboard.game

    def tags(self, a: Assignment | None = None) -> dict[str, Any]:
        """What the events of the assigned game carry (empty when none is in play)."""
        a = a or (self.current if self.in_round() else None)
        return {"assignment": a.tag(), "players": a.players()} if a is not None else {}

    def after_result(self, hand: int) -> str | None:
        """(in the transaction of ``hand``'s result) The round's game ends here: its reason (None: it goes on)."""
        if not self.in_round():
            return None
        a = self.current
        assert a is not None and self.game is not None
        if self.rows.hands_of(self.game) >= a.hands:
            return self._end(hand, HANDS_DONE)
        if self._time_is_up():
            return self._end(hand, TIME_UP)
        return None

    def _end(self, hand: int, reason: str) -> str:
        """(in the caller's batch) End the round's game after ``hand``."""
        a, game = self.current, self.game
        assert a is not None and game is not None
        board = self.scoreboard
        hands = self.rows.hands_of(game)
        final = [c + h for c, h in zip(board.rows.chips(game), board.rows.held(game))]
        nets = [f - board.start_chips for f in final]
        board.end_game(hand, reason, {**self.tags(a), "hands": hands, "nets": nets})
        self.rows.end(a.id)
        self._ended = (a, game, reason, hands, nets)
        return reason

    def ended(self) -> None:
        """(after the transaction that ended the round's game committed) Forget it as in play."""
        done = self._ended
        if done is None:
            return
        self._ended = None
        a, game, reason, hands, nets = done
        self.current, self.game, self.last, self.last_reason, self.done_game = None, None, a, reason, game
        self._cancel()
        log.info("round %s: game %d ended (%s) after %d hands, nets %s", a.id, game, reason, hands, nets)
        self.bus.publish("assignment", state="ended", assignment=a.tag(), players=a.players(), reason=reason,
                         hands=hands, nets=nets)

    # -- the time limit ------------------------------------------------------------------------------------------
    def _time_is_up(self) -> bool:
        a = self.current
        return a is not None and a.ends_at is not None and self.wall_clock_s() >= a.ends_at

    def _check_time(self) -> None:
        """Between hands at or after ``ends_at``: the round's game ends now (``time_up``)."""
        if self.in_round() and self._time_is_up() and not self.in_play():
            with self.store.batch("round's time up"):
                self._end(self.record.book.hand, TIME_UP)
            if self.store.failing:
                self._ended = None
                return
            self.ended()

    def _warn(self) -> None:
        a = self.current
        if a is None or self.warned or a.ends_at is None:
            return
        self.warned = True
        left_s = max(0.0, a.ends_at - self.wall_clock_s())
        with self.store.batch("round's warning"):
            self.store.add_event("game", {"event": "warning", "game": self.game, "ends_at": a.ends_at,
                                          "seconds_left": round(left_s, 1), **self.tags(a)})
        log.warning("round %s: %.0f minutes left (ends at %.0f)", a.id, left_s / 60, a.ends_at)
        self.bus.publish("assignment", state="warning", assignment=a.tag(), players=a.players(),
                         seconds_left=round(left_s, 1))

    def _at_end_time(self) -> None:
        if self.current is None:
            return
        if not self._time_is_up():              # (the wall clock and the loop drift apart: look again)
            self._arm()
            return
        self.bus.publish("assignment", state="time_up", assignment=self.current.tag(),
                         players=self.current.players())
        self._check_time()                      # (a hand in play ends it with its result)

    def _arm(self) -> None:
        self._cancel()
        a = self.current
        if a is None or a.ends_at is None:
            return
        left_s = a.ends_at - self.wall_clock_s()
        if not self.warned:
            self._timers.append(self.loop.call_later(max(0.0, left_s - WARN_BEFORE_S), self._warn))
        self._timers.append(self.loop.call_later(max(0.0, left_s), self._at_end_time))

    def _cancel(self) -> None:
        for handle in self._timers:
            handle.cancel()
        self._timers = []

    # -- what people see ------------------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """The ``round`` component of the table's status (fixed keys)."""
        shown_last = self.last if self.done_game is not None and self.done_game == self.scoreboard.game else None
        a = self.current or shown_last
        state = "playing" if self.current is not None else ("ended" if shown_last is not None else None)
        hands = max(0, self.record.book.hand - self.first_hand + 1) if self.current is not None else None
        left = None
        if self.current is not None and self.current.ends_at is not None:
            left = round(self.current.ends_at - self.wall_clock_s(), 1)
        return {"state": state, "assignment": a.tag() if a else None, "players": a.players() if a else None,
                "rules": a.rules if a else None, "hands": a.hands if a else None, "hands_played": hands,
                "ends_at": a.ends_at if a else None, "seconds_left": left, "warning": self.warned and left is not None,
                "reason": self.last_reason if self.current is None and shown_last is not None else None,
                "pending": self.pending.tag() if self.pending else None,
                "pending_players": self.pending.players() if self.pending else None,
                "refused": self.last_refusal, "refusals": self.refusals}


def _names(a: Assignment) -> str:
    return " ".join(f"{seat} {name}" for seat, name in zip(SEATS, a.seats.by_side()))


def round_line(status: dict[str, Any], _: Callable[[str], str] = str) -> str:
    """The round's part of the live line ('' without an assignment); ``_``: a catalogue's gettext (English
    without one)."""
    if status.get("refused") and not status.get("assignment") and not status.get("pending"):
        return _(" | assignment: refused: %(why)s") % {"why": status["refused"]}
    tag = status.get("assignment")
    out = ""
    if tag is not None:
        players = status.get("players") or {}
        names = " ".join(f"{s} {players.get(s, '?')}" for s in SEATS)
        if status["state"] == "playing":
            out = _(" | %(event)s round %(round)s hand %(played)s/%(hands)s: %(names)s") % {
                "event": tag["event"], "round": tag["round"], "played": status["hands_played"],
                "hands": status["hands"], "names": names}
            if status.get("seconds_left") is not None:
                left = max(0.0, status["seconds_left"])
                out += _(", %(minutes)s min left") % {"minutes": f"{left / 60:.0f}"} + (
                    "!" if status.get("warning") else "")
        else:
            out = _(" | %(event)s round %(round)s over (%(reason)s)") % {
                "event": tag["event"], "round": tag["round"], "reason": status.get("reason")}
    if status.get("pending") is not None:
        out += _(" | next: %(event)s round %(round)s") % {"event": status["pending"]["event"],
                                                          "round": status["pending"]["round"]}
    if status.get("refused"):
        out += _(" | assignment: refused: %(why)s") % {"why": status["refused"]}
    return out
