"""A lift key during a hand in play never ends it without a recorded result.

One lift key ends a hand whose result is recorded (the players' win or the
wall's end, told to the referee); pressed before that it is refused (a beep,
``hand.end_refused``) and the hand goes on.  Both lift keys together end it
anyway, recorded as a void hand (``void: ...`` in its note, the money paid on
the spot so far kept), so that no hand is ever ended without a result row.
The simulator's timed hands (no game played) and a hand left in play by a
killed run are ended that way too.
"""

from __future__ import annotations

import sqlite3

from firmware.controller.states import TableState
from sim.table_run import SimRun

S = TableState


def _results(run: SimRun) -> dict[int, tuple[str, str]]:
    db = sqlite3.connect(run.state_path)
    try:
        return {h: (w, n) for h, w, n in db.execute("SELECT hand, winners, note FROM hand_results")}
    finally:
        db.close()


def _ended_hands(run: SimRun) -> list[int]:
    db = sqlite3.connect(run.state_path)
    try:
        return [h for h, in db.execute("SELECT hand FROM hands WHERE ended_s IS NOT NULL ORDER BY hand")]
    finally:
        db.close()


def _in_play(seed: int = 3) -> SimRun:
    run = SimRun(hands=2, seed=seed, play=True)
    run.run_until(lambda: run.state is S.IN_PLAY and run.session.hand.hand == 1, 900)
    run.players.away = True                 # nobody else touches the table, the players stop playing
    run.game.play = None
    run.loop.run_for(5.0)
    return run


def test_one_lift_key_in_a_hand_without_a_result_is_refused():
    run = _in_play()
    heard = []
    run.bus.subscribe("hand.end_refused", heard.append)
    run.world.press("key_lift0")
    run.loop.run_for(300.0)                 # (past the set stacking below, when the centre would open)
    assert run.state is S.IN_PLAY and run.controller.book.hand_open
    assert 1 not in _ended_hands(run) and 1 not in _results(run)
    assert heard and heard[0].data["hand"] == 1
    run.close()


def test_both_lift_keys_end_it_recorded_as_a_void_hand():
    run = _in_play()
    chips = list(run.session.scoreboard.chips)
    for key in ("key_lift0", "key_lift1"):
        run.world.keys[key].set(True)
    run.loop.run_for(0.3)
    for key in ("key_lift0", "key_lift1"):
        run.world.keys[key].set(False)
    run.run_until(lambda: run.state is not S.IN_PLAY, 30)
    winners, note = _results(run)[1]
    assert note.startswith("void: ") and winners == "[]"
    assert 1 in _ended_hands(run)
    assert run.session.scoreboard.chips == chips      # (nothing paid on the spot in this one: nothing moves)
    run.close()


def test_one_lift_key_ends_a_hand_whose_result_is_recorded():
    run = SimRun(hands=2, seed=3, play=True)
    run.run_until(lambda: run.session is not None and run.session.scoreboard.recorded(1), 1800)
    run.run_until(lambda: run.state is not S.IN_PLAY, 60)     # the players' one key
    assert 1 in _ended_hands(run) and not _results(run)[1][1].startswith("void")
    run.close()


def test_timed_hands_are_ended_with_void_result_rows():
    run = SimRun(hands=3, seed=5, hand_s=20.0)
    assert run.run()
    results = _results(run)
    for hand in _ended_hands(run):
        assert hand in results and results[hand][1].startswith("void: "), (hand, results)
    assert len(_ended_hands(run)) >= 2
    run.close()
