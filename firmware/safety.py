"""Table-wide interlocks: supply good, service lid, reset key.

A dropped supply-good input is a brown-out (E01, latched): every output goes
to its safe value at once.  The lid opening while motors could run is E04
(recoverable: the table stops and resumes when the lid closes).  The reset
key stops every motor in any state (E02).  Whoever runs an operation
subscribes to :attr:`SafetySupervisor.on_trip` to abandon it.
"""

from __future__ import annotations

import logging
from typing import Callable

from firmware.faults import Fault, FaultCode
from firmware.table import Table

log = logging.getLogger(__name__)


class SafetySupervisor:
    def __init__(self, table: Table) -> None:
        self.table = table
        self.on_trip: list[Callable[[Fault], None]] = []
        self.lid_open = bool(table.lid and table.lid.active)
        table.supply_ok.on_edge(self._supply)
        if table.lid is not None:
            table.lid.on_edge(self._lid)
        table.panel.on_key(self._key)

    def _supply(self, ok: bool) -> None:
        if not ok:
            self._trip(FaultCode.E01, reason="supply-good input dropped")

    def _lid(self, open_: bool) -> None:
        self.lid_open = open_
        if open_ and not self.table.motors_safe():
            self._trip(FaultCode.E04, reason="lid opened with motors running")
        elif open_:
            self.table.bus.publish("lid", open=True)
        else:
            self.table.bus.publish("lid", open=False)

    def _key(self, name: str, pressed: bool) -> None:
        if name == "key_reset" and pressed:
            self._trip(FaultCode.E02, reason="reset key")

    def _trip(self, code: FaultCode, **detail) -> None:
        fault = Fault(code, self.table.loop.now(), "safety", detail)
        log.error("%s", fault)
        self.table.safe_stop_all()
        self.table.bus.publish("fault", fault=fault)
        for callback in list(self.on_trip):
            callback(fault)
