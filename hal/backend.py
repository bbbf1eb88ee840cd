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
from firmware.faults import TableError
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
    """gpiozero's pin factory ``kind`` on gpiochip ``chip``; a TableError in one line when it cannot be had."""
    module_name, class_name = _FACTORIES[kind]
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except ImportError as exc:
        raise TableError(f"pin factory {kind!r} needs {exc.name or 'its library'}, which is not installed: "
                         f"pip install 'mjtable[pi]' on the table (or mjtable run --sim for a dry run)") from None
    try:
        return cls(chip=chip) if kind == "lgpio" else cls()
    except Exception as exc:  # noqa: BLE001 (gpiozero raises its own and the libraries' errors)
        raise TableError(f"pin factory {kind!r} cannot open gpiochip {chip}: {exc} "
                         f"(not a Raspberry Pi? mjtable run --sim for a dry run)") from None


class HardwareBackend:
    """Devices on real pins (or gpiozero's plain mock pins for a dry run)."""

    def __init__(self, cfg: TableConfig, loop: Loop) -> None:
        self.factories: dict[str, Any] = {}
        self._board: PinBoard | None = None
        try:
            for bank, chip in cfg.backend.banks.items():
                self.factories[bank] = _make_factory(cfg.backend.pin_factory, chip)
        except TableError:
            self.close()
            raise
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
        if self._board is not None:
            self._board.close()
        for factory in self.factories.values():
            try:
                factory.close()
            except Exception:  # noqa: BLE001
                log.debug("closing pin factory failed", exc_info=True)
