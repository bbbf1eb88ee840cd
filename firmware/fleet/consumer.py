"""The receiving end of a site: every table's view, events de-duplicated on ``msg_id``, latency and gaps counted.

:class:`FleetConsumer` is pure: :meth:`~FleetConsumer.feed` it each message
(topic, payload, when it was received by the consumer's wall clock) and it
keeps, per table, the latest ``avail``, ``meta``, ``state``, ``faults`` and
``counters``, and for events whether each ``msg_id`` was seen before.  An
event is delivered at least once (the table publishes again what the broker
did not acknowledge); the consumer makes that exactly once.  It also counts
what a benchmark or a tournament desk needs: unique events by kind,
duplicates dropped, end-to-end latency (the envelope's ``ts`` to receipt),
and gaps in each table's ``seq`` (a gap is asked for with ``resend_since``).
An event is taken only if its ``msg_id``'s table, its ``table``, its
``site`` and its ``seq`` agree with its topic, and is de-duplicated by the
topic's table: the broker lets a table write only in its own subtree, so no
table can have another's event dropped as a repeat.

``avail`` follows the session it names: each names its boot and connection
(session), and one about an older (boot, session) than the one the view
already has is ``stale`` and changes nothing.  So a late Will cannot mark a
reconnected table offline (a fresh table database, with another ``db_id``,
starts the order again).

:class:`ConsumerClient` connects a consumer to a broker through an
:class:`~firmware.ports.broker.MqttAdapter` on the injected loop
(``mjtable fleet watch``, the tests, the benchmark), reconnecting with the
same jittered backoff as a table; a broker refusing *who* connects (a wrong
password, no account) is not tried again (``refused``).  It subscribes to
the retained leaves at QoS 0 and to the events at QoS 1
(:func:`~firmware.fleet.topics.site_subscriptions`): a recorder's persistent
session has the broker queue, while it is away, the events it must not miss
and not every table's state and counters (which would fill the broker's
``max_queued_messages`` and push events out; the leaves are retained, so the
next subscription delivers them anyway).
"""

from __future__ import annotations

import bisect
import logging
import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable

from firmware.fleet import messages, topics
from firmware.ports.broker import InboundMessage, MqttAdapter, refused_who
from firmware.fleet.backoff import Backoff, seeded_rng
from firmware.loop import Loop

log = logging.getLogger(__name__)

LATENCIES_KEPT = 100_000
# a table publishes its counters every 60 s: three missed in a row and it is stale
STALE_AFTER_S = 3 * 60.0 + 5.0


@dataclass
class TableView:
    """What a consumer knows of one table."""

    table: str
    online: bool | None = None          # None: never heard
    boot_id: str = ""
    session: int = 0
    meta: dict = field(default_factory=dict)
    state: dict = field(default_factory=dict)
    faults: list = field(default_factory=list)
    counters: dict = field(default_factory=dict)
    warnings: dict = field(default_factory=dict)     # {"fairness": [...], "maintenance": [...]}
    events: int = 0
    last_seen_s: float = 0.0
    birth: dict = field(default_factory=dict)    # the last birth's data (versions, rules, seq, oldest)

    def status(self, now_s: float, stale_after_s: float = STALE_AFTER_S) -> str:
        """``online``, ``offline``, ``stale`` (online by its last birth, but nothing heard from it for
        ``stale_after_s``: its link or its broker's bridge may be down without a Will yet) or ``unknown``."""
        if self.online is None:
            return "unknown"
        if not self.online:
            return "offline"
        return "stale" if now_s - self.last_seen_s > stale_after_s else "online"

    def outbox_depth(self) -> int | None:
        link = self.counters.get("link") if isinstance(self.counters, dict) else None
        depth = link.get("outbox_depth") if isinstance(link, dict) else None
        return depth if isinstance(depth, int) else None

    def as_dict(self) -> dict[str, Any]:
        return {"table": self.table, "online": self.online, "boot_id": self.boot_id, "session": self.session,
                "birth": self.birth,
                "state": self.state, "faults": self.faults, "meta": self.meta, "outbox_depth": self.outbox_depth(),
                "events": self.events}


