"""The referee of the hand in play: the hand's record, settled action by action, and the scoreboard rows it makes.

Whoever knows what happened at the table tells the referee, one action of
the hand's record at a time (:mod:`firmware.rules.hand_record`): the
simulated players every draw, discard and claim; a person at a real table
what the table cannot see (``mjtable diag judge`` the sets and the win, taken all
together or not at all, ``penalty`` a penalty, ``kong`` a kong when it is
made, ``drawn`` the wall's end).  Each action is settled at once
(:class:`~firmware.rules.settlement.Settler`); money paid on the spot
(kongs, 追牌, 跟庄, penalties) is written to the scoreboard in the same
transaction as the record's rows so far, the other rows wait for the next
such write or the hand's result (a few transactions per hand, not one per
tile).  After a power cut the record is read back from those rows and the
players send again what was lost; a sender's ``seq`` numbers its actions
so that nothing is taken twice.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Callable

from firmware.i18n import worded
from firmware.store.score_rows import ScoreRows
from firmware.game.scoreboard import Scoreboard, ScoredHand
from firmware.rules.hand_record import Action, BadRecord, HandRecord, in_paying_order, parse_action
from firmware.rules.money import Payment
from firmware.rules.ruleset import RuleSet
from firmware.rules.settlement import HandSettlement, Settler, WinVerdict, settle_hand

log = logging.getLogger(__name__)
Publish = Callable[..., None]


class TableReferee:
    def __init__(self, rules: RuleSet, scoreboard: Scoreboard, publish: Publish) -> None:
        self.rules = rules
        self.scoreboard = scoreboard
        self.store = scoreboard.store
        self.rows = ScoreRows(self.store)
        self.publish = publish
        self.record: HandRecord | None = None
        self.settler: Settler | None = None
        self.last_seq = 0                  # the highest sender ``seq`` taken in this hand
        self._unsaved: list[tuple[int, int | None, str]] = []
        self.last: HandSettlement | None = None
        self.pending: list[Action] = []     # wins judged on one discard waiting for the last winner (not taken)

    @property
    def hand(self) -> int | None:
        return self.record.hand if self.record is not None else None

    # -- a hand begins ----------------------------------------------------------------------------------
    def open(self, hand: int, dealer: int, round_wind: int, streak: int, long_hair: int,
             dealt: dict[int, str] | None = None) -> HandRecord:
        """A new hand's record, its chips those at the deal, ``dealt`` the starting tiles the reader knew (in the
        caller's batch: the deal's)."""
        self._start(HandRecord(self.rules.name, hand, dealer, round_wind, streak, long_hair,
                               tuple(self.scoreboard.chips), dealt=dict(dealt or {})))
        self.rows.clear_log(keep_hand=hand)
        assert self.record is not None
        return self.record

    def restore(self, hand: int, dealer: int, round_wind: int, streak: int, long_hair: int) -> None:
        """At power-on with a hand in play: its record as far as it was written (the money it made is on the
        scoreboard already, so replaying it pays nothing again)."""
        self._start(HandRecord(self.rules.name, hand, dealer, round_wind, streak, long_hair,
                               tuple(self.scoreboard.chips_before(hand))))
        assert self.settler is not None and self.record is not None
        for event, seq, line in self.rows.logged_actions(hand):
            try:
                action = parse_action(line, event)
                if event != len(self.record.actions):
                    raise worded(BadRecord, "action %(event)s of hand %(hand)s follows action %(last)s", event=event,
                                 hand=hand, last=len(self.record.actions) - 1)
                self.settler.add(action)
            except BadRecord as exc:
                log.error("hand %d: the stored record stops at action %d: %s", hand, len(self.record.actions), exc)
                break
            self.last_seq = max(self.last_seq, seq or 0)

    def _start(self, record: HandRecord) -> None:
        self.record = record
        self.settler = Settler(self.rules, record)
        self.last_seq = 0
        self._unsaved = []
        self.pending = []

    # -- the hand's actions -------------------------------------------------------------------------------
    def take(self, action: Action, seq: int | None = None) -> list[Payment]:
        """Settle ``action`` (``seq``: the sender's number for it; one taken before is ignored): the payments it
        makes, written at once.  BadRecord when it cannot have happened (nothing is taken)."""
        if self.settler is None or self.record is None:
            raise worded(BadRecord, "no hand in play")
        if seq is not None and seq <= self.last_seq:
            return []
        settler = self.settler
        before = len(self.record.actions)
        try:
            payments = settler.add(action)
        except BadRecord:
            del self.record.actions[before:]
            raise
        event = before
        self._unsaved.append((event, seq, action.text()))
        if seq is not None:
            self.last_seq = seq
        if payments:
            with self.store.batch(f"hand {self.record.hand} action {event}"):
                self._save()
                self.scoreboard.pay(self.record.hand, payments)
            self.publish("hand.money", hand=self.record.hand, event=event, action=action.text(),
                         payments=[p.to_json() for p in payments], chips=list(self.scoreboard.chips))
        return payments

    def take_all(self, actions: list[Action]) -> list[Payment]:
        """Settle ``actions`` together, all of them or none (several wins on one discard among them in the order they
        are paid, 下家 first): the hand's record so far with them is settled first
        (on a copy), and when one of them cannot have happened (BadRecord) nothing is taken; else they are taken
        in one transaction.  The payments they make."""
        if self.settler is None or self.record is None:
            raise worded(BadRecord, "no hand in play")
        actions = in_paying_order(list(actions))
        trial = dataclasses.replace(self.record, actions=list(self.record.actions) + list(actions))
        settle_hand(self.rules, trial)
        payments: list[Payment] = []
        with self.store.batch(f"hand {self.record.hand} actions {len(self.record.actions)}.."):
            for action in actions:
                payments += self.take(action)
        return payments

    def _save(self) -> None:
        assert self.record is not None
        self.rows.log_actions(self.record.hand, self._unsaved)
        if not self.store.failing:
            self._unsaved = []

    def judge(self, action: Action) -> WinVerdict:
        """The verdict ``action`` (a win) would get now; nothing is taken."""
        if self.settler is None:
            raise worded(BadRecord, "no hand in play")
        return self.settler.judge(action)

    def settlement(self) -> HandSettlement | None:
        return self.settler.result() if self.settler is not None else None

    # -- the hand's end ------------------------------------------------------------------------------------------
    def result(self, note: str = "") -> ScoredHand | None:
        """The hand's result for the scoreboard (None: no hand in play)."""
        settled = self.settlement()
        if settled is None:
            return None
        self.last = settled
        return ScoredHand.of(settled, note)

    def recorded(self) -> None:
        """The hand's result is written (in the caller's batch): its record rows are no longer needed."""
        self.rows.clear_log()
        self._unsaved = []
