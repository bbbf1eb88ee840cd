"""systemd integration without a dependency: sd_notify (READY, WATCHDOG, STATUS) over NOTIFY_SOCKET.

When the service runs under systemd with ``Type=notify`` and ``WatchdogSec``,
systemd sets ``NOTIFY_SOCKET`` and ``WATCHDOG_USEC``; outside systemd both
are absent and every call here does nothing.
"""

from __future__ import annotations

import logging
import os
import socket

log = logging.getLogger(__name__)


class Notifier:
    def __init__(self, environ: dict[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self.address = env.get("NOTIFY_SOCKET")
        usec = env.get("WATCHDOG_USEC")
        self.watchdog_s = int(usec) / 1e6 if usec and usec.isdigit() else None

    @property
    def enabled(self) -> bool:
        return bool(self.address)

    def notify(self, message: str) -> bool:
        if not self.address:
            return False
        address = self.address
        if address.startswith("@"):
            address = "\0" + address[1:]          # abstract socket
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.setblocking(False)            # a busy systemd never stalls the controller's loop
                sock.sendto(message.encode(), address)
        except OSError as exc:
            log.debug("sd_notify %r failed: %s", message, exc)
            return False
        return True

    def ready(self, status: str = "") -> bool:
        return self.notify("READY=1" + (f"\nSTATUS={status}" if status else ""))

    def watchdog(self) -> bool:
        return self.notify("WATCHDOG=1")

    def status(self, text: str) -> bool:
        return self.notify(f"STATUS={text}")

    def stopping(self) -> bool:
        return self.notify("STOPPING=1")


# syslog priorities that journald reads from a "<N>" line prefix (sd-daemon(3))
_PRIORITY = {logging.CRITICAL: 2, logging.ERROR: 3, logging.WARNING: 4, logging.INFO: 6, logging.DEBUG: 7}


class JournalFormatter(logging.Formatter):
    """Log lines for the journal: a ``<N>`` priority prefix, so ``journalctl -p err -u mjtable`` shows
    the faults alone and errors stand out; no time stamp (the journal adds its own)."""

    def __init__(self) -> None:
        super().__init__("%(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        priority = _PRIORITY.get(record.levelno, 6 if record.levelno < logging.WARNING else 3)
        return "\n".join(f"<{priority}>{line}" for line in super().format(record).splitlines())


def log_to_journal_if_there(environ: dict[str, str] | None = None) -> bool:
    """Under systemd (``JOURNAL_STREAM`` set) give the root logger's handlers the journal's format."""
    env = os.environ if environ is None else environ
    if not env.get("JOURNAL_STREAM"):
        return False
    for handler in logging.getLogger().handlers:
        handler.setFormatter(JournalFormatter())
    return True
