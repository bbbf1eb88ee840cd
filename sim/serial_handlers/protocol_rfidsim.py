"""pyserial URL handler ``rfidsim://NAME``: a port on the simulated table's reader line.

``serial.serial_for_url("rfidsim://NAME")`` imports this module (the package
is on ``serial.protocol_handler_packages``) and returns a port whose reads
take what the simulated board has sent so far and whose writes go onto the
simulated wire; it tells its reader when bytes arrive (``on_readable``), so
an idle line costs the virtual loop nothing.  A vanished line raises ``SerialException`` like a real
unplugged adapter does.
"""

from __future__ import annotations

import urllib.parse

from serial.serialutil import PortNotOpenError, SerialBase, SerialException

from sim.reader_line import LINES, ReaderLine


class Serial(SerialBase):
    def open(self) -> None:
        if self._port is None:
            raise SerialException("Port must be configured before it can be used.")
        if self.is_open:
            raise SerialException("Port is already open.")
        name = self.from_url(self.portstr)
        line = LINES.get(name)
        if line is None:
            raise SerialException(f"no simulated reader line {name!r}; running: {', '.join(sorted(LINES))}")
        if not line.connected:
            raise SerialException(f"could not open port rfidsim://{name}: no such device")
        self._line: ReaderLine | None = line
        self._generation = line.generation
        self._tell = None
        self.is_open = True

    def from_url(self, url: str) -> str:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "rfidsim" or not parts.netloc:
            raise SerialException(f"expected a URL like rfidsim://NAME, got {url!r}")
        return parts.netloc

    def _reconfigure_port(self) -> None:
        """Baud rate and framing are whatever the line was built with."""

    def close(self) -> None:
        if self._line is not None and self._line.readable is self._tell:
            self._line.readable = None
        self.is_open = False
        self._line = None

    def on_readable(self, callback) -> bool:
        """The simulated line wakes its reader when bytes arrive (the virtual loop never polls an idle line)."""
        self._tell = callback
        self._alive().readable = callback
        return True

    def _alive(self) -> ReaderLine:
        if not self.is_open or self._line is None:
            raise PortNotOpenError()
        line = self._line
        if not line.connected or line.generation != self._generation:
            raise SerialException("device reports readiness to read but returned no data "
                                  "(device disconnected or multiple access on port?)")
        return line

    @property
    def in_waiting(self) -> int:
        return len(self._alive().to_host)

    def read(self, size: int = 1) -> bytes:
        waiting = self._alive().to_host
        if size >= len(waiting):            # (the usual read: all there is)
            data = bytes(waiting)
            waiting.clear()
            return data
        data = bytes(waiting[:size])
        del waiting[:size]
        return data

    def write(self, data: bytes) -> int:
        self._alive().host_send(bytes(data))
        return len(data)

    def reset_input_buffer(self) -> None:
        self._alive().to_host.clear()

    def reset_output_buffer(self) -> None:
        self._alive()
