"""The scoreboard: chips per seat, the dealer, the round wind, the streak, and every hand's payments.

Chips are kept per physical side (players keep their seat at the table);
every hand's payments are recorded with their breakdown.  The whole board is
one document in the table database, written after every hand, so a power
cut never loses a committed score.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

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


@dataclass
class Scoreboard:
    rules: str
    chips: list[int]
    history: list[HandRecord] = field(default_factory=list)

    @classmethod
    def new(cls, rules: str, chips: int | None = None) -> "Scoreboard":
        return cls(rules, [chips if chips is not None else START_CHIPS.get(rules, 500)] * 4)

    def record(self, record: HandRecord) -> None:
        if sum(record.payments) != 0:
            raise ValueError(f"hand {record.hand}: payments {record.payments} do not sum to zero")
        self.chips = [c + d for c, d in zip(self.chips, record.payments)]
        self.history.append(record)

    @property
    def conserved(self) -> bool:
        return all(sum(h.payments) == 0 for h in self.history)

    def save(self, store: TableStore) -> None:
        store.put(scoreboard=asdict(self))

    @classmethod
    def load(cls, store: TableStore, rules: str, chips: int | None = None) -> "Scoreboard":
        data = store.get("scoreboard")
        if not data or data.get("rules") != rules:
            return cls.new(rules, chips)
        return cls(data["rules"], data["chips"], [HandRecord(**h) for h in data["history"]])
