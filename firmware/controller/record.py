"""The bookkeeping and the table database it is kept in: what a power cut must not lose, written when there is news.

The controller's parts change the bookkeeping (:class:`Bookkeeping`: where
each set is, the hand, the dealer, a stacking cycle's progress) and call
:meth:`TableRecord.persist`: the bookkeeping is written (with the state the
controller is in) only when it changed since it was last written, and a
stacked set's wall once, so an SD card is written only when there is news.
The record also knows when the table runs without its database (it could
not be opened at power-on: nothing would be kept, so no game is played).
"""

from __future__ import annotations

import json
from typing import Callable

from firmware.controller.bookkeeping import Bookkeeping
from firmware.store.table_store import TableStore


class TableRecord:
    def __init__(self, store: TableStore, problem: dict[str, str] | None = None) -> None:
        """``problem``: why the database at its path could not be used at power-on (it was moved aside, or none
        could be opened at all: E98)."""
        self.store = store
        self.problem = problem
        saved = store.book()
        sides = store.sides(saved.stacking.cycle) if saved is not None and saved.stacking else None
        self.book = Bookkeeping.from_record(saved, store.walls(), sides)
        self._written = json.dumps(self.book.to_dict(), sort_keys=True) if saved is not None else ""
        self.state_of: Callable[[], str] = lambda: "boot"     # the controller's state, written with the book

    @property
    def without_database(self) -> str | None:
        """Why the table runs without its database (None: it has one): no database could be opened at power-on,
        so nothing it did would be kept."""
        if self.store.path == ":memory:" and self.problem is not None:
            return self.problem["reason"]
        return None

    def persist(self, wall_of: str | None = None) -> None:
        """Write the bookkeeping if it changed since it was last written (with the controller's state), and the
        wall of a set just stacked (``wall_of``)."""
        book = self.book.to_dict()
        text = json.dumps(book, sort_keys=True)
        with self.store.batch("bookkeeping"):
            if text != self._written:
                self.store.put_book(self.state_of(), book)
            if wall_of is not None:
                self.store.put_wall(wall_of, self.book.walls[wall_of])
        if not self.store.failing:
            self._written = text

    # -- what the mechanisms learned --------------------------------------------------------------------
    def save_nominal(self, mechanisms) -> None:
        """Write the mechanisms' learned movement times now (every few hands, and after ``mjtable diag learn``)."""
        self.store.put(nominal={m.name: list(m.nominal.samples) for m in mechanisms})

    def restore_nominal(self, mechanisms) -> None:
        saved = self.store.nominal()
        for mechanism in mechanisms:
            if saved.get(mechanism.name):
                mechanism.nominal.restore(saved[mechanism.name])
