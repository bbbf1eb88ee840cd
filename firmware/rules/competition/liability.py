"""竞技麻将 包付 from three consecutive claims: who alone pays for a win because of how the sets were fed.

When a player's first three claimed sets all came from the same player (下家
chowing or punging 上家's discards three times in a row, or one player punged
three times by the same player), the two are tied: if the claimant wins,
even by self-draw, the feeder alone pays 3·S; if the feeder wins, the
claimant alone pays 3·S ("互相包牌").  The 清一色 and 全求独钓 dangers of the
rules need the discards' order and what a player "should" have known; the
game passes those as an explicit liable seat instead.
"""

from __future__ import annotations

from firmware.rules.win import Meld

SEATS = 4
OFFSET = {"left": 1, "opposite": 2, "right": 3}      # the feeder relative to the claimant, as in Meld.source


def tied_pairs(melds_by_seat: list[list[Meld]]) -> list[tuple[int, int]]:
    """(claimant, feeder) for every seat whose first three claimed sets came from one feeder."""
    pairs = []
    for seat, melds in enumerate(melds_by_seat):
        claimed = [m.source for m in melds if m.source is not None]
        if len(claimed) >= 3 and claimed[0] == claimed[1] == claimed[2]:
            pairs.append((seat, (seat - OFFSET[claimed[0]]) % SEATS))
    return pairs


def liable_for(winner: int, melds_by_seat: list[list[Meld]]) -> int | None:
    """The seat that alone pays for ``winner``'s win under 包付, or None."""
    for claimant, feeder in tied_pairs(melds_by_seat):
        if winner == claimant:
            return feeder
        if winner == feeder:
            return claimant
    return None
