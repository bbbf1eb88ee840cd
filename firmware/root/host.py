"""The host's services for the command line: the clock, the real-time loop, a serial port, the start guard.

What the CLI needs of the machine it runs on, picked here so that nothing
else in ``firmware/`` names ``hal``: the host clock (:data:`HOST_CLOCK`, the
:class:`~firmware.ports.clock.Clock` port), the controller's real-time loop
and a way to run it until something happens, the process's start-up objects
kept out of the garbage collector, a serial port by URL (a reader board on
the bench) and the start guard a table's service starts through.
"""

from __future__ import annotations

from hal import start_guard
from hal.runtime import HOST_CLOCK, keep_startup_objects, real_loop, run_until, utc_now, wall_clock_s
from hal.serial_port import open_serial

__all__ = ["HOST_CLOCK", "keep_startup_objects", "open_serial", "real_loop", "run_until", "start_guard", "utc_now",
           "wall_clock_s"]
