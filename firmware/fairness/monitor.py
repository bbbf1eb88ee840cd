"""The shuffle monitor: one CUSUM chart per seat (pairs dealt) and per wall pattern, warning with the evidence.

Fed once a hand with the wall the reader mapped and every seat's starting
tiles (:meth:`ShuffleMonitor.observe`), it scores each against what a fair
shuffle gives for the same tile counts (:mod:`firmware.fairness.null`) and
keeps six one-sided CUSUM charts: a seat dealt more pairs than chance (four
charts), and neighbouring tiles of one suit or consecutive more often than
chance (two charts per table).  A chart passing its threshold raises one
:class:`FairnessWarning` naming the seat or the pattern with its evidence:
the statistic, the hands it took, the mean excess over a fair table.  The
table keeps playing: a warning is not a fault.  Memory is fixed (a few
numbers per chart), so a table can run for years; the charts are saved and
restored as a small document (:meth:`to_dict`), and a technician who has
checked the table starts them again (:meth:`reset`).

Hands or walls with tiles the reader could not name (a counted-only set)
are not scored.  The threshold ``h`` covers all six charts together: with
the shipped values a fair table alarms on any chart in fewer than 1% of
1,000-hand runs (measured by ``make bench``, ``bench/fairness.py``).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

from firmware.fairness.cusum import Cusum
from firmware.fairness.null import hand_pairs, wall_neighbours
from firmware.fairness.patterns import HAND_TILES, Pattern, count_neighbours, pairs, side_sequences
from firmware.tiles.wall import Wall

log = logging.getLogger(__name__)

SEATS = "ESWN"
K_SD = 0.5              # allowance: half a standard deviation (tuned to a shift of one)
H_SD = 16.0             # threshold for every chart (calibrated in bench/fairness.py)


@dataclass(frozen=True)
class FairnessWarning:
    """A chart passed its threshold: what, where, and the evidence."""

    chart: str                  # "pairs:E" ... or "wall:same_suit", "wall:consecutive"
    seat: str | None            # the side's position (E S W N) for a pairs chart
    pattern: str | None         # the wall pattern for a wall chart
    hand: int                   # the table's hand number it was raised at
    hands: int                  # hands the chart had scored
    statistic: float            # the CUSUM statistic (standard deviations)
    threshold: float
    observed_mean: float        # per hand (pairs dealt, or neighbours per wall)
    fair_mean: float            # what a fair shuffle gives on average
    cycle: int | None = None    # the table's stacking cycle count then (None: not told)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("statistic", "threshold", "observed_mean", "fair_mean"):
            d[key] = round(d[key], 3)
        return d

    def describe(self) -> str:
        what = (f"seat {self.seat} was dealt {self.observed_mean:.2f} pairs a hand (a fair shuffle: "
                f"{self.fair_mean:.2f})" if self.seat is not None else
                f"walls had {self.observed_mean:.1f} {self.pattern} neighbours each (a fair shuffle: "
                f"{self.fair_mean:.1f})")
        return f"shuffle bias at hand {self.hand}: {what} over {self.hands} hands, CUSUM {self.statistic:.1f}"


@dataclass
class _Chart:
    cusum: Cusum
    observed: float = 0.0       # sums over the scored hands, for the evidence
    expected: float = 0.0


class ShuffleMonitor:
    """The six charts of one table (bounded memory)."""

    def __init__(self, k: float = K_SD, h: float = H_SD) -> None:
        self.k, self.h = k, h
        names = [f"pairs:{s}" for s in SEATS] + [f"wall:{p.value}" for p in Pattern]
        self.charts: dict[str, _Chart] = {n: _Chart(Cusum(k, h)) for n in names}
        self.warnings: list[FairnessWarning] = []       # at most one per chart until reset
        self.unscored = 0

    def observe(self, hand: int, wall: Wall | None, starting: Mapping[int, Sequence[int | None]],
                cycle: int | None = None) -> list[FairnessWarning]:
        """Score one dealt hand: ``wall`` as mapped, ``starting`` side -> that seat's tiles in taking order
        (``cycle``: the table's stacking cycles, for the warning)."""
        copies = _copies(wall)
        if copies is None:
            self.unscored += 1
            return []
        seat_pairs = {}
        for side, tiles in sorted(starting.items()):
            first = list(tiles)[:HAND_TILES]
            if len(first) == HAND_TILES and all(t is not None for t in first):
                seat_pairs[side] = pairs(first)     # type: ignore[arg-type]
        sequences = side_sequences(wall)            # type: ignore[arg-type]
        return self.observe_counts(hand, copies, tuple(len(seq) for seq in sequences), seat_pairs,
                                   {p: count_neighbours(p, sequences) for p in Pattern},    # type: ignore[arg-type]
                                   cycle)

    def observe_counts(self, hand: int, copies: tuple[int, ...], side_lengths: tuple[int, ...],
                       seat_pairs: Mapping[int, int], neighbours: Mapping[Pattern, int],
                       cycle: int | None = None) -> list[FairnessWarning]:
        """Score one hand from what was counted: the set's ``copies`` per kind, the walls' ``side_lengths``, pairs
        per side, neighbours per pattern (what :meth:`observe` counts from a wall)."""
        raised: list[FairnessWarning] = []
        fair = hand_pairs(copies)
        for side, x in sorted(seat_pairs.items()):
            raised += self._score(f"pairs:{SEATS[side]}", hand, cycle, x, fair.mean, fair.sd, seat=SEATS[side])
        kinds = tuple(k for k, c in enumerate(copies) for _ in range(c))
        for pattern, x in neighbours.items():
            null = wall_neighbours(pattern, kinds, side_lengths)
            raised += self._score(f"wall:{pattern.value}", hand, cycle, x, null.mean, null.sd,
                                  pattern=pattern.value)
        return raised

    def _score(self, name: str, hand: int, cycle: int | None, x: float, mean: float, sd: float, seat: str | None = None,
               pattern: str | None = None) -> list[FairnessWarning]:
        chart = self.charts[name]
        chart.observed += x
        chart.expected += mean
        if not chart.cusum.update((x - mean) / sd):
            return []
        n = chart.cusum.n
        warning = FairnessWarning(name, seat, pattern, hand, n, chart.cusum.s, self.h, chart.observed / n,
                                  chart.expected / n, cycle)
        self.warnings.append(warning)
        log.warning("%s", warning.describe())
        return [warning]

    def reset(self) -> None:
        """A technician checked the table: start gathering evidence again."""
        for chart in self.charts.values():
            chart.cusum.reset()
            chart.observed = chart.expected = 0.0
        self.warnings.clear()
        self.unscored = 0

    def status(self) -> dict[str, Any]:
        return {"warnings": [w.to_dict() for w in self.warnings],
                "charts": {n: {"statistic": round(c.cusum.s, 3), "hands": c.cusum.n} for n, c in self.charts.items()},
                "threshold": self.h, "unscored": self.unscored}

    def to_dict(self) -> dict[str, Any]:
        return {"charts": {n: {**c.cusum.to_dict(), "observed": c.observed, "expected": c.expected}
                           for n, c in self.charts.items()},
                "warnings": [asdict(w) for w in self.warnings], "unscored": self.unscored}

    def restore(self, data: Mapping[str, Any]) -> None:
        """Charts saved by :meth:`to_dict` (unknown charts are ignored, missing ones start at zero)."""
        for name, saved in dict(data.get("charts", {})).items():
            if name in self.charts and isinstance(saved, dict):
                self.charts[name] = _Chart(Cusum.from_dict(saved, self.k, self.h), float(saved.get("observed", 0.0)),
                                           float(saved.get("expected", 0.0)))
        self.warnings = [FairnessWarning(**w) for w in data.get("warnings", []) if isinstance(w, dict)]
        self.unscored = int(data.get("unscored", 0))


def _copies(wall: Wall | None) -> tuple[int, ...] | None:
    """The set's count per kind, from a wall whose every tile is known (None otherwise)."""
    if wall is None or len(wall) == 0:
        return None
    copies = [0] * 42
    for position in wall.positions():
        kind = wall[position]
        if kind is None:
            return None
        copies[kind] += 1
    return tuple(copies)
