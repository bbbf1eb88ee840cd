"""Hostile and careless hand records: every line of a record is checked before anything is settled, an error
names the action at fault, and the scorer answers a record line with a result or an error, never a traceback."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware.rules.case_scoring import score_line
from firmware.rules.hand_record import BadRecord, HandRecord, parse_action

WORDS = ["0", "1", "2", "3", "7", "-1", "deal", "draw", "discard", "chow", "pung", "kong", "added_kong",
         "concealed_kong", "flower", "flower_discard", "win", "wall_end", "penalty", "opened", "dead", "follow",
         "liable", "from", "to", "hand", "flowers", "kong_win", "last_tile", "5m", "123m", "E", "C", "1f", "9f",
         "?", "-", "early_draw", "wrong_claim", "sneeze", "123m456p789s1234sE", "99999999999", "\u2028", "中"]
LINES = st.lists(st.sampled_from(WORDS), min_size=0, max_size=9).map(" ".join) | st.text(max_size=40)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=LINES)
def test_an_action_line_parses_or_is_refused_naming_it(line):
    try:
        action = parse_action(line, 7)
    except BadRecord as exc:
        assert str(exc).startswith("action 7 (")
        return
    assert parse_action(action.text(), 7) == action          # what is written reads back the same


RULES = st.sampled_from(["mcr", "competition", "liaoning", "jinzhou", "sichuan", "", 5])
CONTEXT = st.fixed_dictionaries({}, optional={
    "hand": st.integers(-5, 10**10), "dealer": st.integers(-1, 5), "streak": st.integers(-1, 2000),
    "round_wind": st.sampled_from(["E", "S", "X", 3]),
    "chips": st.one_of(st.none(), st.lists(st.integers(-10**13, 10**13), min_size=0, max_size=5)),
    "dealt": st.one_of(st.none(), st.dictionaries(st.sampled_from(["0", "1", "9"]), st.text(max_size=5))),
    "extra": st.just(1)})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=RULES, actions=st.lists(LINES, max_size=12), context=CONTEXT)
def test_a_record_line_gets_a_result_or_an_error_never_a_traceback(rules, actions, context):
    answer = score_line(json.dumps({"id": "r", "record": {"rules": rules, "actions": actions, **context}}))
    assert answer["id"] == "r"
    assert ("error" in answer) != ("verdicts" in answer), answer
    assert "internal error" not in answer.get("error", ""), answer
    json.dumps(answer, allow_nan=False)


def test_records_that_could_not_have_happened_are_refused_naming_the_action():
    cases = {
        "a side cannot claim or win on its own discard": ["1 pung 5m from 1"],
        "does not hold": ["0 deal 123m", "0 discard 9m"],
        "adds 5m to a pung it does not have": ["2 added_kong 5m"],
        "standing tiles": ["0 win 5m hand 123m"],
        "more than four of a tile": ["0 win 1m hand 1111m234567899m"],
        "no penalty 'sneeze'": ["1 penalty sneeze"],
    }
    for words, actions in cases.items():
        answer = score_line(json.dumps({"id": 1, "record": {"rules": "competition", "actions": actions}}))
        assert words in answer.get("error", ""), (words, answer)
    too_many = {"rules": "mcr", "actions": ["0 draw ?"] * 601}
    assert "at most 600" in score_line(json.dumps({"id": 2, "record": too_many}))["error"]
    for bad in ({"rules": "mcr", "actions": "0 draw 5m"}, {"rules": "mcr", "chips": [1, 2]},
                {"rules": "mcr", "hand": True}, {"rules": "mcr", "colour": 1}, []):
        answer = score_line(json.dumps({"id": 3, "record": bad}))
        assert answer["error"].startswith("field 'record'"), answer
    with_case = score_line(json.dumps({"id": 4, "record": {"rules": "mcr"}, "hand": "123m"}))
    assert "'hand'" in with_case["error"]
    assert HandRecord.from_json({"rules": "mcr", "actions": ["0 win 5m hand -"]}).actions[0].hand == ()