@dataclass(frozen=True)
class Change:
    """What one fed message changed: ``what`` is a leaf, ``event``, ``duplicate``, ``stale`` (an avail ignored),
    ``bad`` (not a valid message) or ``misnamed`` (an event naming another table or site than its topic's)."""

    table: str
    what: str
    message: dict


class _SeqSet:
    """The seqs seen of one table database, as runs ``[first, last]``: a consumer that joined mid-stream, or
    one with a gap it never fills, keeps one pair per run, not one number per event (a recorder runs for
    years)."""

    def __init__(self) -> None:
        self.runs: list[list[int]] = []        # sorted, disjoint, not touching

    def add(self, seq: int) -> bool:
        """True if ``seq`` is new."""
        runs = self.runs
        i = bisect.bisect_right(runs, [seq, math.inf]) - 1     # the last run starting at or before seq
        if i >= 0 and runs[i][1] >= seq:
            return False
        joins_left = i >= 0 and runs[i][1] == seq - 1
        joins_right = i + 1 < len(runs) and runs[i + 1][0] == seq + 1
        if joins_left and joins_right:
            runs[i][1] = runs[i + 1][1]
            del runs[i + 1]
        elif joins_left:
            runs[i][1] = seq
        elif joins_right:
            runs[i + 1][0] = seq
        else:
            runs.insert(i + 1, [seq, seq])
        return True

    def gaps(self) -> list[int]:
        """Seqs missing between the lowest and the highest seen."""
        return [s for (_, last), (first, _) in zip(self.runs, self.runs[1:]) for s in range(last + 1, first)]


