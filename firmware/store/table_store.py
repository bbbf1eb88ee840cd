"""The table database: what must survive a power cut, in SQLite (WAL, ``synchronous=FULL``, versioned).

Kept here: the controller's state and its bookkeeping (which set is where,
stacking progress per side, the hand in play), learned nominal times, the
fault history, every hand, the scoreboard as rows (games, each hand's
result, each payment, the chips kept incrementally) and, on a table with a
``[fleet]`` section, the events for the parlour's broker (the outbox).  Writes are
transactions; with ``synchronous=FULL`` a commit is on the card before the
call returns, so a power cut at any instant leaves the last committed state
(``synchronous=NORMAL`` under WAL may lose the last commits).  Related
writes go in one :meth:`TableStore.batch`, so a hand and its payments, or a
deal and the bookkeeping that says it was dealt, are kept together or not at
all.

A write that fails (SQLite error, file system error) is rolled back and
reported to ``on_failure`` (the controller latches E98) instead of raising
into the caller.  Opening checks the file (SQLite header, ``quick_check``,
schema version, every document against its typed model, the chips against
the payments) and raises :class:`StoreUnreadable` when it cannot be used;
:func:`open_table_store` then moves it aside and starts a fresh one.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
from pathlib import Path
from typing import Any, Callable, Iterator

from firmware.store import records as rec
from firmware.store.records import RecordError
from firmware.store.score_rows import ScoreRows
from firmware.store.schema import (BOOK_COLUMNS, CURRENT, MIGRATIONS, NO_UID, PAGE_SIZE, TABLES, create,
                                              read_wall, tables, write_book, write_wall)
from firmware.faults import FaultCode, FaultTier, TableError
from firmware.store import outbox

log = logging.getLogger(__name__)

SQLITE_HEADER = b"SQLite format 3\x00"
SYNCHRONOUS = "FULL"           # the table always runs FULL; ``make bench`` compares it with NORMAL and OFF
WAL_AUTOCHECKPOINT = 1000      # pages; ``make bench`` turns it off to count every byte the WAL receives
CHECK_LAST_ROWS = 500          # rows of each history table validated at open (the newest)
FailureHandler = Callable[[BaseException, str], None]


class StorageError(TableError):
    """A read or write of the table database failed."""


class StoreUnreadable(TableError):
    """The file cannot be used as this release's table database (the message says why)."""


