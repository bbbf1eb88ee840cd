"""The tournament store's state: kept folded and brought up to date with the facts stored since, the same as
folding every fact, on SQLite and PostgreSQL; a state handed out never changes; a fact committed late below
the last one read is not missed."""

from __future__ import annotations

import copy
import random

import pytest

from parlour.core.event import EventFormat
from parlour.core.facts import FactKind, fold
from parlour.store.facts_store import FOLDED_EVENTS, TourneyStore
from parlour.store.schema import facts

SEATS = ("E", "S", "W", "N")


def _event(store: TourneyStore, name: str = "e1", players: int = 16) -> int:
    event_id = store.create_event(EventFormat(name, "mcr", 3, 4))
    store.append_many(event_id, [(FactKind.ENROL, {"name": f"p{i}", "team": None}) for i in range(players)])
    return event_id


def _seat(round_no: int, names: list[str]) -> dict:
    tables = [{"table": f"T{i + 1}", "seats": dict(zip(SEATS, names[4 * i:4 * i + 4]))}
              for i in range(len(names) // 4)]
    return {"round": round_no, "tables": tables, "bye": [], "certificate": None}


def _random_fact(rng: random.Random, round_no: int, n: int) -> tuple[FactKind, dict]:
    """A fact a night brings: mostly hands, then results, confirmations, corrections, penalties, appeals."""
    table = f"T{rng.randint(1, 4)}"
    score = {s: v for s, v in zip(SEATS, (30, -10, -10, -10))}
    kind = rng.choice([FactKind.HAND] * 6 + [FactKind.RESULT, FactKind.CONFIRM, FactKind.CORRECTION,
                                              FactKind.PENALTY, FactKind.APPEAL, FactKind.WITHDRAW])
    if kind is FactKind.HAND:
        return kind, {"round": round_no, "table": table, "msg_id": f"m{n}", "hand": n, "winners": [0]}
    if kind is FactKind.RESULT:
        return kind, {"round": round_no, "table": table, "score": score, "hands": 16, "reason": "done",
                      "source": "fleet"}
    if kind is FactKind.CONFIRM:
        return kind, {"round": round_no, "table": table, "referee": "r"}
    if kind is FactKind.CORRECTION:
        return kind, {"round": round_no, "table": table, "score": {s: -v for s, v in score.items()},
                      "referee": "r", "note": "typo"}
    if kind is FactKind.PENALTY:
        return kind, {"round": round_no, "name": f"p{rng.randrange(16)}", "points": 5, "reason": "late",
                      "referee": "r"}
    if kind is FactKind.APPEAL:
        return kind, {"round": round_no, "table": table, "by": "p1", "text": "why"}
    return kind, {"name": f"p{rng.randrange(16)}", "from_round": round_no + 1}


def test_the_state_kept_is_the_fold_of_every_fact(tourney_db):
    """A night of facts stored one by one (and a round seated and opened in between), the state asked after
    each: always what folding every fact gives, and each state handed out stays as it was."""
    store = TourneyStore(tourney_db)
    event_id = _event(store)
    rng = random.Random(31)
    handed: list[tuple[object, object]] = []
    names = [f"p{i}" for i in range(16)]
    for round_no in (1, 2):
        store.append(event_id, FactKind.SEATING, _seat(round_no, rng.sample(names, 16)))
        store.append(event_id, FactKind.ROUND_OPEN, {"round": round_no, "ends_at": None})
        for n in range(60):
            kind, body = _random_fact(rng, round_no, round_no * 100 + n)
            store.append(event_id, kind, body)
            if n % 3 == 0:
                state = store.state(event_id)
                assert state == fold(store.facts(event_id))
                handed.append((state, copy.deepcopy(state)))
    assert all(state == before for state, before in handed)
    store.close()


def test_only_the_facts_stored_since_are_read(tourney_db):
    store = TourneyStore(tourney_db)
    event_id = _event(store)
    store.append_many(event_id, [(FactKind.HAND, {"round": 1, "table": "T1", "msg_id": f"m{i}"})
                                 for i in range(200)])
    store.state(event_id)
    read = store.facts_read
    store.append(event_id, FactKind.HAND, {"round": 1, "table": "T1", "msg_id": "late"})
    state = store.state(event_id)
    assert store.facts_read - read == 1
    assert "late" in state.hand_ids
    assert store.state(event_id) is state                   # nothing new: the same state
    assert store.facts_read - read == 1
    store.close()


def test_a_fact_committed_late_below_the_last_read_is_not_missed(tourney_db):
    """PostgreSQL numbers a fact when it is inserted: a writer that commits after another, with a lower
    number, puts a fact below the last one read.  The next state has it (every fact read again)."""
    store = TourneyStore(tourney_db)
    event_id = _event(store)
    with store.engine.begin() as conn:
        conn.execute(facts.insert().values(seq=10_000, event_id=event_id, kind="hand", round=1, tbl="T1",
                                           body='{"msg_id": "high", "round": 1, "table": "T1"}',
                                           recorded_at="2026-12-07T00:00:00.000+00:00"))
    assert "high" in store.state(event_id).hand_ids
    with store.engine.begin() as conn:
        conn.execute(facts.insert().values(seq=5_000, event_id=event_id, kind="hand", round=1, tbl="T1",
                                           body='{"msg_id": "below", "round": 1, "table": "T1"}',
                                           recorded_at="2026-12-07T00:00:00.000+00:00"))
    state = store.state(event_id)
    assert "below" in state.hand_ids
    assert state == fold(store.facts(event_id))
    store.close()


def test_the_states_kept_are_bounded(tmp_path):
    store = TourneyStore(str(tmp_path / "many.db"))
    events = [_event(store, f"e{i}", players=4) for i in range(FOLDED_EVENTS + 3)]
    for event_id in events:
        store.state(event_id)
    assert len(store._folded) == FOLDED_EVENTS
    assert list(store._folded) == events[-FOLDED_EVENTS:]
    store.close()


def test_no_event_still_says_so(tmp_path):
    from parlour.core.event import FormatError

    store = TourneyStore(str(tmp_path / "empty.db"))
    with pytest.raises(FormatError, match="no tournament here"):
        store.state(42)
    store.close()
