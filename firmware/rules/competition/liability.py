"""竞技麻将 包付: who alone pays for a win (3·S) because of how the winner's sets were fed.

* Three consecutive claims: when a player's first three claimed sets all
  came from the same player (下家 chowing or punging 上家's discards three
  times in a row, or one player punged three times by the same player), the
  two are tied: if the claimant wins, even by self-draw, the feeder alone
  pays; if the feeder wins, the claimant alone pays ("互相包牌").
* 清一色 danger: once a player's three claimed sets show one suit, whoever
  feeds a further claim of that player, or discards into the 清一色 win,
  pays for all three.

The 全求独钓 danger (discarding near the hung tile) needs what the other
players could see of the hung tile; a referee passes that liable seat by
hand (``table.liable`` in the score command).
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


def liable_for(winner: int, melds_by_seat: list[list[Meld]], discarder: int | None = None,
               full_flush: bool = False) -> int | None:
    """The seat that alone pays for ``winner``'s win under 包付, or None.  ``full_flush``: the win
    scores 清一色; ``discarder``: who discarded the winning tile (None: self-drawn)."""
    for claimant, feeder in tied_pairs(melds_by_seat):
        if winner == claimant:
            return feeder
        if winner == feeder:
            return claimant
    if full_flush:
        claimed = [m for m in melds_by_seat[winner] if m.source is not None]
        if len(claimed) >= 3 and _one_suit(claimed[:3]):
            if len(claimed) >= 4:
                return (winner - OFFSET[claimed[3].source]) % SEATS     # fed a further 清一色 claim
            if discarder is not None:
                return discarder                                        # discarded into the 清一色
    return None


def _one_suit(melds: list[Meld]) -> bool:
    suits = {k // 9 for m in melds for k in m.tiles}
    return len(suits) == 1 and min(suits) < 3
