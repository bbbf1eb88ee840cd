"""Game benchmark: 200 hands per rule set on the simulated table, with simulated players.

Reports, per rule set, the share of hands that end in a legal win (target:
at least 40%), false wins, drawn hands, whether chips were conserved, the
distribution of fans in the wins, and the simulated and wall time.
"""

from __future__ import annotations

import logging
import time
from collections import Counter

from sim.table_run import SimRun

HANDS = 200
TARGET_WIN_RATE = 0.40
RULES = ("mcr", "competition", "liaoning", "jinzhou")


def run(hands: int = HANDS) -> dict:
    logging.getLogger().setLevel(logging.CRITICAL)
    results = {}
    for rules in RULES:
        start = time.perf_counter()
        game = SimRun(rules=rules, hands=hands, play=True, seed=7)
        game.run(timeout_s=hands * 900.0)
        g = game.game
        board = game.controller.scoreboard
        won = len({w["hand"] for w in g.wins})
        played = len(board.hands())
        fans = Counter(f["name"] for w in g.wins for f in w["fans"])
        results[rules] = {"hands": played, "won": won, "drawn": g.drawn, "false_wins": g.false_wins,
                          "win_rate": round(won / played, 3) if played else 0.0,
                          "target_met": played > 0 and won / played >= TARGET_WIN_RATE,
                          "chips_conserved": board.conserved(), "chips": board.chips,
                          "fans": dict(fans.most_common()),
                          "simulated_s": round(game.loop.now(), 1), "wall_s": round(time.perf_counter() - start, 2)}
        game.close()
    return results


def print_table(results: dict) -> None:
    print(f"\ngames: {HANDS} hands per rule set with simulated players (target: at least "
          f"{TARGET_WIN_RATE:.0%} legal wins)")
    print(f"{'rules':12} {'hands':>5} {'won':>5} {'rate':>6} {'drawn':>6} {'false':>6} {'chips ok':>9} {'wall s':>7}")
    for rules, r in results.items():
        print(f"{rules:12} {r['hands']:5d} {r['won']:5d} {r['win_rate']:6.0%} {r['drawn']:6d} {r['false_wins']:6d} "
              f"{str(r['chips_conserved']):>9} {r['wall_s']:7.1f}  target: {'met' if r['target_met'] else 'MISSED'}")
        top = list(r["fans"].items())[:8]
        print("             fans: " + ", ".join(f"{name} x{n}" for name, n in top))
