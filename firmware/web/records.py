"""The table database as the web page reads it: opened read-only, in one worker thread of its own.

The page reads the scoreboard and the fault history straight from the file
(``mode=ro``: this process cannot write it, and the web unit sees the folder
read-only too) through :class:`~firmware.store.table_store.TableStore`'s read
methods, so nothing about the controller's loop or its socket is involved
in loading a page.  SQLite calls block, so they run in one thread of their
own, one after another.  The file is opened on first use and again when it
is replaced (the controller moves a damaged database aside and starts a
fresh one); while it cannot be opened (no table yet, a missing file) every
read raises :class:`RecordsUnavailable` with the reason, which the page shows.
A hand's record is settled again (:mod:`firmware.web.settled`) in the same
thread: settling takes a moment of a core, so not on the event loop either.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, TypeVar

from firmware.store.score_rows import ScoreRows
from firmware.store.seal_rows import SealRows
from firmware.store.table_store import TableStore
from firmware.faults import TableError
from firmware.web.fairplay import seal_data, seal_view
from firmware.web.settled import settled_hand

log = logging.getLogger(__name__)

T = TypeVar("T")


class RecordsUnavailable(TableError):
    """The table database cannot be read now (the message says why)."""


def read_only_connect(path: str, **kwargs: Any) -> sqlite3.Connection:
    """An SQLite connection that cannot write: the ``mode=ro`` URI of ``path``."""
    uri = f"file:{urllib.parse.quote(str(Path(path).absolute()))}?mode=ro"
    return sqlite3.connect(uri, uri=True, **kwargs)


class TableRecords:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="table-db")
        self._store: TableStore | None = None
        self._inode: tuple[int, int] | None = None

    async def read(self, fn: Callable[[TableStore], T]) -> T:
        """``fn(store)`` in the database thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._call, fn)

    def _call(self, fn: Callable[[TableStore], T]) -> T:
        store = self._open()
        try:
            return fn(store)
        except TableError as exc:
            self._forget()
            raise RecordsUnavailable(f"the table database cannot be read: {exc}") from None

    def _open(self) -> TableStore:
        try:
            info = os.stat(self.path)
        except OSError as exc:
            self._forget()
            raise RecordsUnavailable(f"no table database at {self.path} ({exc.strerror or exc})") from None
        inode = (info.st_dev, info.st_ino)
        if self._store is not None and inode == self._inode:
            return self._store
        self._forget()
        try:
            self._store = TableStore(self.path, connect=read_only_connect)
        except TableError as exc:
            raise RecordsUnavailable(f"the table database cannot be read: {exc}") from None
        self._inode = inode
        log.info("table database %s opened read-only", self.path)
        return self._store

    def _forget(self) -> None:
        if self._store is not None:
            self._store.close()
        self._store, self._inode = None, None

    # -- what the pages read ------------------------------------------------------------------------
    async def faults(self, limit: int = 200) -> list[dict[str, Any]]:
        """The fault history, newest first."""
        return list(reversed(await self.read(lambda s: s.faults(limit=limit))))

    async def results(self, game: int | None, limit: int = 100) -> list[dict[str, Any]]:
        """A game's recorded hands (every game's when ``game`` is None), newest first."""
        return list(reversed(await self.read(lambda s: ScoreRows(s).hand_results(game, limit=limit))))

    async def hand(self, number: int) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """Hand ``number``'s deal row and its recorded result (None where there is none)."""
        def both(store: TableStore) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
            return store.hand(number), ScoreRows(store).hand_result(number)
        return await self.read(both)

    async def seal(self, number: int) -> dict[str, Any] | None:
        """Hand ``number``'s committed walls as the page shows them (:func:`~firmware.web.fairplay.seal_view`: the
        reveal checked in this thread); None when it was dealt without them."""
        return await self.read(lambda store: seal_view(SealRows(store).hand_seal(number)))

    async def seal_data(self, number: int) -> dict[str, Any] | None:
        """Hand ``number``'s seal, record and dealing rules for the browser's own check
        (:func:`~firmware.web.fairplay.seal_data`); None when it was dealt without committed walls."""
        return await self.read(lambda store: seal_data(SealRows(store).hand_seal(number)))

    async def settled(self, result: dict[str, Any]) -> dict[str, Any]:
        """A recorded hand settled again from its stored record (:func:`~firmware.web.settled.settled_hand`)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, settled_hand, result)

    def close(self) -> None:
        self._executor.submit(self._forget)
        self._executor.shutdown(wait=True)
