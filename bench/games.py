"""Game benchmark: 200 hands per rule set on the simulated table, with simulated players playing the money.

Reports, per rule set, the share of hands that end in a legal win (it must
stay at least as high as before the rule sets played their money: MCR 72%,
竞技麻将 61%, 辽宁 76%, 锦州 55%), false wins, drawn hands, whether chips were
conserved (checked on the stored rows by an independent sum), the games (局)
that ended, the money by reason (how many payments of kong money, 追牌, 跟庄,
黄庄 ... per 100 hands, read from the scoreboard's rows), the distribution of
fans in the wins, and the simulated and wall time.
"""

from __future__ import annotations

import logging
import time
from collections import Counter

from firmware.rules.registry import RULE_NAMES
from sim.table_run import SimRun

HANDS = 200
BEFORE = {"mcr": 0.72, "competition": 0.61, "liaoning": 0.76, "jinzhou": 0.55}   # win rates before issue 15
ON_THE_SPOT = ("melded_kong", "added_kong", "concealed_kong", "flower_kong", "chase", "follow", "draw")


def independent_sum(store) -> bool:
    """Every game's chips are its start plus the payment rows, counted here from the rows themselves."""
    rows = store.read("SELECT id, start_chips FROM games")
    for game, start in rows:
        paid = [0, 0, 0, 0]
        for payer, payee, amount in store.read("SELECT payer, payee, amount FROM payments WHERE game = ? AND held = 0",
                                               (game,)):
            paid[payer] -= amount
            paid[payee] += amount
        chips = dict(store.read("SELECT side, chips FROM chips WHERE game = ?", (game,)))
        if [chips[s] for s in range(4)] != [start + p for p in paid]:
            return False
    return True


def run(hands: int = HANDS) -> dict:
    logging.getLogger().setLevel(logging.CRITICAL)
    results = {}
    for rules in RULE_NAMES:
        start = time.perf_counter()
        game = SimRun(rules=rules, hands=hands, play=True, seed=7)
        game.run(timeout_s=hands * 900.0)
        g = game.game
        board = game.controller.scoreboard
        recorded = board.hands(all_games=True)
        played = len(recorded)
        won = len({w["hand"] for w in g.wins})
        money: Counter[str] = Counter()
        for h in recorded:
            for event in {(p.event, p.reason.key) for p in h.payments}:        # one count per action paid
                money[event[1]] += 1
        fans = Counter(f["name"] for w in g.wins for f in w["fans"])
        rate = won / played if played else 0.0
        results[rules] = {"hands": played, "won": won, "drawn": g.drawn, "false_wins": g.false_wins,
                          "refused_actions": g.refused, "win_rate": round(rate, 3),
                          "win_rate_before": BEFORE.get(rules), "kept_up": rate >= BEFORE.get(rules, 0.0),
                          "chips_conserved": board.conserved() and independent_sum(game.store),
                          "chips": board.chips, "games_ended": len(g.games_ended),
                          "money_events": dict(money.most_common()),
                          "per_100_hands": {k: round(100 * money[k] / played, 1) for k in ON_THE_SPOT
                                            if money[k]} if played else {},
                          "fans": dict(fans.most_common()),
                          "simulated_s": round(game.loop.now(), 1), "wall_s": round(time.perf_counter() - start, 2)}
        game.close()
    return results


def print_table(results: dict) -> None:
    print(f"\ngames: {HANDS} hands per rule set with simulated players playing the money (win rate against the "
          "rate before the money rules)")
    print(f"{'rules':12} {'hands':>5} {'won':>5} {'rate':>6} {'before':>7} {'drawn':>6} {'false':>6} {'chips ok':>9} "
          f"{'局 ended':>8} {'wall s':>7}")
    for rules, r in results.items():
        before = r["win_rate_before"]
        print(f"{rules:12} {r['hands']:5d} {r['won']:5d} {r['win_rate']:6.0%} {before:7.0%} {r['drawn']:6d} "
              f"{r['false_wins']:6d} {str(r['chips_conserved']):>9} {r['games_ended']:8d} {r['wall_s']:7.1f}  "
              f"{'kept up' if r['kept_up'] else 'LOWER'}")
        spot = r["per_100_hands"]
        print("             on the spot per 100 hands: "
              + (", ".join(f"{k} {v:g}" for k, v in spot.items()) or "none (the rule set pays none)"))
        top = list(r["fans"].items())[:8]
        print("             fans: " + ", ".join(f"{name} x{n}" for name, n in top))
