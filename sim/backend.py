"""The simulated backend: the firmware's devices on the simulated table's pins."""

from __future__ import annotations

from firmware.config import TableConfig
from firmware.loop import Loop
from hal.gpio import PinBoard
from hal.serial_port import UrlSerialPort, open_serial
from sim.world import TableWorld


class SimBackend:
    """Same interface as ``hal.backend.HardwareBackend``; pins belong to ``world``."""

    def __init__(self, cfg: TableConfig, loop: Loop, world: TableWorld | None = None, seed: int = 1) -> None:
        self.world = world or TableWorld(cfg, loop, seed)
        self._board = PinBoard(self.world.io.factories, loop)

    def output(self, name: str, spec: str, safe_value: bool = False):
        return self._board.output(name, spec, safe_value)

    def pwm_output(self, name: str, spec: str, safe_value: float = 0.0):
        return self._board.pwm_output(name, spec, safe_value)

    def input(self, name: str, spec: str):
        return self._board.input(name, spec)

    def open_serial(self, url: str, baud: int) -> UrlSerialPort:
        """The configured device path means nothing here: the port is the simulated reader's line."""
        return open_serial(f"rfidsim://{self.world.reader_line.name}", baud)

    def power_off(self) -> None:
        """The controller loses power: its devices go away, the table (and its pins) stay."""
        self._board.close()

    def close(self) -> None:
        self._board.close()
        self.world.io.reset()