class TableStore:
    """One SQLite file per table; ``path=":memory:"`` for a throwaway store."""

    def __init__(self, path: str | Path, on_failure: FailureHandler | None = None,
                 connect: Callable[..., sqlite3.Connection] = sqlite3.connect) -> None:
        self.path = str(path)
        self.on_failure = on_failure
        self.on_recovered: Callable[[], None] | None = None
        self.before_commit: list[Callable[[sqlite3.Connection], None]] = []   # more rows in every transaction
        self.failing = False
        self.keep_events = False       # a table with a [fleet] section keeps its events in the outbox
        # the hand last found with no result row (ScoreRows.has_result, asked at every action): this process
        # is the table's one writer and results are written only through ScoreRows.record_result, which
        # forgets it before writing (a rolled-back result is then read again)
        self.unscored_hand: int | None = None
        self._depth = 0
        if self.path != ":memory:":
            _check_header(Path(self.path))
        try:
            self._db = connect(self.path, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreUnreadable(f"{self.path}: cannot open ({exc})") from None
        try:
            self._open()
        except sqlite3.OperationalError as exc:
            # I/O, a read-only file system, a lock: the card or the place fails, not the file; nothing is moved
            self._db.close()
            raise StorageError(f"{self.path}: {exc}") from None
        except (sqlite3.DatabaseError, RecordError, StoreUnreadable, StorageError, UnicodeDecodeError) as exc:
            self._db.close()
            raise StoreUnreadable(f"{self.path}: {exc}") from None

    def _open(self) -> None:
        db = self._db
        if not tables(db):
            db.execute(f"PRAGMA page_size={PAGE_SIZE}")      # (only a new file takes it before WAL)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={SYNCHRONOUS}")
        db.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT}")
        db.execute("PRAGMA secure_delete=FAST")   # (Debian's default zeroes every freed page: a page written more)
        check = db.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise StoreUnreadable(f"damaged ({check})")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > CURRENT:
            raise StoreUnreadable(f"written by a newer release (schema {version}, this release reads up to "
                                  f"{CURRENT})")
        if version == 0 and not tables(db):
            self._migrate(None)
            version = CURRENT
        while version < CURRENT:
            self._migrate(version)
            version += 1
        missing = [t for t in TABLES if t not in tables(db)]
        if missing:
            raise StoreUnreadable(f"the table '{missing[0]}' is missing")
        self._validate()
        if db.execute("PRAGMA page_size").fetchone()[0] != PAGE_SIZE:
            self._repage()

    def _repage(self) -> None:
        """An older file in larger pages is rewritten once in small ones (VACUUM, under a rollback journal so
        that a power cut during it leaves the old file)."""
        db = self._db
        log.warning("%s: rewriting the table database in %d-byte pages", self.path, PAGE_SIZE)
        db.execute("PRAGMA journal_mode=DELETE")
        db.execute(f"PRAGMA page_size={PAGE_SIZE}")
        db.execute("VACUUM")
        db.execute("PRAGMA journal_mode=WAL")

    def _migrate(self, version: int | None) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            if version is None:
                create(db)
            else:
                MIGRATIONS[version](db)
                log.warning("%s: upgraded the table database from schema %d to %d", self.path, version, version + 1)
            db.execute(f"PRAGMA user_version = {CURRENT if version is None else version + 1}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _validate(self) -> None:
        """Every document and the newest rows against their models; the chips against the payments."""
        book = self.book()
        last_hand = self._read("SELECT max(hand) FROM hands")[0][0] or 0
        if (book.hand if book else 0) != last_hand:
            # the deal writes its hand's row and the bookkeeping in one transaction: they always agree
            raise RecordError(f"the bookkeeping says {book.hand if book else 'no'} hands were dealt, the hands "
                              f"table ends at hand {last_hand}")
        last_result = self._read("SELECT max(hand) FROM hand_results")[0][0] or 0
        if last_result > last_hand:
            raise RecordError(f"a result for hand {last_result}, never dealt")
        self.state()
        self.nominal()
        self.walls()
        codes, tiers = {c.value for c in FaultCode}, {t.value for t in FaultTier}
        for row in self.faults(limit=CHECK_LAST_ROWS):
            if row["code"] not in codes or row["tier"] not in tiers:
                raise RecordError(f"faults: unknown code or tier {row['code']!r}/{row['tier']!r}")
        self.hands(limit=CHECK_LAST_ROWS)
        ScoreRows(self).check(CHECK_LAST_ROWS)
        if book is not None and book.stacking is not None:
            self.sides(book.stacking.cycle)

    def close(self) -> None:
        self._db.close()

    # -- writing ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def batch(self, what: str = "write") -> Iterator[None]:
        """One transaction for every write inside (nested batches join the outer one).  A storage failure
        rolls it back and goes to ``on_failure`` (the writes inside after the failing one do not run)."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._depth = 1
        failure: BaseException | None = None
        try:
            self._db.execute("BEGIN IMMEDIATE")
            yield
            for hook in self.before_commit:
                hook(self._db)
            self._db.execute("COMMIT")
        except (sqlite3.Error, OSError) as exc:
            self._rollback()
            failure = exc
        except BaseException:
            self._rollback()
            raise
        finally:
            self._depth = 0
        # (outside the transaction: whoever hears of the failure may write again, e.g. the fault it raises)
        if failure is not None:
            self._failed(failure, what)
        elif self.failing:
            self.failing = False
            log.warning("%s: writes succeed again", self.path)
            if self.on_recovered is not None:
                self.on_recovered()

    def _rollback(self) -> None:
        try:
            self._db.execute("ROLLBACK")
        except sqlite3.Error:
            pass                    # nothing to roll back (BEGIN failed), or the file is gone

    def _failed(self, exc: BaseException, what: str) -> None:
        self.failing = True
        log.error("%s: writing %s failed: %s", self.path, what, exc)
        if self.on_failure is None:
            raise StorageError(f"{self.path}: writing {what} failed: {exc}") from exc
        self.on_failure(exc, what)

    def _read(self, sql: str, args: tuple = ()) -> list[tuple]:
        try:
            return self._db.execute(sql, args).fetchall()
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            raise StorageError(f"{self.path}: reading failed: {exc}") from exc

    def read(self, sql: str, args: tuple = ()) -> list[tuple]:
        """Rows of a query (StorageError when the read fails)."""
        return self._read(sql, args)

    def write(self, sql: str, args: tuple = ()) -> sqlite3.Cursor:
        """One statement inside an open :meth:`batch` (its failure rolls the whole batch back)."""
        if not self._depth:
            raise RuntimeError("TableStore.write outside a batch")
        return self._db.execute(sql, args)

    def add_event(self, kind: str, payload: dict) -> int | None:
        """An event for the fleet (``evt/<kind>``), inside the open :meth:`batch` that writes what it reports: kept
        with it or not at all.  Its ``seq``; None on a table that keeps no events."""
        if not self.keep_events:
            return None
        if not self._depth:
            raise RuntimeError("TableStore.add_event outside the batch of what it reports")
        return outbox.add(self._db, kind, payload)

    def event_outbox(self) -> outbox.SqliteOutbox:
        """The outbox as the fleet link reads and marks it (its writes are batches: a failure is E98)."""
        return outbox.SqliteOutbox(self._db, transaction=lambda: self.batch("fleet outbox"))

    # -- documents (bookkeeping, state, nominal times, walls) ----------------------------------------
    def put(self, **values: Any) -> None:
        """Write several documents in one transaction."""
        with self.batch(", ".join(values)):
            for key, value in values.items():
                self._db.execute("INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE "
                                 "SET value = excluded.value",
                                 (key, json.dumps(value, sort_keys=True, separators=(",", ":"))))

    def _doc(self, key: str) -> str | None:
        rows = self._read("SELECT value FROM kv WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def book(self) -> rec.BookRecord | None:
        """The bookkeeping row as its typed model (None: a new table)."""
        rows = self._read(f"SELECT {', '.join(BOOK_COLUMNS)} FROM book WHERE id = 1")
        if not rows:
            return None
        row = dict(zip(BOOK_COLUMNS, rows[0]))
        try:
            data = {name: row[name] for name in ("hand", "dealer", "dealer_streak", "long_hair", "last_winner",
                                                 "last_discarder", "players_waited_s", "cycles")}
            for name in ("hand_open", "hand_over", "raising", "unknown_on_disk", "last_followed"):
                data[name] = bool(row[name]) if row[name] in (0, 1) else row[name]     # (else: refused below)
            data["sets"] = json.loads(row["sets"])
            data["rejected"] = json.loads(row["rejected"])
        except (TypeError, ValueError) as exc:
            raise RecordError(f"book: {exc}") from None
        data["stacking"] = None if row["stacking_set"] is None and row["stacking_cycle"] is None else {
            "set_id": row["stacking_set"], "cycle": row["stacking_cycle"]}
        rec.from_json(rec.STATE, json.dumps(row["state"]), "book state")
        return rec.validate(rec.BOOK, data, "book")

    def put_book(self, state: str, book: dict) -> None:
        """The bookkeeping (as :meth:`Bookkeeping.to_dict` gives it) and the state it was written in: one row."""
        stacking = book.get("stacking")
        with self.batch("bookkeeping"):
            write_book(self._db, state, book, stacking["set_id"] if stacking else None,
                       stacking["cycle"] if stacking else None)

    def state(self) -> str | None:
        rows = self._read("SELECT state FROM book WHERE id = 1")
        return str(rows[0][0]) if rows else None

    def nominal(self) -> dict[str, list[float]]:
        text = self._doc("nominal")
        return {} if text is None else rec.from_json(rec.NOMINAL, text, "nominal")

    def fairness(self) -> dict[str, Any]:
        """The shuffle monitor's charts as last saved (:meth:`firmware.fairness.monitor.ShuffleMonitor.to_dict`);
        {} when none were, or the document is not a JSON object."""
        text = self._doc("fairness")
        try:
            data = json.loads(text) if text is not None else {}
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}

    def walls(self) -> dict[str, list]:
        """Each stacked set's wall: sides, stacks from stack 1, [bottom, top] tiles (None: not read)."""
        rows = self._read("SELECT set_id, stacks, tiles_per_side, faces FROM walls")
        out = {}
        for set_id, stacks, tiles_per_side, faces in rows:
            if not isinstance(faces, bytes) or not isinstance(stacks, int) or not isinstance(tiles_per_side, int):
                raise RecordError(f"wall of set {set_id}: a row of the wrong type")
            out[str(set_id)] = read_wall(stacks, tiles_per_side, faces)
        return out

    def put_wall(self, set_id: str, sides: list) -> None:
        with self.batch(f"wall of set {set_id}"):
            write_wall(self._db, set_id, sides)

    # -- faults ---------------------------------------------------------------------------------------
    def add_fault(self, code: str, tier: str, at_s: float, state: str, source: str, detail: dict) -> int:
        """A fault's row (in the caller's batch, or its own); its id (0 when the write failed)."""
        with self.batch(f"fault {code}"):
            row = self._db.execute("INSERT INTO faults (code, tier, at_s, state, source, detail) "
                                   "VALUES (?, ?, ?, ?, ?, ?)", (code, tier, at_s, state, source,
                                                                 json.dumps(detail, default=str, sort_keys=True)))
        return int(row.lastrowid or 0) if not self.failing else 0

    def acknowledge_faults(self, at_s: float, code: str | None = None) -> int:
        """Acknowledge the latched faults (``code``: the recoverable faults of that code), cleared then too; how
        many rows."""
        with self.batch("acknowledge"):
            cur = self._db.execute("UPDATE faults SET acknowledged_at_s = ?, cleared_at_s = coalesce(cleared_at_s, ?) "
                                   "WHERE acknowledged_at_s IS NULL AND "
                                   + ("tier = 'latched'" if code is None else "tier = 'recoverable' AND code = ?"),
                                   (at_s, at_s) if code is None else (at_s, at_s, code))
        return cur.rowcount if not self.failing else 0

    def clear_faults(self, at_s: float, tier: str) -> int:
        """The faults of ``tier`` not yet cleared are cleared at ``at_s`` (a hold released); how many rows."""
        with self.batch(f"{tier} faults cleared"):
            cur = self._db.execute("UPDATE faults SET cleared_at_s = ? WHERE cleared_at_s IS NULL AND tier = ?",
                                   (at_s, tier))
        return cur.rowcount if not self.failing else 0

    def faults(self, limit: int | None = None, after_id: int = 0) -> list[dict]:
        """The fault history, oldest first (``limit``: only the newest that many; ``after_id``: only those
        written after the row of that id, e.g. since a run began)."""
        rows = self._read("SELECT * FROM (SELECT id, code, tier, at_s, state, source, detail, acknowledged_at_s, "
                          "cleared_at_s FROM faults WHERE id > ? ORDER BY id DESC LIMIT ?) ORDER BY id",
                          (after_id, -1 if limit is None else limit))
        return [{"id": i, "code": c, "tier": t, "at_s": a, "state": s, "source": src,
                 "detail": rec.from_json(rec.DETAIL, d, f"fault {i} detail"), "acknowledged_at_s": ack,
                 "cleared_at_s": cleared}
                for i, c, t, a, s, src, d, ack, cleared in rows]

    def last_fault_id(self) -> int:
        rows = self._read("SELECT max(id) FROM faults")
        return int(rows[0][0] or 0) if rows else 0

    def open_latched(self) -> list[dict]:
        """Latched faults nobody has acknowledged (a power cycle is not an acknowledge)."""
        return [f for f in self.faults(limit=CHECK_LAST_ROWS)
                if f["tier"] == "latched" and f["acknowledged_at_s"] is None]

    # -- hands ------------------------------------------------------------------------------------------
    def start_hand(self, hand: int, set_id: str, dealer: int, dice: list, started_s: float) -> None:
        """A hand is dealt (once per hand number: a repeated start after a power cut is ignored)."""
        with self.batch(f"hand {hand}"):
            self._db.execute("INSERT OR IGNORE INTO hands (hand, set_id, dealer, dice, started_s) "
                             "VALUES (?, ?, ?, ?, ?)", (hand, set_id, dealer, json.dumps(dice), started_s))

    def end_hand(self, hand: int, ended_s: float, result: dict) -> None:
        with self.batch(f"end of hand {hand}"):
            self._db.execute("UPDATE hands SET ended_s = ?, result = ? WHERE hand = ? AND ended_s IS NULL",
                             (ended_s, json.dumps(result, sort_keys=True), hand))

    def hands(self, since: int = 0, limit: int | None = None) -> list[dict]:
        rows = self._read("SELECT * FROM (SELECT hand, set_id, dealer, dice, started_s, ended_s, result FROM hands "
                          "WHERE hand > ? ORDER BY hand DESC LIMIT ?) ORDER BY hand",
                          (since, -1 if limit is None else limit))
        return [_hand_row(*row) for row in rows]

    def hand(self, number: int) -> dict | None:
        """Hand ``number``'s deal row (as :meth:`hands` gives it), None when there is none."""
        rows = self._read("SELECT hand, set_id, dealer, dice, started_s, ended_s, result FROM hands WHERE hand = ?",
                          (number,))
        return _hand_row(*rows[0]) if rows else None

    # -- a stacking cycle's progress: a tiny row per side (UIDs only from a first-release file) ------------------
    def save_side(self, cycle: int, side: int, stacked: int, counted: int, uids: list[bytes | None]) -> None:
        """A stack was begun on ``side``: ``stacked`` tiles will be in its groove, ``counted`` have passed its
        counter, ``uids`` are what the reader named of them in count order (None: not read yet).  The side's one
        small row: one page written."""
        blob = b"".join(NO_UID if uid is None else uid for uid in uids[:counted])
        with self.batch(f"stack on side {side}"):
            self._db.execute("INSERT INTO stack_progress (side, cycle, stacked, counted, uids) VALUES (?, ?, ?, ?, ?) "
                             "ON CONFLICT(side) DO UPDATE SET cycle = excluded.cycle, stacked = excluded.stacked, "
                             "counted = excluded.counted, uids = excluded.uids", (side, cycle, stacked, counted, blob))

    def sides(self, cycle: int) -> list[tuple[int, int, int, list[bytes | None]]]:
        """The cycle's progress per side: (side, stacked, counted, UIDs in count order as far as they were kept)."""
        progress = self._read("SELECT side, stacked, counted, uids FROM stack_progress WHERE cycle = ? ORDER BY side",
                              (cycle,))
        older: dict[int, list[bytes | None]] = {}     # (schema 1 and 2: the UIDs of the stacked tiles, in rows)
        for side, first, blob in self._read("SELECT side, first, uids FROM stack_uids WHERE cycle = ? ORDER BY id",
                                            (cycle,)):
            if not (isinstance(blob, bytes) and len(blob) % 8 == 0 and isinstance(first, int) and 0 <= side < 4):
                raise RecordError(f"stack_uids side {side}: a row of the wrong shape")
            known = older.setdefault(side, [])
            known[first:] = _uids(blob)
        out = []
        for side, stacked, counted, blob in progress:
            if not (0 <= side < 4 and isinstance(stacked, int) and isinstance(counted, int) and stacked <= counted
                    and isinstance(blob, bytes) and len(blob) % 8 == 0 and len(blob) // 8 <= counted):
                raise RecordError(f"stack_progress side {side}: a row of the wrong shape")
            uids = _uids(blob) if blob else older.get(side, [])[:stacked]
            out.append((side, stacked, counted, uids))
        return out


def _uids(blob: bytes) -> list[bytes | None]:
    return [None if blob[i:i + 8] == NO_UID else blob[i:i + 8] for i in range(0, len(blob), 8)]


def _check_header(path: Path) -> None:
    """A file that exists must be an SQLite database (a typo'd path to another file is not opened as one)."""
    if path.is_dir():
        raise StorageError(f"{path}: a folder, not a table database")
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        if not path.parent.is_dir():
            raise StorageError(f"{path}: the folder {path.parent} does not exist") from None
        return
    except OSError as exc:
        raise StorageError(f"{path}: cannot read ({exc.strerror})") from None
    if not head:
        raise StoreUnreadable(f"{path}: empty (the table's data is gone)")
    if head != SQLITE_HEADER:
        raise StoreUnreadable(f"{path}: not an SQLite database")



def open_table_store(path: str | Path, on_failure: FailureHandler | None = None,
                     connect: Callable[..., sqlite3.Connection] = sqlite3.connect
                     ) -> tuple[TableStore, dict[str, str] | None]:
    """Open the table database; one that cannot be used is moved aside and a fresh one started.

    Returns the store and, when a file was moved aside, what the controller
    latches as E98 (``file``, ``moved_to``, ``reason``).  A table never
    boot-loops on its database: if even a fresh file cannot be made there (a
    read-only or missing card), the store is in memory and E98 says so.
    """
    path = Path(path)
    try:
        return TableStore(path, on_failure, connect), None
    except StoreUnreadable as exc:
        reason = str(exc)
    except StorageError as exc:
        # not a damaged file but no place for one, or a card that fails (a folder, a missing folder, no
        # permission, I/O errors): nothing is moved; the table runs from memory, latched with E98
        log.error("%s: running from memory", exc)
        return TableStore(":memory:", on_failure), {"file": str(path), "moved_to": "", "reason": str(exc)}
    moved: Path | None = None
    try:
        moved = _move_aside(path)
        log.error("%s: %s; moved aside to %s, starting from a fresh table database", path, reason, moved)
        return TableStore(path, on_failure, connect), {"file": str(path), "moved_to": str(moved), "reason": reason}
    except (OSError, TableError) as again:
        log.error("%s: %s; and no fresh database can be made there (%s): running from memory", path, reason, again)
        return TableStore(":memory:", on_failure), {
            "file": str(path), "moved_to": str(moved) if moved else "", "reason": f"{reason}; {again}"}


def _move_aside(path: Path) -> Path:
    """``table.db`` -> ``table.db.bad1`` (``bad2``, ...), with its WAL and shared-memory files."""
    n = 1
    while path.with_name(f"{path.name}.bad{n}").exists():
        n += 1
    target = path.with_name(f"{path.name}.bad{n}")
    os.replace(path, target)
    for suffix in ("-wal", "-shm"):
        companion = path.with_name(path.name + suffix)
        if companion.exists():
            os.replace(companion, target.with_name(target.name + suffix))
    return target


def _hand_row(h: int, s: Any, d: Any, dice: Any, st: Any, en: Any, r: Any) -> dict:
    return {"hand": h, "set_id": s, "dealer": d, "dice": rec.from_json(rec.DICE, dice, f"hand {h} dice"),
            "started_s": st, "ended_s": en, "result": rec.from_json(rec.DETAIL, r, f"hand {h} result") if r else None}
