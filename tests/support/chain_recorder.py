"""The chain's central consumer in a test, and what a recorder's database would keep: each hand once, by msg_id.

MQTT 3.1.1 on the cluster (a persistent session, the cluster's nodes tried
in turn), a :class:`~firmware.fleet.chain.ChainConsumer` behind it; ``kept``
(a dict the test owns, so that it survives the recorder's restart, as its
database would) holds every hand by ``msg_id`` and ``arrivals`` the order
in which each was first received.  ``clock`` is the hall's time (the host's,
or the light tables' sped-up clock, so that ``stale`` means three of the
tables' counters periods missed).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from firmware.fleet.chain import ChainConsumer
from firmware.fleet.command_auth import sign_command
from firmware.fleet.consumer import ConsumerClient
from firmware.fleet.mqtt.client import ClientSettings, PahoAdapter
from firmware.fleet.mqtt.network import MqttNetwork
from firmware.fleet.topics import TableTopics
from firmware.ports.broker import parse_broker_url
from firmware.ports.clock import Clock
from hal.runtime import HOST_CLOCK
from tests.support.fleet_rig import LoopThread


class Recorder:
    """See the module; ``key``: the chain's command key (a signed ``resend_since`` for what it lacks)."""

    def __init__(self, urls: list[str], kept: dict[str, dict], key: Any, *, keepalive_s: int = 5,
                 clock: Clock = HOST_CLOCK, name: str = "chain-recorder") -> None:
        self.lt = LoopThread(name)
        self.network = MqttNetwork("chain", clock=HOST_CLOCK).start()
        self.clock = clock
        self.key = key
        nodes = [parse_broker_url(u) for u in urls]
        self.adapter = PahoAdapter(self.network, self.lt.loop.post,
                                   ClientSettings(name, nodes[0], session_expiry_s=3600, mqtt311=True,
                                                  others=tuple(nodes[1:]), keepalive_s=keepalive_s,
                                                  connect_timeout_s=3.0))
        self.consumer = ChainConsumer()
        self.kept = kept
        self.arrivals: list[tuple[str, int]] = []          # (table, seq) of each hand as first received
        self.client = ConsumerClient(self.lt.loop, self.adapter, self.consumer, wall_clock_s=clock.wall_s,
                                     on_change=self._change, name=name, backoff_max_s=1.0)
        self.lt.call(self.client.start)

    def _change(self, change) -> None:
        if change.what == "event" and change.message.get("kind") == "hand":
            if change.message["msg_id"] not in self.kept:
                self.kept[change.message["msg_id"]] = change.message
                self.arrivals.append((change.message["table"], change.message["seq"]))

    def ask_for_missing(self) -> int:
        """A signed resend_since for every table the chain lacks events of (down the parlour's bridge)."""
        def ask() -> int:
            asked = 0
            for (site, table), first in self.consumer.missing().items():
                payload = sign_command(self.key, site=site, table=table, verb="resend_since",
                                       args={"seq": first - 1}, issuer="chain", issued_at=self.clock.wall_s(),
                                       ttl_s=60)
                self.adapter.publish(TableTopics(site, table).command("resend_since"), payload, 1, False)
                asked += 1
            return asked
        return self.lt.call(ask)

    def account(self) -> str:
        """What the recorder holds and knows (a failed wait's message): seqs per table, what it would ask for,
        what each table's birth says it wrote, whether it is subscribed."""
        seqs: dict[str, list[int]] = {}
        for m in list(self.kept.values()):
            seqs.setdefault(m["table"], []).append(m["seq"])
        births = self.lt.call(lambda: {t: v.birth.get("seq") for c in self.consumer.sites.values()
                                       for t, v in c.tables.items()})
        return (f"seqs {({t: sorted(v) for t, v in sorted(seqs.items())})}; "
                f"missing {self.lt.call(self.consumer.missing)}; births' seq {births}; "
                f"connected {self.client.connected}, subscribed {self.client.subscribed}")

    def statuses(self) -> dict[str, str]:
        """The hall's view: each table's status now (by the recorder's clock)."""
        def read() -> dict[str, str]:
            now = self.clock.wall_s()
            return {t: v.status(now) for c in self.consumer.sites.values() for t, v in c.tables.items()}
        return self.lt.call(read)

    def close(self) -> None:
        self.lt.call(self.client.stop)
        self.lt.stop()
        self.network.stop()


def hands_of(kept: dict[str, dict]) -> dict[str, list[int]]:
    """Each table's hands recorded, in the order of their seq."""
    out: dict[str, list[tuple[int, int]]] = {}
    for m in kept.values():
        out.setdefault(m["table"], []).append((m["seq"], m["data"]["hand"]))
    return {t: [h for _, h in sorted(v)] for t, v in out.items()}


def settle(recorder: Recorder, expected: int, what: str, timeout_s: float = 150.0, ask: bool = True) -> None:
    """Wait until the recorder has ``expected`` hands, asking for what it lacks now and then (``ask``).

    A heal takes seconds; the deadline is long because on a loaded two-core machine a bridge's or the
    recorder's connection can wait on the kernel's SYN retries (1, 3, 7, 15, 31, 63 s) while a NATS node is
    busy with JetStream; a hand that never comes fails with what the recorder holds and knows."""
    deadline = time.monotonic() + timeout_s
    asked_at = 0.0
    pause = threading.Event()
    while len(recorder.kept) < expected:
        assert time.monotonic() < deadline, (f"{what}: {len(recorder.kept)} of {expected} hands recorded; "
                                             f"{recorder.account()}")
        if ask and time.monotonic() - asked_at > 2.0:
            recorder.ask_for_missing()
            asked_at = time.monotonic()
        pause.wait(0.05)
