"""Simulated players: they play legally from the simulated wall, by shanten and waits.

Each player sees only what a person would (their own tiles, the discards,
the melds).  After a draw they declare a win when the referee's rules allow
it (they check the minimum as a careful player does), kong four of a kind,
else discard the tile that leaves them closest to ready (ties: honours and
terminals first, then the seeded random choice).  On a discard they claim a
win when legal, and a pung, kong or chow when it brings them closer to
ready; players of rule sets that must open (辽宁) claim more eagerly.
"""

from __future__ import annotations

import random

from firmware.game.hand import Claim, HandPlay
from firmware.game.referee import Referee
from firmware.hands.analysis import discard_shanten, shanten
from firmware.rules.ruleset import RuleSetConfig
from firmware.tiles.tile import counts_of

SHANTEN_KEPT = 256          # hands whose shanten a player remembers (the same hands come back within a turn)


class SimPlayer:
    def __init__(self, side: int, rng: random.Random, rules: RuleSetConfig, referee: Referee) -> None:
        self.side = side
        self.rng = rng
        self.shapes = rules.shape_set
        self.referee = referee
        self.must_open = bool(rules.conditions and rules.conditions.must_open)
        # 竞技麻将 needs a 技术型番种: lean towards one suit (混一色 / 清一色) or seven pairs
        self.aim_for_fans = rules.rules.name == "competition"
        self._shanten_known: dict[tuple[tuple[int, ...], int], int] = {}

    # -- helpers -------------------------------------------------------------------
    def _shanten(self, hand: list[int], declared: int) -> int:
        key = (tuple(sorted(hand)), declared)
        known = self._shanten_known.get(key)
        if known is None:
            if len(self._shanten_known) >= SHANTEN_KEPT:
                self._shanten_known.clear()           # (bounded: a long game must not grow it)
            known = self._shanten_known[key] = shanten(counts_of(hand), declared, self.shapes)
        return known

    def _best_discard(self, hand: list[int], declared: int) -> tuple[int, int]:
        """(tile to discard, shanten after it)."""
        counts = counts_of(hand)
        after = discard_shanten(counts, declared, self.shapes)
        best_s = min(after.values())
        best = [tile for tile, s in sorted(after.items()) if s == best_s]
        if self.aim_for_fans:
            suits = [sum(1 for k in hand if k < 27 and k // 9 == s) for s in range(3)]
            main = max(range(3), key=lambda s: suits[s])
            off_suit = [t for t in best if t < 27 and t // 9 != main]
            if off_suit:
                return self.rng.choice(off_suit), best_s
            honours = sum(1 for k in hand if k >= 27)
            if suits[main] + honours >= 9:
                # a flush is near: give up one step of shanten to drop an off-suit tile
                for tile in sorted({t for t in hand if t < 27 and t // 9 != main}):
                    rest = list(hand)
                    rest.remove(tile)
                    s = self._shanten(rest, declared)
                    if s <= best_s + 1:
                        return tile, s
        outer = [t for t in best if t >= 27 or t % 9 in (0, 8)]
        return self.rng.choice(outer or best), best_s

    # -- decisions -------------------------------------------------------------------
    def on_turn(self, play: HandPlay) -> tuple[str, int]:
        """("win", tile) | ("kong", tile) | ("discard", tile) for the seat to play."""
        seat = play.seats[self.side]
        drawn = seat.hand[-1]
        if not seat.dead and self.referee.can_win(play.win_for(self.side, drawn, True)):
            return "win", drawn
        declared = len(seat.melds)
        for tile in play.can_concealed_kong(self.side) + play.can_added_kong(self.side):
            if play.wall_left > 0:
                return "kong", tile
        tile, _ = self._best_discard(seat.hand, declared)
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
