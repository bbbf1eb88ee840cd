"""A chain's central consumer: every parlour's tables, as their brokers bridge them to the chain's cluster.

Each parlour's Mosquitto forwards its tables' topics to a central cluster
of brokers (the bridge ``mjtable fleet broker-config --bridge`` writes; see
docs/fleet.md, "A chain of parlours").  :class:`ChainConsumer` subscribes
there to every site at once and keeps one
:class:`~firmware.fleet.consumer.FleetConsumer` per site: the same
de-duplication on ``msg_id`` (a bridge that reconnects, a cluster node that
fails over and the tables' own resends all deliver some events twice), the
same lifecycle view per table, the same gaps.  It plugs into
:class:`~firmware.fleet.consumer.ConsumerClient` like one site's consumer.
"""

from __future__ import annotations

from typing import Any

from firmware.fleet import topics
from firmware.fleet.consumer import Change, FleetConsumer

MAX_SITES = 10_000          # a chain's parlours (a topic naming more sites is counted, not kept)


class ChainConsumer:
    """Every site's consumer, created when the site is first heard."""

    site = "chain"                  # (for the client's logs and its backoff's seed)

    def __init__(self, keep_events: bool = False) -> None:
        self.sites: dict[str, FleetConsumer] = {}
        self.keep_events = keep_events
        self.bad = 0

    @staticmethod
    def subscriptions() -> list[tuple[str, int]]:
        return topics.chain_subscriptions()

    def feed(self, topic: str, payload: bytes, received_s: float, retained: bool = False) -> Change | None:
        parsed = topics.parse(topic)
        if parsed is None:
            self.bad += 1
            return None
        consumer = self.sites.get(parsed.site)
        if consumer is None:
            if len(self.sites) >= MAX_SITES:
                self.bad += 1
                return None
            consumer = self.sites[parsed.site] = FleetConsumer(parsed.site, keep_events=self.keep_events)
        return consumer.feed(topic, payload, received_s, retained)

    def missing(self) -> dict[tuple[str, str], int]:
        """Per (site, table): the first event seq the chain lacks and may ask for (``resend_since`` that - 1):
        a hole between events seen, or events a table's birth says it has written beyond the last seen (a
        parlour broker killed after acknowledging them, before its bridge sent them up)."""
        out: dict[tuple[str, str], int] = {}
        for site, consumer in self.sites.items():
            for key, gaps in consumer.gaps().items():
                table = key.split(":", 1)[0]
                out[(site, table)] = min(gaps[0], out.get((site, table), gaps[0]))
            for table, view in consumer.tables.items():
                db_id, written = view.birth.get("db_id"), view.birth.get("seq")
                if not isinstance(db_id, str) or not isinstance(written, int):
                    continue
                last = consumer.last_seq(table, db_id)
                if last is not None and written > last:
                    out[(site, table)] = min(last + 1, out.get((site, table), last + 1))
        return out

    def stats(self) -> dict[str, Any]:
        """Counts summed over the sites, the latency over every site's events, and each site's own stats."""
        per_site = {name: c.stats() for name, c in sorted(self.sites.items())}
        total: dict[str, Any] = {"sites": len(per_site), "bad": self.bad}
        for stats in per_site.values():
            for key in ("tables", "online", "events", "duplicates", "bad", "misnamed", "missing"):
                total[key] = total.get(key, 0) + stats[key]
        merged = FleetConsumer("chain")
        for consumer in self.sites.values():
            merged.latencies_s.extend(consumer.latencies_s)
        merged.latencies_s.sort()
        total["latency_p50_s"], total["latency_p99_s"] = merged.latency_s(0.5), merged.latency_s(0.99)
        return {"total": total, "sites": per_site}
