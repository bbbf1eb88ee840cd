"""Games on the simulated table: the hand engine's rules, the referee, the scoreboard, whole games."""

import pytest

from firmware.game.hand import Claim, HandPlay, Phase
from firmware.game.referee import Referee
from firmware.game.scoreboard import Scoreboard, ScoredHand
from firmware.rules.money import WIN, Payment
from firmware.rules.registry import load_ruleset
from firmware.rules.ruleset import PlayRules
from firmware.tiles.dealing import DealRules, deal
from firmware.tiles.tile import parse
from firmware.tiles.wall import Wall
from sim.table_run import SimRun
from tests.support.win_builder import make_win


def _play(tiles_by_side=None, several=False):
    """A hand on a fixed wall (all 144 tiles in order, so deals are predictable)."""
    from firmware.tiles.sets import tile_set
    tiles = tile_set(144).all_tiles()
    wall = Wall.from_sequence(tiles, 18)
    d = deal(wall, DealRules(2, 0, 0), (3, 4, 2, 5), 0)
    return HandPlay(d, lambda p: wall[p], 0, 0, PlayRules(several_winners=several))


def test_claim_priorities_win_over_pung_over_chow_and_chow_only_from_the_left():
    play = _play()
    play.last_discard = (0, parse("5m")[0])
    claims = [Claim(1, "chow", parse("3m")[0]), Claim(2, "pung", parse("5m")[0]), Claim(3, "win", parse("5m")[0])]
    assert play.resolve(claims) == [claims[2]]
    assert play.resolve(claims[:2]) == [claims[1]]
    assert play.resolve(claims[:1]) == [claims[0]]
    seat = play.seats[2]
    seat.hand[:3] = parse("34m") + [seat.hand[2]]
    assert all(o.kind != "chow" for o in play.claim_options(2, lambda s, t: False))   # 对家 may not chow


def test_first_winner_counter_clockwise_unless_several_may_win():
    play = _play()
    play.last_discard = (2, parse("5m")[0])
    wins = [Claim(1, "win", 4), Claim(3, "win", 4)]
    assert play.resolve(wins) == [wins[1]]                     # side 3 comes first after side 2
    several = _play(several=True)
    several.last_discard = (2, 4)
    assert several.resolve(wins) == [wins[1], wins[0]]


def test_on_the_last_discard_only_a_win_may_be_claimed():
    play = _play()
    while play.deal.remaining() > 0:
        play.deal.draw()
    seat = play.seats[1]
    tile = seat.hand[0]
    play.last_discard = (0, tile)
    seat.hand += [tile]
    options = play.claim_options(1, lambda s, t: False)
    assert options == []


def test_robbing_an_added_kong_ends_the_hand():
    play = _play()
    from firmware.rules.win import Meld, MeldKind
    seat = play.seats[0]
    tile = parse("9s")[0]
    seat.melds.append(Meld(MeldKind.PUNG, tile, "left"))
    seat.hand.append(tile)
    play.phase = Phase.DISCARD
    play.kong(0, tile, robbers=lambda side, t: [2])
    assert play.phase is Phase.OVER and play.result.winners == [2] and play.result.flags["kong_win"]
    assert play.result.discarder == 0
    kong, win = play.record.actions[-2:]
    assert kong.text() == "0 added_kong 9s"                     # (declared first, as at the table, then robbed)
    assert win.text().startswith("2 win 9s from 0") and "kong_win" in win.flags     # (in the hand's record)


def test_a_false_win_pays_its_penalty_and_a_dead_hand_may_not_claim():
    from tests.support.record_builder import settle_win
    settled = settle_win("mcr", make_win("445566m2277779s", "8s"), 1)
    assert not settled.verdicts[0].legal and settled.deltas() == [-30, 10, 10, 10]
    assert not Referee(load_ruleset("mcr")).can_win(make_win("445566m2277779s", "8s"))
    play = _play()
    play.seats[1].dead = True
    play.last_discard = (0, play.seats[1].hand[0])
    assert all(o.kind != "win" for o in play.claim_options(1, lambda s, t: True))


