"""A run's summary reads its hands from the database a page at a time (issue 31: nothing kept per hand)."""

from __future__ import annotations

from sim.report import _history, build_report, money_by_reason
from sim.table_run import SimRun


def test_each_hand_pages_give_the_hands_in_order() -> None:
    run = SimRun(rules="mcr", hands=5, play=True, seed=3)
    try:
        assert run.run(timeout_s=5 * 900.0)
        board = run.session.scoreboard
        every = board.hands(all_games=True)
        assert len(every) == 5
        for page in (1, 2, 5, 256):
            assert list(board.each_hand(all_games=True, page=page)) == every
        assert list(board.each_hand(since=2, all_games=True, page=2)) == every[2:]
        assert _history(iter(every)) == (5, money_by_reason(every))
        report = build_report(run, "mcr", 5, 1.0)
        assert report["hands_played"] == 5 and report["money"] == money_by_reason(every)
    finally:
        run.close()
