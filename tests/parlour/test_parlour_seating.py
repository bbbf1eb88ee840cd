"""Tournament seating: exact designs, the lower bound, byes, winds, teams and re-planning, each recounted here."""

import itertools
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parlour.core.seating import (
    Plan,
    RoundSeating,
    TableSeats,
    affine_classes,
    certify,
    meetings,
    plan_seating,
)


def names(n, prefix="P"):
    return [f"{prefix}{i:02d}" for i in range(n)]


def recount(rounds):
    """Repeated pairs, counted the plain way: every pair of every table, then max(0, m - 1) summed."""
    seen = {}
    for r in rounds:
        for t in r.tables:
            for i in range(4):
                for j in range(i + 1, 4):
                    key = tuple(sorted((t.seats[i], t.seats[j])))
                    seen[key] = seen.get(key, 0) + 1
    return sum(m - 1 for m in seen.values() if m > 1), seen


def clashes(rounds, teams):
    return sum(
        1
        for r in rounds
        for t in r.tables
        for a, b in itertools.combinations(t.seats, 2)
        if teams.get(a) is not None and teams.get(a) == teams.get(b)
    )


def winds_of(rounds):
    counts = {}
    for r in rounds:
        for t in r.tables:
            for w, p in enumerate(t.seats):
                counts.setdefault(p, [0, 0, 0, 0])[w] += 1
    return counts


def check_shape(plan: Plan, players, rounds):
    """Every round numbered in order, its tables of 4 and its byes a partition of the players; byes fair."""
    assert [r.round for r in plan.rounds] == list(range(1, rounds + 1))
    sat_out = {p: 0 for p in players}
    for r in plan.rounds:
        seated = [p for t in r.tables for p in t.seats]
        assert all(len(t.seats) == 4 for t in r.tables)
        assert [t.table for t in r.tables] == [f"T{i}" for i in range(1, len(r.tables) + 1)]
        assert len(set(seated)) == len(seated)
        assert sorted(seated + list(r.bye)) == sorted(players)
        assert len(r.bye) == (len(players) % 4 if len(players) >= 4 else len(players))
        for p in r.bye:
            sat_out[p] += 1
        # nobody sits out twice before everyone has once: after every round the counts differ by at most 1
        assert max(sat_out.values()) - min(sat_out.values()) <= 1


@pytest.mark.parametrize("rounds", [1, 2, 3, 4, 5])
def test_sixteen_players_meet_nobody_twice_in_up_to_five_rounds(rounds):
    players = names(16)
    start = time.perf_counter()
    plan = plan_seating(players, rounds)
    assert time.perf_counter() - start < 2.0
    check_shape(plan, players, rounds)
    repeated, seen = recount(plan.rounds)
    assert repeated == 0 and len(seen) == 24 * rounds
    assert plan.certificate.pairs_repeated == 0 and plan.certificate.optimal
    assert plan.certificate.method == "affine plane AG(2,4)"


def test_thirty_two_players_ten_rounds_meet_nobody_twice():
    players = names(32)
    start = time.perf_counter()
    plan = plan_seating(players, 10)
    assert time.perf_counter() - start < 2.0
    check_shape(plan, players, 10)
    repeated, seen = recount(plan.rounds)
    assert repeated == 0 and len(seen) == 480
    assert plan.certificate == plan.certificate.__class__(0, 0, True, "resolvable design (8-4-10)", 0)


def test_thirty_two_players_eleven_rounds_meet_every_pair_at_the_bound():
    plan = plan_seating(names(32), 11)
    repeated, seen = recount(plan.rounds)
    assert len(seen) == 32 * 31 // 2  # everyone has met everyone
    assert repeated == 11 * 8 * 6 - 496 == plan.certificate.lower_bound == 32


def test_sixteen_players_six_rounds_repeat_24_pairs_which_is_optimal():
    start = time.perf_counter()
    plan = plan_seating(names(16), 6)
    assert time.perf_counter() - start < 2.0
    repeated, seen = recount(plan.rounds)
    # 6 rounds x 4 tables x 6 pairs = 144 meetings among 120 pairs: at least 24 repeats
    assert repeated == 24 == plan.certificate.pairs_repeated == plan.certificate.lower_bound
    assert plan.certificate.optimal
    assert max(seen.values()) == 2


