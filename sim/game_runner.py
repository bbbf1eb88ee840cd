"""Real hands on the simulated table: simulated players play each dealt hand, the referee settles it.

When the controller publishes a deal, the runner lays out the hand from the
physical walls (what the players really have in front of them), lets the
simulated players play it turn by turn on the loop (``turn_s`` per action),
has the referee judge every declared win with the hand's context, records
the payments on the scoreboard (in the table database), tells the
controller who won (for the dealer rotation) and lets the players end the
hand at the table.
"""

from __future__ import annotations

import logging
import random
from collections import Counter, deque
from typing import TYPE_CHECKING

from firmware.game.hand import HandPlay, Phase
from firmware.game.referee import Referee
from firmware.game.scoreboard import START_CHIPS, HandRecord
from firmware.tiles.dealing import deal
from firmware.tiles.wall import Wall
from sim.players import SimPlayer

if TYPE_CHECKING:
    from sim.table_run import SimRun

log = logging.getLogger(__name__)
SIDES = 4
WINS_KEPT = 1000


class GameRunner:
    def __init__(self, run: "SimRun", seed: int, turn_s: float = 2.0) -> None:
        self.run = run
        self.loop = run.loop
        self.rules = run.rules
        self.referee = Referee(run.rules)
        self.players = [SimPlayer(side, random.Random(seed * 31 + side), run.rules, self.referee)
                        for side in range(SIDES)]
        self.turn_s = turn_s
        start = run.rules.scoreboard.chips
        self._last_chips = [start if start is not None else START_CHIPS.get(run.rules.rules.name, 500)] * SIDES
        self._delivered = 0            # the last hand the controller took the verdict of
        self.hands_recorded = 0
        self.play: HandPlay | None = None
        self.hand_no = 0
        self.dealer = 0
        self.wins: deque[dict] = deque(maxlen=WINS_KEPT)      # the most recent wins, for the report
        self.hands_won = 0
        self.fans: Counter[str] = Counter()                  # every fan scored over the game
        self.drawn = 0
        self.false_wins = 0

    @property
    def chips(self) -> list[int]:
        """The chips on the controller's scoreboard (the last known while its power is off)."""
        if self.run.controller is not None:
            self._last_chips = list(self.run.controller.scoreboard.chips)
        return self._last_chips

    # -- a hand ---------------------------------------------------------------------
    def on_deal(self, event) -> None:
        world = self.run.world
        wall = Wall.from_sides([[tuple(t.kind for t in stack) for stack in side] for side in world.walls])
        d = deal(wall, self.rules.deal_rules, tuple(event.data["dice"]), event.data["dealer"])
        self.hand_no, self.dealer = event.data["hand"], event.data["dealer"]
        round_wind = (self.hand_no - 1) // 4 % 4
        self.play = HandPlay(d, lambda p: wall[p], self.dealer, round_wind,
                             several_winners=self.rules.rules.name == "competition")
        self.loop.call_later(self.turn_s, self._step)

    def _step(self) -> None:
        play = self.play
        if play is None:
            return
        if play.phase is Phase.OVER:
            self._finish()
            return
        if play.phase is Phase.DISCARD:
            action, tile = self.players[play.turn].on_turn(play)
            if action == "win":
                play.self_drawn_win(play.turn)
            elif action == "kong":
                play.kong(play.turn, tile, self._robbers)
            else:
                play.discard(tile)
        elif play.phase is Phase.CLAIMS:
            claims = []
            for side in range(SIDES):
                options = play.claim_options(side, lambda s, t: self._can_win_on(s, t))
                choice = self.players[side].on_discard(play, options)
                if choice is not None:
                    claims.append(choice)
            play.apply(play.resolve(claims))
            if play.phase is not Phase.OVER and play.phase is not Phase.DISCARD:
                play.draw()
        self.loop.call_later(self.turn_s, self._step)

    def _can_win_on(self, side: int, tile: int) -> bool:
        assert self.play is not None
        seat = self.play.seats[side]
        discarder = self.play.last_discard[0] if self.play.last_discard else None
        if self.rules.rules.name == "competition" and discarder is not None \
                and self.chips[discarder] <= 0:
            return False                    # winning off a player with no chips is not allowed
        trial = list(seat.hand) + [tile]
        if sum(1 for _ in trial) + 3 * len(seat.melds) != 14:
            return False
        return self.referee.can_win(self.play.win_for(side, tile, False))

    def _robbers(self, kong_side: int, tile: int) -> list[int]:
        assert self.play is not None
        order = [(kong_side + i) % SIDES for i in range(1, SIDES)]
        return [s for s in order if not self.play.seats[s].dead
                and self.referee.can_win(self.play.win_for(s, tile, False, kong_win=True))]

    # -- the end of a hand ------------------------------------------------------------
    def _finish(self) -> None:
        play, self.play = self.play, None
        assert play is not None and play.result is not None
        result = play.result
        by_side = [0] * SIDES
        fans: list[list] = []
        note = ""
        winner_side: int | None = None
        if result.drawn:
            self.drawn += 1
            dbl = self.rules.doubling
            if dbl is not None and dbl.draw_dealer_pays_each:
                by_side = [dbl.draw_dealer_pays_each] * SIDES
                by_side[self.dealer] = -dbl.draw_dealer_pays_each * (SIDES - 1)
                note = "黄庄: the dealer pays each"
        for side in result.winners:
            seat = play.seats[side]
            tile = result.win_tile
            assert tile is not None
            self_drawn = result.discarder is None
            win = play.win_for(side, tile, self_drawn, kong_win=result.flags.get("kong_win", False))
            discarder_wind = None if self_drawn else (result.discarder - self.dealer) % SIDES
            chips = self.chips
            chips_by_wind = [chips[(w + self.dealer) % SIDES] for w in range(SIDES)]
            open_winds = frozenset(s.wind for s in play.seats if s.opened)
            streak = self.run.controller.book.dealer_streak if self.run.controller else 0
            melds_by_wind = [list(play.seats[(w + self.dealer) % SIDES].melds) for w in range(SIDES)]
            verdict = self.referee.judge(win, discarder_wind, chips_by_wind, streak, open_winds,
                                         robbed_kong=result.flags.get("kong_win", False) and not self_drawn,
                                         melds_by_wind=melds_by_wind)
            liable_wind = verdict.liable_wind
            for wind, amount in enumerate(verdict.payments):
                by_side[(wind + self.dealer) % SIDES] += amount
            self.run.players.lay_hand(side, _faces(seat.hand, seat.melds, None if self_drawn else tile))
            if verdict.legal:
                if winner_side is None:
                    self.hands_won += 1
                self.fans.update(name for name, _, _ in verdict.fans)
                winner_side = side if winner_side is None else winner_side
                fans += [[name, points, count] for name, points, count in verdict.fans]
                self.wins.append({"hand": self.hand_no, "winner_side": side, "winner_seat": "ESWN"[seat.wind],
                                  "self_drawn": self_drawn, "fans": [{"name": n, "points": p, "count": c}
                                                                     for n, p, c in verdict.fans],
                                  "total": verdict.total,
                                  "liable_seat": None if liable_wind is None else "ESWN"[liable_wind],
                                  "payments": {"ESWN"[w]: verdict.payments[w] for w in range(SIDES)}})
            else:
                self.false_wins += 1
                note = f"false win by side {side}: {verdict.reason}"
        record = HandRecord(self.hand_no, self.dealer, list(result.winners), result.drawn, by_side, fans, note,
                            play.round_wind)
        self._report(winner_side, record)

    def _report(self, winner_side: int | None, record: HandRecord) -> None:
        """Give the verdict to the controller (an input on its loop); during a power cut, or if the power
        went before the controller took it, give it again when it is back (recording it twice is refused)."""
        if self._delivered >= record.hand:
            self.run.players.finish_hand()
            return
        if self.run.controller is not None:
            self.run.fw_loop.post(self._deliver, winner_side, record)
        self.loop.call_later(1.0, self._report, winner_side, record)

    def _deliver(self, winner_side: int | None, record: HandRecord) -> None:
        assert self.run.controller is not None
        self.run.controller.hand_result(winner_side, record)
        if not self.run.controller.store.failing and record.hand > self._delivered:
            self._delivered = record.hand
            self.hands_recorded += 1


def _faces(hand: list[int], melds, discard: int | None) -> list[int]:
    """Every face of a declared win as the player lays it on the pad: the hand, the won discard, the sets."""
    from firmware.rules.win import MeldKind

    faces = list(hand) + ([discard] if discard is not None else [])
    for meld in melds:
        if meld.kind is MeldKind.CHOW:
            faces += [meld.tile, meld.tile + 1, meld.tile + 2]
        else:
            faces += [meld.tile] * (4 if meld.kind is MeldKind.KONG else 3)
    return faces
