"""A technician's service test in progress, as the controller keeps it: answered once, by its end or a fault."""

from __future__ import annotations

from typing import Any, Callable

from firmware.faults import Fault

Reply = Callable[[dict[str, Any]], None]


class ServiceTest:
    """A technician's test in progress: answered exactly once, by its end or by the fault that stopped it."""

    def __init__(self, reply: Reply, done: Callable[["ServiceTest"], None]) -> None:
        self._reply = reply
        self._done = done
        self.answered = False

    def answer(self, answer: dict[str, Any]) -> None:
        if self.answered:
            return
        self.answered = True
        self._done(self)
        self._reply(answer)

    def stop(self, fault: Fault) -> None:
        why = fault.detail.get("interlock") or fault.code.text
        self.answer({"ok": False, "stopped_by": fault.code.value, "reason": why, "hint": fault.code.hint,
                     "error": f"stopped: {why} ({fault.code.value})"})
