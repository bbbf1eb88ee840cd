"""The real table's run-time pieces that touch the host clock: the loop on monotonic time, and the host's clock.

Firmware code never reads the clock; the composition root (the service,
``mjtable diag`` against a real board) builds its loop here, and hands
:data:`HOST_CLOCK` (the port :class:`firmware.ports.clock.Clock`) to the
services that run beside the loop (the technician's socket, the web page,
the MQTT network thread, releases, certificates).
"""

from __future__ import annotations

import gc
import time
from datetime import datetime, timezone
from typing import Callable

from firmware.faults import TableError
from firmware.loop import RealTimeLoop

CHECK_S = 0.01


def real_loop() -> RealTimeLoop:
    return RealTimeLoop(time.monotonic)


def keep_startup_objects() -> None:
    """Once the table is wired: everything built so far (modules, configuration models, rule tables,
    the controller) lives as long as the process, so move it out of the garbage collector's
    generations.  Full collections then scan only what the table makes while it runs: short
    pauses on a Pi (a pause of seconds can overshoot a cam's home window) and less CPU per hand."""
    gc.collect()
    gc.freeze()


def run_until(loop: RealTimeLoop, done: Callable[[], bool], timeout_s: float, what: str = "the table") -> None:
    """Run the loop in this thread until ``done()`` or ``timeout_s``; raise TableError on timeout."""
    deadline = loop.now() + timeout_s

    def check() -> None:
        if done() or loop.now() >= deadline:
            loop.stop()
        else:
            loop.call_later(CHECK_S, check)

    loop.call_later(0.0, check)
    loop.run_forever()
    if not done():
        raise TableError(f"{what}: no answer within {timeout_s:g} s")


class HostClock:
    """The host's clocks: the port :class:`firmware.ports.clock.Clock` on this machine."""

    def monotonic_s(self) -> float:
        """Seconds that only go forward (for timeouts and rates)."""
        return time.monotonic()

    def wall_s(self) -> float:
        """Unix seconds: what the fleet's timestamps and command expiry are measured in."""
        return time.time()

    def utc_now(self) -> datetime:
        """Now in UTC (a certificate's validity starts here)."""
        return datetime.now(timezone.utc)


HOST_CLOCK = HostClock()


def wall_clock_s() -> float:
    """Unix seconds: what the fleet's timestamps and command expiry are measured in."""
    return HOST_CLOCK.wall_s()


def utc_now() -> datetime:
    """Now in UTC (a certificate's validity starts here)."""
    return HOST_CLOCK.utc_now()
