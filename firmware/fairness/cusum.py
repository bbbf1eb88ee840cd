"""A one-sided CUSUM on standardized scores: O(1) memory however long the table runs.

Each observation is a score ``z`` (an observation minus what a fair table
gives, over its standard deviation).  The statistic ``S = max(0, S + z - k)``
stays near zero while the scores average zero and climbs steadily when they
average more than ``k``; it raises an alarm once when ``S`` passes ``h``.  The
threshold ``h`` is calibrated by simulating the fair table (``bench/fairness.py``)
so that a fair table's runs of 1,000 hands almost never alarm on any chart.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Cusum:
    """One chart: allowance ``k`` and threshold ``h`` in standard deviations."""

    k: float
    h: float
    s: float = 0.0              # the statistic now
    n: int = 0                  # observations taken
    alarmed_at: int | None = None   # the observation (1-based) it alarmed at, kept until reset
    peak: float = 0.0           # the largest statistic seen

    def update(self, z: float) -> bool:
        """Take one score; True exactly once, when the chart first passes its threshold."""
        self.n += 1
        self.s = max(0.0, self.s + z - self.k)
        self.peak = max(self.peak, self.s)
        if self.alarmed_at is None and self.s > self.h:
            self.alarmed_at = self.n
            return True
        return False

    def reset(self) -> None:
        self.s, self.n, self.alarmed_at, self.peak = 0.0, 0, None, 0.0

    def to_dict(self) -> dict:
        return {"k": self.k, "h": self.h, "s": self.s, "n": self.n, "alarmed_at": self.alarmed_at, "peak": self.peak}

    @classmethod
    def from_dict(cls, data: dict, k: float, h: float) -> "Cusum":
        """A chart restored from :meth:`to_dict` (the allowance and threshold are today's, not the saved ones)."""
        alarmed = data.get("alarmed_at")
        return cls(k, h, max(0.0, float(data.get("s", 0.0))), int(data.get("n", 0)),
                   int(alarmed) if alarmed is not None else None, float(data.get("peak", 0.0)))
