"""The hand in play at the table: its referee, its record, and its result written with the bookkeeping.

At the deal the controller opens the hand's record (:class:`TableReferee`)
with its context; after a power cut it reads the record back.  Actions come
in as inputs on the controller's loop (the simulated players, ``mjtable diag
judge``, ``penalty``, ``kong`` and ``drawn``); money paid on the spot goes to the scoreboard at
once.  The hand's result (winners, items, the record, the rest of its money)
is written in the same transaction as the bookkeeping that says who won; a
result that ends the game (局结) starts the next, in the same transaction,
with the fleet's ``evt/hand`` (the outbox).  The events ``hand.money``
(on-the-spot money), ``hand.settled`` (the hand's full record and payments
with reasons) and ``scoreboard`` (the chips) are for observers: the report,
diagnostics, telemetry.
"""

from __future__ import annotations

import logging

from firmware.controller.record import TableRecord
from firmware.controller.states import SetLocation
from firmware.events import EventBus
from firmware.game.rounds import Rounds
from firmware.game.scoreboard import Scoreboard, ScoredHand
from firmware.game.staff import Staff
from firmware.game.table_referee import TableReferee
from firmware.i18n import text_of, worded_text
from firmware.rules.hand_record import Action, BadRecord, Verb
from firmware.rules.ruleset import Dealership, HandOutcome, RuleSet
from firmware.store.seal_rows import SealRows

log = logging.getLogger(__name__)
SIDES = 4


def round_wind_of(hand: int) -> int:
    """The round wind of hand number ``hand`` (four hands a round)."""
    return (max(hand, 1) - 1) // 4 % 4


