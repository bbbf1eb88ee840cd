"""Every sensor and key of the table by name, and a running record of their changes (a logic analyser).

A technician moving a lift by hand, or feeding a tile past an optic, wants
to see which inputs changed and when.  The log listens to every input from
the first diagnostic request on and keeps the last ``KEPT`` changes with the
controller's time; ``mjtable diag sensors --watch S`` asks for the changes
of the next S seconds.
"""

from __future__ import annotations

from collections import deque
from typing import Any

KEPT = 1000


class EdgeLog:
    def __init__(self, table) -> None:
        self.now = table.loop.now
        self.changes: deque[tuple[float, str, bool]] = deque(maxlen=KEPT)
        for name, sensor in table.inputs().items():
            sensor.on_edge(lambda active, name=name: self.changes.append((self.now(), name, bool(active))))

    @classmethod
    def of(cls, table) -> "EdgeLog":
        """The table's log, started on first use (one per table: listeners are never removed)."""
        log = getattr(table, "_edge_log", None)
        if log is None:
            log = cls(table)
            table._edge_log = log
        return log

    def since(self, start_s: float) -> list[dict[str, Any]]:
        return [{"after_s": round(t - start_s, 3), "input": name, "active": active}
                for t, name, active in self.changes if t >= start_s]
