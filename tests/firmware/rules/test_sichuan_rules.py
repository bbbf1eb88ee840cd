"""四川 血战到底: the hand's flow (换三张, 定缺, no chows, winners leave), whole hands played by the simulated players
and settled from their records (payments sum to zero, a 花猪 never collects, a winner pays nothing more), the record's
new actions, the options, the dealer rotation and a game on the simulated 108-tile table."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from firmware.game.hand import Claim, HandPlay, Phase
from firmware.game.referee import Referee
from firmware.rules.hand_record import Action, BadRecord, HandRecord, Verb, parse_action
from firmware.rules.money import KONG_REASONS, deltas
from firmware.rules.registry import load_ruleset
from firmware.rules.ruleset import Dealership, HandOutcome, RuleSet
from firmware.rules.settlement import Settler, settle_hand
from firmware.tiles.dealing import deal
from firmware.tiles.sets import tile_set
from firmware.tiles.tile import parse, parse_one
from firmware.tiles.wall import Wall
from sim.players import SimPlayer

SIDES = 4


# -- a hand played by the simulated players on a shuffled 108-tile wall, settled action by action -------------
def _hand(rules: RuleSet, seed: int, dealer: int = 0, slip: float = 0.0) -> tuple[HandPlay, Settler]:
    rng = random.Random(seed)
    tiles = tile_set(108).all_tiles()
    rng.shuffle(tiles)
    wall = Wall.from_sequence(tiles, 14)
    dice = (rng.randint(1, 6), rng.randint(1, 6))
    record = HandRecord(rules.name, 1, dealer, 0)
    settler = Settler(rules, record)
    play = HandPlay(deal(wall, rules.deal_rules, dice, dealer), lambda p: wall[p], dealer, 0, rules.play,
                    emit=settler.add, record=record)
    referee = Referee(rules)

    def may_win(side: int, tile: int, discarder: int | None, kong_win: bool = False) -> bool:
        if play.seats[side].dead or play.gone(side):
            return False
        if not referee.can_win(play.win_for(side, tile, discarder is None, kong_win)):
            return False
        return settler.judge(play.win_action(side, tile, discarder, kong_win)).legal

    players = [SimPlayer(side, random.Random(seed * 31 + side), rules, may_win) for side in range(SIDES)]
    for p in players:
        p.void_slip = slip
    for _ in range(2000):
        if play.phase is Phase.OVER:
            break
        if play.phase is Phase.SWAP:
            play.swap({side: players[side].tiles_to_pass(play) for side in range(SIDES)})
        elif play.phase is Phase.VOID:
            for side in range(SIDES):
                play.name_void(side, players[side].void_suit(play))
        elif play.phase is Phase.DRAW:
            play.draw()
        elif play.phase is Phase.DISCARD:
            action, tile = players[play.turn].on_turn(play)
            if action == "win":
                play.self_drawn_win(play.turn)
            elif action == "kong":
                play.kong(play.turn, tile, lambda side, t: [s for s in [(side + i) % SIDES for i in (1, 2, 3)]
                                                            if may_win(s, t, side, kong_win=True)])
            else:
                play.discard(tile)
        else:
            assert play.last_discard is not None
            discarder = play.last_discard[0]

            def can_win(s: int, t: int, by: int = discarder) -> bool:
                return may_win(s, t, by)
            claims = [c for side in range(SIDES)
                      if (c := players[side].on_discard(play, play.claim_options(side, can_win))) is not None]
            play.apply(play.resolve(claims))
            if play.phase not in (Phase.OVER, Phase.DISCARD):
                play.draw()
    assert play.phase is Phase.OVER
    return play, settler


OPTIONS = st.fixed_dictionaries({
    "blood_river": st.booleans(), "several_winners": st.booleans(), "swap_tiles": st.sampled_from([0, 3]),
    "kong_discard_transfer": st.sampled_from(["kong", "all", "cancel", "off"]),
    "self_drawn": st.sampled_from(["add_base", "add_doubling", "none"]), "pig_penalty": st.sampled_from(["cap", 16]),
    "melded_kong_others": st.sampled_from([0, 1]), "void_first": st.booleans(),
    "ready_winners_collect": st.booleans(), "dead_wait_not_ready": st.booleans(), "cap": st.sampled_from([3, 4, 5])})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), options=OPTIONS)
# (found by this test: a 加杠 robbed and the hand played on; the record lacked the kong, so the robbed side still
# held the tile in the settler's eyes and its own win later was refused as a bad record)
@example(seed=14557, options={"blood_river": False, "several_winners": False, "swap_tiles": 0,
                              "kong_discard_transfer": "kong", "self_drawn": "add_base", "pig_penalty": "cap",
                              "melded_kong_others": 0, "void_first": True, "ready_winners_collect": False,
                              "dead_wait_not_ready": False, "cap": 3})
def test_whole_hands_settle_and_keep_the_invariants(seed, options):
    rules = load_ruleset("sichuan").with_options(options)
    play, settler = _hand(rules, seed, dealer=seed % SIDES, slip=0.3)
    settled = settler.result()
    # the record the hand wrote settles the same from scratch (the referee's path and the scorer's agree)
    again = settle_hand(rules, play.record)
    assert [p.to_json() for p in again.payments] == [p.to_json() for p in settled.payments]
    assert sum(deltas(settled.payments)) == 0
    assert all(v.legal for v in settled.verdicts)                      # (the players declare legal wins only)
    won_at: dict[int, int] = {}
    for v in settled.verdicts:
        won_at.setdefault(v.side, v.event)
    assert [w.side for w in play.wins] == [v.side for v in settled.verdicts]
    if not options["blood_river"]:
        assert len(won_at) <= 3 and len(won_at) == len(set(won_at))
        for p in settled.payments:
            # a winner has left: it pays nothing more and collects nothing but the kong money it paid coming back
            if p.payer in won_at and p.event > won_at[p.payer]:
                pytest.fail(f"side {p.payer} won at action {won_at[p.payer]} and pays {p} after")
            if p.payee in won_at and p.event > won_at[p.payee]:
                assert p.reason.key == "kong_refund", p
        if len(won_at) == 3:
            assert not [p for p in settled.payments if p.reason.key in ("flower_pig", "not_ready")]
    pigs = {p.payer for p in settled.payments if p.reason.key == "flower_pig"}
    end = [i for i, a in enumerate(play.record.actions) if a.verb is Verb.WALL_END]
    for pig in pigs:
        assert play.seats[pig].holds_void()
        # a 花猪 collects nothing at the drawn end and keeps no kong money
        assert not [p for p in settled.payments if p.payee == pig and p.event >= end[0]
                    and p.reason.key != "kong_refund"]
        kong = sum(p.amount if p.payee == pig else -p.amount for p in settled.payments
                   if pig in (p.payer, p.payee) and p.reason.key in KONG_REASONS | {"kong_transfer", "kong_refund"}
                   and (p.payee == pig) == (p.reason.key in KONG_REASONS))
        assert kong <= 0


def test_the_players_play_every_flow_in_a_few_hundred_hands():
    """Many hands of the default 血战到底: one, two and three winners, kongs, drawn ends, 呼叫转移 all come up."""
    rules = load_ruleset("sichuan")
    per_hand: Counter[int] = Counter()
    reasons: Counter[str] = Counter()
    for seed in range(60):
        play, settler = _hand(rules, seed, dealer=seed % SIDES)
        result = settler.result()
        per_hand[len(set(result.winners))] += 1
        reasons.update(p.reason.key for p in result.payments)
        assert all(not play.seats[s].holds_void() for s in range(SIDES) if play.gone(s))
    assert per_hand[1] and per_hand[2] and per_hand[3], per_hand
    assert reasons["concealed_kong"] and reasons["melded_kong"] and reasons["not_ready"], reasons


# -- the hand's flow -----------------------------------------------------------------------------------------
def _fixed(rules_name: str = "sichuan", dice=(3, 4), **options) -> HandPlay:
    rules = load_ruleset(rules_name).with_options(options)
    tiles = tile_set(108).all_tiles()
    random.Random(5).shuffle(tiles)
    wall = Wall.from_sequence(tiles, 14)
    return HandPlay(deal(wall, rules.deal_rules, dice, 0), lambda p: wall[p], 0, 0, rules.play)


def test_the_swap_goes_the_way_the_dice_give_each_way_in_a_third_of_the_throws():
    offsets = Counter(_fixed(dice=(a, b)).swap_offset() for a in range(1, 7) for b in range(1, 7))
    assert offsets == {1: 12, 2: 12, 3: 12}
    play = _fixed(dice=(1, 2))                              # 3: to 下家
    assert play.phase is Phase.SWAP
    passed = {}
    for side in range(SIDES):
        hand = play.seats[side].hand
        suit = next(s for s in range(3) if sum(1 for k in hand if k // 9 == s) >= 3)
        passed[side] = [k for k in hand if k // 9 == suit][:3]
    before = [Counter(play.seats[s].hand) for s in range(SIDES)]
    assert play.swap(passed) == 1
    for side in range(SIDES):
        expect = before[side] - Counter(passed[side]) + Counter(passed[(side - 1) % SIDES])
        assert Counter(play.seats[side].hand) == expect
    assert [a.text().split(" to ")[1] for a in play.record.actions if a.verb is Verb.SWAP] == ["1", "2", "3", "0"]
    assert play.phase is Phase.VOID


def test_the_swap_takes_three_tiles_of_one_suit_held():
    play = _fixed()
    mixed = {side: play.seats[side].hand[:3] for side in range(SIDES)}
    mixed[0] = [parse_one("1m"), parse_one("1p"), parse_one("1s")]
    with pytest.raises(ValueError, match="one suit"):
        play.swap(mixed)
    off = _fixed(swap_tiles=0)
    assert off.phase is Phase.VOID
    with pytest.raises(ValueError, match="换三张"):
        off.swap(mixed)


def _voided(play: HandPlay, voids=(2, 2, 2, 2)) -> HandPlay:
    for side, suit in enumerate(voids):
        play.name_void(side, suit)
    return play


def test_the_void_suit_is_discarded_first_and_never_claimed_or_konged():
    play = _voided(_fixed(swap_tiles=0))
    assert play.phase is Phase.DISCARD
    seat = play.seats[0]
    seat.hand[:3] = parse("1s2m3m")
    with pytest.raises(ValueError, match="void suit"):
        play.discard(parse_one("2m"))
    play.discard(parse_one("1s"))
    # the next side holds two 1s: no pung of its void suit; and nobody chows
    play.seats[1].hand[:2] = parse("1s1s")
    play.seats[1].hand[2:4] = parse("2s3s")
    assert play.claim_options(1, lambda s, t: False) == []
    play.last_discard = (0, parse_one("4m"))
    play.seats[1].hand[:3] = parse("2m3m5m")
    assert all(c.kind != "chow" for c in play.claim_options(1, lambda s, t: False))
    play.seats[2].hand[:4] = parse("9s9s9s9s")
    assert parse_one("9s") not in play.can_concealed_kong(2)


def test_winners_on_one_discard_leave_and_the_side_after_the_last_of_them_draws():
    play = _voided(_fixed(swap_tiles=0))
    tile = play.seats[0].hand[0]
    play.seats[0].hand = [k for k in play.seats[0].hand if k // 9 != 2] + [tile]
    play.discard(tile)
    play.apply([Claim(1, "win", tile), Claim(3, "win", tile)])
    assert play.phase is Phase.DRAW and play.turn == 0          # after 3 (the last counted from 0) comes 0
    assert play.gone(1) and play.gone(3) and not play.gone(2)
    assert [a.verb for a in play.record.actions[-2:]] == [Verb.WIN, Verb.WIN]
    play.draw()
    assert play.seats[0].hand and play.phase is Phase.DISCARD
    # the last two: the next win is the third, the hand is over
    drawn = play.seats[0].hand[-1]
    play.self_drawn_win(0)
    assert play.phase is Phase.OVER and play.result.winners == [1, 3, 0] and play.result.discarder == 0
    assert [w.side for w in play.wins] == [1, 3, 0] and play.wins[-1].tile == drawn


def test_in_blood_river_a_winner_stays_and_throws_what_it_draws():
    play = _voided(_fixed(swap_tiles=0, blood_river=True))
    assert not play.play.winners_leave and play.play.winners_to_end == 0
    play.seats[0].hand = parse("123m456m789m1234p5p")
    play.self_drawn_win(0)
    assert play.phase is Phase.DRAW and play.turn == 1 and not play.gone(0) and play.seats[0].locked
    assert len(play.seats[0].hand) + 3 * len(play.seats[0].melds) == 13
    play.turn = 0
    play.draw()
    held = play.seats[0].hand[0]
    if held != play.seats[0].hand[-1]:
        with pytest.raises(ValueError, match="locked|void"):
            play.discard(held)
    assert play.can_concealed_kong(0) == [] and play.can_added_kong(0) == []


def test_first_turn_wins_are_marked_only_where_the_rules_have_them():
    on = _voided(_fixed(swap_tiles=0, heavenly_earthly=True))
    assert "first_turn" in on.win_action(0, on.seats[0].hand[-1], None).flags           # 天胡
    tile = on.seats[0].hand[0]
    on.seats[0].hand = [k for k in on.seats[0].hand if k // 9 != 2] + [tile]
    on.discard(tile)
    assert "first_turn" in on.win_action(1, tile, 0).flags                               # 地胡
    off = _voided(_fixed(swap_tiles=0))
    assert "first_turn" not in off.win_action(0, off.seats[0].hand[-1], None).flags


# -- the record ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("line", ["2 swap 129m to 3", "2 void p", "1 show 123m456p789s11p", "1 won",
                                  "0 win 5m hand 1234567899m11p first_turn flowers 0"])
def test_the_new_actions_read_and_write_the_same(line):
    action = parse_action(line)
    assert parse_action(action.text()) == action


@pytest.mark.parametrize("line, why", [("2 swap 129m", "to SIDE"), ("2 swap 12m9p3s4s to 3", "at most 3"),
                                       ("2 void z", "m, p or s"), ("2 void", "m, p or s"),
                                       ("2 swap 1m to 2", "another"), ("1 won 5m", ".")])
def test_bad_new_actions_are_refused_with_a_reason(line, why):
    with pytest.raises(BadRecord, match=why):
        parse_action(line)


def _settle(actions: list[str], **options):
    record = HandRecord("sichuan", 1, 0, 0)
    record.actions += [parse_action(a, i) for i, a in enumerate(actions)]
    return settle_hand(load_ruleset("sichuan").with_options(options), record)


VOIDS = ["0 void s", "1 void s", "2 void s", "3 void s"]


@pytest.mark.parametrize("actions, why", [
    (["1 discard 4m", "2 chow 345m from 1"], "no chows"),
    (VOIDS + ["1 discard 4s", "2 pung 4s from 1"], "void suit"),
    (VOIDS + ["0 deal 1s2m3m4m5m6m7m8m9m1p2p3p4p5p", "0 discard 2m"], "discards that suit first"),
    (VOIDS + ["1 won", "1 discard 4m"], "has won and left"),
    (VOIDS[:1] + ["0 void m"], "once"),
    (["0 swap 123m to 1", "0 swap 456m to 2"], "once"),
    (["0 swap 12m3p to 1"], "one suit"),
])
def test_the_referee_refuses_what_the_rules_forbid(actions, why):
    with pytest.raises(BadRecord, match=why):
        _settle(actions)


def test_a_swap_is_received_when_all_have_passed():
    dealt = {0: "123456789m12345p", 1: "123456789p1234s", 2: "123456789s1234m", 3: "777888999p1234s"}
    actions = [f"{s} deal {t}" for s, t in dealt.items()]
    actions += ["0 swap 123m to 1", "1 swap 123p to 2", "2 swap 123s to 3", "3 swap 777p to 0", "0 void p",
                "1 void s", "2 void m", "3 void p", "0 discard 1p", "1 discard 4s"]
    assert _settle(actions).payments == []
    assert _settle(actions[:8] + ["0 show 456789m12345p777p"] + actions[8:]).payments == []
    with pytest.raises(BadRecord, match="the record shows"):
        _settle(actions[:8] + ["0 show 123456789m12345p"] + actions[8:])      # (0 passed 123m, has 777p)


def test_options_name_the_switch_in_their_errors():
    with pytest.raises(ValueError, match="not a switch of \\[sichuan\\].*blood_river"):
        load_ruleset("sichuan").with_options({"blood_rivers": True})
    with pytest.raises(ValueError, match="option 'cap'"):
        load_ruleset("sichuan").with_options({"cap": "high"})
    with pytest.raises(ValueError, match="no options"):
        load_ruleset("mcr").with_options({"cap": 4})


# -- the dealer ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("outcome, dealer", [
    (HandOutcome((2, 3)), 2),                             # the first winner deals
    (HandOutcome((2, 3), discarder=1), 1),                # ... after 一炮多响 the discarder
    (HandOutcome((), drawn=True), 0),                     # nobody won: the dealer stays
])
def test_the_first_winner_or_the_discarder_of_several_deals_next(outcome, dealer):
    rules = load_ruleset("sichuan")
    assert rules.next_dealer(Dealership(0, 0), outcome).dealer == dealer
    assert load_ruleset("sichuan").with_options({"dealer_on_draw": "next"}).next_dealer(
        Dealership(0, 0), HandOutcome((), drawn=True)).dealer == 1


def test_a_settled_hand_says_whether_its_first_win_was_several_on_one_discard():
    several = _settle(VOIDS + ["0 discard 5p", "1 win 5p from 0 hand 123m456m789m46p55p",
                               "3 win 5p from 0 hand 234m567m999m34p77p"])
    assert several.outcome.winners == (1, 3) and several.outcome.discarder == 0
    one = _settle(VOIDS + ["0 discard 5p", "1 win 5p from 0 hand 123m456m789m46p55p"])
    assert one.outcome.discarder is None
    rules = load_ruleset("sichuan")
    assert rules.lead_winner([3, 1], 0) == 3 and load_ruleset("mcr").lead_winner([3, 0], 0) == 0


def test_the_players_choose_the_suit_they_hold_least_as_void():
    rules = load_ruleset("sichuan")
    player = SimPlayer(0, random.Random(1), rules, lambda *a, **k: False)
    play = _fixed(swap_tiles=0)
    play.seats[0].hand = parse("1112345m678p9p12s")
    assert player.void_suit(play) == 2
    passed = player.tiles_to_pass(_fixed())
    assert len(passed) == 3 and len({k // 9 for k in passed}) == 1


def test_the_action_record_a_hand_wrote_has_every_void_before_the_first_discard():
    play, _ = _hand(load_ruleset("sichuan"), 3)
    verbs = [a.verb for a in play.record.actions]
    first_discard = verbs.index(Verb.DISCARD)
    assert verbs[:first_discard].count(Verb.VOID) == SIDES and verbs[:first_discard].count(Verb.SWAP) == SIDES
    assert verbs.index(Verb.SWAP) < verbs.index(Verb.VOID)
    assert all(isinstance(a, Action) for a in play.record.actions)


# -- on the simulated table ---------------------------------------------------------------------------------
def test_a_game_on_the_simulated_108_tile_table_plays_on_after_wins_and_reports_winners_per_hand():
    from sim.report import build_report, summary_lines
    from sim.table_run import SimRun

    run = SimRun(rules="sichuan", hands=6, play=True, seed=14)      # (hand 2: its first win 一炮多响, from side 2)
    try:
        run.run(timeout_s=6 * 900.0)
        game = run.game
        assert game is not None and game.refused == 0 and game.false_wins == 0
        assert run.cfg.table.tile_set == 108
        report = build_report(run, "sichuan", 6, 1.0)
        assert report["hands_played"] == 6 and report["chips_conserved"]
        per_hand = {int(n): c for n, c in report["winners_per_hand"].items()}
        assert sum(per_hand.values()) == 6 and any(n > 1 for n in per_hand)
        assert any(line.startswith("winners per hand: ") for line in summary_lines(report, []))
        rules = load_ruleset("sichuan")
        hands = run.session.scoreboard.hands(all_games=True)
        several = 0
        for h, after in zip(hands, hands[1:] + [None]):
            assert sum(deltas(h.payments)) == 0
            record = HandRecord.from_json(json.loads(h.record))
            assert sorted(a.side for a in record.actions if a.verb is Verb.VOID) == list(range(SIDES))
            if after is not None:        # the dealer the table chose is the one the rules give for the record
                outcome = settle_hand(rules, record).outcome
                assert after.dealer == rules.next_dealer(Dealership(h.dealer), outcome).dealer, (h.hand, outcome)
                several += outcome.discarder is not None
        assert several, "the seed was chosen for a hand whose first win was several on one discard"
    finally:
        run.close()


def test_the_bench_game_sees_every_money_rule_of_blood_battle():
    """`make bench`'s 血战 game, shortened: its checks are the acceptance's (all must occur in its 200 hands)."""
    from bench.games import blood_battle

    result = blood_battle(hands=40, seed=7)
    assert result["chips_conserved"] and result["refused_actions"] == 0
    assert result["hands"] == 40 and sum(result["winners_per_hand"].values()) == 40
    assert result["occurred"]["3 winners"] and result["occurred"]["kong money"]
