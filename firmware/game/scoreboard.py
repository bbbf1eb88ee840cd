"""The scoreboard: chips per side for the game being played, every hand's result, record and payments.

Chips are kept per physical side (players keep their seat at the table).
Everything is rows in the table database, appended, never a rewritten
document (:mod:`firmware.store.score_rows`): one per game (局), one per
hand's result with the hand's record, one per payment with its reason.
Money paid on the spot (kongs, 追牌, 跟庄, penalties) is written when it
happens; the rest of a hand's money with its result, the chips in the same
transaction, so a power cut never loses a committed score and nothing is
counted twice.  When the rule set ends a game (竞技麻将's 局结) the next
starts with fresh chips; changing the rule set also starts a new game, and
the old games' rows stay.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

from firmware.store.score_rows import ScoreRows
from firmware.rules.money import PENALTY_PREFIX, REASONS, Payment, Reason, deltas
from firmware.rules.ruleset import RuleSet

if TYPE_CHECKING:
    from firmware.store.table_store import TableStore
    from firmware.rules.settlement import HandSettlement

SIDES = 4


@dataclass
class ScoredHand:
    """A hand's result as the scoreboard keeps it."""

    hand: int
    dealer: int
    winners: list[int]                 # sides with a legal win
    drawn: bool
    payments: list[Payment] = field(default_factory=list)      # all of the hand's (the ones written already kept)
    items: list[dict[str, Any]] = field(default_factory=list)  # the winners' items: name, key, en, points, count
    note: str = ""
    round_wind: int = 0                # 0..3 = E S W N
    record: str = ""                   # the hand's record as JSON ("" when there is none)
    followed: bool = False             # 跟庄
    first_discarder: int | None = None  # the hand's first win was several on one discard (一炮多响): the discarder

    @property
    def by_side(self) -> list[int]:
        return deltas(self.payments)

    @classmethod
    def of(cls, settlement: "HandSettlement", note: str = "") -> "ScoredHand":
        record = settlement.record
        items = [dict(i.to_json(), side=v.side) for v in settlement.verdicts if v.legal for i in v.items]
        false = [f"false win by side {v.side}: {v.reason}" for v in settlement.verdicts if not v.legal]
        return cls(record.hand, record.dealer, settlement.winners, settlement.drawn, list(settlement.payments),
                   items, "; ".join([*false, *([note] if note else [])]), record.round_wind,
                   json.dumps(record.to_json(), ensure_ascii=False, separators=(",", ":")), settlement.followed,
                   settlement.outcome.discarder)


