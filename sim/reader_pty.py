"""The simulated reader board on a pseudo-terminal, for out-of-process runs in real time.

``mjtable reader-sim`` prints a path like ``/dev/pts/5``; anything that can
open a serial port (``mjtable diag --port /dev/pts/5``, the service, a
terminal program) then talks to the simulated board exactly as to a real
one.  Bytes written by the board go to the pty master; a pump thread reads
what the host wrote and posts it to the board's loop.  Line faults (noise,
drops) apply as on the in-process line.
"""

from __future__ import annotations

import logging
import os
import random
import select
import termios
import threading
import tty

from firmware.loop import RealTimeLoop
from sim.reader_board import ReaderBoard
from sim.reader_line import ReaderLine

log = logging.getLogger(__name__)


class PtyLine(ReaderLine):
    def __init__(self, loop: RealTimeLoop, rng: random.Random, baud: int = 115200) -> None:
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave, termios.TCSANOW)
        os.set_blocking(self._master, False)
        self.path = os.ttyname(self._slave)
        super().__init__(loop, rng, f"pty{self._master}", baud)
        self._stop = threading.Event()
        self._pump = threading.Thread(target=self._read_host, name="reader-pty", daemon=True)
        self._pump.start()

    def board_send(self, frame: bytes) -> float:
        done = self.loop.now() + len(frame) * self.byte_s
        if self.drop_p and self.rng.random() < self.drop_p:
            self.frames_dropped += 1
            return done
        try:
            os.write(self._master, self._noisy(frame))
        except BlockingIOError:
            self.frames_dropped += 1      # nobody reads the port: the UART's buffer overflows
        return done

    def _read_host(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self._master], [], [], 0.2)
            if not ready:
                continue
            try:
                data = os.read(self._master, 4096)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                break
            if data:
                self.loop.post(self._from_host, data)

    def _from_host(self, data: bytes) -> None:
        if self.receiver is not None:
            self.receiver(self._noisy(data))

    def close(self) -> None:
        self._stop.set()
        self._pump.join(timeout=1.0)
        os.close(self._master)
        os.close(self._slave)


class PtyReader:
    """A reader board on its own loop thread, reachable at ``path``."""

    def __init__(self, loop: RealTimeLoop, seed: int = 1, noise_p: float = 0.0, drop_p: float = 0.0,
                 faulty_antennas: tuple[int, ...] = ()) -> None:
        self.loop = loop
        self.line = PtyLine(loop, random.Random(seed))
        self.line.noise_p, self.line.drop_p = noise_p, drop_p
        self.pads: dict[int, list[bytes]] = {}
        self.board = ReaderBoard(loop, self.line, field=lambda antenna: self.pads.get(antenna, []))
        for antenna in faulty_antennas:
            self.board.set_antenna_fault(antenna, True)
        self.path = self.line.path

    def feed(self, antenna: int, uids: list[bytes], interval_s: float) -> None:
        """Pass tags over an antenna one by one, starting once the host streams from it
        (as a technician enrolling a set waits for the command to ask)."""
        if not self.board.stream_mask >> antenna & 1:
            self.loop.call_later(0.1, self.feed, antenna, uids, interval_s)
            return
        for i, uid in enumerate(uids):
            self.loop.call_later((i + 1) * interval_s, self.board.tile_passed, antenna, uid)

    def close(self) -> None:
        self.line.close()
