"""Reconnect delays: jittered exponential backoff and the spread first connect, from a seeded random source.

A hall of 200 tables powered up by one switch, or reconnecting after the
broker restarted, must not reach the broker in the same second: the first
connect after boot waits a random share of ``spread_s``, and each failed
attempt doubles the ceiling of the next delay (``min_s`` .. ``max_s``), the
delay drawn from its upper half ("equal jitter": never close to zero, so a
broker that refuses at once is not hammered).  The source is seeded from
the table's id: a real table differs from its neighbours, and a simulated
fleet is the same run after run.
"""

from __future__ import annotations

import hashlib
import random


def seeded_rng(*parts: str) -> random.Random:
    """A random source seeded from ids (e.g. site and table)."""
    digest = hashlib.sha256("/".join(parts).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


class Backoff:
    """Delays before reconnect attempts; :meth:`reset` once a connection has proved stable."""

    def __init__(self, rng: random.Random, min_s: float = 1.0, max_s: float = 60.0) -> None:
        if not 0 < min_s <= max_s:
            raise ValueError(f"backoff: need 0 < min_s ({min_s}) <= max_s ({max_s})")
        self.rng = rng
        self.min_s = min_s
        self.max_s = max_s
        self.attempts = 0

    def next_delay_s(self) -> float:
        ceiling = min(self.max_s, self.min_s * (2.0 ** min(self.attempts, 30)))
        self.attempts += 1
        return self.rng.uniform(ceiling / 2.0, ceiling)

    def reset(self) -> None:
        self.attempts = 0

    def first_delay_s(self, spread_s: float) -> float:
        """The wait before the first connect after boot."""
        return self.rng.uniform(0.0, spread_s) if spread_s > 0 else 0.0