class Scoreboard:
    def __init__(self, store: "TableStore", rules: RuleSet, first_hand: int = 1) -> None:
        self.store = store
        self.rules = rules
        self.rows = ScoreRows(store)
        self.start_chips = rules.start_chips
        self.game = self.rows.current_game(rules.name, self.start_chips, first_hand)
        if self.game:
            self.start_chips = self.rows.game_start(self.game)     # the game's own start (the config may differ)
        self.chips: list[int] = self.rows.chips(self.game) if self.game else [self.start_chips] * SIDES
        self.chosen_chips: int | None = None      # staff's chips for the next games (None: the rule set's)

    # -- writing --------------------------------------------------------------------------------------------
    def pay(self, hand: int, payments: list[Payment]) -> bool:
        """Money paid on the spot during ``hand`` (in the caller's batch, if any); a payment written before is
        not written or counted again.  False if it could not be written."""
        new = self.rows.add_payments(self.game, hand, payments)
        if self.store.failing:
            return False
        d = deltas(new)
        self.chips = [c + x for c, x in zip(self.chips, d)]
        return True

    def record(self, scored: ScoredHand) -> bool:
        """Write a hand's result with the payments not yet written (in the caller's batch, if any); False if it
        was recorded before or could not be written."""
        if sum(scored.by_side) != 0:
            raise ValueError(f"hand {scored.hand}: payments {scored.by_side} do not sum to zero")
        chips = list(self.chips)
        with self.store.batch(f"result of hand {scored.hand}"):
            if not self.rows.record_result(self.game, scored.hand, scored.dealer, list(scored.winners), scored.drawn,
                                           scored.items, scored.note, scored.round_wind, scored.record):
                return False
            new = self.rows.add_payments(self.game, scored.hand, scored.payments)
        if self.store.failing:
            return False
        self.chips = [c + x for c, x in zip(chips, deltas(new))]
        return True

    def end_game_if_over(self, hand: int, deal_passes: bool) -> str | None:
        """After recording ``hand`` (in its transaction): if the rule set ends the game here (局结), end it; its
        final chips stand until the next hand is dealt, which starts the next game (:meth:`begin_hand`).  The
        reason (None: the game goes on).  ``deal_passes``: the hand passes the deal on."""
        passes = 0
        if self.rules.match_rounds:         # (a game that never ends by rounds may run for years: not read)
            dealers = self.rows.dealers(self.game)
            passes = sum(1 for a, b in zip(dealers, dealers[1:]) if a != b) + int(deal_passes)
        reason = self.rules.match_end(self.chips, passes // SIDES)
        if reason is None:
            return None
        self.rows.end_game(self.game, hand, reason)
        return reason

    def end_game(self, hand: int, reason: str, extra: dict[str, Any] | None) -> None:
        """(in the caller's batch) The game in play ends after ``hand`` (a round's end, or an assignment taken)."""
        self.rows.end_game(self.game, hand, reason, extra)

    def start_game(self, first_hand: int, extra: dict[str, Any] | None, chips: int | None = None) -> int:
        """(in the caller's batch) A new game with fresh chips from ``first_hand`` (a round's: ``extra`` says which;
        ``chips``: each side's start, default the rule set's)."""
        start = chips if chips is not None else self.rules.start_chips
        self.game = self.rows.new_game(self.rules.name, start, first_hand, extra)
        self.start_chips = start
        self.chips = [self.start_chips] * SIDES
        return self.game

    def use_rules(self, rules: RuleSet) -> None:
        """The table switched its rule set (between games: the caller starts the next game)."""
        self.rules = rules

    def begin_hand(self, hand: int) -> None:
        """The deal of ``hand`` (in its transaction): after a game that ended, the next starts with fresh chips."""
        if not self.rows.ended(self.game):
            return
        start = self.chosen_chips if self.chosen_chips is not None else self.rules.start_chips
        self.game = self.rows.new_game(self.rules.name, start, hand)
        self.start_chips = start
        self.chips = [self.start_chips] * SIDES

    # -- reading --------------------------------------------------------------------------------------------
    def recorded(self, hand: int) -> bool:
        return self.rows.has_result(hand)

    def chips_before(self, hand: int) -> list[int]:
        """Each side's chips at the deal of ``hand`` of the game being played."""
        return self.rows.chips_before(self.game, hand)

    def reason(self, key: str) -> Reason:
        """The reason of a stored payment (a penalty by the rule set's name for it)."""
        if key.startswith(PENALTY_PREFIX) and key[len(PENALTY_PREFIX):] in self.rules.config.penalties:
            return self.rules.penalty_reason(key[len(PENALTY_PREFIX):])
        return REASONS.get(key, Reason(key, key, key))

    def hands(self, since: int = 0, limit: int | None = None, all_games: bool = False) -> list[ScoredHand]:
        """The game's recorded hands after hand ``since``, oldest first (read from the database); ``all_games``:
        of every game (局) since, not only the one being played."""
        return [self._scored(h) for h in self.rows.hand_results(None if all_games else self.game, since=since,
                                                                limit=limit)]

    def each_hand(self, since: int = 0, all_games: bool = False, page: int = 256) -> Iterator[ScoredHand]:
        """The hands :meth:`hands` gives, read ``page`` at a time: a summary of a long history holds one page of
        it in memory, not all of it."""
        game = None if all_games else self.game
        while True:
            rows = self.rows.hand_results_after(game, since, page)
            for h in rows:
                yield self._scored(h)
            if len(rows) < page:
                return
            since = rows[-1]["hand"]

    def _scored(self, h: dict) -> ScoredHand:
        payments = [Payment(p["payer"], p["payee"], p["amount"], self.reason(p["reason"]), p["event"], p["held"])
                    for p in h["money"]]
        return ScoredHand(h["hand"], h["dealer"], h["winners"], h["drawn"], payments, h["fans"], h["note"],
                          h["round_wind"], h["record"])

    def games(self, limit: int = 20) -> list[dict[str, Any]]:
        return self.rows.games(limit)

    def conserved(self, games: int = 100) -> bool:
        """Checked independently of the recording, for the newest ``games`` games: each side's chips are its
        start plus the payment rows, the rows (held ones too) sum to zero, and the kept chips are the stored
        ones."""
        for game in self.rows.games(limit=games):
            paid = self.rows.paid(game["game"])
            if sum(paid) != 0 or sum(self.rows.held(game["game"])) != 0 \
                    or game["chips"] != [game["start_chips"] + p for p in paid]:
                return False
        return self.chips == self.rows.chips(self.game)
