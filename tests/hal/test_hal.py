"""The real HAL backends where they can run here: pyserial by URL, gpiozero on mock pins."""

import pytest
from gpiozero.pins.mock import MockFactory

from hal.gpio import PinBoard
from firmware.ports.hardware import PortError
from hal.serial_port import open_serial
from sim.virtual_loop import VirtualLoop


def test_serial_port_by_url_reads_without_blocking():
    port = open_serial("loop://", 115200)
    assert port.read(10) == b""            # nothing there: returns at once
    port.write(b"\xa5\x02\x07\x01\x2b\x4a")
    assert port.in_waiting == 6
    assert port.read(100) == b"\xa5\x02\x07\x01\x2b\x4a"
    port.close()


def test_unopenable_port_is_a_port_error():
    with pytest.raises(PortError, match="cannot open"):
        open_serial("/dev/does-not-exist-mjtable", 115200)


def test_gpio_devices_use_the_explicit_factory_and_post_edges_to_the_loop():
    loop = VirtualLoop()
    factory = MockFactory()
    board = PinBoard({"main": factory}, loop)
    lamp = board.output("lamp", "GPIO17", safe_value=False)
    key = board.input("key", "!GPIO5")
    seen = []
    key.on_edge(seen.append)
    lamp.set(True)
    assert factory.pin("GPIO17").state and lamp.active
    factory.pin("GPIO5").drive_low()        # active-low key pressed
    assert seen == []                       # not on the GPIO thread ...
    loop.run_all()
    assert seen == [True] and key.active    # ... but on the loop
    board.close()


def test_the_service_keeps_its_start_up_objects_out_of_the_collector():
    """After wiring, ``mjtable run`` and ``mjtable sim`` freeze what exists: full collections then scan
    only what the table makes while it runs."""
    import gc

    from hal.runtime import keep_startup_objects

    assert gc.get_freeze_count() == 0
    try:
        keep_startup_objects()
        assert gc.get_freeze_count() > 1000
    finally:
        gc.unfreeze()
