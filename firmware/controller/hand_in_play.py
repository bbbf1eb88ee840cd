"""The controller's side of the hand in play: its referee, its record, and its result with the bookkeeping.

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
from typing import TYPE_CHECKING

from firmware.game.scoreboard import ScoredHand
from firmware.game.table_referee import TableReferee
from firmware.rules.hand_record import Action, BadRecord, Verb
from firmware.rules.ruleset import Dealership, HandOutcome

if TYPE_CHECKING:
    from firmware.controller.controller import Controller

log = logging.getLogger(__name__)
SIDES = 4


def round_wind_of(hand: int) -> int:
    """The round wind of hand number ``hand`` (four hands a round)."""
    return (max(hand, 1) - 1) // 4 % 4


class HandInPlay:
    def __init__(self, controller: "Controller") -> None:
        self.c = controller
        self.referee = TableReferee(controller.rules, controller.scoreboard, controller.bus.publish)

    def open(self, dealt: dict[int, list[str]] | None = None) -> None:
        """The deal (inside the deal's transaction): a new record for the hand the bookkeeping has just begun;
        ``dealt``: each side's starting tiles as the wall map knows them (``?`` where a tile was not read)."""
        b = self.c.book
        self.c.scoreboard.begin_hand(b.hand)
        self.referee.open(b.hand, b.dealer, round_wind_of(b.hand), b.dealer_streak, b.long_hair,
                          {side: "".join(tiles) for side, tiles in (dealt or {}).items()})

    def restore(self) -> None:
        """Power-on with a hand in play: its record as far as it was written."""
        b = self.c.book
        if b.hand_open and not self.c.scoreboard.recorded(b.hand):
            self.referee.restore(b.hand, b.dealer, round_wind_of(b.hand), b.dealer_streak, b.long_hair)

    @property
    def hand(self) -> int | None:
        """The hand whose record is open (None: none)."""
        if self.referee.hand is None or self.referee.hand != self.c.book.hand or not self.c.book.hand_open:
            return None
        return self.referee.hand

    # -- actions ------------------------------------------------------------------------------------------
    def take(self, hand: int, action: Action, seq: int | None = None) -> str | None:
        """An action of hand ``hand`` (an input on the controller's loop); why it was refused (None: taken)."""
        if self.hand != hand:
            return f"hand {hand} is not in play (the table is at hand {self.c.book.hand}, {self.c.state})"
        if self.c.scoreboard.recorded(hand):
            return f"hand {hand} is scored already"
        try:
            self.referee.take(action, seq)
        except BadRecord as exc:
            log.warning("hand %d: %s refused: %s", hand, action.text(), exc)
            return str(exc)
        return None

    def take_all(self, hand: int, actions: list[Action]) -> str | None:
        """Actions of hand ``hand`` taken together (``mjtable diag judge --record``): all, or none and why."""
        if self.hand != hand:
            return f"hand {hand} is not in play (the table is at hand {self.c.book.hand}, {self.c.state})"
        if self.c.scoreboard.recorded(hand):
            return f"hand {hand} is scored already"
        try:
            self.referee.take_all(actions)
        except BadRecord as exc:
            log.warning("hand %d: %s refused: %s", hand, "; ".join(a.text() for a in actions), exc)
            return str(exc)
        return None

    def penalty(self, side: int, kind: str, to: int | None = None) -> str | None:
        """A penalty the referee gives now (``mjtable diag penalty``), on the hand in play."""
        if self.hand is None:
            return f"no hand in play (the table is {self.c.state})"
        return self.take(self.c.book.hand, Action(Verb.PENALTY, side, kind=kind, to=to))

    def wall_end(self) -> str | None:
        """The live wall ran out with no win (``mjtable diag drawn``): ``wall_end`` taken (黄庄 money where the rule
        set has it) and the hand's result written; why not (None: done).  Asked again (its result not written,
        e.g. a power cut between the two), the ``wall_end`` taken before is not taken again."""
        if self.hand is None:
            return f"no hand in play (the table is {self.c.state})"
        hand = self.c.book.hand
        if self.c.scoreboard.recorded(hand):
            return f"hand {hand} is scored already"
        settled = self.referee.settlement()
        assert settled is not None
        if settled.winners:
            return f"hand {hand} has a winner (side {settled.winners[0]}): it is not a drawn hand"
        if not settled.drawn:
            why = self.take(hand, Action(Verb.WALL_END))
            if why is not None:
                return why
        return self.finish(hand)

    def finish(self, hand: int, note: str = "") -> str | None:
        """Hand ``hand`` is over (its win or ``wall_end`` taken): write its result; why not (None: written)."""
        if self.hand != hand:
            if self.c.scoreboard.recorded(hand):
                return None                               # (a result delivered again after a power cut)
            return f"hand {hand} is not in play"
        scored = self.referee.result(note)
        assert scored is not None
        self.result(scored)
        return None

    # -- the result ------------------------------------------------------------------------------------------
    def result(self, scored: ScoredHand | None) -> bool:
        """Write a hand's result with the bookkeeping that says who won, the end of the game it ends and its
        ``evt/hand`` for the fleet (in one transaction); False if it was recorded before or could not be
        written."""
        c, b = self.c, self.c.book
        winner = None
        if scored is not None and scored.winners:
            winner = b.dealer if b.dealer in scored.winners else scored.winners[0]
        b.last_winner = winner
        b.last_followed = bool(scored and scored.followed)
        recorded, settled = False, {}
        with c.store.batch("hand result"):
            if scored is not None:
                recorded = c.scoreboard.record(scored)
                if recorded:
                    self.referee.recorded()
                    nxt = c.rules.next_dealer(Dealership(b.dealer, b.dealer_streak, b.long_hair), self.outcome())
                    ended = c.scoreboard.end_game_if_over(scored.hand, nxt.dealer != b.dealer)
                    settled = self._settled(scored, ended)
                    c.store.add_event("hand", settled)
            c.persist()
        if not recorded or c.store.failing or scored is None:
            return False
        if settled["game_ended"]:
            log.info("%s after hand %d: a new game starts with %d chips each", settled["game_ended"], scored.hand,
                     c.scoreboard.start_chips)
        c.bus.publish("hand.settled", **settled)
        c.bus.publish("scoreboard", chips=list(c.scoreboard.chips), hand=scored.hand)
        return True

    def _settled(self, scored: ScoredHand, ended: str | None) -> dict:
        """What ``hand.settled`` and the fleet's ``evt/hand`` carry: the verdicts with their items, every payment
        with its reason, the hand's record, the chips, whether the game ended."""
        last = self.referee.last
        return {"hand": scored.hand, "dealer": scored.dealer, "winners": list(scored.winners), "drawn": scored.drawn,
                "followed": scored.followed, "note": scored.note,
                "verdicts": [_verdict_json(v) for v in last.verdicts] if last else [],
                "payments": [p.to_json() for p in scored.payments], "record": scored.record,
                "chips": list(self.c.scoreboard.chips), "game_ended": ended}

    def outcome(self) -> HandOutcome:
        """The last hand's outcome as the bookkeeping keeps it (for the dealer rotation)."""
        b = self.c.book
        return HandOutcome((b.last_winner,) if b.last_winner is not None else (), b.last_winner is None,
                           b.last_followed)


def _verdict_json(v) -> dict:
    return {"side": v.side, "tile": v.tile, "discarder": v.discarder, "legal": v.legal, "reason": v.reason,
            "total": v.total, "unit": v.score.unit if v.score else "",
            "items": [i.to_json() for i in v.items], "liable": v.liable, "event": v.event,
            "breakdown": [{"payer": b.payer, "amount": b.amount, "items": [i.to_json() for i in b.items]}
                          for b in v.breakdown]}
