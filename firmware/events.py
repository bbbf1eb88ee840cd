"""The internal event bus: what the table does, for whoever listens.

The log, the table database, the diagnostics socket and the simulator's
report subscribe here; publishers never know who listens.  Delivery is
synchronous on the loop thread, in subscription order.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Event:
    topic: str          # e.g. "move.done", "move.warn", "fault", "stacking.side_done"
    at_s: float
    data: dict[str, Any] = field(default_factory=dict)


Subscriber = Callable[[Event], None]


class EventBus:
    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now
        self._subscribers: list[tuple[str, Subscriber]] = []

    def subscribe(self, prefix: str, subscriber: Subscriber) -> None:
        """Receive every event whose topic starts with ``prefix`` ("" = all).  A prefix also matches
        longer topics ("fault" would hear "fault.x"), so topics under another's name carry its data."""
        self._subscribers.append((prefix, subscriber))

    def unsubscribe(self, subscriber: Subscriber) -> None:
        self._subscribers = [(p, s) for p, s in self._subscribers if s is not subscriber]

    def publish(self, topic: str, **data: Any) -> Event:
        event = Event(topic, self._now(), data)
        for prefix, subscriber in list(self._subscribers):
            if topic.startswith(prefix):
                try:
                    subscriber(event)
                except Exception:  # noqa: BLE001 - one bad listener must not stop the table
                    log.exception("event subscriber failed on %s", topic)
        return event
