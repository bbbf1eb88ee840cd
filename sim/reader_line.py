"""The serial cable between the controller and the simulated reader board.

Bytes take their real time on the wire (10 bits per byte at the configured
baud), in both directions.  The line is where reader-line faults live:
``noise`` corrupts each byte with a probability, ``drop`` loses whole frames
(a burst that wipes a frame out), and ``unplug`` makes the port vanish as an
unplugged USB adapter does: open fails, and a port opened before the outage
stays dead even after the cable is back, until it is reopened.

Lines are found by name, so ``rfidsim://NAME`` (the pyserial handler in
``sim.serial_handlers``) reaches the line of the simulated table ``NAME``.
The simulator tells pyserial where that handler is when it lays a line:
production code knows no ``rfidsim://``.
"""

from __future__ import annotations

import logging
import random
import weakref
from typing import Callable

from firmware.loop import Loop

log = logging.getLogger(__name__)

LINES: "weakref.WeakValueDictionary[str, ReaderLine]" = weakref.WeakValueDictionary()
URL_HANDLERS = "sim.serial_handlers"


def register_url_handler() -> None:
    """Make ``rfidsim://`` known to ``serial.serial_for_url`` (once; pyserial looks in these packages)."""
    import serial

    if URL_HANDLERS not in serial.protocol_handler_packages:
        serial.protocol_handler_packages.append(URL_HANDLERS)


class ReaderLine:
    def __init__(self, loop: Loop, rng: random.Random, name: str, baud: int = 115200) -> None:
        self.loop = loop
        self.rng = rng
        self.name = name
        self.baud = baud
        self.noise_p = 0.0           # probability that a byte is corrupted
        self.drop_p = 0.0            # probability that a board frame is lost
        self.connected = True
        self.generation = 0          # bumped by every unplug: ports opened before are dead
        self.to_host = bytearray()   # arrived at the host's UART, not yet read
        self.receiver: Callable[[bytes], None] | None = None    # the board's UART input
        self.readable: Callable[[], None] | None = None         # told when bytes reach the host's UART
        self._board_busy_until = 0.0
        self._host_busy_until = 0.0
        self.lose_host_writes = 0    # the next n host writes never reach the board (a cable glitch)
        self.frames_dropped = 0
        self.bytes_corrupted = 0
        LINES[name] = self
        register_url_handler()

    @property
    def byte_s(self) -> float:
        return 10.0 / self.baud

    # -- board -> host ---------------------------------------------------------
    def board_send(self, frame: bytes) -> float:
        """Put a frame on the wire; returns the time its last byte arrives."""
        now, busy = self.loop.now(), self._board_busy_until
        start = busy if busy > now else now             # (max without the call: a frame a tile and a second)
        self._board_busy_until = done = start + len(frame) * self.byte_s
        self.loop.call_at(done, self._arrive_at_host, frame, self.generation)
        return done

    def board_backlog_s(self) -> float:
        return max(0.0, self._board_busy_until - self.loop.now())

    def _arrive_at_host(self, frame: bytes, generation: int) -> None:
        if not self.connected or generation != self.generation:
            return
        if self.drop_p and self.rng.random() < self.drop_p:
            self.frames_dropped += 1
            return
        self.to_host += self._noisy(frame) if self.noise_p else frame
        if self.readable is not None:
            self.readable()

    # -- host -> board ---------------------------------------------------------
    def host_send(self, data: bytes) -> None:
        if self.lose_host_writes > 0:
            self.lose_host_writes -= 1
            return
        start = max(self.loop.now(), self._host_busy_until)
        self._host_busy_until = done = start + len(data) * self.byte_s
        self.loop.call_at(done, self._arrive_at_board, data, self.generation)

    def _arrive_at_board(self, data: bytes, generation: int) -> None:
        if self.connected and generation == self.generation and self.receiver is not None:
            self.receiver(self._noisy(data))

    def _noisy(self, data: bytes) -> bytes:
        if not self.noise_p:
            return data
        out = bytearray(data)
        for i in range(len(out)):
            if self.rng.random() < self.noise_p:
                out[i] ^= self.rng.randrange(1, 256)
                self.bytes_corrupted += 1
        return bytes(out)

    # -- faults ----------------------------------------------------------------
    def unplug(self, duration_s: float) -> None:
        """The port vanishes now and comes back after ``duration_s``."""
        log.info("reader line %s unplugged for %.1f s", self.name, duration_s)
        self.connected = False
        self.generation += 1
        self.to_host.clear()
        self.loop.call_later(duration_s, self.replug)

    def replug(self) -> None:
        self.connected = True
