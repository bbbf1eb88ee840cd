"""gpiozero-backed outputs and inputs, always on an explicit pin factory.

Every device is created with ``pin_factory=`` (never gpiozero's global
default), with ``bounce_time=None`` (debouncing is done on the loop clock by
the firmware), and its callbacks only ``post()`` to the loop: gpiozero calls
them on its own thread on a real Pi.

Pin specs are ``[!][bank:]GPIOn``: the bank picks the pin factory (the Pi
header or an I/O expander's gpiochip), ``!`` marks an active-low line.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Mapping

from gpiozero import DigitalInputDevice, DigitalOutputDevice, PWMOutputDevice

from firmware.config import pin_line
from firmware.listeners import Listeners, Listening
from firmware.loop import Loop

log = logging.getLogger(__name__)


class GpioOutput:
    """An on/off output; starts at its safe value."""

    def __init__(self, name: str, device: DigitalOutputDevice, safe_value: bool) -> None:
        self.name = name
        self.safe_value = safe_value
        self._device = device

    def set(self, active: bool) -> None:
        if active:
            self._device.on()
        else:
            self._device.off()

    @property
    def active(self) -> bool:
        return bool(self._device.value)

    def close(self) -> None:
        self._device.close()


class GpioPwmOutput:
    """A PWM output; starts at its safe duty."""

    def __init__(self, name: str, device: PWMOutputDevice, safe_value: float) -> None:
        self.name = name
        self.safe_value = safe_value
        self._device = device

    def set_duty(self, duty: float) -> None:
        self._device.value = min(1.0, max(0.0, duty))

    @property
    def duty(self) -> float:
        return float(self._device.value)

    def close(self) -> None:
        self._device.close()


class GpioInput:
    """A sensor or key; edges are posted to the loop as ``callback(active)``."""

    def __init__(self, name: str, device: DigitalInputDevice, loop: Loop) -> None:
        self.name = name
        self._device = device
        self._loop = loop
        self._listeners: Listeners[Callable[[bool], None]] = Listeners()
        device.when_activated = self._activated
        device.when_deactivated = self._deactivated

    @property
    def active(self) -> bool:
        return bool(self._device.value)

    def on_edge(self, callback: Callable[[bool], None]) -> Listening:
        return self._listeners.add(callback)

    @property
    def listeners(self) -> int:
        return len(self._listeners)

    def _activated(self) -> None:
        self._loop.post(self._dispatch, True)

    def _deactivated(self) -> None:
        self._loop.post(self._dispatch, False)

    def _dispatch(self, active: bool) -> None:
        self._listeners.notify(active)

    def close(self) -> None:
        self._device.close()


class PinBoard:
    """Creates gpiozero devices for pin specs, one pin factory per bank."""

    def __init__(self, factories: Mapping[str, Any], loop: Loop) -> None:
        self._factories = dict(factories)
        self._loop = loop
        self._devices: list[Any] = []

    def _factory(self, spec: str) -> tuple[Any, str, bool]:
        bank, line, active_low = pin_line(spec)
        try:
            factory = self._factories[bank]
        except KeyError:
            raise ValueError(f"pin {spec}: no pin factory for bank '{bank}'") from None
        return factory, f"GPIO{line}", active_low

    def output(self, name: str, spec: str, safe_value: bool = False) -> GpioOutput:
        factory, pin, active_low = self._factory(spec)
        device = DigitalOutputDevice(pin, active_high=not active_low, initial_value=safe_value,
                                     pin_factory=factory)
        self._devices.append(device)
        return GpioOutput(name, device, safe_value)

    def pwm_output(self, name: str, spec: str, safe_value: float = 0.0) -> GpioPwmOutput:
        factory, pin, active_low = self._factory(spec)
        device = PWMOutputDevice(pin, active_high=not active_low, initial_value=safe_value,
                                 pin_factory=factory)
        self._devices.append(device)
        return GpioPwmOutput(name, device, safe_value)

    def input(self, name: str, spec: str) -> GpioInput:
        factory, pin, active_low = self._factory(spec)
        device = DigitalInputDevice(pin, pull_up=active_low, bounce_time=None, pin_factory=factory)
        self._devices.append(device)
        return GpioInput(name, device, self._loop)

    def close(self) -> None:
        for device in reversed(self._devices):
            try:
                device.close()
            except Exception:  # noqa: BLE001 - closing must go on for the others
                log.exception("closing %r failed", device)
        self._devices.clear()
