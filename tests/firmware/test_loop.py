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


@pytest.mark.parametrize("make", [lambda: RealTimeLoop(clock=lambda: 0.0), VirtualLoop], ids=["real", "virtual"])
def test_a_failing_callback_goes_to_the_policy_and_the_loop_goes_on(make):
    """The same exception policy in both loops: the handler gets the exception and the loop carries on."""
    loop = make()
    seen, errors = [], []
    loop.on_error = lambda exc, fn: errors.append(type(exc).__name__)
    loop.post(lambda: 1 / 0)
    loop.post(seen.append, "after")
    loop.call_later(0.0, lambda: {}["missing"])
    loop.call_later(0.0, seen.append, "timer")
    if isinstance(loop, RealTimeLoop):
        loop.call_later(0.0, loop.stop)
        loop.run_forever()
    else:
        loop.run_all()
    assert errors == ["ZeroDivisionError", "KeyError"] and seen == ["after", "timer"]


@pytest.mark.parametrize("make", [lambda: RealTimeLoop(clock=lambda: 0.0), VirtualLoop], ids=["real", "virtual"])
def test_without_a_policy_a_failing_callback_propagates(make):
    loop = make()
    loop.post(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        loop.run_forever() if isinstance(loop, RealTimeLoop) else loop.run_all()


@pytest.mark.parametrize("make", [lambda: RealTimeLoop(clock=lambda: 0.0), VirtualLoop], ids=["real", "virtual"])
def test_posted_callbacks_run_before_due_timers_in_both_loops(make):
    """One ordering in both loops: inputs that already happened (posted) before the deadlines due now."""
    loop = make()
    seen = []

    def tick():
        loop.call_later(0.0, seen.append, "timer")      # due now ...
        loop.post(seen.append, "posted")                # ... but this input came in meanwhile
    loop.call_later(0.0, tick)
    if isinstance(loop, RealTimeLoop):
        loop.call_later(0.0, lambda: loop.call_later(0.0, loop.stop))
        loop.run_forever()
    else:
        loop.run_all()
    assert seen == ["posted", "timer"]


def test_a_real_time_loop_on_a_sped_up_clock_waits_real_seconds_for_its_timers():
    import time

    from sim.sped_clock import SpedClock

    clock = SpedClock(50.0)                     # 10 s of the clock in 0.2 s of real time
    loop = RealTimeLoop(clock.monotonic_s, speed=clock.speed)
    fired = threading.Event()
    seen: list[float] = []
    loop.call_later(10.0, lambda: (seen.append(loop.now()), fired.set(), loop.stop()))
    started = time.monotonic()
    worker = threading.Thread(target=loop.run_forever)
    worker.start()
    assert fired.wait(5.0)                      # (at 1x the loop would wait 10 real seconds for it)
    worker.join(5.0)
    assert time.monotonic() - started < 2.0 and seen[0] >= 10.0
    assert clock.wall_s() - time.time() > 0.0   # (the sped-up wall clock is ahead of the host's)
    with pytest.raises(ValueError):
        RealTimeLoop(clock.monotonic_s, speed=0.0)


def _watchdog_run(put_off) -> list:
    """Timers due at the same instants as a watchdog put off twice (by ``put_off(loop, handle, when)``, which
    returns the handle that now stands for it): the order everything ran in."""
    loop = VirtualLoop()
    seen = []
    dog = loop.call_at(3.0, lambda: seen.append(("dog", loop.now())))
    loop.call_at(5.0, seen.append, "before")            # due with the dog's last time, scheduled before its move

    def move_dog(when: float) -> None:
        nonlocal dog
        dog = put_off(loop, dog, when)
        loop.call_at(when, seen.append, f"after {when}")  # scheduled after the move: runs after the dog

    loop.call_at(1.0, move_dog, 4.0)
    loop.call_at(2.0, move_dog, 5.0)
    loop.call_at(3.0, seen.append, "at 3")
    loop.run_all()
    return seen


def test_a_timer_put_off_runs_as_one_cancelled_and_scheduled_again_would():
    def rescheduled(loop, handle, when):
        handle.cancel()
        return loop.call_at(when, *((handle.fn,) + handle.args))

    def moved(loop, handle, when):
        assert loop.move(handle, when)
        return handle

    expected = _watchdog_run(rescheduled)
    assert _watchdog_run(moved) == expected
    assert expected == ["at 3", "after 4.0", "before", ("dog", 5.0), "after 5.0"]


def test_a_timer_is_put_off_only_while_the_loop_holds_it_and_only_later():
    loop = VirtualLoop()
    seen = []
    handle = loop.call_at(2.0, seen.append, "x")
    assert not loop.move(handle, 1.0)                   # earlier: the caller schedules anew
    handle.cancel()
    assert loop.move(handle, 3.0)                       # cancelled but still held: it runs again, later
    assert loop.pending_timers() == 1
    loop.run_all()
    assert seen == ["x"] and loop.now() == 3.0
    assert not loop.move(handle, 4.0)                   # it ran
    dropped = loop.call_at(5.0, seen.append, "y")
    dropped.cancel()
    loop.call_at(6.0, seen.append, "z")
    loop.run_all()
    assert not loop.move(dropped, 7.0)                  # its cancelled entry has left the heap
    assert seen == ["x", "z"]


def test_the_real_time_loop_puts_a_timer_off_too():
    loop = RealTimeLoop(lambda: 0.0)
    seen = []
    handle = loop.call_at(1.0, seen.append, "late")
    assert loop.move(handle, 2.0)
    assert loop._timers.pop_due(1.5) is None
    assert loop._timers.pop_due(2.0) is handle
    assert not loop.move(handle, 3.0)