def test_the_affine_space_of_64_points_gives_21_rounds_without_a_repeat():
    classes = affine_classes(3)
    assert len(classes) == 21
    pairs = set()
    for lines in classes:
        assert sorted(p for line in lines for p in line) == list(range(64))
        for line in lines:
            for pair in itertools.combinations(sorted(line), 2):
                assert pair not in pairs
                pairs.add(pair)
    assert len(pairs) == 64 * 63 // 2
    plan = plan_seating(names(64), 21)
    assert recount(plan.rounds)[0] == 0 and plan.certificate.optimal


@pytest.mark.parametrize(
    "n, rounds, bound",
    [
        (8, 2, 4),  # pigeonholes: each table of round 2 holds 2 + 2 or 3 + 1 players of one round-1 table
        (12, 2, 3),  # each round-1 table splits 2 + 1 + 1 over 3 tables at best
        (16, 7, 48),  # pairs: 168 meetings, 120 pairs
        (20, 7, 20),  # pairs: 210 meetings, 190 pairs; players: 21 meetings each, 19 others; 20 * 2 / 2
    ],
)
def test_the_lower_bound_of_small_cases_is_reached(n, rounds, bound):
    plan = plan_seating(names(n), rounds)
    assert plan.certificate.lower_bound == bound
    assert recount(plan.rounds)[0] == plan.certificate.pairs_repeated
    assert plan.certificate.pairs_repeated >= bound
    if n <= 16:
        assert plan.certificate.optimal


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(5, 40),
    rounds=st.integers(1, 8),
    seed=st.integers(0, 2**16),
    budget=st.sampled_from([0, 1, 50, 2_000]),
)
def test_any_seating_is_a_partition_with_fair_byes_and_an_honest_certificate(n, rounds, seed, budget):
    players = names(n)
    plan = plan_seating(players, rounds, seed=seed, budget=budget)
    check_shape(plan, players, rounds)
    repeated, _ = recount(plan.rounds)
    cert = plan.certificate
    assert cert.pairs_repeated == repeated
    assert cert.lower_bound <= repeated
    assert cert.optimal == (repeated == cert.lower_bound)
    counts = winds_of(plan.rounds)
    assert plan.wind_spread == max(max(c) - min(c) for c in counts.values())
    assert plan.wind_spread <= 1
    assert plan.team_clashes == 0


def test_the_same_seed_gives_the_same_plan_and_another_seed_may_not():
    players = names(22)
    a = plan_seating(players, 6, seed=3, budget=5_000)
    assert a == plan_seating(players, 6, seed=3, budget=5_000)
    assert a != plan_seating(players, 6, seed=4, budget=5_000)


def test_the_deadline_ends_the_search_and_a_plan_still_comes_back():
    calls = []

    def deadline():
        calls.append(1)
        return len(calls) > 3

    players = names(27)
    start = time.perf_counter()
    plan = plan_seating(players, 8, budget=10**9, deadline=deadline)
    assert time.perf_counter() - start < 5.0
    check_shape(plan, players, 8)
    assert plan.certificate.pairs_repeated == recount(plan.rounds)[0]
    assert plan_seating(players, 8, budget=10**9, deadline=lambda: True).certificate.method == "local search"


def test_team_mates_never_share_a_table_when_they_need_not():
    players = names(16)
    teams = {p: f"club{i % 4}" for i, p in enumerate(players)}
    plan = plan_seating(players, 5, teams=teams)
    assert clashes(plan.rounds, teams) == 0 == plan.team_clashes == plan.certificate.team_clashes
    repeated, _ = recount(plan.rounds)
    # clash-free, each player may meet only the 12 of other clubs but meets 15: 16 * 3 / 2 = 24 repeats at least
    assert repeated == plan.certificate.pairs_repeated == plan.certificate.lower_bound == 24
    assert plan.certificate.optimal


def test_teams_of_uneven_sizes_are_kept_apart_by_the_search():
    players = names(22)
    teams = {p: f"club{i % 5}" for i, p in enumerate(players[:18])}
    plan = plan_seating(players, 6, teams=teams, seed=1)
    assert clashes(plan.rounds, teams) == 0 == plan.team_clashes


def test_a_team_too_big_for_the_tables_clashes_as_little_as_it_must():
    players = names(8)
    teams = {p: "big" for p in players[:5]}
    plan = plan_seating(players, 3, teams=teams)
    # 5 team-mates over 2 tables: 3 + 2 at best, so 3 + 1 = 4 clashes a round
    assert clashes(plan.rounds, teams) == plan.team_clashes == 12


