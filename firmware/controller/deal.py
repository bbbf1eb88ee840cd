"""The deal: every seat's starting tiles from the walls the reader mapped, written with the hand's first row.

When the dice have been thrown the hand begins: its number is counted in
the bookkeeping, each seat's starting hand and the first draws are read off
the verified wall map by the rule set's dealing procedure (``?`` where a
tile of a counted-only set is not known), and the hand's row, its opened
record and the bookkeeping that says it was dealt are written in one
transaction; then ``deal`` is published (the players, the report and the
page take their hands from it).
"""

from __future__ import annotations

from typing import Protocol

from firmware.controller.record import TableRecord
from firmware.controller.states import SetLocation
from firmware.controller.table_watch import TableWatch
from firmware.events import EventBus
from firmware.rules.ruleset import RuleSet
from firmware.store.seal_rows import SealRows
from firmware.tiles.dealing import deal
from firmware.tiles.tile import code

NOMINAL_EVERY_HANDS = 10      # learned movement times are written this often (and after 'diag learn')


class HandKeeper(Protocol):
    """What the controller asks of the game at the table (:class:`firmware.game.hand_in_play.HandInPlay`)."""

    def open(self, dealt: dict[int, list[str]] | None = None) -> None:
        """The deal, inside its transaction: a new record for the hand the bookkeeping has just begun."""

    def restore(self) -> None:
        """Power-on with a hand in play: its record as far as it was written."""

    def outcome(self):
        """The last hand's outcome (:class:`firmware.rules.ruleset.HandOutcome`), for the dealer rotation."""

    def may_raise(self) -> bool:
        """Between hands: may the next walls rise by themselves (False: the table stands ready for a key)?"""

    def before_raise(self) -> None:
        """The walls are about to rise (a tournament round's assignment waiting is taken then)."""

    def closed(self) -> str | None:
        """Why no wall may rise now, even for a key at ready (a table session ended: 开台 over); None: they may."""

    def unrecorded(self) -> int | None:
        """The hand in play whose result is not written yet (None: none, or its result is written)."""

    def void(self, why: str) -> bool:
        """End the hand in play without its result: write it as a void hand (``void: WHY`` in its note, the money
        paid so far kept); True when it is written (or was before)."""


def deal_hand(record: TableRecord, rules: RuleSet, hand: HandKeeper, bus: EventBus, dice: tuple[int, ...],
              now_s: float, save_nominal, sealed: tuple[str, str, str] | None = None,
              dice_by: str = "physical", watch: TableWatch | None = None) -> None:
    """Begin the next hand with ``dice`` (``save_nominal()`` writes the learned movement times now and then);
    ``sealed``: (set id, commitment, preimage) of the walls on the table, ``dice_by``: how the dice were thrown;
    ``watch`` scores the wall and the starting hands for shuffle bias."""
    b = record.book
    on_table = b.sets_at(SetLocation.TABLE)
    set_id = on_table[0] if on_table else "?"
    wall = b.wall(set_id)
    b.hand += 1
    b.hand_open = True              # (kept with the hand's row: a restart goes on playing this hand)
    hands: dict[int, list[str]] = {}
    first: list[str] = []
    if wall is not None:
        d = deal(wall, rules.deal_rules, dice, b.dealer)
        hands = {side: [code(k) if k is not None else "?" for k in d.hand_tiles(wall, side)] for side in d.hands}
        first = [str(p) for p in d.live[:4]]
        if watch is not None:
            watch.dealt(b.hand, wall, {side: d.hand_tiles(wall, side) for side in d.hands})
    store = record.store
    with store.batch(f"deal of hand {b.hand}"):
        store.start_hand(b.hand, set_id, b.dealer, list(dice), now_s)
        if sealed is not None and sealed[0] == set_id:
            SealRows(store).seal_hand(b.hand, set_id, sealed[1], sealed[2], dice_by)
        hand.open(hands)
        record.persist()
        if watch is not None:
            store.put(fairness=watch.fairness.to_dict())     # (a few numbers: the charts go on after a restart)
        if b.hand % NOMINAL_EVERY_HANDS == 1:
            save_nominal()          # what the mechanisms learned (their medians move slowly)
    bus.publish("deal", hand=b.hand, set_id=set_id, dealer=b.dealer, dice=dice, hands=hands,
                first_draws=first, wall=b.wall_mode(set_id), dice_by=dice_by,
                commitment=sealed[1] if sealed is not None and sealed[0] == set_id else None)
