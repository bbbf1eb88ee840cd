"""A technician's service test in progress, as the controller keeps it: answered once, by its end or a fault."""

from __future__ import annotations

from typing import Any, Callable

from firmware.faults import Fault
from firmware.loop import Loop

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


class ServiceTestSlot:
    """The one service test a table runs at a time (``current``): begun, answered, or stopped by a fault."""

    def __init__(self, loop: Loop) -> None:
        self.loop = loop
        self.current: ServiceTest | None = None

    def begin(self, reply: Reply) -> Reply:
        """A test starts: its answer goes through the slot, so that a fault can stop it and answer."""
        test = ServiceTest(reply, self._done)
        self.current = test
        return test.answer

    def _done(self, test: ServiceTest) -> None:
        if self.current is test:
            self.current = None

    def stopped(self, fault: Fault) -> None:
        """A fault stopped the table during a test: the test's own answer if it has one by the end of this tick
        (a jam in one of its mechanisms), else the fault and its reason."""
        if self.current is not None:
            self.loop.call_later(0.0, self.current.stop, fault)
