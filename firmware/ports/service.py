"""The service-manager port: what the controller's service tells the OS that runs it (systemd on a table)."""

from __future__ import annotations

from typing import Protocol


class ServiceManager(Protocol):
    """Readiness, status and the watchdog; every call does nothing where there is no service manager."""

    watchdog_s: float | None        # how often the watchdog wants to hear from the service (None: it does not)

    def ready(self, status: str = "") -> bool: ...

    def status(self, text: str) -> bool: ...

    def watchdog(self) -> bool: ...

    def stopping(self) -> bool: ...