def test_replanning_keeps_the_played_rounds_and_seats_the_replacement():
    players = names(20)
    first = plan_seating(players, 5, seed=2)
    played = first.rounds[:2]
    gone, newcomer = players[5], "NEW"
    now = [p for p in players if p != gone] + [newcomer]
    again = plan_seating(now, 5, played=played, seed=2)
    assert again.rounds[:2] == played
    for r in again.rounds[2:]:
        seated = [p for t in r.tables for p in t.seats] + list(r.bye)
        assert gone not in seated and sorted(seated) == sorted(now)
    repeated, seen = recount(again.rounds)
    assert again.certificate.pairs_repeated == repeated
    assert again.certificate.lower_bound <= repeated
    # the search avoids the played meetings: 20 players allow 5 rounds with no pair meeting twice, though maybe not
    # after these two; meeting at random would repeat dozens
    assert repeated <= 2


def test_replanning_with_byes_sits_out_those_who_played_most():
    players = names(18)
    first = plan_seating(players, 3, seed=5)
    played = first.rounds[:1]
    now = players[:-1] + ["LATE"]  # P17 leaves; LATE missed round 1 so counts as having sat it out
    again = plan_seating(now, 3, played=played, seed=5)
    assert "LATE" not in again.rounds[1].bye
    sat_out = {p: sum(p not in {q for t in r.tables for q in t.seats} for r in again.rounds) for p in now}
    assert max(sat_out.values()) - min(sat_out.values()) <= 1


def test_replanning_counts_the_repeats_already_made():
    players = names(8)
    table = TableSeats("T1", tuple(players[:4]))
    other = TableSeats("T2", tuple(players[4:]))
    played = (RoundSeating(1, (table, other)), RoundSeating(2, (table, other)))
    plan = plan_seating(players, 3, played=played)
    assert plan.rounds[:2] == played
    # 12 repeats in round 2 already; round 3 adds at least 4 more (two groups of 4 over 2 tables)
    assert plan.certificate.lower_bound == 16 == plan.certificate.pairs_repeated == recount(plan.rounds)[0]


@pytest.mark.parametrize("rounds", [4, 5])
def test_sixteen_players_sit_each_wind_as_evenly_as_can_be(rounds):
    plan = plan_seating(names(16), rounds)
    counts = winds_of(plan.rounds)
    assert all(max(c) - min(c) <= 1 for c in counts.values())
    if rounds == 4:
        assert all(c == [1, 1, 1, 1] for c in counts.values())
    assert plan.wind_spread == (0 if rounds == 4 else 1)


def test_meetings_counts_every_pair_at_every_table():
    r1 = RoundSeating(1, (TableSeats("T1", ("a", "b", "c", "d")),), ("e",))
    r2 = RoundSeating(2, (TableSeats("T1", ("a", "b", "c", "e")),), ("d",))
    count = meetings([r1, r2])
    assert count[frozenset("ab")] == 2 and count[frozenset("de")] == 0 and count[frozenset("ae")] == 1
    assert sum(count.values()) == 12
    cert = certify(list("abcde"), [r1, r2])
    assert cert.pairs_repeated == 3  # ab, ac, bc
    # 4 of the 5 play each round, 3 stay together at least: C(3, 2) = 3
    assert cert.lower_bound == 3 and cert.optimal


def test_few_players_or_no_rounds_give_an_empty_but_honest_plan():
    plan = plan_seating(["a", "b", "c"], 2)
    assert all(r.tables == () and r.bye == ("a", "b", "c") for r in plan.rounds)
    assert plan.certificate.pairs_repeated == 0 and plan.certificate.optimal
    assert plan_seating(names(8), 0).rounds == ()


@pytest.mark.parametrize(
    "players, rounds, played, message",
    [
        (["a", "a", "b", "c"], 1, (), "twice"),
        (["a", "", "b", "c"], 1, (), "name"),
        (names(4), 0, (RoundSeating(1, (TableSeats("T1", tuple(names(4))),)),), "played already"),
        (names(4), 2, (RoundSeating(2, (TableSeats("T1", tuple(names(4))),)),), "numbered"),
    ],
)
def test_bad_requests_are_refused(players, rounds, played, message):
    with pytest.raises(ValueError, match=message):
        plan_seating(players, rounds, played=played)
