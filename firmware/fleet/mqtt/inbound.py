"""The bound on what a table's MQTT client posts into the firmware's loop of the messages it receives."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Callable

log = logging.getLogger(__name__)

DROPS_LOGGED_EVERY_S = 60.0  # dropped inbound messages are summed up in the log this often


@dataclass(frozen=True)
class InboundLimits:
    """What a table's client lets into the loop of the messages it receives (see :class:`InboundGate`)."""

    max_pending: int = 32        # posted into the loop and not yet handled
    rate_per_s: float = 5.0      # the token bucket's refill
    burst: int = 10              # and its size


class InboundGate:
    """One client's bound on the messages it posts, so that a flood on its ``cmd/+`` (a technician's account, a
    compromised broker) cannot starve the table's loop: at most ``max_pending`` posted and not yet handled, at most
    ``rate_per_s`` (a token bucket of ``burst``).  The excess is dropped on the network thread, counted
    (:attr:`dropped`) and summed up in the log once a minute while it goes on, and once more when it has stopped
    (the limit lifts: what was dropped since the last line is said, not left unsaid)."""

    def __init__(self, limits: InboundLimits, name: str, clock_s: Callable[[], float],
                 add_ticker: Callable[[Callable[[], bool]], None]) -> None:
        self.limits = limits
        self._name = name                            # (the client's id, in the log)
        self._clock_s = clock_s
        self._add_ticker = add_ticker                # (the network thread's keepalive pass)
        self._gate = threading.Lock()                # (the counters: network thread and loop thread)
        self._pending = 0                            # messages posted, not yet handled by the loop
        self._bucket = float(limits.burst)
        self._filled_at_s = clock_s()
        self.dropped = 0                             # (read by the link's status from the loop thread)
        self._drops_unsaid = 0
        self._drops_said_at_s: float | None = None

    def admit(self) -> bool:
        """(network thread) Whether one more message may be posted: room in the loop and a token in the bucket;
        else it is dropped, counted and (once a minute) summed up in the log."""
        limits = self.limits
        now_s = self._clock_s()
        with self._gate:
            self._bucket = min(float(limits.burst),
                               self._bucket + max(0.0, now_s - self._filled_at_s) * limits.rate_per_s)
            self._filled_at_s = now_s
            if self._pending < limits.max_pending and self._bucket >= 1.0:
                self._pending += 1
                self._bucket -= 1.0
                return True
            self.dropped += 1
        self._drops_unsaid += 1
        if self._drops_said_at_s is None or not 0 <= now_s - self._drops_said_at_s < DROPS_LOGGED_EVERY_S:
            log.warning("%s: %d inbound message(s) dropped (more than %g/s or %d waiting for the loop; %d dropped "
                        "since start; summed up again in %g s while it goes on)", self._name,
                        self._drops_unsaid, limits.rate_per_s, limits.max_pending, self.dropped,
                        DROPS_LOGGED_EVERY_S)
            self._drops_said_at_s, self._drops_unsaid = now_s, 0
            self._add_ticker(self.drops_lifted)      # (says the rest once the flood is over)
        return False

    def handled(self) -> None:
        """(loop thread) One admitted message handled: room for the next."""
        with self._gate:
            self._pending -= 1

    def drops_lifted(self) -> bool:
        """(network thread, a ticker) Once a window has passed since the last line: the drops not said yet are
        summed up (the flood may have stopped: nothing else would say them); False when there is nothing left to
        say (the ticker ends)."""
        if self._drops_said_at_s is None:
            return False
        now_s = self._clock_s()
        if 0 <= now_s - self._drops_said_at_s < DROPS_LOGGED_EVERY_S:
            return True
        if not self._drops_unsaid:
            self._drops_said_at_s = None               # (the flood is over: the next drop is said at once)
            return False
        log.warning("%s: %d more inbound message(s) dropped in the last %g s (%d dropped since start)",
                    self._name, self._drops_unsaid, DROPS_LOGGED_EVERY_S, self.dropped)
        self._drops_said_at_s, self._drops_unsaid = now_s, 0
        return True
