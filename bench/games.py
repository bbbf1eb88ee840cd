"""Game benchmark: 200 hands per rule set on the simulated table, with simulated players playing the money.

Reports, per rule set, the share of hands that end in a legal win (it must
stay at least as high as before the rule sets played their money: MCR 72%,
竞技麻将 61%, 辽宁 76%, 锦州 55%), false wins, drawn hands, whether chips were
conserved (checked on the stored rows by an independent sum), the games (局)
that ended, the money by reason (how many payments of kong money, 追牌, 跟庄,
黄庄 ... per 100 hands, read from the scoreboard's rows), the distribution of
fans in the wins, and the simulated and wall time.

Then a 200-hand 四川 血战到底 game of its own (:func:`blood_battle`), played
with 定缺 as in tournament play (only the players' own sense makes them throw
the void suit first) by players who now and then keep a tile of it (a
person's slip: 0.15 a turn), so that every money rule of the rule set has a
chance to come up: it reports the hands by their number of winners (the share
that reached three), the payments by reason, and checks that chips are
conserved (an independent sum of the rows) and that hands with one, two and
three winners, kong money, 退税, 查花猪 and 查大叫 all occurred.
"""

from __future__ import annotations

import logging
import time
from collections import Counter

from firmware.rules.names import RULE_NAMES
from firmware.rules.registry import load_ruleset
from sim.table_run import SimRun

HANDS = 200
BEFORE = {"mcr": 0.72, "competition": 0.61, "liaoning": 0.76, "jinzhou": 0.55}   # win rates before issue 15
ON_THE_SPOT = ("melded_kong", "added_kong", "concealed_kong", "flower_kong", "chase", "follow", "draw")
VOID_SLIP = 0.15             # the 血战 game's players keep a tile of their void suit this often a turn
MUST_OCCUR = {"kong money": ("melded_kong", "added_kong", "concealed_kong"), "退税": ("kong_refund",),
              "查花猪": ("flower_pig",), "查大叫": ("not_ready",)}


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
        board = game.session.scoreboard
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
    results["blood_battle"] = blood_battle(hands)
    return results


def blood_battle(hands: int = HANDS, seed: int = 7) -> dict:
    """A 血战到底 game: winners per hand, money by reason, and the checks of the acceptance."""
    start = time.perf_counter()
    rules = load_ruleset("sichuan").with_options({"void_first": False})
    game = SimRun(rules=rules, hands=hands, play=True, seed=seed)
    assert game.game is not None
    for player in game.game.players:
        player.void_slip = VOID_SLIP
    game.run(timeout_s=hands * 900.0)
    g = game.game
    board = game.session.scoreboard
    recorded = board.hands(all_games=True)
    money: Counter[str] = Counter()
    amount: Counter[str] = Counter()
    for h in recorded:
        for p in h.payments:
            money[p.reason.key] += 1
            amount[p.reason.key] += p.amount
    per_hand = {n: g.winners_per_hand.get(n, 0) for n in range(4)}
    played = len(recorded)
    occurred = {name: any(money[k] for k in keys) for name, keys in MUST_OCCUR.items()}
    occurred.update({f"{n} winner{'s' if n > 1 else ''}": per_hand[n] > 0 for n in (1, 2, 3)})
    result = {"hands": played, "winners_per_hand": per_hand,
              "three_winner_share": round(per_hand[3] / played, 3) if played else 0.0,
              "false_wins": g.false_wins, "refused_actions": g.refused,
              "chips_conserved": board.conserved() and independent_sum(game.store), "chips": board.chips,
              "payments": dict(money.most_common()), "amounts": dict(amount.most_common()),
              "occurred": occurred, "fans": dict(g.fans.most_common()),
              "simulated_s": round(game.loop.now(), 1), "wall_s": round(time.perf_counter() - start, 2)}
    game.close()
    return result


def print_table(results: dict) -> None:
    print(f"\ngames: {HANDS} hands per rule set with simulated players playing the money (win rate against the "
          "rate before the money rules)")
    print(f"{'rules':12} {'hands':>5} {'won':>5} {'rate':>6} {'before':>7} {'drawn':>6} {'false':>6} {'chips ok':>9} "
          f"{'局 ended':>8} {'wall s':>7}")
    for rules, r in results.items():
        if rules == "blood_battle":
            continue
        before = r["win_rate_before"]
        print(f"{rules:12} {r['hands']:5d} {r['won']:5d} {r['win_rate']:6.0%} "
              f"{'-' if before is None else format(before, '.0%'):>7} {r['drawn']:6d} "
              f"{r['false_wins']:6d} {str(r['chips_conserved']):>9} {r['games_ended']:8d} {r['wall_s']:7.1f}  "
              f"{'' if before is None else 'kept up' if r['kept_up'] else 'LOWER'}")
        spot = r["per_100_hands"]
        print("             on the spot per 100 hands: "
              + (", ".join(f"{k} {v:g}" for k, v in spot.items()) or "none (the rule set pays none)"))
        top = list(r["fans"].items())[:8]
        print("             fans: " + ", ".join(f"{name} x{n}" for name, n in top))
    if "blood_battle" in results:
        print_blood_battle(results["blood_battle"])


def print_blood_battle(r: dict) -> None:
    per = r["winners_per_hand"]
    print(f"\n血战到底: {r['hands']} hands (定缺 without forced discards, players keeping a void tile "
          f"{VOID_SLIP:g} of their turns), {r['wall_s']:.1f} s wall")
    print(f"  winners per hand: none {per[0]}, one {per[1]}, two {per[2]}, three {per[3]}; "
          f"share reaching three {r['three_winner_share']:.0%}")
    print("  payments: " + ", ".join(f"{k} {n} ({r['amounts'][k]})" for k, n in r["payments"].items()))
    print(f"  chips conserved (independent sum): {r['chips_conserved']}; false wins {r['false_wins']}, "
          f"refused actions {r['refused_actions']}")
    print("  occurred: " + ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in r["occurred"].items()))
