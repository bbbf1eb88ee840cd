"""The injected loops: virtual time ordering, cancellation, deadlines; real-time posting."""

import threading

import pytest

from firmware.loop import RealTimeLoop
from sim.virtual_loop import SimTimeout, VirtualLoop


def test_virtual_loop_jumps_to_timers_in_order():
    loop = VirtualLoop()
    seen = []
    loop.call_later(2.5, seen.append, "b")
    loop.call_at(1.0, seen.append, "a")
    loop.call_later(2.5, seen.append, "c")  # same time: insertion order
    loop.run_all()
    assert seen == ["a", "b", "c"]
    assert loop.now() == 2.5


def test_cancelled_timer_never_runs():
    loop = VirtualLoop()
    seen = []
    handle = loop.call_later(4.0, seen.append, "watchdog")
    loop.call_later(2.5, handle.cancel)
    loop.run_all()
    assert seen == []
    assert loop.now() == 2.5


def test_posted_callbacks_run_before_time_advances():
    loop = VirtualLoop()
    seen = []
    loop.call_later(1.0, lambda: loop.post(lambda: seen.append(loop.now())))
    loop.call_later(1.5, seen.append, "later")
    loop.run_all()
    assert seen == [1.0, "later"]


def test_run_until_raises_past_deadline():
    loop = VirtualLoop()
    loop.call_later(10.0, lambda: None)
    with pytest.raises(SimTimeout):
        loop.run_until(lambda: False, timeout_s=5.0)


def test_run_until_returns_time_condition_became_true():
    loop = VirtualLoop()
    flag = []
    loop.call_later(3.25, flag.append, 1)
    assert loop.run_until(lambda: bool(flag), timeout_s=10) == 3.25


def test_real_time_loop_runs_posts_from_other_threads_and_stops():
    ticks = iter(range(1000))
    loop = RealTimeLoop(clock=lambda: float(next(ticks)) * 0.0)  # a frozen clock: no waiting on timers
    seen = []
    loop.call_later(0.0, seen.append, "timer")

    def worker():
        loop.post(seen.append, "posted")
        loop.stop()

    loop.call_later(0.0, lambda: threading.Thread(target=worker).start())
    loop.run_forever()
    assert seen[:2] == ["timer", "posted"]


def test_real_time_loop_survives_a_failing_callback():
    loop = RealTimeLoop(clock=lambda: 0.0)
    seen = []
    loop.post(lambda: 1 / 0)
    loop.post(seen.append, "after")
    loop.post(loop.stop)
    loop.run_forever()
    assert seen == ["after"]
