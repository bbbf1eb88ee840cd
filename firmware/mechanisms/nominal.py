"""Learned nominal movement times (fault-tolerant control after CN106540440B).

Each mechanism with a sensor at the end of its movement learns how long the
movement takes on this table: the median of the last runs, seeded by the
configured value.  A movement past ``warn_factor`` x T is counted and
logged; past ``fault_factor`` x T (or the configured maximum run time,
whichever comes first) the motor is stopped and the mechanism's fault is
raised.  Worn belts show up as warnings long before they stop a game.
"""

from __future__ import annotations

import statistics
from collections import deque


class NominalTime:
    WINDOW = 9

    def __init__(self, initial_s: float, max_run_s: float, warn_factor: float = 2.0,
                 fault_factor: float = 3.0) -> None:
        self.initial_s = initial_s
        self.max_run_s = max_run_s
        self.warn_factor = warn_factor
        self.fault_factor = fault_factor
        # changed only through record, restore and clear: the median is worked out when they change, not at
        # every movement's two deadlines
        self.samples: deque[float] = deque(maxlen=self.WINDOW)
        self._value_s = initial_s

    @property
    def value_s(self) -> float:
        return self._value_s

    def _changed(self) -> None:
        self._value_s = statistics.median(self.samples) if self.samples else self.initial_s

    @property
    def warn_after_s(self) -> float:
        return min(self.value_s * self.warn_factor, self.max_run_s)

    @property
    def fault_after_s(self) -> float:
        return min(self.value_s * self.fault_factor, self.max_run_s)

    def record(self, elapsed_s: float) -> None:
        if elapsed_s > 0:
            self.samples.append(elapsed_s)
            self._changed()

    def clear(self) -> None:
        """Forget the runs learnt (the configured value until new ones are recorded)."""
        self.samples.clear()
        self._changed()

    def restore(self, samples: list[float]) -> None:
        """Load persisted samples (from the table database)."""
        self.samples.clear()
        self.samples.extend(s for s in samples[-self.WINDOW:] if s > 0)
        self._changed()
