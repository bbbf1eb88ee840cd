"""Simulated players: they play legally from the simulated wall, by shanten and waits.

Each player sees only what a person would (their own tiles, the discards,
the melds).  After a draw they declare a win when the referee says it would
be legal (they check the minimum and the table's situation as a careful
player does), kong four of a kind, else discard the tile that leaves them
closest to ready (ties: honours and terminals first, then the seeded random
choice).  On a discard they claim a win when legal, and a pung, kong or chow
when it brings them closer to ready.  They play the rule set's money
(:class:`~firmware.rules.ruleset.Aims`): where a win needs a fan (竞技麻将)
they lean towards one suit; where it needs an open hand (辽宁) they claim
more eagerly; where a win needs all three suits or a 1, 9 or honour (辽宁,
锦州) they keep the last tile that gives it; they declare and claim every kong
that does not cost them a step (where kongs are paid on the spot, that is
money); where a run of one tile costs whoever started it (追牌, 跟庄) they
follow the last discard when that is as good a discard as any, and so never
start a run they could have joined.  In 四川 they pass the three loosest
tiles of their shortest suit (换三张), name the suit they hold least of as
void (定缺; ties: the one with fewer pairs and neighbours), throw its tiles
first, and once they have won in 血流成河 win again or throw what they draw.
"""

from __future__ import annotations

import random

from typing import Callable

from firmware.game.hand import Claim, HandPlay
from firmware.hands.analysis import discard_shanten, shanten
from firmware.rules.ruleset import RuleSet
from firmware.tiles.tile import counts_of

SUIT_COUNT = 3

MayWin = Callable[..., bool]     # (side, tile, discarder or None, kong_win=False) -> is it a legal win now?

SHANTEN_KEPT = 256          # hands whose shanten a player remembers (the same hands come back within a turn)


