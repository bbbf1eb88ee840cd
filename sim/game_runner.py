"""Real hands on the simulated table: simulated players play each dealt hand, the table's referee settles it.

When the controller publishes a deal, the runner lays out the hand from the
physical walls (what the players really have in front of them) and lets the
simulated players play it turn by turn on the loop (``turn_s`` per action).
Every action of the hand (:class:`~firmware.game.hand.HandPlay` writes them)
goes to the controller's referee as an input on its loop, numbered, so that
after a power cut the players send again what the controller lost; they
wait while the table is switched off.  Before declaring a win a player asks
the referee whether it would be legal (the minimum, a dead hand, a discarder
with no points, a 局 that may not end so).  Money paid on the spot (kongs,
追牌, 跟庄) is the referee's business; at the end of the hand the runner
tells it the hand is over, lays the winner's tiles on the seat pad and lets
the people end the hand at the table.
"""

from __future__ import annotations

import json
import logging
import random
from collections import Counter, deque
from typing import TYPE_CHECKING, Any

from firmware.events import Event
from firmware.game.hand import HandPlay, Phase
from firmware.game.referee import Referee
from firmware.rules.hand_record import Action, BadRecord
from firmware.tiles.dealing import deal
from firmware.tiles.wall import Wall
from sim.players import SimPlayer

if TYPE_CHECKING:
    from sim.table_run import SimRun

log = logging.getLogger(__name__)
SIDES = 4
WINS_KEPT = 1000
WAIT_S = 1.0                 # the players look again this often while the table's referee is not there


