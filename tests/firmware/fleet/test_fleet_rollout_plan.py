"""The rollout planner (firmware/fleet/rollout.py): waves, the gate, the soak, halt and roll back, on an injected
clock; property tests over random fleets and random reports."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from firmware.fleet.command_auth import CommandRefused, _check_args
from firmware.fleet.rollout import Observation, Phase, Rollout, wave_sizes
from firmware.fleet.topics import Verb

NEW = "2.0.0"
OLD = Observation(True, "1.0.0")
GOOD = Observation(True, NEW, {"target": NEW, "state": "installed"})
BAD = Observation(True, "1.0.0", {"target": NEW, "state": "failed", "error": "self-test failed"})


def test_wave_sizes():
    assert wave_sizes("1,25%,100%", 20) == [1, 5, 20]
    assert wave_sizes("1,25%,100%", 3) == [1, 3]          # (25% of 3 rounds up to 1: no new table, dropped)
    assert wave_sizes("1,10%", 40) == [1, 4, 40]           # (the last wave always reaches every table)
    for bad in ("0", "x", "150%", "5,2", ""):
        with pytest.raises(ValueError):
            wave_sizes(bad, 10)


def test_update_and_rollback_arguments_are_checked():
    ok = {"url": "http://hall/b.tar", "sha256": "ab" * 32, "version": "2.0.0"}
    assert _check_args(Verb.UPDATE, ok)["version"] == "2.0.0"
    for bad in ({**ok, "url": "file:///etc/passwd"}, {**ok, "sha256": "x"}, {**ok, "version": "../x"},
                {**ok, "version": ".hidden"}, {**ok, "extra": 1}, {"url": ok["url"]}):
        with pytest.raises(CommandRefused):
            _check_args(Verb.UPDATE, bad)
    assert _check_args(Verb.ROLLBACK, {"version": NEW}) == {"version": NEW}
    with pytest.raises(CommandRefused):
        _check_args(Verb.ROLLBACK, {})


def test_a_soak_fault_halts_and_rolls_back_the_updated_tables():
    r = Rollout(["a", "b", "c"], [1, 3], NEW, soak_s=10)
    assert [a.table for a in r.start(0)] == ["a"]
    assert r.observe("a", GOOD, 1) == []
    assert r.tick(5) == []
    assert [a.table for a in r.tick(11)] == ["b", "c"]
    r.observe("b", GOOD, 12)
    actions = r.observe("b", Observation(True, NEW, GOOD.release, frozenset({"E41"})), 13)
    assert r.state == "halted" and "E41" in r.reason
    assert sorted((a.verb, a.table) for a in actions) == [("rollback", "a"), ("rollback", "b"), ("rollback", "c")]
    r.observe("a", OLD, 14)
    r.observe("b", OLD, 14)
    r.observe("c", OLD, 14)
    assert r.finished


reports = st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["good", "bad", "fault", "old", "offline"]),
                             st.floats(0, 30)), max_size=40)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 6), spec=st.sampled_from(["1,25%,100%", "1,50%", "2,100%", "100%", "1,2,3"]),
       events=reports)
def test_properties(n, spec, events):
    tables = [f"t{i}" for i in range(n)]
    r = Rollout(tables, wave_sizes(spec, n), NEW, soak_s=5, report_timeout_s=60)
    updates: list[str] = []
    rollbacks: list[str] = []
    now = 0.0

    def act(actions):
        earlier = list(updates)
        for a in actions:
            if a.verb == "update":
                assert r.state == "running", "an update after the halt"
                # the gate: every table of the earlier waves is healthy
                assert all(r.tracks[t].phase is Phase.HEALTHY for t in earlier), "a wave before its gate"
                updates.append(a.table)
            else:
                rollbacks.append(a.table)

    act(r.start(now))
    assert updates == tables[:r.waves[0]]
    for index, kind, dt in events:
        now += dt
        table = tables[index % n]
        seen = {"good": GOOD, "bad": BAD, "fault": Observation(True, NEW, GOOD.release, frozenset({"E41"})),
                "old": OLD, "offline": Observation(False, NEW, GOOD.release)}[kind]
        act(r.observe(table, seen, now))
        act(r.tick(now))
    assert len(updates) == len(set(updates)), "a table updated twice"
    assert updates == tables[:len(updates)], "tables out of order"
    if r.state == "halted":
        for t in updates:                 # every table updated and not failed before switching is rolled back
            if r.tracks[t].phase is not Phase.FAILED:
                assert t in rollbacks
    if r.state == "done":
        assert updates == tables and not rollbacks


def test_all_good_completes():
    tables = ["a", "b", "c", "d"]
    r = Rollout(tables, wave_sizes("1,50%,100%", 4), NEW, soak_s=2)
    sent = [a.table for a in r.start(0)]
    now = 0.0
    while r.state == "running":
        now += 1
        for t in sent:
            sent_more = r.observe(t, GOOD, now)
            sent += [a.table for a in sent_more]
        sent += [a.table for a in r.tick(now)]
        assert now < 100
    assert r.state == "done" and sent == tables and r.progress(now)["healthy"] == 4


def test_the_rollout_and_its_wave_are_checked_arguments():
    ok = {"url": "http://hall/b.tar", "sha256": "ab" * 32, "version": NEW}
    assert _check_args(Verb.UPDATE, {**ok, "rollout": "2.0.0-20260101T2100-ab12", "wave": 3}) == \
        {**ok, "rollout": "2.0.0-20260101T2100-ab12", "wave": 3}
    assert _check_args(Verb.ROLLBACK, {"version": NEW, "rollout": "r1", "wave": 1}) == \
        {"version": NEW, "rollout": "r1", "wave": 1}
    for bad, words in (({"rollout": "../x"}, "rollout is not"), ({"rollout": "r" * 65}, "rollout is not"),
                       ({"rollout": 7}, "rollout is not"), ({"rollout": "r1", "wave": 0}, "wave is not"),
                       ({"rollout": "r1", "wave": True}, "wave is not"),
                       ({"rollout": "r1", "wave": 1001}, "wave is not"),
                       ({"wave": 2}, "a wave belongs to a rollout")):
        for verb, args in ((Verb.UPDATE, ok), (Verb.ROLLBACK, {"version": NEW})):
            with pytest.raises(CommandRefused, match=words):
                _check_args(verb, {**args, **bad})


def test_a_report_from_before_the_rollout_counts_neither_as_done_nor_as_failed():
    """A table's retained meta says 2.0.0 installed (an earlier rollout, or updated by hand) or failed (an earlier
    rollout of the same version): a rollout with an id waits for the table's report of *this* rollout."""
    r = Rollout(["a", "b"], [1, 2], NEW, soak_s=5, report_timeout_s=60, rollout_id="r2")
    r.observe("a", BAD, 0)
    actions = r.start(0)
    assert [(a.verb, a.table) for a in actions] == [("update", "a")]
    assert r.command_args(actions[0]) == {"version": NEW, "rollout": "r2", "wave": 1}
    stale_failed = Observation(True, "1.0.0", {"target": NEW, "state": "failed", "rollout": "r1"})
    stale_good = Observation(True, NEW, {"target": NEW, "state": "installed", "rollout": "r1"})
    no_id = Observation(True, NEW, {"target": NEW, "state": "installed"})
    for seen in (stale_failed, stale_good, no_id, Observation(True, NEW)):
        assert r.observe("a", seen, 1) == [] and r.state == "running"
        assert r.tick(20) == [] and r.tracks["a"].phase is Phase.UPDATING      # (not soaking: not its report)
    pending = Observation(True, "1.0.0", {"target": NEW, "state": "restarting", "rollout": "r2", "wave": 1})
    assert r.observe("a", pending, 21) == [] and r.tracks["a"].phase is Phase.UPDATING
    ours = Observation(True, NEW, {"target": NEW, "state": "installed", "rollout": "r2", "wave": 1})
    r.observe("a", ours, 22)
    assert r.tracks["a"].phase is Phase.SOAKING
    actions = r.tick(28)
    assert [(a.verb, a.table) for a in actions] == [("update", "b")]
    assert r.command_args(actions[0]) == {"version": NEW, "rollout": "r2", "wave": 2}
    assert r.progress(28)["rollout"] == "r2"
    failed = Observation(True, "1.0.0", {"target": NEW, "state": "failed", "rollout": "r2", "error": "signature"})
    r.observe("b", failed, 29)
    assert r.state == "halted" and "signature" in r.reason


def test_the_report_timeout_halts_a_rollout_whose_table_shows_only_a_stale_meta():
    r = Rollout(["a"], [1], NEW, soak_s=5, report_timeout_s=30, rollout_id="r2")
    r.start(0)
    r.observe("a", Observation(True, NEW, {"target": NEW, "state": "installed", "rollout": "r1"}), 1)
    assert r.tick(29) == []
    assert [(a.verb, a.table) for a in r.tick(31)] == [("rollback", "a")]
    assert r.state == "halted" and "no report of 2.0.0 within 30 s" in r.reason
