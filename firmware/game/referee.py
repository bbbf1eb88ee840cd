"""The referee: every declared win checked by the rule set's engine, with the hand's real context.

A legal win is scored and settled by the rule set (MCR fans and 8 + B, 竞技麻将
S, the northeastern doubling); a declaration that is not legal is a false
win and pays its penalty.  The players ask ``can_win`` before declaring, as
a careful player checks the minimum; the referee does not trust them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from firmware.hands.analysis import waits
from firmware.rules.competition.liability import liable_for
from firmware.rules.competition.scorer import EXTRA_NAMES, FAN_NAMES, score_competition
from firmware.rules.competition.settlement import WinRefused
from firmware.rules.competition.settlement import false_win_payments as competition_false_win
from firmware.rules.competition.settlement import win_payments as competition_payments
from firmware.rules.mcr.payment import false_win_payments as mcr_false_win
from firmware.rules.mcr.payment import win_payments as mcr_payments
from firmware.rules.mcr.scorer import score as mcr_score
from firmware.rules.northeast import TableContext, score_northeast, settle
from firmware.rules.ruleset import RuleSetConfig
from firmware.rules.win import Win
from firmware.tiles.tile import counts_of

SEATS = 4


@dataclass
class Verdict:
    legal: bool
    total: int = 0
    fans: list[tuple[str, int, int]] = field(default_factory=list)     # (name, points, count)
    payments: list[int] = field(default_factory=lambda: [0] * SEATS)   # by seat wind (0 = East)
    reason: str = ""
    liable_wind: int | None = None                                     # 包付: the seat that paid alone


class Referee:
    WAITS_KEPT = 64             # standing hands whose waits are remembered (a few per seat)

    def __init__(self, rules: RuleSetConfig) -> None:
        self.rules = rules
        self.name = rules.rules.name
        self._waits: dict[tuple[tuple[int, ...], int], frozenset[int]] = {}

    def can_win(self, win: Win) -> bool:
        """Would this declaration be a legal win?  Asked for every discard by every seat, so the shape is
        checked first: the standing hand's waits, worked out once while the hand does not change (a seat
        is asked three times between its own turns); only a winning shape is scored."""
        if win.win_tile not in self._waits_of(win.hand, len(win.melds)):
            return False
        if self.name == "mcr":
            return mcr_score(win).meets_minimum
        if self.name == "competition":
            assert self.rules.competition is not None
            return score_competition(win, self.rules.competition).meets_minimum
        return score_northeast(win, self.rules).legal

    def _waits_of(self, hand: tuple[int, ...], declared: int) -> frozenset[int]:
        key = (tuple(sorted(hand)), declared)
        found = self._waits.get(key)
        if found is None:
            found = frozenset(waits(counts_of(hand), declared, self.rules.shape_set))
            if len(self._waits) >= self.WAITS_KEPT:
                del self._waits[next(iter(self._waits))]        # the oldest
            self._waits[key] = found
        return found

    def judge(self, win: Win, discarder_wind: int | None, chips: list[int] | None = None,
              dealer_streak: int = 0, open_winds: frozenset[int] = frozenset(), robbed_kong: bool = False,
              liable_wind: int | None = None, melds_by_wind: list[list] | None = None) -> Verdict:
        """Check and settle a declaration by the seat ``win.seat_wind``; amounts by seat wind.
        竞技麻将 包付: ``liable_wind`` names the seat that alone pays, or ``melds_by_wind`` (every
        seat's sets with who fed them) lets the referee find it."""
        winner = win.seat_wind
        if self.name == "mcr":
            s = mcr_score(win)
            if not s.meets_minimum:
                return Verdict(False, s.total, [], mcr_false_win(winner), s.reason or "under 8 fans")
            return Verdict(True, s.total, [(f.zh, f.points, n) for f, n in s.fans],
                           mcr_payments(s, winner, discarder_wind))
        if self.name == "competition":
            cfg = self.rules.competition
            assert cfg is not None
            c = score_competition(win, cfg)
            if not c.meets_minimum:
                return Verdict(False, c.total, [], competition_false_win(winner), c.reason or "no fan")
            if liable_wind is None and melds_by_wind is not None:
                liable_wind = liable_for(winner, melds_by_wind, discarder_wind,
                                         full_flush=any(k == "full_flush" for k, _ in c.fans))
            try:
                payments = competition_payments(c, winner, discarder_wind, cfg.settlement, robbed_kong=robbed_kong,
                                                double=dealer_streak > 0, chips=chips, liable=liable_wind)
            except WinRefused as exc:
                return Verdict(False, c.total, [], competition_false_win(winner), str(exc))
            fans = [(FAN_NAMES[k], p, 1) for k, p in c.fans] + [(EXTRA_NAMES[k], p, n) for k, p, n in c.extras]
            return Verdict(True, c.total, fans, payments, liable_wind=liable_wind)
        n = score_northeast(win, self.rules)
        if not n.legal:
            return Verdict(False, 0, [], [10 if s != winner else -30 for s in range(SEATS)], n.reason)
        ctx = TableContext(dealer=0, open_seats=open_winds - {winner}, chips=tuple(chips) if chips else None)
        result = settle(win, n, winner, discarder_wind, ctx, self.rules)
        return Verdict(True, result.deltas[winner], [(name, p, 1) for name, p in n.items], result.deltas)
