"""How a rule set's scored items read on the page: the unit's name, a total, an item's value, a payer's share.

Each rule set counts its items in one unit (:attr:`RuleSet.unit
<firmware.rules.ruleset.RuleSet.unit>`): MCR in fans, 竞技麻将 in points
(the hand's score S, which the payers pay in multiples of), 辽宁 and 锦州 in
doublings (each payer pays base × 2^N, N the winner's doublings and those
that concern that payer, at most the rule set's cap).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

log = logging.getLogger(__name__)

HEADINGS = {"fan": "Fans", "point": "Points", "doubling": "Doublings"}


@dataclass(frozen=True)
class Unit:
    key: str                      # fan, point, doubling; "item" for a rule set this page cannot load
    base: int = 1                 # doubling: each payer pays base × 2^N ...
    cap: int | None = None        # ... N at most this

    @property
    def heading(self) -> str:
        return HEADINGS.get(self.key, "Items")

    @property
    def column(self) -> str:
        """The scoreboard's column of the items (lower case)."""
        return self.heading.lower()

    def value(self, points: int) -> str:
        """One item's value: a doubling as +N, a fan or point as the number."""
        return f"+{points}" if self.key == "doubling" else str(points)

    def title(self, total: int) -> str:
        """The heading of a win's items with their total: Fans (26), Points (S = 48), Doublings (+2)."""
        if self.key == "point":
            return f"Points (S = {total})"
        return f"{self.heading} ({self.value(total)})"

    def share(self, n: int) -> dict[str, Any] | None:
        """How a payer's share of ``n`` doublings is reckoned: ``base`` × 2^``power`` (``n`` up to the cap, with
        ``capped`` saying so); None in the other units (a share there is its items' sum)."""
        if self.key != "doubling":
            return None
        power = min(n, self.cap) if self.cap is not None else n
        return {"base": self.base, "power": power, "capped": f"N = {n}, at most {self.cap}" if power != n else ""}


@lru_cache(maxsize=None)
def unit_of(rules: str) -> Unit:
    """The unit of the rule set ``rules`` (a generic one, "Items", for a name this page cannot load)."""
    from firmware.rules.registry import load_ruleset

    try:
        ruleset = load_ruleset(rules)
    except ValueError as exc:                     # (ConfigError included: an unknown name, a broken file)
        log.warning("rule set %r: %s", rules, exc)
        return Unit("item")
    doubling = ruleset.config.doubling
    if doubling is not None and ruleset.unit == "doubling":
        return Unit("doubling", doubling.base, doubling.cap)
    return Unit(ruleset.unit)
