"""The controller's watch: shuffle charts kept in the table database across a restart, a bad document refused."""

from firmware.controller.table_watch import TableWatch
from firmware.events import EventBus
from sim.table_run import SimRun


def test_shuffle_charts_survive_a_restart(tmp_path):
    db = tmp_path / "table.db"
    first = SimRun(hands=6, play=True, state_path=db, seed=4)
    try:
        assert first.run(timeout_s=6 * 900.0)
        before = first.controller.watch.fairness.charts["pairs:E"].cusum
        assert before.n == 6
        saved_s = before.s
    finally:
        first.close()
    again = SimRun(hands=3, play=True, state_path=db, seed=4)
    try:
        chart = again.controller.watch.fairness.charts["pairs:E"].cusum
        assert (chart.n, chart.s) == (6, saved_s)           # restored before the first new deal
        assert again.run(timeout_s=3 * 900.0)
        assert again.controller.watch.fairness.charts["pairs:E"].cusum.n == 9
    finally:
        again.close()


def test_a_saved_document_that_does_not_fit_starts_afresh(caplog):
    watch = TableWatch(EventBus(lambda: 0.0), lambda: 0)
    watch.restore({"charts": {"pairs:E": {"s": 3.0, "n": 5}}, "warnings": [{"chart": "pairs:E", "bogus": 1}]})
    assert watch.fairness.charts["pairs:E"].cusum.n == 0 and watch.fairness.warnings == []
    assert "start afresh" in caplog.text


def test_moves_that_are_not_learned_or_not_cams_are_not_trended():
    bus = EventBus(lambda: 0.0)
    watch = TableWatch(bus, lambda: 7)
    for _ in range(40):
        bus.publish("move.done", mechanism="stacker1", elapsed_s=5.0, learned=False)
        bus.publish("move.done", mechanism="center_lift", elapsed_s=5.0)
    assert watch.wear.parts == {}
    for i in range(200):
        bus.publish("move.done", mechanism="stacker1", elapsed_s=1.0 * 1.01 ** i, learned=True)
    assert [w.part for w in watch.wear.warnings] == ["head1"] and watch.wear.warnings[0].hand == 7
