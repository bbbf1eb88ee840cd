"""The time ports: the controller's loop, and the host's clock for the services that run beside it.

The controller and everything it drives take time from the :class:`Loop`
(virtual in the simulator, monotonic on a table).  The services that run
their own event loop (the technician's socket, the web page, the MQTT
network thread) and the few places that need the date (a certificate's
validity, a command's expiry, a release's history) take a :class:`Clock`,
handed in by the composition root; nothing in ``firmware/`` reads the
host's clock itself.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from firmware.loop import ErrorHandler, Handle, Loop

__all__ = ["Clock", "ErrorHandler", "Handle", "Loop"]


class Clock(Protocol):
    """The host's clocks."""

    def monotonic_s(self) -> float:
        """Seconds that only go forward (for timeouts and rates)."""

    def wall_s(self) -> float:
        """Unix seconds (what timestamps and expiries are measured in)."""

    def utc_now(self) -> datetime:
        """Now, in UTC."""
