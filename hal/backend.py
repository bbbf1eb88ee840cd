"""The hardware backend: gpiozero pin factories per bank and pyserial ports.

Built once, by the composition root, from the table config's ``[backend]``
section.  Factories are imported lazily so a laptop without lgpio can still
import this module.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

from firmware.config import TableConfig
from firmware.loop import Loop
from hal.gpio import PinBoard
from hal.serial_port import UrlSerialPort, open_serial

log = logging.getLogger(__name__)

_FACTORIES = {
    "lgpio": ("gpiozero.pins.lgpio", "LGPIOFactory"),
    "rpigpio": ("gpiozero.pins.rpigpio", "RPiGPIOFactory"),
    "mock": ("gpiozero.pins.mock", "MockFactory"),
}


def _make_factory(kind: str, chip: int) -> Any:
    module_name, class_name = _FACTORIES[kind]
    cls = getattr(importlib.import_module(module_name), class_name)
    if kind == "lgpio":
        return cls(chip=chip)
    return cls()


class HardwareBackend:
    """Devices on real pins (or gpiozero's plain mock pins for a dry run)."""

    def __init__(self, cfg: TableConfig, loop: Loop) -> None:
        self.factories = {bank: _make_factory(cfg.backend.pin_factory, chip)
                          for bank, chip in cfg.backend.banks.items()}
        self._board = PinBoard(self.factories, loop)

    def output(self, name: str, spec: str, safe_value: bool = False):
        return self._board.output(name, spec, safe_value)

    def pwm_output(self, name: str, spec: str, safe_value: float = 0.0):
        return self._board.pwm_output(name, spec, safe_value)

    def input(self, name: str, spec: str):
        return self._board.input(name, spec)

    def open_serial(self, url: str, baud: int) -> UrlSerialPort:
        return open_serial(url, baud)

    def close(self) -> None:
        self._board.close()
        for factory in self.factories.values():
            try:
                factory.close()
            except Exception:  # noqa: BLE001
                log.debug("closing pin factory failed", exc_info=True)