def test_the_scoreboard_refuses_unbalanced_payments_and_survives_in_the_database(tmp_path):
    from firmware.store.table_store import TableStore
    from firmware.controller.bookkeeping import Bookkeeping
    store = TableStore(tmp_path / "t.db")
    board = Scoreboard(store, load_ruleset("competition"))
    assert board.chips == [100] * 4
    book = Bookkeeping(hand=1, hand_open=True)
    with store.batch():
        store.start_hand(1, "A", 0, [1, 2], 10.0)          # (the deal: the hand's row and the bookkeeping)
        store.put_book("in_play", book.to_dict())
    paid = [Payment(s, 1, 20, WIN, 5) for s in (0, 2, 3)]
    assert board.record(ScoredHand(1, 0, [1], False, paid))
    assert not board.record(ScoredHand(1, 0, [1], False, paid))    # never counted twice
    assert board.chips == [80, 160, 80, 80]
    assert board.pay(1, paid) and board.chips == [80, 160, 80, 80]   # a payment delivered again is kept once
    store.close()
    again = Scoreboard(TableStore(tmp_path / "t.db"), load_ruleset("competition"))
    assert again.chips == [80, 160, 80, 80] and again.hands()[0].winners == [1] and again.conserved()
    assert [(p.payer, p.payee, p.amount, p.reason.key) for p in again.hands()[0].payments] == \
        [(0, 1, 20, "win"), (2, 1, 20, "win"), (3, 1, 20, "win")]


def test_conservation_is_checked_on_the_stored_rows(tmp_path):
    """A settlement that lost money on the way would fail the check, not pass it by construction."""
    from firmware.store.table_store import TableStore
    store = TableStore(tmp_path / "t.db")
    board = Scoreboard(store, load_ruleset("mcr"))
    board.record(ScoredHand(1, 0, [1], False, [Payment(s, 1, 20, WIN, 5) for s in (0, 2, 3)]))
    assert board.conserved()
    store._db.execute("UPDATE payments SET amount = amount - 1 WHERE payer = 2")     # a lost chip
    assert not board.conserved()


@pytest.mark.parametrize("rules", ["mcr", "competition", "liaoning", "jinzhou"])
def test_sixteen_real_hands_per_rule_set(rules):
    run = SimRun(rules=rules, hands=16, play=True, seed=2)
    assert run.run(timeout_s=60000)
    board = run.session.scoreboard
    assert len(board.hands(all_games=True)) == 16 and board.conserved()
    assert sum(board.chips) == 4 * board.start_chips
    assert run.game.false_wins == 0 and run.game.refused == 0
    if board.rules.floor:
        assert min(board.chips) >= 0                     # the chips floor
    assert run.game.wins, "somebody won something"
    run.close()


def test_the_same_seed_plays_the_same_game():
    def game():
        run = SimRun(rules="mcr", hands=4, play=True, seed=9)
        run.run(timeout_s=30000)
        out = ([h.payments for h in run.session.scoreboard.hands()], run.game.wins)
        run.close()
        return out
    assert game() == game()


