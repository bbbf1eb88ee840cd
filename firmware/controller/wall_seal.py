"""Sealing a set's verified walls before the dice: the commitment a player can check the hand against.

When a set's walls are verified the table draws a fresh nonce and a seed
for electronic dice from its injected source of randomness (the composition
root gives the operating system's CSPRNG on a table, the seeded generator of
the simulator: a simulated run is the same for its seed), writes the seal
with the wall (:mod:`firmware.tiles.fair_walls`: the preimage and its
SHA-256, and the fleet's ``evt/walls`` in the same transaction) and
publishes ``walls.sealed`` with the commitment, before anybody
can throw the dice for them.  Electronic dice for those walls come from the
sealed seed; the hand's deal appends the seal it was dealt from
(:func:`firmware.controller.deal.deal_hand`).
"""

from __future__ import annotations

import logging
import random

from firmware.controller.bookkeeping import Bookkeeping
from firmware.controller.states import SetLocation
from firmware.events import EventBus
from firmware.store.seal_rows import SealRows
from firmware.store.table_store import StorageError, TableStore
from firmware.tiles.fair_walls import NONCE_BYTES, SEED_BYTES, SealError, parse_preimage, seal

log = logging.getLogger(__name__)


class WallSealer:
    def __init__(self, store: TableStore, book: Bookkeeping, rng: random.Random, electronic: bool,
                 bus: EventBus) -> None:
        self.rows = SealRows(store)
        self.book, self.rng, self.electronic, self.bus = book, rng, electronic, bus
        self._known: dict[str, str | None] = {}      # set id -> its commitment, as last read or written

    def _bytes(self, n: int) -> bytes:
        return self.rng.getrandbits(8 * n).to_bytes(n, "big")    # (SystemRandom: os.urandom)

    def seal(self, set_id: str) -> str:
        """Seal the set's walls as the bookkeeping keeps them (in the caller's batch: the wall's); the commitment."""
        sealed = seal(set_id, self.book.walls[set_id], "electronic" if self.electronic else "physical",
                      self._bytes(SEED_BYTES), self._bytes(NONCE_BYTES))
        commitment = sealed.commitment()
        self.rows.put_wall_seal(set_id, commitment, sealed.preimage())
        self.rows.store.add_event("walls", {"event": "sealed", "set_id": set_id, "commitment": commitment})
        self._known.pop(set_id, None)             # (read again once the transaction is in)
        return commitment

    def announce(self, set_id: str, commitment: str) -> None:
        """The commitment is out (after its transaction): the page, the fleet, the players."""
        log.info("walls of set %s sealed: %s", set_id, commitment)
        self.bus.publish("walls.sealed", set_id=set_id, commitment=commitment)

    def on_table(self) -> tuple[str, str, str] | None:
        """(set id, commitment, preimage) of the walls up for the dice; None when they have no seal (stacked by an
        older release, or no wall is up)."""
        on_table = self.book.sets_at(SetLocation.TABLE)
        if not on_table:
            return None
        try:
            found = self.rows.wall_seal(on_table[0])
        except StorageError as exc:
            log.error("the seal of set %s could not be read: %s", on_table[0], exc)
            return None
        return (on_table[0], *found) if found is not None else None

    def commitment_up(self) -> str | None:
        """The commitment of the walls up on the table (for the status: the players keep it before the dice); None
        when none are up or they have no seal.  Read once per set, not at every status."""
        on_table = self.book.sets_at(SetLocation.TABLE)
        if not on_table:
            return None
        set_id = on_table[0]
        if set_id not in self._known:
            try:
                found = self.rows.wall_seal(set_id)
            except StorageError as exc:
                log.error("the seal of set %s could not be read: %s", set_id, exc)
                return None
            self._known[set_id] = found[0] if found is not None else None
        return self._known[set_id]

    def dice_seed(self) -> bytes | None:
        """The sealed seed electronic dice are thrown from for the walls on the table (None: no seal)."""
        found = self.on_table()
        if found is None:
            return None
        try:
            return parse_preimage(found[2]).seed
        except SealError as exc:
            log.error("the seal of set %s cannot be read: %s", found[0], exc)
            return None