class GameRunner:
    def __init__(self, run: "SimRun", seed: int, turn_s: float = 2.0) -> None:
        self.run = run
        self.loop = run.loop
        self.rules = run.rules
        self.referee = Referee(run.rules)
        self.players = [SimPlayer(side, random.Random(seed * 31 + side), run.rules, self.may_win)
                        for side in range(SIDES)]
        self.seed = seed
        self.turn_s = turn_s
        self.play: HandPlay | None = None
        self.hand_no = 0
        self.dealer = 0
        self._sent: list[Action] = []          # this hand's actions, in order (seq = index + 1)
        # the most recent wins, for the report: each as its JSON text (a third of the memory of its dicts)
        self._wins: deque[str] = deque(maxlen=WINS_KEPT)
        self.hands_won = 0
        self.hands_recorded = 0
        self.fans: Counter[str] = Counter()                  # every fan scored over the game
        self.money: Counter[str] = Counter()                 # payments over the game, by reason: how many
        self.money_amount: Counter[str] = Counter()          # ... and how much
        self.drawn = 0
        self.winners_per_hand: Counter[int] = Counter()     # hands by how many sides won them (四川: up to three)
        self.false_wins = 0
        self.refused = 0                                     # actions the referee refused (a bug: must stay 0)
        # the first refusal (hand, seq, action, why): the players stop there (sending a refused action again would
        # be refused again, for ever) and the run ends, failed
        self.refusal: dict[str, Any] | None = None
        self.games_ended: list[dict] = []

    def use_rules(self, rules) -> None:
        """The table switched its rule set between games (staff, a round's assignment): the players play it."""
        self.rules = rules
        self.referee = Referee(rules)
        self.players = [SimPlayer(side, random.Random(self.seed * 31 + side), rules, self.may_win)
                        for side in range(SIDES)]

    @property
    def chips(self) -> list[int]:
        session = self.run.session
        return list(session.scoreboard.chips) if session is not None else []

    # -- a hand ---------------------------------------------------------------------------------------------
    def on_deal(self, event: Event) -> None:
        world = self.run.world
        wall = Wall.from_sides([[tuple(t.kind for t in stack) for stack in side] for side in world.walls])
        d = deal(wall, self.rules.deal_rules, tuple(event.data["dice"]), event.data["dealer"])
        self.hand_no, self.dealer = event.data["hand"], event.data["dealer"]
        self._sent = []
        round_wind = (self.hand_no - 1) // 4 % 4
        self.play = HandPlay(d, lambda p: wall[p], self.dealer, round_wind, self.rules.play, emit=self._emit)
        self.loop.call_later(self.turn_s, self._step)

    def _emit(self, action: Action) -> None:
        self._sent.append(action)
        self._send(len(self._sent), action)

    def _send(self, seq: int, action: Action) -> None:
        if self.run.controller is not None:
            self.run.fw_loop.post(self._deliver, self.hand_no, seq, action)

    def _deliver(self, hand: int, seq: int, action: Action) -> None:
        """(On the controller's loop.)"""
        session = self.run.session
        assert session is not None
        why = session.hand.take(hand, action, seq)
        if why is None or session.scoreboard.recorded(hand):
            return
        if session.hand.hand != hand:
            # (the table is not at this hand yet: booting, or restoring it after a power cut; sent again when it is)
            log.debug("hand %d: action %d waits: %s", hand, seq, why)
            return
        self._refused(hand, seq, action, str(why))

    def _refused(self, hand: int, seq: int, action: Action, why: str) -> None:
        """The table's referee refused what the players did: the simulated players and the referee disagree on the
        rules (a bug of one of them).  Said once; the players stop and the run ends (not completed)."""
        self.refused += 1
        if self.refusal is not None:
            return
        self.refusal = {"hand": hand, "seq": seq, "action": action.text(), "why": why}
        log.error("hand %d: the referee refused action %d, %s: %s; the players stop (a bug: the players and the "
                  "referee disagree)", hand, seq, action.text(), why)
        self.play = None
        self.run.players.finished = True

    def _in_step(self) -> bool:
        """Whether the table's referee has every action so far (if not, what it lacks is sent again)."""
        session = self.run.session
        if session is None or session.hand.hand != self.hand_no:
            return False
        taken = session.hand.referee.last_seq
        if self.refusal is not None:
            return False
        for seq in range(taken + 1, len(self._sent) + 1):
            self._send(seq, self._sent[seq - 1])
        return taken >= len(self._sent)

    def _step(self) -> None:
        play = self.play
        if play is None:
            return
        if not self._in_step():
            if self.run.session is not None and self.run.session.scoreboard.recorded(self.hand_no):
                self._done()                    # (scored before the power went: only the table's end is left)
                return
            self.loop.call_later(WAIT_S if self.run.controller is None else 0.05, self._step)
            return
        if play.phase is Phase.OVER:
            self._finish()
            return
        if play.phase is Phase.SWAP:
            play.swap({side: self.players[side].tiles_to_pass(play) for side in range(SIDES)})
        elif play.phase is Phase.VOID:
            for side in range(SIDES):
                play.name_void(side, self.players[side].void_suit(play))
        elif play.phase is Phase.DRAW:
            play.draw()
        elif play.phase is Phase.DISCARD:
            action, tile = self.players[play.turn].on_turn(play)
            if action == "win":
                play.self_drawn_win(play.turn)
            elif action == "kong":
                play.kong(play.turn, tile, self._robbers)
            else:
                play.discard(tile)
        elif play.phase is Phase.CLAIMS:
            assert play.last_discard is not None
            discarder = play.last_discard[0]
            claims = []
            for side in range(SIDES):
                options = play.claim_options(side, lambda s, t: self.may_win(s, t, discarder))
                choice = self.players[side].on_discard(play, options)
                if choice is not None:
                    claims.append(choice)
            play.apply(play.resolve(claims))
            if play.phase is not Phase.OVER and play.phase is not Phase.DISCARD:
                play.draw()
        self.loop.call_later(self.turn_s, self._step)

    def may_win(self, side: int, tile: int, discarder: int | None, kong_win: bool = False) -> bool:
        """Would ``side`` declaring on ``tile`` now be a legal win (asked of the referee, as a careful player
        checks)?"""
        play = self.play
        session = self.run.session
        if play is None or session is None or play.seats[side].dead or play.gone(side):
            return False
        seat = play.seats[side]
        standing = list(seat.hand)
        if discarder is None:
            standing.remove(tile)
        if tile not in self.referee.waits_of(tuple(standing), len(seat.melds)):     # (it sorts them for its memory)
            return False        # (the referee's first question, asked before the win's record is made up)
        if not self.referee.can_win(play.win_for(side, tile, discarder is None, kong_win)):
            return False
        try:
            return session.hand.referee.judge(play.win_action(side, tile, discarder, kong_win)).legal
        except BadRecord:
            return False

    def _robbers(self, kong_side: int, tile: int) -> list[int]:
        order = [(kong_side + i) % SIDES for i in range(1, SIDES)]
        return [s for s in order if self.may_win(s, tile, kong_side, kong_win=True)]

    # -- the end of a hand ------------------------------------------------------------------------------------
    def _finish(self) -> None:
        """The hand is over: the referee writes its result (again after a power cut until it is written)."""
        session = self.run.session
        if session is not None and session.scoreboard.recorded(self.hand_no):
            self._done()
            return
        if session is not None:
            self.run.fw_loop.post(session.hand.finish, self.hand_no)
        self.loop.call_later(WAIT_S, self._finish)

    def _done(self) -> None:
        play, self.play = self.play, None
        if play is not None and play.result is not None:
            last_win = {w.side: w for w in play.wins}          # (血流成河: a side's last win is what it shows)
            for side, win in last_win.items():
                self.run.players.lay_hand(side, win.faces())
        self.hands_recorded += 1
        self.run.players.finish_hand()

    @property
    def wins(self) -> list[dict[str, Any]]:
        """The most recent wins (at most ``WINS_KEPT``), oldest first."""
        return [json.loads(text) for text in self._wins]

    def _keep_win(self, win: dict[str, Any]) -> None:
        self._wins.append(json.dumps(win, ensure_ascii=False, separators=(",", ":")))

    def on_settled(self, event: Event) -> None:
        """A hand's result as the referee settled it: what the report counts."""
        data = event.data
        dealer = data["dealer"]
        won = False
        for v in data["verdicts"]:
            if not v["legal"]:
                self.false_wins += 1
                continue
            won = True
            self.fans.update(i["name"] for i in v["items"])
            by_side = [0] * SIDES
            for p in data["payments"]:
                if p["event"] == v["event"]:
                    by_side[p["payer"]] -= p["amount"]
                    by_side[p["payee"]] += p["amount"]
            self._keep_win({"hand": data["hand"], "winner_side": v["side"],
                              "winner_seat": "ESWN"[(v["side"] - dealer) % SIDES],
                              "self_drawn": v["discarder"] is None, "fans": v["items"], "total": v["total"],
                              "unit": v["unit"],
                              "liable_seat": None if v["liable"] is None else "ESWN"[(v["liable"] - dealer) % SIDES],
                              "payments": {"ESWN"[(s - dealer) % SIDES]: by_side[s] for s in range(SIDES)}})
        self.hands_won += won
        self.winners_per_hand[len({v["side"] for v in data["verdicts"] if v["legal"]})] += 1
        self.drawn += bool(data["drawn"])
        for p in data["payments"]:
            self.money[p["reason"]] += 1
            self.money_amount[p["reason"]] += p["amount"]
        if data.get("game_ended"):
            self.games_ended.append({"after_hand": data["hand"], "reason": data["game_ended"]})

