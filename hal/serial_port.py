"""Serial ports opened by URL through pyserial, with non-blocking reads.

``serial.serial_for_url`` lets one config key pick the real UART
(``/dev/serial0``), a USB adapter, the simulator's reader
(``rfidsim://table``, which the simulator registers) or a hex-dumping spy
(``spy:///dev/serial0?file=/var/log/rfid.spy``) without code changes.
pyserial errors become :class:`firmware.ports.hardware.PortError` so the firmware can
treat every failure as "link down" without importing pyserial.
"""

from __future__ import annotations

import logging

import serial

from firmware.ports.hardware import PortError

log = logging.getLogger(__name__)


class UrlSerialPort:
    """A pyserial port with ``timeout=0``: ``read`` returns what is there, never waits."""

    def __init__(self, url: str, baud: int, write_timeout_s: float = 0.5) -> None:
        self.url = url
        try:
            self._port = serial.serial_for_url(url, baudrate=baud, timeout=0,
                                               write_timeout=write_timeout_s)
        except (serial.SerialException, OSError, ValueError) as exc:
            raise PortError(f"cannot open {url}: {exc}") from exc

    @property
    def in_waiting(self) -> int:
        try:
            return self._port.in_waiting
        except (serial.SerialException, OSError) as exc:
            raise PortError(f"{self.url}: {exc}") from exc

    def read(self, size: int = 1) -> bytes:
        try:
            return self._port.read(size)
        except (serial.SerialException, OSError) as exc:
            raise PortError(f"{self.url}: {exc}") from exc

    def write(self, data: bytes) -> int:
        try:
            return self._port.write(data) or 0
        except (serial.SerialException, OSError) as exc:
            raise PortError(f"{self.url}: {exc}") from exc

    def reset_input_buffer(self) -> None:
        try:
            self._port.reset_input_buffer()
        except (serial.SerialException, OSError) as exc:
            raise PortError(f"{self.url}: {exc}") from exc

    def on_readable(self, callback) -> bool:
        """Passed on to a port that can tell when bytes arrive (the simulator's line); a UART cannot: polled."""
        tell = getattr(self._port, "on_readable", None)
        return bool(tell and tell(callback))

    def close(self) -> None:
        try:
            self._port.close()
        except (serial.SerialException, OSError):
            log.debug("closing %s failed", self.url, exc_info=True)


def open_serial(url: str, baud: int) -> UrlSerialPort:
    return UrlSerialPort(url, baud)
