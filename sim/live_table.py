"""The simulated table behind the production service at real time (``mjtable run --sim``).

``mjtable run`` builds the controller as on a table: the real-time loop of
:mod:`hal.runtime`, gpiozero's device classes on pins, the reader through
pyserial.  With ``--sim`` the pins are the simulated table's gpiozero mock
pins and the port is ``rfidsim://``, the simulated reader board's cable; the
table's models (motors, cams, sensors, tiles) and the people at it (who pour
the tiles, press the keys, play a hand for ``hand_s`` and push the tiles in)
run on the same real-time loop.  A firmware engineer sees the service
stack, read, raise and deal exactly as it will on the table.
"""

from __future__ import annotations

import logging
from typing import Callable

from firmware.config import TableConfig
from firmware.controller.controller import Controller
from firmware.events import EventBus
from firmware.loop import Loop
from firmware.reader.registry import TileRegistry
from sim.backend import SimBackend
from sim.table_people import TablePeople
from sim.world import TableWorld

log = logging.getLogger(__name__)

EVERY_HAND = 1_000_000       # the people go on until the service stops


class LiveSimTable:
    """The simulated table and its people on ``loop``; hand :attr:`backend` and :attr:`registry` to the wiring."""

    def __init__(self, cfg: TableConfig, loop: Loop, seed: int = 1, hand_s: float = 30.0) -> None:
        self.loop = loop
        self.world = TableWorld(cfg, loop, seed)
        sets = ("A", "B") if cfg.table.double_set else ("A",)
        self.people = TablePeople(self.world, EVERY_HAND, sets, hand_s=hand_s, auto_ack_s=60.0)
        self.backend = SimBackend(cfg, loop, self.world)

    @property
    def registry(self) -> TileRegistry:
        """The tiles on the simulated table are its enrolled sets."""
        return self.world.registry

    def listen(self, bus: EventBus) -> None:
        """The people watch the table (lamps, states, the deal) as players watch a real one."""
        bus.subscribe("", self.people.on_event)
        bus.subscribe("controller.stacking", lambda e: self.world.event("stacking"))
        bus.subscribe("deal", lambda e: self.world.event("hand"))

    def seat(self, controller: Controller, post: Callable) -> None:
        """The dice the players key in reach the controller as an input on its loop."""
        self.people.enter_dice = lambda *args: post(Controller.enter_dice, controller, *args)

    def describe(self) -> str:
        people = self.people
        return f"simulated table: {people.hands_started} hands started, {people.hands_ended} ended"
