"""Wear trend: a part whose cycle grows slower, cycle after cycle, is named before it jams.

A cam (a stacking head, a wall lift) that wears - a belt stretching, a
bearing drying, a ring collecting dust - does not jam at once: each turn
takes a little longer than the last, by a per cent or less, and the
learned nominal time (the median of the last runs, :mod:`firmware.mechanisms.nominal`)
follows it, so the 2x warning and the 3x fault only come with the jam.
This monitor keeps, per part, the baseline it learned from the part's first
``BASELINE_CYCLES`` turns (their median) and a one-sided CUSUM of the
relative excess over it, ``S = max(0, S + t/base - 1 - k)``: a healthy part
(timing noise of a few per cent) keeps ``S`` near zero, a part slowing by
0.5% a turn passes ``h`` some 20 turns after it starts to slow.  The
warning names the part and gives the trend: how much slower it is now and
by how much a turn it slows (least squares over the last ``TREND_CYCLES``
turns).  Memory is fixed per part.  The evidence restarts with the
firmware (the baseline is learned again) and after :meth:`WearMonitor.reset`
(a part repaired or replaced).
"""

from __future__ import annotations

import logging
import statistics
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any

log = logging.getLogger(__name__)

BASELINE_CYCLES = 9
TREND_CYCLES = 24
K_REL = 0.04            # allowance: 4% slower than the baseline is noise
H_REL = 0.40            # threshold on the summed excess (calibrated in bench/fairness.py)


def part_label(mechanism: str) -> str:
    """The name a technician uses: head0..3, lift0..3 (the firmware's stacker0.., wall_lift0..)."""
    if mechanism.startswith("stacker"):
        return "head" + mechanism[len("stacker"):]
    if mechanism.startswith("wall_lift"):
        return "lift" + mechanism[len("wall_lift"):]
    return mechanism


def part_mechanism(part: str) -> str | None:
    """The firmware's name of a part a technician names (head2 -> stacker2, lift1 -> wall_lift1); None: no such part."""
    for label, mechanism in (("head", "stacker"), ("lift", "wall_lift")):
        if part.startswith(label) and part[len(label):] in ("0", "1", "2", "3"):
            return mechanism + part[len(label):]
    return None


@dataclass(frozen=True)
class WearWarning:
    """A part slowing towards a jam, with its trend."""

    part: str                   # head0..3, lift0..3
    mechanism: str              # the firmware's name (stacker2, wall_lift1)
    cycle: int                  # the part's cycle (turn) it was raised at
    hand: int                   # the table's hand number then
    at_s: float
    baseline_s: float
    last_s: float               # the last cycle's time
    slower_pct: float           # how much slower than the baseline now (per cent)
    trend_pct_per_cycle: float  # slowing per cycle, per cent of the baseline
    statistic: float
    threshold: float

    def to_dict(self) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}

    def describe(self) -> str:
        return (f"{self.part} wearing: {self.slower_pct:.1f}% slower than its {self.baseline_s:.3f}s, "
                f"slowing {self.trend_pct_per_cycle:.2f}% a cycle (cycle {self.cycle}, hand {self.hand})")


@dataclass
class _Part:
    learning: list[float] = field(default_factory=list)
    baseline_s: float | None = None
    s: float = 0.0
    cycles: int = 0
    recent: deque = field(default_factory=lambda: deque(maxlen=TREND_CYCLES))
    warned: bool = False


class WearMonitor:
    """Per part: baseline, CUSUM of the relative excess, the last few cycles for the trend."""

    def __init__(self, k: float = K_REL, h: float = H_REL) -> None:
        self.k, self.h = k, h
        self.parts: dict[str, _Part] = {}
        self.warnings: list[WearWarning] = []

    def observe(self, mechanism: str, elapsed_s: float, at_s: float = 0.0, hand: int = 0) -> WearWarning | None:
        """One completed cycle of ``mechanism`` that took ``elapsed_s``; the warning when it is first raised."""
        if elapsed_s <= 0:
            return None
        part = self.parts.setdefault(mechanism, _Part())
        part.cycles += 1
        if part.baseline_s is None:
            part.learning.append(elapsed_s)
            if len(part.learning) >= BASELINE_CYCLES:
                part.baseline_s = statistics.median(part.learning)
                part.learning = []
            return None
        rel = elapsed_s / part.baseline_s
        part.recent.append(rel)
        part.s = max(0.0, part.s + rel - 1.0 - self.k)
        if part.warned or part.s <= self.h:
            return None
        part.warned = True
        warning = WearWarning(part_label(mechanism), mechanism, part.cycles, hand, at_s, part.baseline_s, elapsed_s,
                              100.0 * (rel - 1.0), 100.0 * _slope(part.recent), part.s, self.h)
        self.warnings.append(warning)
        log.warning("%s", warning.describe())
        return warning

    def reset(self, mechanism: str | None = None) -> None:
        """A part (or every part) repaired: learn its baseline again and forget its warning."""
        names = [mechanism] if mechanism is not None else list(self.parts)
        for name in names:
            self.parts.pop(name, None)
        self.warnings = [w for w in self.warnings if w.mechanism not in names]

    def status(self) -> dict[str, Any]:
        return {"warnings": [w.to_dict() for w in self.warnings],
                "parts": {part_label(n): {"cycles": p.cycles, "baseline_s": p.baseline_s, "statistic": round(p.s, 4)}
                          for n, p in sorted(self.parts.items())},
                "threshold": self.h}


def _slope(values: deque) -> float:
    """Least-squares slope of ``values`` against their index (0 for fewer than two)."""
    n = len(values)
    if n < 2:
        return 0.0
    mean_x = (n - 1) / 2
    mean_y = sum(values) / n
    num = sum((i - mean_x) * (y - mean_y) for i, y in enumerate(values))
    den = sum((i - mean_x) ** 2 for i in range(n))
    return num / den
