"""Committed walls at the table: each verified set sealed before its dice, each hand dealt from its seal, and
electronic dice thrown from the sealed seed."""

import pytest

from firmware.controller.states import SetLocation
from firmware.rules.fair_check import SealedHand, check_hand
from firmware.rules.registry import load_ruleset
from firmware.store.seal_rows import SealRows
from firmware.store.table_store import TableStore
from firmware.tiles.fair_walls import commitment_of, dice_faces, parse_preimage
from tests.support.sealed_run import sealed_game


def _rows(path):
    store = TableStore(path)
    try:
        return SealRows(store).sealed_hands()
    finally:
        store.close()


@pytest.fixture(scope="module")
def physical(tmp_path_factory):
    path = tmp_path_factory.mktemp("sealed") / "table.db"
    return path, sealed_game(path, hands=3, seed=4)


def test_every_hand_is_dealt_from_walls_sealed_before_its_dice(physical):
    path, events = physical
    deals = [i for i, e in enumerate(events) if e.topic == "deal"]
    assert len(deals) == 3
    start = 0
    for i in deals:
        deal = events[i].data
        dice = [j for j in range(start, i) if events[j].topic in ("dice.waiting", "dice.rolled")]
        sealed = [j for j in range(0, i) if events[j].topic == "walls.sealed"
                  and events[j].data["set_id"] == deal["set_id"]]
        assert dice and sealed and sealed[-1] < dice[0]           # published before anybody threw
        assert events[sealed[-1]].data["commitment"] == deal["commitment"] and deal["dice_by"] == "physical"
        start = i
    rows = _rows(path)
    assert [r["hand"] for r in rows] == [1, 2, 3]
    for row in rows:
        assert row["commitment"] == commitment_of(row["reveal"])
        assert parse_preimage(row["reveal"]).set_id == row["set_id"] and row["dice_by"] == "physical"
        check = check_hand(SealedHand.from_json(row), load_ruleset)
        assert check.ok and check.draws > 20, check.problems


def test_a_nonce_is_fresh_for_every_set_and_the_same_for_the_same_seed(physical, tmp_path):
    path, _ = physical
    nonces = [parse_preimage(r["reveal"]).nonce for r in _rows(path)]
    assert len(set(nonces)) == len(nonces)
    again = tmp_path / "again.db"
    sealed_game(again, hands=1, seed=4)
    assert _rows(again)[0]["commitment"] == _rows(path)[0]["commitment"]       # a simulated run is its seed's


def test_electronic_dice_are_the_sealed_seeds_faces(tmp_path):
    path = tmp_path / "table.db"
    events = sealed_game(path, hands=2, seed=6, electronic=True)
    rows = _rows(path)
    assert [r["dice_by"] for r in rows] == ["electronic", "electronic"]
    rolled = [e.data["faces"] for e in events if e.topic == "dice.rolled"]
    for row, faces in zip(rows, rolled):
        sealed = parse_preimage(row["reveal"])
        assert sealed.dice_mode == "electronic"
        assert tuple(row["dice"]) == tuple(faces) == dice_faces(sealed.seed, 2)
        assert check_hand(SealedHand.from_json(row), load_ruleset).ok


def test_a_hand_in_play_shows_its_commitment_and_reveals_nothing(physical, tmp_path):
    copy = tmp_path / "copy.db"
    copy.write_bytes(physical[0].read_bytes())           # (closed: no WAL left beside it)
    store = TableStore(copy)
    try:
        store._db.execute("DELETE FROM hand_results WHERE hand = 3")       # as if hand 3 were still in play
        row = SealRows(store).hand_seal(3)
    finally:
        store.close()
    assert row["commitment"] and row["reveal"] is None and row["record"] is None
    assert check_hand(SealedHand.from_json(row), load_ruleset).pending


def test_the_fleet_hears_the_commitment_before_the_dice_and_the_reveal_with_the_hand():
    import json

    from sim.table_run import SimRun

    run = SimRun(hands=2, seed=5, play=True)
    run.store.keep_events = True
    try:
        assert run.run(timeout_s=7200.0)
        rows = run.store.read("SELECT seq, kind, payload FROM outbox WHERE kind IN ('walls', 'hand') ORDER BY seq")
    finally:
        run.close()
    events = [(kind, json.loads(p)) for _seq, kind, p in rows]
    events = [(kind, data.get("data", data)) for kind, data in events]
    hands = [data for kind, data in events if kind == "hand"]
    assert len(hands) == 2
    for hand in hands:
        seal = hand["seal"]
        before = [i for i, (kind, data) in enumerate(events) if kind == "walls"
                  and data["commitment"] == seal["commitment"]]
        assert before and before[0] < events.index(("hand", hand))          # told before the hand's end
        assert events[before[0]][1] == {"event": "sealed", "set_id": seal["set_id"], "commitment": seal["commitment"]}
        check = check_hand(SealedHand.from_json({**seal, "record": json.loads(hand["record"])}), load_ruleset)
        assert check.ok and check.draws > 20, check.problems


def test_the_status_shows_the_commitment_of_the_walls_up_before_the_dice():
    from sim.table_run import SimRun

    run = SimRun(hands=2, seed=8, play=True)
    sealed: list = []
    run.bus.subscribe("walls.sealed", lambda e: sealed.append(e.data))
    try:
        assert run.session.get_status(["book"])["book"]["commitment"] is None          # no walls up yet
        run.run_until(lambda: run.state is not None and run.state.value == "dice", 3000)
        book = run.session.get_status(["book"])["book"]
        on_table = run.controller.book.sets_at(SetLocation.TABLE)
        assert book["hand"] == 0 and on_table
        assert book["commitment"] == [s for s in sealed if s["set_id"] == on_table[0]][-1]["commitment"]
        run.run_until(lambda: run.controller.book.hand == 1, 600)
        assert run.session.get_status(["book"])["book"]["commitment"] == book["commitment"]   # dealt from them
    finally:
        run.close()