class SimPlayer:
    def __init__(self, side: int, rng: random.Random, rules: RuleSet, may_win: MayWin) -> None:
        self.side = side
        self.rng = rng
        self.shapes = rules.shapes
        self.may_win = may_win
        self.must_open = rules.aims.eager_to_open
        self.aim_for_fans = rules.aims.lean_to_flush        # a win needs a 技术型番种: one suit, or seven pairs
        self.safe_follow = rules.aims.safe_follow
        self.keeps_suits = rules.aims.keeps_suits
        self.keeps_terminal = rules.aims.keeps_terminal
        self._shanten_known: dict[tuple[tuple[int, ...], int], int] = {}
        # a person's slip: where the rules let a player keep tiles of its void suit (定缺 with ``void_first``
        # off), the chance each turn that it keeps them (and may be caught a 花猪 at a drawn end); 0: never
        self.void_slip = 0.0

    # -- helpers -------------------------------------------------------------------
    def _shanten(self, hand: list[int], declared: int) -> int:
        key = (tuple(sorted(hand)), declared)
        known = self._shanten_known.get(key)
        if known is None:
            if len(self._shanten_known) >= SHANTEN_KEPT:
                self._shanten_known.clear()           # (bounded: a long game must not grow it)
            known = self._shanten_known[key] = shanten(counts_of(hand), declared, self.shapes)
        return known

    def _best_discard(self, hand: list[int], declared: int, follow: int | None = None,
                      exposed: list[int] | tuple[int, ...] = (), keep_suit: int | None = None) -> tuple[int, int]:
        """(tile to discard, shanten after it); ``follow``: the last discard, taken when it is among the best;
        ``exposed``: the tiles of the seat's sets (for the winning conditions); ``keep_suit``: a suit not
        discarded (where another tile may be)."""
        counts = counts_of(hand)
        after = discard_shanten(counts, declared, self.shapes)
        if keep_suit is not None:
            after = {t: s for t, s in after.items() if t >= 27 or t // 9 != keep_suit} or after
        best_s = min(after.values())
        best = [tile for tile, s in sorted(after.items()) if s == best_s]
        best = self._keeping_conditions(best, hand, exposed)
        if self.aim_for_fans:
            suits = [sum(1 for k in hand if k < 27 and k // 9 == s) for s in range(3)]
            main = max(range(3), key=lambda s: suits[s])
            off_suit = [t for t in best if t < 27 and t // 9 != main]
            if off_suit:
                return (follow if follow in off_suit else self.rng.choice(off_suit)), best_s
            honours = sum(1 for k in hand if k >= 27)
            if suits[main] + honours >= 9:
                # a flush is near: give up one step of shanten to drop an off-suit tile
                for tile in sorted({t for t in hand if t < 27 and t // 9 != main}):
                    rest = list(hand)
                    rest.remove(tile)
                    s = self._shanten(rest, declared)
                    if s <= best_s + 1:
                        return tile, s
        if follow is not None and follow in best:
            return follow, best_s
        if self.keeps_terminal:
            return self.rng.choice(best), best_s
        outer = [t for t in best if t >= 27 or t % 9 in (0, 8)]
        return self.rng.choice(outer or best), best_s

    def _keeping_conditions(self, best: list[int], hand: list[int], exposed) -> list[int]:
        """The discards among ``best`` that keep what a win needs (the last tile of a suit, the last 1, 9 or
        honour), where the rule set needs it and another discard is as good."""
        tiles = list(hand) + list(exposed)
        keep = best
        if self.keeps_suits:
            keep = [t for t in keep if t >= 27 or sum(1 for k in tiles if k < 27 and k // 9 == t // 9) > 1] or keep
        if self.keeps_terminal:
            outer = [k for k in tiles if k >= 27 or k % 9 in (0, 8)]
            keep = [t for t in keep if not (t >= 27 or t % 9 in (0, 8)) or len(outer) > 1] or keep
        return keep

    @staticmethod
    def _looseness(hand: list[int], tile: int) -> int:
        """How much ``tile`` works with the rest of ``hand``: copies of it and same-suit neighbours within two."""
        return sum(1 for k in hand if k // 9 == tile // 9 and abs(k - tile) <= 2) - 1 + hand.count(tile)

    def _suit_order(self, hand: list[int]) -> list[int]:
        """The suits, fewest tiles first (ties: fewer pairs and neighbours, then m p s)."""
        def weight(suit: int) -> tuple[int, int, int]:
            tiles = [k for k in hand if k < 27 and k // 9 == suit]
            return len(tiles), sum(self._looseness(hand, k) for k in tiles), suit
        return sorted(range(SUIT_COUNT), key=weight)

    def tiles_to_pass(self, play: HandPlay) -> list[int]:
        """换三张: the loosest tiles of the shortest suit holding enough of them."""
        hand = play.seats[self.side].hand
        n = play.play.swap_tiles
        for suit in self._suit_order(hand):
            tiles = [k for k in hand if k < 27 and k // 9 == suit]
            if len(tiles) >= n:
                return sorted(tiles, key=lambda k: (self._looseness(hand, k), k))[:n]
        raise AssertionError("a hand of 13 holds three tiles of some suit")

    def void_suit(self, play: HandPlay) -> int:
        """定缺: the suit held least."""
        return self._suit_order(play.seats[self.side].hand)[0]

    # -- decisions -------------------------------------------------------------------
    def on_turn(self, play: HandPlay) -> tuple[str, int]:
        """("win", tile) | ("kong", tile) | ("discard", tile) for the seat to play."""
        seat = play.seats[self.side]
        drawn = seat.hand[-1]
        if not seat.dead and self.may_win(self.side, drawn, None, play.last_draw_was_replacement
                                          and play.last_replacement_kind == "kong"):
            return "win", drawn
        if seat.locked:
            return "discard", drawn                 # (血流成河: a winner's hand is locked)
        slip = seat.holds_void() and not play.play.void_first and self.void_slip > 0 \
            and self.rng.random() < self.void_slip
        if seat.holds_void() and not slip:
            void = [k for k in seat.hand if k < 27 and k // 9 == seat.void]
            return "discard", min(void, key=lambda k: (self._looseness(seat.hand, k), k))
        declared = len(seat.melds)
        for tile in play.can_concealed_kong(self.side) + play.can_added_kong(self.side):
            if play.wall_left > 0:
                return "kong", tile
        follow = None
        if self.safe_follow and play.last_played is not None and play.last_played[0] == (self.side - 1) % 4:
            follow = play.last_played[1]            # the left neighbour's discard: follow it, start no run
        tile, _ = self._best_discard(seat.hand, declared, follow, [k for m in seat.melds for k in m.tiles],
                                     seat.void if slip else None)
        return "discard", tile

    def on_discard(self, play: HandPlay, options: list[Claim]) -> Claim | None:
        if not options:
            return None
        seat = play.seats[self.side]
        for option in options:
            if option.kind == "win":
                return option
        declared = len(seat.melds)
        now = self._shanten(seat.hand, declared)
        best: tuple[int, Claim] | None = None
        for option in options:
            rest = list(seat.hand)
            if option.kind == "chow":
                assert play.last_discard is not None
                taken = [k for k in (option.tile, option.tile + 1, option.tile + 2) if k != play.last_discard[1]]
                for k in taken:
                    rest.remove(k)
            else:
                for _ in range(3 if option.kind == "kong" else 2):
                    rest.remove(option.tile)
            if option.kind == "kong":
                after = self._shanten(rest, declared + 1)
            else:
                _, after = self._best_discard(rest, declared + 1)
            gain = now - after
            eager = self.must_open and not seat.opened
            if gain > 0 or (gain == 0 and (eager or option.kind == "kong")):
                if best is None or after < best[0]:
                    best = (after, option)
        return best[1] if best else None
