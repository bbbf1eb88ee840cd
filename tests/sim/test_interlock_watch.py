"""The interlock watch counts a motor's time while an interlock is active, and only then."""

from firmware.config import default_table_path, load_table_config
from hal.gpio import PinBoard
from sim.interlock_watch import InterlockWatch
from sim.virtual_loop import VirtualLoop
from sim.world import TableWorld


def test_motor_time_is_counted_under_an_active_interlock_only():
    cfg = load_table_config(default_table_path())
    loop = VirtualLoop()
    world = TableWorld(cfg, loop, 1)
    watch = InterlockWatch(world)
    disk = PinBoard(world.io.factories, loop).output("disk", cfg.turntable.disk_pin)   # as the HAL drives it
    loop.call_at(1.0, disk.set, True)               # no interlock: not counted
    loop.call_at(2.0, world.supply_ok.set, False)   # the supply drops while the disk runs
    loop.call_at(3.5, disk.set, False)
    loop.call_at(4.0, disk.set, True)
    loop.call_at(4.25, world.supply_ok.set, True)
    loop.call_at(6.0, disk.set, False)
    loop.run_for(10.0)
    assert watch.finish() == {"lid": 0.0, "supply": 1.75, "reset_key": 0.0, "stuck_key": 0.0}
    assert watch.worst["supply"] == (1.5, ["disk"])
