"""The table's hardware assembled from its config: every mechanism, input and output.

This is where pin specs become devices (through whichever backend the
composition root chose) and devices become mechanisms.  The inputs the
interlocks read (supply good, lid, panel keys) come first, then the safety
supervisor, then every mechanism with the supervisor as its permit to move.
Faults leave every part through the one :class:`~firmware.faults.FaultReporter`.
It knows nothing of the game; the controller and the service tests drive it.
"""

from __future__ import annotations

import logging
import random

from firmware.config import SIDES, TableConfig
from firmware.events import EventBus
from firmware.faults import FaultCode, FaultReporter
from firmware.loop import Loop
from firmware.mechanisms.cam import CamMechanism
from firmware.mechanisms.center_lift import CenterLift
from firmware.mechanisms.dice import Dice
from firmware.mechanisms.nominal import NominalTime
from firmware.mechanisms.panel import Panel
from firmware.mechanisms.stacking_head import StackingHead
from firmware.mechanisms.turntable import Turntable
from firmware.reader.driver import ReaderDriver
from firmware.safety import SafetySupervisor
from firmware.ports.hardware import DigitalInput, DigitalOutput, Hardware

log = logging.getLogger(__name__)


class Table:
    """Every mechanism of a four-sided table, built from ``cfg`` on ``hw``."""

    def __init__(self, cfg: TableConfig, hw: Hardware, loop: Loop, bus: EventBus, rng: random.Random) -> None:
        self.cfg = cfg
        self.loop = loop
        self.bus = bus
        self.faults = FaultReporter(bus)
        lim = cfg.limits

        p = cfg.panel
        keys = {f"key_lift{i}": hw.input(f"key_lift{i}", spec) for i, spec in enumerate(p.key_lift_pins)}
        keys.update({f"key_dice{i}": hw.input(f"key_dice{i}", spec) for i, spec in enumerate(p.key_dice_pins)})
        keys["key_reset"] = hw.input("key_reset", p.key_reset_pin)
        lamps = {f"led_dealer{i}": hw.output(f"led_dealer{i}", spec) for i, spec in enumerate(p.led_dealer_pins)}
        lamps["led_status"] = hw.output("led_status", p.led_status_pin)
        lamps["led_ready"] = hw.output("led_ready", p.led_ready_pin)
        self.panel = Panel(loop, keys, lamps, hw.output("buzzer", p.buzzer_pin), p.debounce_s, p.key_stuck_s)
        self.lid = hw.input("lid", p.lid_pin) if p.lid_pin else None
        self.supply_ok = hw.input("supply_ok", p.supply_ok_pin)
        self.safety = SafetySupervisor(loop, self.faults, self.panel, self.supply_ok, self.lid,
                                       stop_all=self.safe_stop_all, moving=self.moving)
        permit = self.safety.refusal

        def nominal(initial_s: float, max_run_s: float) -> NominalTime:
            return NominalTime(initial_s, max_run_s, lim.warn_factor, lim.fault_factor)

        c = cfg.center_lift
        self.center_lift = CenterLift(
            loop, self.faults, nominal(c.travel_s, c.max_run_s), permit,
            hw.output("center_lift.up_motor", c.up_motor_pin), hw.output("center_lift.down_motor", c.down_motor_pin),
            hw.input("center_up", c.up_sensor_pin), hw.input("center_down", c.down_sensor_pin))

        t = cfg.turntable
        self.turntable = Turntable(loop, self.faults, permit, hw.output("disk", t.disk_pin),
                                   hw.output("ring", t.ring_pin), hw.input("disk_index", t.index_pin),
                                   t.revolution_s, lim.stall_revolutions, t.max_run_s)

        st = cfg.stacker
        self.heads = []
        for s in range(SIDES):
            cam = CamMechanism(f"stacker{s}", loop, self.faults, nominal(st.cam_turn_s, st.max_run_s),
                               FaultCode.stacker(s), permit, hw.output(f"stacker{s}", st.motor_pins[s]),
                               hw.input(f"stacker_home{s}", st.home_pins[s]), st.home_window)
            self.heads.append(StackingHead(s, loop, cam, hw.output(f"gate{s}", st.gate_pins[s]),
                                           hw.input(f"tile_in{s}", st.tile_in_pins[s]),
                                           hw.input(f"feed_full{s}", st.feed_full_pins[s]), lim.feed_full_stuck_s))

        wl = cfg.wall_lift
        self.lifts = [
            CamMechanism(f"wall_lift{s}", loop, self.faults, nominal(wl.cam_turn_s, wl.max_run_s),
                         FaultCode.wall_lift(s), permit, hw.output(f"wall_lift{s}", wl.motor_pins[s]),
                         hw.input(f"lift_home{s}", wl.home_pins[s]), wl.home_window)
            for s in range(SIDES)
        ]

        d = cfg.dice
        self.dice = Dice(loop, self.faults, permit, rng, hw.output("dice", d.motor_pin),
                         hw.input("dice_sensor", d.sensor_pin) if d.sensor_pin else None,
                         d.spin_min_s, d.spin_max_s, d.electronic)

        r = cfg.reader
        self.reader = ReaderDriver(loop, lambda: hw.open_serial(r.url, r.baud), r, self.faults, r.poll_s,
                                   reconnect_max_s=r.reconnect_max_s)

    def inputs(self) -> dict[str, DigitalInput]:
        """Every digital input of the table by the name a technician reads on the wiring plan."""
        inputs = {"center_up": self.center_lift.up_sensor, "center_down": self.center_lift.down_sensor,
                  "supply_ok": self.supply_ok}
        inputs.update({f"stacker_home{h.side}": h.cam.home for h in self.heads})
        inputs.update({f"tile_in{h.side}": h.tile_in for h in self.heads})
        inputs.update({f"feed_full{h.side}": h.feed_full for h in self.heads})
        inputs.update({f"lift_home{i}": lift.home for i, lift in enumerate(self.lifts)})
        inputs.update(self.panel.keys)
        if self.lid is not None:
            inputs["lid"] = self.lid
        return inputs

    def mechanisms(self):
        return [self.center_lift, self.turntable, *(h.cam for h in self.heads), *self.lifts, self.dice]

    def motor_outputs(self) -> list[DigitalOutput]:
        outs: list[DigitalOutput] = []
        for mechanism in self.mechanisms():
            outs.extend(mechanism.outputs)
        return outs

    def all_outputs(self) -> list[DigitalOutput]:
        return [*self.motor_outputs(), *(h.gate for h in self.heads), *self.panel.outputs]

    def safe_stop_all(self) -> None:
        """Every motor stopped and every output at its safe value, whatever fails on the way."""
        for head in self.heads:
            try:
                head.stop()
            except Exception:  # noqa: BLE001
                log.exception("stopping head %d failed", head.side)
        for mechanism in self.mechanisms():
            try:
                mechanism.abort()
            except Exception:  # noqa: BLE001
                log.exception("stopping %s failed", mechanism.name)
        for output in self.all_outputs():
            try:
                output.set(output.safe_value)
            except Exception:  # noqa: BLE001
                log.exception("driving %s safe failed", output.name)

    def motors_safe(self) -> bool:
        return all(o.active == o.safe_value for o in self.motor_outputs())

    def moving(self) -> bool:
        """A motor is on, or a movement is under way (between its start and its sensor)."""
        return not self.motors_safe() or any(m.busy for m in self.mechanisms())
