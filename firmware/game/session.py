"""The front door to a running table: what the CLI, the diagnostics, the web page (through them) and the fleet use.

A table in play is three objects the composition root puts together: the
controller (the state machine that drives the mechanisms), the hand in play
(the referee and the hand's record) and the scoreboard.  Whoever serves
people talks to this session instead of reaching into any one of them: what
the table is doing (:meth:`TableSession.get_status`, per component), the
referee's inputs (``hand``), the chips (``scoreboard``), a technician's
acknowledge (``ack``).
"""

from __future__ import annotations

from typing import Any, Iterable

from firmware.controller.bookkeeping import Bookkeeping
from firmware.controller.controller import Controller
from firmware.faults import Fault
from firmware.game.hand_in_play import HandInPlay
from firmware.game.rounds import Rounds
from firmware.game.scoreboard import Scoreboard
from firmware.game.staff import Staff
from firmware.reader.registry import TileRegistry
from firmware.rules.ruleset import RuleSet
from firmware.store.table_store import TableStore
from firmware.table import Table


class TableSession:
    def __init__(self, controller: Controller, hand: HandInPlay, scoreboard: Scoreboard) -> None:
        self.controller, self.hand, self.scoreboard = controller, hand, scoreboard

    # -- what the table is and does ----------------------------------------------------------------
    @property
    def table(self) -> Table:
        return self.controller.table

    @property
    def state(self) -> str:
        return self.controller.state

    @property
    def book(self) -> Bookkeeping:
        return self.controller.book

    @property
    def fault(self) -> Fault | None:
        return self.controller.fault

    @property
    def rules(self) -> RuleSet:
        return self.controller.rules

    @property
    def store(self) -> TableStore:
        return self.controller.record.store

    @property
    def rounds(self) -> Rounds | None:
        """A tournament round's assignment at this table (:mod:`firmware.game.rounds`)."""
        return self.hand.rounds

    @property
    def staff(self) -> Staff | None:
        """Names at the seats, games and the table session (开台) staff run (:mod:`firmware.game.staff`)."""
        return self.hand.staff

    @property
    def registry(self) -> TileRegistry:
        return self.controller.stacker.registry

    def get_status(self, components: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
        """The table's status, every component or the ones named (:mod:`firmware.game.status`)."""
        from firmware.game.status import StatusSource

        return StatusSource.of(self).get_status(components)

    # -- what people may do -------------------------------------------------------------------------
    def switch_rules(self, rules: RuleSet) -> None:
        """Play ``rules`` from the next game on (between games; a rule set of the table's tile set, which the
        caller checked): the controller (the dice, the dealer rotation), the hand in play's referee, the
        scoreboard and the rounds all play it.  The caller starts the next game."""
        if rules.tile_set != self.rules.tile_set:
            raise ValueError(f"rule set {rules.name} plays {rules.tile_set} tiles, this table {self.rules.tile_set}")
        self.controller.use_rules(rules)
        self.hand.use_rules(rules)
        if self.staff is not None:
            self.staff.remember_rules(rules.name)          # (a power cut does not switch it back)
        self.table.bus.publish("staff.rules", rules=rules.name)

    def ack(self) -> str | None:
        """A technician acknowledges the latched fault; why not (None: done)."""
        return self.controller.ack()
