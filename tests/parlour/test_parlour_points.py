"""A round's points by the rule set's policy and the standings derived from facts (parlour's pure core)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parlour.core.event import EventFormat, FormatError, Seat
from parlour.core.facts import Fact, FactKind, fold
from parlour.core.points import CompetitionStandardPoints, McrTablePoints, TableResult, places
from parlour.core.standings import shared_ranks, standings, team_standings

SEATS = (Seat.E, Seat.S, Seat.W, Seat.N)


def table(round_no: int, name: str, players: list[str], scores: list[int]) -> TableResult:
    return TableResult(round_no, name, dict(zip(SEATS, players)), dict(zip(players, scores)))


def test_mcr_tables_give_4_2_1_0_and_shared_places_share_their_points():
    fmt = EventFormat("e1", "mcr", 1, 4)
    got = McrTablePoints().round_points(fmt, 1, [table(1, "T1", list("abcd"), [30, 10, -10, -30]),
                                                 table(1, "T2", list("efgh"), [20, 20, -20, -20]),
                                                 table(1, "T3", list("ijkl"), [0, 0, 0, 0])])
    assert [got[p].points for p in "abcd"] == [4, 2, 1, 0]
    assert [got[p].points for p in "efgh"] == [3, 3, Fraction(1, 2), Fraction(1, 2)]
    assert {got[p].points for p in "ijkl"} == {Fraction(7, 4)}
    assert [got[p].place for p in "efgh"] == [1, 1, 3, 3]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=4, max_size=4))
def test_mcr_points_at_a_table_always_sum_to_7(scores):
    got = McrTablePoints().round_points(EventFormat("e1", "mcr", 1, 4), 1, [table(1, "T1", list("abcd"), scores)])
    assert sum(r.points for r in got.values()) == 7
    for a, b in zip("abcd", "abcd"[1:]):
        if scores["abcd".index(a)] > scores["abcd".index(b)]:
            assert got[a].points > got[b].points


def test_competition_first_places_advance_with_the_round_s_standard_points_and_the_best_seconds_as_alternates():
    fmt = EventFormat("e1", "competition", 3, 4, standard_points=8, alternates=1)
    results = [table(2, "T1", list("abcd"), [50, 30, -30, -50]), table(2, "T2", list("efgh"), [60, 10, 0, -70])]
    got = CompetitionStandardPoints().round_points(fmt, 2, results)
    assert got["a"].points == got["e"].points == 9            # round 2: 8 + 1
    assert got["a"].advanced and not got["a"].alternate
    assert got["b"].points == 9 and got["b"].alternate         # the better second (30 > 10)
    assert got["f"].points == 0 and not got["f"].advanced
    two = CompetitionStandardPoints().round_points(EventFormat("e1", "competition", 3, 4, advance_per_table=2), 1,
                                                   results)
    assert {p for p, r in two.items() if r.advanced} == set("abef")


def test_places_share_equal_scores():
    assert places({"a": 5, "b": 5, "c": 0, "d": -10}) == {"a": 1, "b": 1, "c": 3, "d": 4}
    assert shared_ranks([(3, 1), (2, 5), (2, 5), (1, 0)]) == [1, 2, 2, 4]


def facts_of(fmt: EventFormat, players: dict[str, str | None], seatings: list[dict], results: list[dict],
             extra: list[Fact] = ()) -> list[Fact]:
    out = [Fact(FactKind.EVENT, {"format": fmt.as_dict()})]
    out += [Fact(FactKind.ENROL, {"name": n, "team": t}) for n, t in players.items()]
    out += [Fact(FactKind.SEATING, s) for s in seatings]
    out += [Fact(FactKind.RESULT, r) for r in results]
    return out + list(extra)


def seating(round_no: int, *tables: str) -> dict:
    return {"round": round_no, "bye": [], "tables": [{"table": f"T{i + 1}", "seats": dict(zip("ESWN", t))}
                                                      for i, t in enumerate(tables)]}


def test_standings_rank_by_points_then_score_and_ties_in_every_key_share_a_rank():
    fmt = EventFormat("e1", "mcr", 2, 4)
    players = {p: ("red" if p in "aceg" else "blue") for p in "abcdefgh"}
    facts = facts_of(fmt, players, [seating(1, "abcd", "efgh"), seating(2, "aceg", "bdfh")], [
        {"round": 1, "table": "T1", "score": {"E": 30, "S": 10, "W": -10, "N": -30}, "source": "fleet"},
        {"round": 1, "table": "T2", "score": {"E": 30, "S": 10, "W": -10, "N": -30}, "source": "fleet"},
        # told twice (the first stands)
        {"round": 1, "table": "T2", "score": {"E": 0, "S": 0, "W": 0, "N": 0}, "source": "hand"},
    ])
    rows = standings(fold(facts))
    assert [(r.rank, r.name) for r in rows][:2] == [(1, "a"), (1, "e")]          # 4 points, 30 each
    assert rows[2].rank == 3 and rows[2].name in "bf"
    assert rows[-1].rank == 7 and rows[-1].table_points == 0 and rows[-1].rounds == 1
    teams = team_standings(fold(facts))
    assert [t.team for t in teams] == ["red", "blue"] and teams[0].table_points == 4 + 1 + 4 + 1


def test_a_correction_wins_over_the_result_and_a_penalty_comes_off_before_places():
    fmt = EventFormat("e1", "mcr", 1, 4)
    base = facts_of(fmt, dict.fromkeys("abcd"), [seating(1, "abcd")],
                    [{"round": 1, "table": "T1", "score": {"E": 30, "S": 10, "W": -10, "N": -30}}])
    assert standings(fold(base))[0].name == "a"
    corrected = base + [Fact(FactKind.CORRECTION, {"round": 1, "table": "T1", "referee": "ref", "note": "",
                                                   "score": {"E": -30, "S": 10, "W": -10, "N": 30}})]
    state = fold(corrected)
    assert standings(state)[0].name == "d" and state.tables[(1, "T1")].confirmed
    fined = base + [Fact(FactKind.PENALTY, {"round": 1, "name": "a", "points": 25, "reason": "late"})]
    rows = {r.name: r for r in standings(fold(fined))}
    assert rows["b"].rank == 1 and rows["a"].score == 5 and rows["a"].table_points == 2


def test_facts_start_with_the_format_and_bad_scores_name_the_key():
    with pytest.raises(FormatError, match="first fact"):
        fold([Fact(FactKind.ENROL, {"name": "a"})])
    with pytest.raises(FormatError, match="rules 'riichi'"):
        EventFormat("e1", "riichi", 1, 4)
    with pytest.raises(FormatError, match="hands_per_round"):
        EventFormat("e1", "mcr", 1, 0)
    state = fold(facts_of(EventFormat("e1", "mcr", 1, 4), dict.fromkeys("abcd"), [seating(1, "abcd")], []))
    with pytest.raises(FormatError, match="no table 'T9'"):
        state.table_round(1, "T9")


def _with_bye(round_no: int, bye: str, *tables: str) -> dict:
    return seating(round_no, *tables) | {"bye": list(bye)}


def test_a_bye_is_credited_when_its_round_is_complete_mcr_the_mean_of_the_places():
    fmt = EventFormat("e1", "mcr", 1, 4)
    players = dict.fromkeys("abcdefghi")
    seat = _with_bye(1, "i", "abcd", "efgh")
    first = {"round": 1, "table": "T1", "score": {"E": 30, "S": 10, "W": -10, "N": -30}}
    half = {r.name: r for r in standings(fold(facts_of(fmt, players, [seat], [first])))}
    assert half["i"].table_points == 0 and half["i"].byes == 0        # (T2 still playing: not yet)
    done = facts_of(fmt, players, [seat], [first, {"round": 1, "table": "T2",
                                                   "score": {"E": 5, "S": 0, "W": 0, "N": -5}}])
    rows = {r.name: r for r in standings(fold(done))}
    assert rows["i"].table_points == Fraction(7, 4) and rows["i"].score == 0
    assert (rows["i"].rounds, rows["i"].places, rows["i"].byes) == (0, (), 1)
    assert rows["i"].as_dict()["byes"] == 1 and rows["i"].as_dict()["table_points"] == 1.75
    assert (rows["a"].rounds, rows["a"].places, rows["a"].byes) == (1, (1,), 0)
    fined = done + [Fact(FactKind.PENALTY, {"round": 1, "name": "i", "points": 20, "reason": "late"})]
    late = {r.name: r for r in standings(fold(fined))}["i"]
    assert (late.score, late.table_points, late.byes) == (-20, Fraction(7, 4), 1)     # (a bye is fined as any)
    # a and e 4 (a on score), b 2, then the bye's 1.75 above f and g sharing T2's second place ((2 + 1) / 2)
    assert [(r.rank, r.name) for r in standings(fold(done))][:4] == [(1, "a"), (2, "e"), (3, "b"), (4, "i")]


def test_a_bye_under_competition_rules_advances_with_the_round_s_standard_points():
    fmt = EventFormat("e1", "competition", 2, 4, standard_points=8)
    players = dict.fromkeys("abcdefghij")
    facts = facts_of(fmt, players, [_with_bye(2, "ij", "abcd", "efgh")], [
        {"round": 2, "table": "T1", "score": {"E": 30, "S": 10, "W": -10, "N": -30}},
        {"round": 2, "table": "T2", "score": {"E": 20, "S": 10, "W": -10, "N": -20}}])
    rows = {r.name: r for r in standings(fold(facts))}
    assert rows["i"].table_points == rows["j"].table_points == rows["a"].table_points == 9     # round 2: 8 + 1
    assert rows["i"].advanced == 1 and rows["i"].byes == 1 and rows["i"].rounds == 0
    got = CompetitionStandardPoints().bye_points(fmt, 2)
    assert got.bye and got.advanced and got.score == 0 and got.place == 0


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3), st.lists(st.integers(-60, 60), min_size=12, max_size=12))
def test_under_mcr_a_bye_takes_what_a_seated_player_takes_on_average(byes, scores):
    """Whatever the tables' scores, the round's points over every player (seated or not) average 7/4: a bye
    neither gains nor loses ground against the field."""
    names = [f"p{i}" for i in range(12 + byes)]
    tables = ["".join(chr(65 + i) for i in range(k, k + 4)) for k in (0, 4, 8)]
    players = {n: None for n in names}
    rename = dict(zip("ABCDEFGHIJKL", names))
    seat = {"round": 1, "bye": names[12:], "tables": [
        {"table": f"T{i + 1}", "seats": {w: rename[c] for w, c in zip("ESWN", t)}} for i, t in enumerate(tables)]}
    results = [{"round": 1, "table": f"T{i + 1}", "score": dict(zip("ESWN", scores[4 * i:4 * i + 4]))}
               for i in range(3)]
    rows = standings(fold(facts_of(EventFormat("e1", "mcr", 1, 4), players, [seat], results)))
    assert sum(r.table_points for r in rows) / len(rows) == Fraction(7, 4)
    assert sum(r.byes for r in rows) == byes and {r.table_points for r in rows if r.byes} == {Fraction(7, 4)}
