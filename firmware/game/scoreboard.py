"""The scoreboard: chips per seat for the game being played, and every hand's result and payments.

Chips are kept per physical side (players keep their seat at the table).
Everything is rows in the table database, appended, never a rewritten
document: one per hand's result, one per payment with its reason, and the
chips updated in the same transaction (so a power cut never loses a
committed score and a hand is never counted twice: its row is keyed by the
hand number).  Changing the rule set starts a new game with the rule set's
starting chips; the old game's rows stay.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from firmware.controller.store import TableStore

START_CHIPS = {"mcr": 500, "competition": 100, "liaoning": 500, "jinzhou": 500}


@dataclass
class HandRecord:
    hand: int
    dealer: int
    winners: list[int]                 # sides
    drawn: bool
    payments: list[int]                # by side, summing to zero
    fans: list[list] = field(default_factory=list)
    note: str = ""
    round_wind: int = 0                # 0..3 = E S W N
    reason: str = "hand"               # why the money moved (kept with every payment row)


class Scoreboard:
    def __init__(self, store: TableStore, rules: str, chips: int | None = None, first_hand: int = 1) -> None:
        self.store = store
        self.rules = rules
        self.start_chips = chips if chips is not None else START_CHIPS.get(rules, 500)
        self.game = store.current_game(rules, self.start_chips, first_hand)
        if self.game:
            self.start_chips = store.game_start(self.game)      # the game's own start (the config may differ)
        self.chips: list[int] = store.chips(self.game) if self.game else [self.start_chips] * 4

    def record(self, record: HandRecord) -> bool:
        """Write a hand's result and payments (in the caller's batch, if any); False if it was recorded before
        or could not be written."""
        if sum(record.payments) != 0:
            raise ValueError(f"hand {record.hand}: payments {record.payments} do not sum to zero")
        payments = [(side, amount, record.reason) for side, amount in enumerate(record.payments) if amount]
        written = self.store.record_result(self.game, record.hand, record.dealer, list(record.winners),
                                           record.drawn, payments, record.fans, record.note, record.round_wind)
        if written:
            self.chips = [c + d for c, d in zip(self.chips, record.payments)]
        return written

    def recorded(self, hand: int) -> bool:
        return self.store.has_result(hand)

    def hands(self, since: int = 0) -> list[HandRecord]:
        """The game's recorded hands after hand ``since``, oldest first (read from the database)."""
        return [HandRecord(h["hand"], h["dealer"], h["winners"], h["drawn"], h["payments"],
                           [list(f) for f in h["fans"]], h["note"], h["round_wind"])
                for h in self.store.hand_results(self.game, since=since)]

    def conserved(self) -> bool:
        """Checked independently of the recording: the payment rows sum to zero and every side's chips are
        its start plus its payments."""
        paid = self.store.paid(self.game)
        return sum(paid) == 0 and self.store.chips(self.game) == [self.start_chips + p for p in paid] \
            and self.chips == self.store.chips(self.game)
