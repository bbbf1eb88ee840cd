"""One roll of the dice for a deal: electronic from the sealed seed, or the dome spun and read by the players.

Electronic dice throw every throw at once from the seed sealed with the
walls on the table (:mod:`firmware.tiles.fair_walls`: drawn from the
injected generator, the operating system's CSPRNG on a table, and committed
before the dice, so anybody can check the faces afterwards; walls without a
seal, stacked by an older release, throw from the generator itself) and
publish them, because "program dice" are a known cheat.  Physical dice spin the dome once per throw; only
people can read them, so after each spin the table publishes
``dice.waiting`` and waits for ``enter`` with the two faces (two throws for
MCR: the first total picks who throws the second).  A dome that fails to
spin (E70) falls back to electronic dice for that roll, so a hand is never
held up by the dice.
"""

from __future__ import annotations

import logging
import random
from typing import Callable

from firmware.events import EventBus
from firmware.tiles.fair_walls import dice_faces

log = logging.getLogger(__name__)


class DiceRoll:
    def __init__(self, dome, rng: random.Random, bus: EventBus, electronic: bool, throws: int,
                 on_faces: Callable[[tuple[int, ...]], None],
                 seed: Callable[[], bytes | None] = lambda: None) -> None:
        """``seed()``: the sealed seed of the walls on the table (None: throw from ``rng``)."""
        self.dome, self.rng, self.bus = dome, rng, bus
        self.electronic, self.throws = electronic, throws
        self.on_faces = on_faces
        self.seed = seed
        self.thrown_by = "physical"      # how the last roll's faces came: "physical" or "electronic"
        self.busy = False
        self._faces: list[int] = []

    def reset(self) -> None:
        """Forget a roll in progress (the table left the dice state)."""
        self.busy = False
        self._faces = []

    def start(self) -> None:
        """The dealer's dice key: roll (a second press during a roll does nothing)."""
        if self.busy:
            return
        self.busy = True
        self._faces = []
        if self.electronic:
            self._electronic()
        else:
            self.dome.throw(self._spun)

    def enter(self, faces: tuple[int, int]) -> bool:
        """What the physical dice show, as the players (or a dice camera) report it; False if no
        physical roll is waiting for faces."""
        if not self.busy or self.electronic:
            return False
        self._faces += list(faces)
        if len(self._faces) < 2 * self.throws:
            self.dome.throw(self._spun)          # the next thrower's spin
        else:
            self.thrown_by = "physical"
            self._done(tuple(self._faces))
        return True

    def _electronic(self) -> None:
        seed = self.seed()
        if seed is not None:
            faces = list(dice_faces(seed, self.throws))
        else:
            faces = []
            for _ in range(self.throws):
                faces += [self.rng.randint(1, 6), self.rng.randint(1, 6)]
        self.bus.publish("dice.rolled", faces=tuple(faces), electronic=True)
        self.thrown_by = "electronic"
        self._done(tuple(faces))

    def _spun(self, result, faces) -> None:
        if not result.ok:
            log.warning("dice dome failed (%s): electronic dice for this roll", result.fault)
            self._electronic()
            return
        self.bus.publish("dice.waiting", throw=len(self._faces) // 2 + 1)

    def _done(self, faces: tuple[int, ...]) -> None:
        self.busy = False
        self.on_faces(faces)
