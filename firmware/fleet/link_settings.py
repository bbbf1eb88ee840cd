"""The fleet link's states and its settings: how often it publishes, how many events it keeps in flight, how it
backs off and when it tries again (``[fleet]`` of the table's configuration sets some; the simulator and the
benchmarks set the rest)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class LinkState(str, enum.Enum):
    STOPPED = "stopped"            # not started, or stopped
    WAITING = "waiting"            # the first connect after boot, spread over the hall
    CONNECTING = "connecting"
    CONNECTED = "connected"        # birth published, nothing in flight
    DRAINING = "draining"          # connected, events in flight
    BACKING_OFF = "backing_off"    # waiting to try again


@dataclass(frozen=True)
class LinkSettings:
    state_min_interval_s: float = 1.0
    counters_period_s: float = 60.0
    max_in_flight: int = 16
    backoff_min_s: float = 1.0
    backoff_max_s: float = 60.0
    first_connect_spread_s: float = 10.0
    connect_timeout_s: float = 15.0
    stable_s: float = 30.0
    mark_delay_s: float = 0.2
    poll_s: float = 5.0
    resend_batch: int = 100


DEFAULT_SETTINGS = LinkSettings()