class FleetConsumer:
    """A site's tables as seen through the broker (see the module's docstring)."""

    def __init__(self, site: str, keep_events: bool = False) -> None:
        self.site = topics.check_id(site, "site")
        self.tables: dict[str, TableView] = {}
        self.keep_events = keep_events
        self.events: list[dict] = []          # unique events, in arrival order (with keep_events)
        self.unique = 0
        self.duplicates = 0
        self.bad = 0
        self.misnamed = 0                     # events whose names disagree with their topic (refused)
        self._misnamed_said: set[str] = set()
        self.by_kind: dict[str, int] = {}
        self.latencies_s: list[float] = []
        self._seen: dict[tuple[str, str], _SeqSet] = {}

    def feed(self, topic: str, payload: bytes, received_s: float, retained: bool = False) -> Change | None:
        """One received message; the change it made (None: not a topic of this site).  ``retained``: the broker
        delivered what it held (the table said it at the envelope's ``ts``, perhaps long ago), not a live
        message: the table was last heard then, not at ``received_s``."""
        parsed = topics.parse(topic)
        if parsed is None or parsed.site != self.site or parsed.section in ("cmd", "resp", "assign"):
            return None
        try:
            message = messages.decode(payload)
        except messages.MessageError as exc:
            self.bad += 1
            log.warning("%s: %s", topic, exc)
            return Change(parsed.table, "bad", {})
        view = self.tables.setdefault(parsed.table, TableView(parsed.table))
        view.last_seen_s = max(view.last_seen_s, _heard_s(message, received_s, retained))
        if parsed.section == "evt":
            return self._event(view, parsed, message, received_s)
        if parsed.section == topics.Leaf.AVAIL.value:
            return self._avail(view, message)
        data = message.get("data")
        if parsed.section == topics.Leaf.FAULTS.value:
            view.faults = data if isinstance(data, list) else []
        elif isinstance(data, dict):
            setattr(view, parsed.section, data)
        return Change(view.table, parsed.section, message)

    def _event(self, view: TableView, parsed: topics.ParsedTopic, message: dict, received_s: float) -> Change:
        ident = messages.parse_msg_id(message.get("msg_id", ""))
        if ident is None:
            self.bad += 1
            return Change(view.table, "bad", message)
        table, db_id, seq = ident
        if (table, message.get("table"), message.get("site"), message.get("seq")) != (parsed.table, parsed.table,
                                                                                       parsed.site, seq):
            return self._misnamed(view, message)
        if not self._seen.setdefault((parsed.table, db_id), _SeqSet()).add(seq):
            self.duplicates += 1
            return Change(view.table, "duplicate", message)
        self.unique += 1
        view.events += 1
        kind = str(message.get("kind"))
        self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
        ts = message.get("ts")
        if isinstance(ts, (int, float)) and len(self.latencies_s) < LATENCIES_KEPT:
            self.latencies_s.append(received_s - ts)
        if self.keep_events:
            self.events.append(message)
        return Change(view.table, "event", message)

    def _misnamed(self, view: TableView, message: dict) -> Change:
        """An event whose ``msg_id``, ``table``, ``site`` or ``seq`` disagree with its topic (a table publishing in
        its own subtree an event that names another, to have the other's real event dropped as a repeat): refused,
        counted, logged once per table."""
        self.misnamed += 1
        if view.table not in self._misnamed_said:
            self._misnamed_said.add(view.table)
            log.warning("%s: an event named %r (table %r, site %r) under table %s's topic: refused (further ones "
                        "from this table are counted, not logged)", self.site, str(message.get("msg_id"))[:80],
                        str(message.get("table"))[:64], str(message.get("site"))[:64], view.table)
        return Change(view.table, "misnamed", message)

    def _avail(self, view: TableView, message: dict) -> Change:
        data = message.get("data") if isinstance(message.get("data"), dict) else {}
        online, session, boot_id = data.get("online"), data.get("session"), message.get("boot_id")
        if not isinstance(online, bool) or not isinstance(session, int) or not isinstance(boot_id, str):
            self.bad += 1
            return Change(view.table, "bad", message)
        db, boot = _split_boot(boot_id)
        known_db, known_boot = _split_boot(view.boot_id)
        if view.online is not None and db == known_db and (boot, session) < (known_boot, view.session):
            return Change(view.table, "stale", message)    # e.g. the late Will of a connection already replaced
        view.online, view.session, view.boot_id = online, session, boot_id
        if online:
            view.birth = {k: v for k, v in data.items() if k not in ("online", "boot", "session")}
        return Change(view.table, "avail", message)

    def last_seq(self, table: str, db_id: str) -> int | None:
        """The highest event seq seen from that table database (None: none seen)."""
        seen = self._seen.get((table, db_id))
        return seen.runs[-1][1] if seen is not None and seen.runs else None

    def gaps(self) -> dict[str, list[int]]:
        """Missing seqs per ``table:db_id`` (between the lowest and highest seen)."""
        out = {}
        for (table, db_id), seen in self._seen.items():
            missing = seen.gaps()
            if missing:
                out[f"{table}:{db_id}"] = missing
        return out

    def latency_s(self, quantile: float) -> float | None:
        """A quantile (0.5 = median) of the end-to-end event latency; None before two events."""
        if len(self.latencies_s) < 2:
            return self.latencies_s[0] if self.latencies_s else None
        cuts = statistics.quantiles(self.latencies_s, n=1000, method="inclusive")
        return cuts[min(len(cuts) - 1, max(0, round(quantile * 1000) - 1))]

    def stats(self) -> dict[str, Any]:
        return {"tables": len(self.tables), "online": sum(1 for v in self.tables.values() if v.online),
                "events": self.unique, "duplicates": self.duplicates, "bad": self.bad,
                "misnamed": self.misnamed, "by_kind": dict(self.by_kind),
                "latency_p50_s": self.latency_s(0.5), "latency_p99_s": self.latency_s(0.99),
                "missing": sum(len(g) for g in self.gaps().values())}