class HandInPlay:
    """The controller's :class:`~firmware.controller.controller.HandKeeper`: it opens the hand's record at the
    deal, reads it back after a power cut and says how the last hand ended (for the dealer rotation); the
    referee's inputs (the players, ``mjtable diag``) come here through the table's session."""

    def __init__(self, record: TableRecord, rules: RuleSet, scoreboard: Scoreboard, bus: EventBus) -> None:
        self.record, self.rules, self.scoreboard, self.bus = record, rules, scoreboard, bus
        self.referee = TableReferee(rules, scoreboard, bus.publish)
        self.rounds: Rounds | None = None         # a tournament round's assignment (set by the composition root)
        self.staff: Staff | None = None           # names, games and the table session (set by the composition root)

    # -- between hands (the controller asks) -------------------------------------------------------------
    def may_raise(self) -> bool:
        """May the next walls rise by themselves?  False: the table stands ready for a key (a round's game
        ended, or the players of an assignment waiting sit down)."""
        rounds = self.rounds.may_raise() if self.rounds is not None else True
        staff = self.staff.may_raise() if self.staff is not None else True
        return rounds and staff

    def closed(self) -> str | None:
        """Why no wall may rise, even for a key at ready (a table session is over); None: they may."""
        return self.staff.closed() if self.staff is not None else None

    def use_rules(self, rules: RuleSet) -> None:
        """The table switched its rule set (between games): the referee, the scoreboard and the rounds play it."""
        self.rules = rules
        self.referee.rules = rules
        self.scoreboard.use_rules(rules)
        if self.rounds is not None:
            self.rounds.rules = rules

    def before_raise(self) -> None:
        """The walls are about to rise: a round's assignment waiting is taken now."""
        if self.rounds is not None:
            self.rounds.before_raise()

    def in_play(self) -> bool:
        """A hand is in play: its walls are up for the dice, or it is dealt and its result not yet written."""
        b = self.record.book
        if b.raising or (b.sets_at(SetLocation.TABLE) and not b.hand_open and not b.hand_over):
            return True
        return self.hand is not None and not self.scoreboard.recorded(self.hand)

    def open(self, dealt: dict[int, list[str]] | None = None) -> None:
        """The deal (inside the deal's transaction): a new record for the hand the bookkeeping has just begun;
        ``dealt``: each side's starting tiles as the wall map knows them (``?`` where a tile was not read)."""
        b = self.record.book
        self.scoreboard.begin_hand(b.hand)
        self.referee.open(b.hand, b.dealer, round_wind_of(b.hand), b.dealer_streak, b.long_hair,
                          {side: "".join(tiles) for side, tiles in (dealt or {}).items()})

    def restore(self) -> None:
        """Power-on with a hand in play: its record as far as it was written."""
        b = self.record.book
        if b.hand_open and not self.scoreboard.recorded(b.hand):
            self.referee.restore(b.hand, b.dealer, round_wind_of(b.hand), b.dealer_streak, b.long_hair)

    @property
    def hand(self) -> int | None:
        """The hand whose record is open (None: none)."""
        if self.referee.hand is None or self.referee.hand != self.record.book.hand or not self.record.book.hand_open:
            return None
        return self.referee.hand

    # -- actions ------------------------------------------------------------------------------------------
    def take(self, hand: int, action: Action, seq: int | None = None) -> str | None:
        """An action of hand ``hand`` (an input on the controller's loop); why it was refused (None: taken)."""
        if self.hand != hand:
            return self._not_in_play(hand)
        if self.scoreboard.recorded(hand):
            return worded_text("hand %(hand)s is scored already", hand=hand)
        try:
            self.referee.take(action, seq)
        except BadRecord as exc:
            log.warning("hand %d: %s refused: %s", hand, action.text(), exc)
            return text_of(exc)
        return None

    def take_all(self, hand: int, actions: list[Action]) -> str | None:
        """Actions of hand ``hand`` taken together (``mjtable diag judge --record``): all, or none and why."""
        if self.hand != hand:
            return self._not_in_play(hand)
        if self.scoreboard.recorded(hand):
            return worded_text("hand %(hand)s is scored already", hand=hand)
        try:
            self.referee.take_all(actions)
        except BadRecord as exc:
            log.warning("hand %d: %s refused: %s", hand, "; ".join(a.text() for a in actions), exc)
            return text_of(exc)
        return None

    def _not_in_play(self, hand: int) -> str:
        return worded_text("hand %(hand)s is not in play (the table is at hand %(at)s, %(state)s)", hand=hand,
                           at=self.record.book.hand, state=self._state())

    def _state(self) -> str:
        """The table's state as its code (``in_play``), named in words where a reason is said."""
        state = self.record.state_of()
        return str(getattr(state, "value", state))

    def penalty(self, side: int, kind: str, to: int | None = None) -> str | None:
        """A penalty the referee gives now (``mjtable diag penalty``), on the hand in play."""
        if self.hand is None:
            return worded_text("no hand in play (the table is %(state)s)", state=self._state())
        return self.take(self.record.book.hand, Action(Verb.PENALTY, side, kind=kind, to=to))

    def wall_end(self, shown: dict[int, tuple[int, ...]] | None = None) -> str | None:
        """The live wall ran out with no win (``mjtable diag drawn``): ``wall_end`` taken (黄庄 money where the rule
        set has it; ``shown``: the standing tiles of sides still in, taken with it, for 四川's drawn-end checks)
        and the hand's result written; why not (None: done).  Asked again (its result not written, e.g. a power
        cut between the two), the ``wall_end`` taken before is not taken again."""
        if self.hand is None:
            return worded_text("no hand in play (the table is %(state)s)", state=self._state())
        hand = self.record.book.hand
        if self.scoreboard.recorded(hand):
            return worded_text("hand %(hand)s is scored already", hand=hand)
        settled = self.referee.settlement()
        assert settled is not None
        if self.rules.hand_over(settled.winners):
            return worded_text("hand %(hand)s has its winners (side %(sides)s): it is not a drawn hand", hand=hand,
                               sides=", ".join(map(str, settled.winners)))
        pending = [a.side for a in self.referee.pending if a.verb is Verb.WIN]
        if pending:
            return worded_text("hand %(hand)s: side %(side)s's win is judged and waits for the other winners on that "
                               "discard (judge the last one without --more): it is not a drawn hand", hand=hand,
                               side=pending[0])
        if not settled.drawn:
            shows = [Action(Verb.SHOW, side, hand=tiles) for side, tiles in sorted((shown or {}).items())]
            why = self.take_all(hand, shows + [Action(Verb.WALL_END)])
            if why is not None:
                return why
        return self.finish(hand)

    def finish(self, hand: int, note: str = "") -> str | None:
        """Hand ``hand`` is over (its win or ``wall_end`` taken): write its result; why not (None: written)."""
        if self.hand != hand:
            if self.scoreboard.recorded(hand):
                return None                               # (a result delivered again after a power cut)
            return worded_text("hand %(hand)s is not in play", hand=hand)
        scored = self.referee.result(note)
        assert scored is not None
        self.result(scored)
        return None

    def unrecorded(self) -> int | None:
        """The hand in play whose result is not written yet (None: none, or its result is written)."""
        b = self.record.book
        if not b.hand_open or b.hand < 1 or self.scoreboard.recorded(b.hand):
            return None
        return b.hand

    def void(self, why: str) -> bool:
        """The hand in play ends without its result (both lift keys at the table): it is written as a void hand,
        ``void: WHY`` in its note, with what its record settles to so far (the money paid on the spot is kept, and
        a win taken stays won); True when written (or it was before)."""
        hand = self.unrecorded()
        if hand is None:
            return True
        note = f"void: {why}"
        if self.hand == hand:
            scored = self.referee.result(note)
        else:                                     # (no record of it is open: nothing of it was settled)
            b = self.record.book
            scored = ScoredHand(hand, b.dealer, [], False, note=note, round_wind=round_wind_of(hand))
        return self.result(scored)

    # -- the result ------------------------------------------------------------------------------------------
    def result(self, scored: ScoredHand | None) -> bool:
        """Write a hand's result with the bookkeeping that says who won, the end of the game it ends and its
        ``evt/hand`` for the fleet (in one transaction); False if it was recorded before or could not be
        written."""
        b = self.record.book
        b.last_winner = self.rules.lead_winner(scored.winners, b.dealer) if scored is not None else None
        b.last_followed = bool(scored and scored.followed)
        b.last_discarder = scored.first_discarder if scored is not None else None
        recorded, settled = False, {}
        store = self.record.store
        with store.batch("hand result"):
            if scored is not None:
                recorded = self.scoreboard.record(scored)
                if recorded:
                    self.referee.recorded()
                    rounds = self.rounds if self.rounds is not None and self.rounds.in_round() else None
                    tags = rounds.tags() if rounds is not None else {}
                    if "players" not in tags and self.staff is not None:
                        tags = {**tags, **self.staff.tags()}
                    if rounds is not None:          # (a round's game ends by its hands or its time)
                        ended = rounds.after_result(scored.hand)
                    else:
                        nxt = self.rules.next_dealer(Dealership(b.dealer, b.dealer_streak, b.long_hair),
                                                     self.outcome())
                        ended = self.scoreboard.end_game_if_over(scored.hand, nxt.dealer != b.dealer)
                    settled = {**self._settled(scored, ended), **tags}
                    store.add_event("hand", settled)
            self.record.persist()
        if not recorded or store.failing or scored is None:
            if self.rounds is not None:
                self.rounds._ended = None
            return False
        if self.rounds is not None:
            self.rounds.ended()
        if self.staff is not None:
            self.staff.after_hand()             # (a table session due ends with this hand)
        if settled["game_ended"]:
            log.info("%s after hand %d: the next hand starts a new game with %d chips each", settled["game_ended"],
                     scored.hand, self.scoreboard.start_chips)
        self.bus.publish("hand.settled", **settled)
        self.bus.publish("scoreboard", chips=list(self.scoreboard.chips), hand=scored.hand)
        return True

    def _settled(self, scored: ScoredHand, ended: str | None) -> dict:
        """What ``hand.settled`` and the fleet's ``evt/hand`` carry: the verdicts with their items, every payment
        with its reason, the hand's record, the chips, whether the game ended, and its committed walls revealed
        (``seal``: with ``record``, what ``mjtable verify`` checks, as its export has it; None for a hand dealt
        without one)."""
        last = self.referee.last
        seal = SealRows(self.record.store).hand_seal(scored.hand)          # (its result is written: revealed)
        if seal is not None:
            seal = {k: v for k, v in seal.items() if k != "record"} if seal["commitment"] else None
        return {"seal": seal,
                "hand": scored.hand, "dealer": scored.dealer, "winners": list(scored.winners), "drawn": scored.drawn,
                "followed": scored.followed, "note": scored.note,
                "verdicts": [_verdict_json(v) for v in last.verdicts] if last else [],
                "payments": [p.to_json() for p in scored.payments], "record": scored.record,
                "chips": list(self.scoreboard.chips), "game_ended": ended}

    def outcome(self) -> HandOutcome:
        """The last hand's outcome as the bookkeeping keeps it (for the dealer rotation)."""
        b = self.record.book
        return HandOutcome((b.last_winner,) if b.last_winner is not None else (), b.last_winner is None,
                           b.last_followed, b.last_discarder)


def _verdict_json(v) -> dict:
    return {"side": v.side, "tile": v.tile, "discarder": v.discarder, "legal": v.legal, "reason": v.reason,
            "total": v.total, "unit": v.score.unit if v.score else "",
            "items": [i.to_json() for i in v.items], "liable": v.liable, "event": v.event,
            "breakdown": [{"payer": b.payer, "amount": b.amount, "items": [i.to_json() for i in b.items]}
                          for b in v.breakdown]}