def test_a_win_read_from_the_seat_pad_through_the_emulator():
    from firmware.game.pad import read_pad, standing_from_pad
    from firmware.tiles.tile import format_tiles
    from sim.tileset import SimTile
    from tests.firmware.conftest import make_sim

    sim = make_sim()
    assert sim.start_reader()
    registry = sim.world.registry
    by_kind: dict[int, list] = {}
    for entry in registry.sets["A"]:
        by_kind.setdefault(entry.kind, []).append(entry)
    hand = parse("123m456p789s123sEE")                 # 花龙 + 门前清 + a flower
    tiles = [by_kind[k].pop() for k in hand]
    flower = by_kind[parse("1f")[0]].pop()
    sim.world.lay_on_pad(2, [SimTile(e.uid, "A", e.kind) for e in tiles + [flower]])
    reads = []
    read_pad(sim.table.reader, 2, registry, "A", reads.append)
    sim.loop.run_until(lambda: bool(reads), 5)
    read = reads[0]
    assert read.ok and list(read.kinds) == sorted(hand) and read.flowers == 1
    hand = standing_from_pad(read, parse("E")[0], [])
    from tests.support.record_builder import settle
    settled = settle("mcr", f"2 win E from 0 hand {format_tiles(hand)} flowers {read.flowers}")
    assert settled.verdicts[0].legal and "花龙" in [i.name for i in settled.verdicts[0].items]
    assert sum(settled.deltas()) == 0
    # a foreign tile on the pad makes the read unusable, never guessed
    foreign = registry.sets["B"][0]
    sim.world.lay_on_pad(2, [SimTile(foreign.uid, "B", foreign.kind)])
    reads.clear()
    read_pad(sim.table.reader, 2, registry, "A", reads.append)
    sim.loop.run_until(lambda: bool(reads), 5)
    assert not reads[0].ok and "of set B" in reads[0].problem
    sim.close()


def test_power_cuts_during_real_hands_lose_no_score():
    import random
    rng = random.Random(4)
    run = SimRun(rules="competition", hands=6, play=True, seed=5)
    for at_s in sorted(rng.uniform(50, 1200) for _ in range(8)):
        run.loop.call_at(at_s, run.power_cut, 2.0)
    assert run.run(timeout_s=60000)
    run.run_until(lambda: run.controller is not None, 10)
    board = run.session.scoreboard
    hands = [h.hand for h in board.hands(all_games=True)]
    assert hands == sorted(set(hands))
    assert len(hands) >= 6 and board.conserved() and sum(board.chips) == 400
    from firmware.store.table_store import TableStore
    again = Scoreboard(TableStore(run.state_path), load_ruleset("competition"))
    assert again.chips == board.chips
    run.close()


def test_the_dealer_lamps_show_the_streak():
    run = SimRun(rules="competition", hands=2, play=True, seed=5)
    run.run_until(lambda: run.controller is not None and run.state is not None, 5)
    run.controller.book.dealer_streak = 2
    run.controller.book.dealer = 1
    run.controller._dealer_lamps()
    run.loop.run_for(0.1)
    assert [bool(run.world.lamps.get(f"led_dealer{s}")) for s in range(4)] == [False, True, True, True]
    run.close()


def test_discarding_a_flower_makes_a_dead_hand():
    play = _play()
    seat = play.seats[1]
    seat.flowers = 1
    play.discard_flower(1)
    assert seat.dead and seat.flowers == 0
    with pytest.raises(ValueError):
        play.discard_flower(1)


def test_the_referees_quick_answer_agrees_with_the_full_score_for_every_case_and_every_other_tile():
    """``can_win`` (the standing hand's waits first, remembered between turns) against the full MCR
    score, on the known-answer hands and on each of them with every other winning tile."""
    import dataclasses
    import json
    from pathlib import Path

    from firmware.rules.case_format import parse_case
    from firmware.rules.mcr.scorer import score

    ref = Referee(load_ruleset("mcr"))
    ref.WAITS_KEPT = 8                          # small, so that forgetting is exercised too
    data = Path(__file__).parents[2] / "data"
    wins = legal = 0
    for name in ("mcr-random.jsonl", "mcr-curated.jsonl", "mcr-negative.jsonl"):
        for line in (data / name).read_text(encoding="utf-8").splitlines()[:150]:
            try:
                base = parse_case(json.loads(line)).win
            except ValueError:
                continue
            for kind in range(34):
                if base.hand.count(kind) + sum(m.tiles.count(kind) for m in base.melds) >= 4:
                    continue
                w = dataclasses.replace(base, win_tile=kind)
                expected = score(w)
                assert ref.can_win(w) == (expected.win and expected.meets_minimum), (name, line[:60], kind)
                wins += expected.win
                legal += ref.can_win(w)
    assert wins > 100 and legal > 50 and len(ref._waits) <= 8