def _heard_s(message: dict, received_s: float, retained: bool) -> float:
    """When the table said ``message``: a live one when it arrived, a retained one at its envelope's ``ts`` (never
    later than its arrival, whatever the table's clock says)."""
    ts = message.get("ts")
    if retained and isinstance(ts, (int, float)) and not isinstance(ts, bool):
        return min(float(ts), received_s)
    return received_s


def _split_boot(boot_id: str) -> tuple[str, int]:
    """(db_id, boot number) of a ``boot_id``."""
    db, _, tail = boot_id.rpartition("-")
    return db, int(tail) if tail.isdigit() else 0


class ConsumerClient:
    """A :class:`FleetConsumer` fed from a broker: subscribes to the site, reconnects by itself.

    ``on_change(change)`` is called on the loop's thread for every message
    that changed something; ``wall_clock_s`` stamps receipts (latency)."""

    def __init__(self, loop: Loop, adapter: MqttAdapter, consumer: FleetConsumer, *,
                 wall_clock_s: Callable[[], float], on_change: Callable[[Change], None] | None = None,
                 name: str = "consumer", backoff_max_s: float = 10.0) -> None:
        self.loop = loop
        self.adapter = adapter
        self.consumer = consumer
        self.wall_clock_s = wall_clock_s
        self.on_change = on_change
        self.backoff = Backoff(seeded_rng(consumer.site, name), 0.2, backoff_max_s)
        self.session = 0
        self.connected = False
        self.subscribed = False
        self.last_error = ""
        self.refused = ""                 # the broker refused who connects (no retry: a person must mend it)
        self._sub_tokens: dict[int, bool] = {}    # this connection's subscriptions: token -> granted

    def start(self) -> None:
        self._connect()

    def stop(self) -> None:
        self.session += 1                 # (later reports name an older session: ignored)
        self.adapter.disconnect()
        self.connected = False

    def _connect(self) -> None:
        self.session += 1
        self.adapter.connect(self.session, None, self)

    def on_connected(self, session: int, ok: bool, reason: str) -> None:
        if session != self.session:
            return
        if not ok:
            if refused_who(reason):
                self.session += 1                 # (later reports of this connection: ignored)
                self.refused = self.last_error = reason
                log.info("consumer of %s: the broker refused the connection: %s (not tried again; the owner "
                         "says what to do)", self.consumer.site, reason)
                return
            self._retry(reason)
            return
        self.connected = True
        wanted = (self.consumer.subscriptions() if hasattr(self.consumer, "subscriptions")
                  else topics.site_subscriptions(self.consumer.site))
        self._sub_tokens = {self.adapter.subscribe(topic_filter, qos): False for topic_filter, qos in wanted}

    def on_connection_lost(self, session: int, reason: str) -> None:
        if session == self.session:
            self._retry(reason)

    def _retry(self, reason: str) -> None:
        self.connected = self.subscribed = False
        self.last_error = reason
        self.session += 1
        delay_s = self.backoff.next_delay_s()
        log.warning("consumer of %s: %s; trying again in %.1f s", self.consumer.site, reason, delay_s)
        self.loop.call_later(delay_s, self._connect_if, self.session)

    def _connect_if(self, session: int) -> None:
        if session == self.session:
            self.adapter.connect(self.session, None, self)

    def on_published(self, session: int, token: int, ok: bool, reason: str) -> None:
        pass

    def on_subscribed(self, session: int, token: int, granted: list[int]) -> None:
        if session == self.session and token in self._sub_tokens:
            self._sub_tokens[token] = ok = all(code < 0x80 for code in granted)
            self.subscribed = all(self._sub_tokens.values())
            if self.subscribed:
                self.backoff.reset()
            elif not ok:
                self.last_error = f"subscription refused (codes {granted})"
                log.error("consumer of %s: %s", self.consumer.site, self.last_error)

    def on_message(self, session: int, message: InboundMessage) -> None:
        change = self.consumer.feed(message.topic, message.payload, self.wall_clock_s(), message.retain)
        if change is not None and self.on_change is not None:
            self.on_change(change)
