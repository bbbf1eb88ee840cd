"""The hardware ports: what the firmware needs of pins, their devices and the serial line.

Firmware code depends only on these protocols.  The real backends
(``hal.gpio``, ``hal.serial_port``, ``hal.backend``) and the simulated table
(``sim.backend``) both satisfy them, so the same mechanism and driver code
runs on a table and on a laptop.
"""

from __future__ import annotations

from typing import Callable, Protocol

from firmware.listeners import Listening


class DigitalOutput(Protocol):
    """An on/off output: a motor relay, a lamp, the buzzer."""

    name: str
    safe_value: bool

    def set(self, active: bool) -> None: ...

    @property
    def active(self) -> bool: ...


class PwmOutput(Protocol):
    """A duty-cycle output (0.0 .. 1.0), e.g. a lamp dimmer or a motor speed."""

    name: str
    safe_value: float

    def set_duty(self, duty: float) -> None: ...

    @property
    def duty(self) -> float: ...


class DigitalInput(Protocol):
    """A sensor or key.  Edge callbacks run on the loop thread, never on the GPIO thread."""

    name: str

    @property
    def active(self) -> bool: ...

    def on_edge(self, callback: Callable[[bool], None]) -> Listening:
        """Call ``callback(active)`` on the loop for every change of state, until the handle is cancelled."""


class SerialPort(Protocol):
    """The subset of a pyserial port the reader driver uses; reads never block.

    A port may also offer ``on_readable(callback) -> bool``: ``callback()`` is
    called (from any thread) whenever bytes arrive, and the driver then reads
    on readiness instead of polling.  Ports without it are polled.
    """

    @property
    def in_waiting(self) -> int: ...

    def read(self, size: int = 1) -> bytes: ...

    def write(self, data: bytes) -> int: ...

    def reset_input_buffer(self) -> None: ...

    def close(self) -> None: ...


class PortError(OSError):
    """The serial port failed (unplugged, vanished, refused); the link is down."""


class Hardware(Protocol):
    """What a backend hands the firmware: devices by pin spec, and serial ports by URL."""

    def output(self, name: str, spec: str, safe_value: bool = False) -> DigitalOutput: ...

    def pwm_output(self, name: str, spec: str, safe_value: float = 0.0) -> PwmOutput: ...

    def input(self, name: str, spec: str) -> DigitalInput: ...

    def open_serial(self, url: str, baud: int) -> SerialPort: ...

    def close(self) -> None: ...
