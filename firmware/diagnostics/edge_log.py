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


def table_inputs(table) -> dict[str, Any]:
    """Every digital input of the table by the name a technician reads on the wiring plan."""
    inputs = {"center_up": table.center_lift.up_sensor, "center_down": table.center_lift.down_sensor,
              "supply_ok": table.supply_ok}
    inputs.update({f"stacker_home{h.side}": h.cam.home for h in table.heads})
    inputs.update({f"tile_in{h.side}": h.tile_in for h in table.heads})
    inputs.update({f"feed_full{h.side}": h.feed_full for h in table.heads})
    inputs.update({f"lift_home{i}": lift.home for i, lift in enumerate(table.lifts)})
    inputs.update(table.panel.keys)
    if table.lid is not None:
        inputs["lid"] = table.lid
    return inputs


class EdgeLog:
    def __init__(self, table) -> None:
        self.now = table.loop.now
        self.changes: deque[tuple[float, str, bool]] = deque(maxlen=KEPT)
        for name, sensor in table_inputs(table).items():
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
