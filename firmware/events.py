"""The internal event bus: what the table does, for whoever observes it.

The log, the simulator's report, the diagnostics socket and telemetry
subscribe here; publishers never know who listens.  The bus is for
observers only: nothing on the safety or fault path depends on a
subscriber (faults go through :class:`firmware.faults.FaultReporter`, a
direct call, before they are published).  Delivery is synchronous on the
loop thread, in subscription order.  An exception in a subscriber is not
swallowed: it propagates to the loop's exception policy (E99, every output
safe), because a silent failure is worse than a stopped table.
Subscribing returns a :class:`Subscription`; cancelling it cannot miss.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from firmware.frozen import quick_init


@quick_init
@dataclass(frozen=True)
class Event:
    topic: str          # e.g. "move.done", "move.warn", "fault", "stacking.side_done"
    at_s: float
    data: dict[str, Any] = field(default_factory=dict)


Subscriber = Callable[[Event], None]


class Subscription:
    """One subscriber on one topic prefix, until :meth:`cancel`."""

    __slots__ = ("prefix", "subscriber", "_bus")

    def __init__(self, bus: "EventBus", prefix: str, subscriber: Subscriber) -> None:
        self.prefix = prefix
        self.subscriber = subscriber
        self._bus: EventBus | None = bus

    @property
    def active(self) -> bool:
        return self._bus is not None

    def cancel(self) -> None:
        """Stop delivering (idempotent)."""
        if self._bus is not None:
            self._bus._remove(self)
            self._bus = None


ROUTES_KEPT = 256      # topics whose subscribers are remembered (the topics are few; bounded all the same)


class EventBus:
    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now
        self._subscriptions: list[Subscription] = []
        # topic -> the subscriptions whose prefix it starts with, in subscription order (forgotten whenever a
        # subscription comes or goes)
        self._routes: dict[str, tuple[Subscription, ...]] = {}

    def subscribe(self, prefix: str, subscriber: Subscriber) -> Subscription:
        """Receive every event whose topic starts with ``prefix`` ("" = all).  A prefix also matches
        longer topics ("fault" would hear "fault.x"), so topics under another's name carry its data."""
        subscription = Subscription(self, prefix, subscriber)
        self._subscriptions.append(subscription)
        self._routes = {}
        return subscription

    def _remove(self, subscription: Subscription) -> None:
        self._subscriptions = [s for s in self._subscriptions if s is not subscription]
        self._routes = {}

    def __len__(self) -> int:
        """Live subscriptions (a test counts them to prove nothing leaks)."""
        return len(self._subscriptions)

    def publish(self, topic: str, **data: Any) -> Event:
        event = Event(topic, self._now(), data)
        route = self._routes.get(topic)
        if route is None:
            if len(self._routes) >= ROUTES_KEPT:
                self._routes = {}
            route = self._routes[topic] = tuple(s for s in self._subscriptions if topic.startswith(s.prefix))
        # (the subscriptions as they were at the publish: one made while this event is delivered hears the next)
        for subscription in route:
            if subscription.active:
                subscription.subscriber(event)
        return event
