"""The referee at a table in play: a quick "would this win be legal?" and the hand's settlement.

Every declared win is checked by the rule set with the hand's real context
(:mod:`firmware.rules.settlement`): the shape, the rule set's conditions or
minimum, a dead hand, a discarder with no points, a forbidden 局结; a
declaration that is not legal is a false win and pays its penalty.  The
simulated players ask :meth:`Referee.can_win` (the tiles) and then the
table's referee (the hand's situation) before declaring, as a careful player
checks the minimum; the settlement does not trust them.
"""

from __future__ import annotations

from firmware.hands.analysis import waits
from firmware.rules.ruleset import RuleSet
from firmware.rules.win import Win
from firmware.tiles.tile import counts_of


class Referee:
    WAITS_KEPT = 64             # standing hands whose waits are remembered (a few per seat)

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self._waits: dict[tuple[tuple[int, ...], int], frozenset[int]] = {}

    def can_win(self, win: Win) -> bool:
        """Is this a legal win by the tiles alone?  Asked for every discard by every seat, so the shape is
        checked first: the standing hand's waits, worked out once while the hand does not change (a seat
        is asked three times between its own turns); only a winning shape is scored."""
        if win.win_tile not in self._waits_of(win.hand, len(win.melds)):
            return False
        return self.rules.score(win).legal

    def waits_of(self, hand: tuple[int, ...], declared: int) -> frozenset[int]:
        """The tiles that complete the standing ``hand`` in shape (remembered while the hand does not change)."""
        return self._waits_of(hand, declared)

    def _waits_of(self, hand: tuple[int, ...], declared: int) -> frozenset[int]:
        key = (tuple(sorted(hand)), declared)
        found = self._waits.get(key)
        if found is None:
            found = frozenset(waits(counts_of(hand), declared, self.rules.shapes))
            if len(self._waits) >= self.WAITS_KEPT:
                del self._waits[next(iter(self._waits))]        # the oldest
            self._waits[key] = found
        return found
