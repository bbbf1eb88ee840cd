"""The telemetry outbox: events kept in the table database until the broker has acknowledged them.

An event is written by :func:`add` inside the caller's open transaction, the
one that writes the scoreboard row or the fault it reports: both are kept,
or neither (a power cut between them is impossible).  The link reads
:func:`pending` rows in ``seq`` order, publishes them at QoS 1 and, on each
PUBACK, :func:`mark_sent`; rows not marked (no PUBACK yet, a reconnect, a
broker restart, a power cut) are published again, so an event is delivered
at least once and a consumer de-duplicates on its ``msg_id``.

Written for an SD card: an event's row is written once (``outbox``); whether
it is still to be sent is a tiny row of its own (``outbox_unsent``), deleted
on its PUBACK, so marking never rewrites the payload's pages.  The table is
bounded: sent rows older than the newest :data:`KEEP_SENT` are pruned a few
at a time as rows are marked (they serve ``resend_since``); unsent rows are
kept up to :data:`MAX_UNSENT` rows and :data:`MAX_UNSENT_BYTES` of data
(months of play with the broker gone; the bytes kept in
``fleet_meta.unsent_bytes``), past which the oldest fault events are dropped
first, then the oldest of any kind (a hand's money outlives a flapping
sensor's reports), down to nine tenths of the bounds (one scan now and then,
not one per event), logged and counted in ``fleet_meta.dropped``.

``fleet_meta`` keeps the persisted counters: the last ``seq`` (never
reused, even when every row is pruned), the boot counter and the
database's random ``db_id`` (see :mod:`firmware.fleet.messages`).
"""

from __future__ import annotations

import contextlib
import enum
import logging
import sqlite3
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Iterator, Protocol

from firmware.event_json import MAX_EVENT_BYTES, encode_data

log = logging.getLogger(__name__)


class EventKind(str, enum.Enum):
    """Events (the fleet's ``evt/<kind>``): QoS 1, not retained, each from a row of the outbox."""

    HAND = "hand"
    FAULT = "fault"
    GAME = "game"
    SESSION = "session"     # a table session (开台): opened, warning, ended with its minutes and hands
    WALLS = "walls"         # a set's walls sealed before the dice: its commitment (the hand's event reveals it)


KEEP_SENT = 1000            # sent rows kept for resend_since
MAX_UNSENT = 50_000         # unsent rows kept while the broker is away (a hand's event is 3-6 KB)
MAX_UNSENT_BYTES = 64 * 1024 * 1024     # and their data (an SD card's share for a broker gone for months)
EVICT_TO = 0.9              # past a bound, the oldest are dropped down to this share of it
PRUNE_STEP = 8              # sent rows pruned per mark_sent (small steps: a few pages per write)

# (statements without ';' inside: the table database's migrations run them one by one)
OUTBOX_SCHEMA = """
CREATE TABLE fleet_meta (id INTEGER PRIMARY KEY CHECK (id = 1), db_id TEXT NOT NULL, boot INTEGER NOT NULL,
    last_seq INTEGER NOT NULL, dropped INTEGER NOT NULL);
INSERT INTO fleet_meta (id, db_id, boot, last_seq, dropped) VALUES (1, lower(hex(randomblob(6))), 0, 0, 0);
CREATE TABLE outbox (seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, boot INTEGER NOT NULL, payload TEXT NOT NULL);
CREATE TABLE outbox_unsent (seq INTEGER PRIMARY KEY);
"""
OUTBOX_TABLES = ("fleet_meta", "outbox", "outbox_unsent")
# The nonces of the fleet commands the table accepted, until they expire (a restart must not make them replayable);
# the row of nonce '' (no nonce has that form) keeps the latest expiry of those forgotten.  Made when first used,
# so that a table database of schema 2 made before it needs no migration.
NONCES_SCHEMA = ("CREATE TABLE IF NOT EXISTS fleet_nonces (nonce TEXT PRIMARY KEY, expires_at REAL NOT NULL) "
                 "WITHOUT ROWID")
FORGOTTEN = ""


@dataclass(frozen=True)
class OutboxRow:
    seq: int
    kind: str
    boot: int           # the boot that wrote it
    payload: str        # the event's data, JSON text


@dataclass(frozen=True)
class OutboxMeta:
    db_id: str
    boot: int
    last_seq: int
    dropped: int


def ensure_schema(db: sqlite3.Connection) -> None:
    """Create the outbox's tables if they are missing (a standalone database; the table database gets them
    through its migration)."""
    have = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if all(t in have for t in OUTBOX_TABLES):
        return
    with _transaction(db):
        for statement in OUTBOX_SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)


def add(db: sqlite3.Connection, kind: EventKind | str, payload: Any, *, max_unsent: int = MAX_UNSENT,
        max_bytes: int = MAX_UNSENT_BYTES) -> int:
    """Queue an event in the caller's open transaction; returns its ``seq``.

    Never refuses the data (it would abort the caller's scoreboard write):
    unencodable or oversized data is replaced by a stub that says so.  Only
    a programming error raises: no open transaction, an unknown kind."""
    if not db.in_transaction:
        raise RuntimeError("outbox.add must run inside the transaction that writes what the event reports")
    kind = EventKind(kind).value
    text = encode_data(payload, MAX_EVENT_BYTES)
    seq, boot = db.execute("UPDATE fleet_meta SET last_seq = last_seq + 1 WHERE id = 1 "
                           "RETURNING last_seq, boot").fetchone()
    db.execute("INSERT INTO outbox (seq, kind, boot, payload) VALUES (?, ?, ?, ?)", (seq, kind, boot, text))
    db.execute("INSERT INTO outbox_unsent (seq) VALUES (?)", (seq,))
    if text.startswith('{"truncated"') or text.startswith('{"unencodable"'):
        log.error("outbox: the %s event %d could not be kept whole: %s", kind, seq, text)
    size = _add_unsent_bytes(db, len(text.encode()))
    count = db.execute("SELECT count(*) FROM outbox_unsent").fetchone()[0]
    if count > max_unsent or size > max_bytes:
        _evict(db, count, size, int(max_unsent * EVICT_TO), int(max_bytes * EVICT_TO))
    return int(seq)


_PAYLOAD_BYTES = "length(CAST(o.payload AS BLOB))"


def _add_unsent_bytes(db: sqlite3.Connection, delta: int) -> int:
    """Count ``delta`` more bytes of unsent data; the total.  A table database whose ``fleet_meta`` has no
    ``unsent_bytes`` yet (made before it was kept) gets the column, counted from its unsent rows."""
    try:
        return int(db.execute("UPDATE fleet_meta SET unsent_bytes = unsent_bytes + ? WHERE id = 1 "
                              "RETURNING unsent_bytes", (delta,)).fetchone()[0])
    except sqlite3.OperationalError as exc:
        if "no such column" not in str(exc):
            raise
    db.execute("ALTER TABLE fleet_meta ADD COLUMN unsent_bytes INTEGER NOT NULL DEFAULT 0")
    return int(db.execute(f"UPDATE fleet_meta SET unsent_bytes = (SELECT coalesce(sum({_PAYLOAD_BYTES}), 0) "
                          "FROM outbox o JOIN outbox_unsent u ON u.seq = o.seq) WHERE id = 1 "
                          "RETURNING unsent_bytes").fetchone()[0])


def unsent_bytes(db: sqlite3.Connection, counted: bool = True) -> int:
    """The data of the rows not yet acknowledged, in bytes: as counted (``fleet_meta.unsent_bytes``; before
    the first event of a database made without it, summed), or summed from the rows (``counted=False``)."""
    if counted:
        try:
            return int(db.execute("SELECT unsent_bytes FROM fleet_meta WHERE id = 1").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if "no such column" not in str(exc):
                raise
    return int(db.execute(f"SELECT coalesce(sum({_PAYLOAD_BYTES}), 0) FROM outbox o JOIN outbox_unsent u "
                          "ON u.seq = o.seq").fetchone()[0])


def _evict(db: sqlite3.Connection, count: int, size: int, keep_rows: int, keep_bytes: int) -> None:
    """Drop unsent rows, the oldest faults first, then the oldest of any kind, until both bounds hold."""
    dropped: dict[int, int] = {}
    for where in ("WHERE o.kind = 'fault' ", ""):
        rows = db.execute(f"SELECT u.seq, {_PAYLOAD_BYTES} FROM outbox_unsent u JOIN outbox o ON o.seq = u.seq "
                          f"{where}ORDER BY u.seq").fetchall() if count > keep_rows or size > keep_bytes else []
        for seq, n in rows:
            if count <= keep_rows and size <= keep_bytes:
                break
            if seq not in dropped:
                dropped[seq] = n
                count, size = count - 1, size - n
    db.executemany("DELETE FROM outbox_unsent WHERE seq = ?", [(s,) for s in dropped])
    db.executemany("DELETE FROM outbox WHERE seq = ?", [(s,) for s in dropped])
    db.execute("UPDATE fleet_meta SET dropped = dropped + ? WHERE id = 1", (len(dropped),))
    _add_unsent_bytes(db, -sum(dropped.values()))
    log.warning("outbox: past its bounds; %d unsent events dropped (the oldest faults first), %d kept (%d KB)",
                len(dropped), count, size // 1024)


def pending(db: sqlite3.Connection, after: int = 0, limit: int = 100) -> list[OutboxRow]:
    """Unsent rows with ``seq > after``, oldest first."""
    rows = db.execute("SELECT o.seq, o.kind, o.boot, o.payload FROM outbox_unsent u JOIN outbox o ON o.seq = u.seq "
                      "WHERE u.seq > ? ORDER BY u.seq LIMIT ?", (after, limit)).fetchall()
    return [OutboxRow(int(s), str(k), int(b), str(p)) for s, k, b, p in rows]


def since(db: sqlite3.Connection, after: int, limit: int = 100) -> list[OutboxRow]:
    """Every kept row with ``seq > after``, sent or not, oldest first (``resend_since``)."""
    rows = db.execute("SELECT seq, kind, boot, payload FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?",
                      (after, limit)).fetchall()
    return [OutboxRow(int(s), str(k), int(b), str(p)) for s, k, b, p in rows]


def oldest_kept(db: sqlite3.Connection) -> int:
    """The oldest ``seq`` still in the outbox (0: none)."""
    return int(db.execute("SELECT coalesce(min(seq), 0) FROM outbox").fetchone()[0])


def depth(db: sqlite3.Connection) -> int:
    """Rows not yet acknowledged by the broker."""
    return int(db.execute("SELECT count(*) FROM outbox_unsent").fetchone()[0])


def mark_sent(db: sqlite3.Connection, seqs: list[int], *, keep_sent: int = KEEP_SENT,
              prune_step: int = PRUNE_STEP) -> None:
    """The broker acknowledged these rows (in the caller's transaction); a few old sent rows are pruned."""
    gone = [int(s) for s in seqs
            if db.execute("DELETE FROM outbox_unsent WHERE seq = ? RETURNING seq", (int(s),)).fetchone()]
    if gone:
        marks = ",".join("?" * len(gone))
        size = db.execute(f"SELECT coalesce(sum({_PAYLOAD_BYTES}), 0) FROM outbox o WHERE o.seq IN ({marks})",
                          gone).fetchone()[0]
        _add_unsent_bytes(db, -int(size))
    last = db.execute("SELECT last_seq FROM fleet_meta WHERE id = 1").fetchone()[0]
    db.execute("DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox WHERE seq <= ? AND seq NOT IN "
               "(SELECT seq FROM outbox_unsent) ORDER BY seq LIMIT ?)", (last - keep_sent, prune_step))


def meta(db: sqlite3.Connection) -> OutboxMeta:
    db_id, boot, last_seq, dropped = db.execute(
        "SELECT db_id, boot, last_seq, dropped FROM fleet_meta WHERE id = 1").fetchone()
    return OutboxMeta(str(db_id), int(boot), int(last_seq), int(dropped))


def begin_boot(db: sqlite3.Connection) -> int:
    """Count one more boot (in the caller's transaction); returns the new boot number."""
    return int(db.execute("UPDATE fleet_meta SET boot = boot + 1 WHERE id = 1 RETURNING boot").fetchone()[0])


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """A write transaction of our own (for a connection in autocommit mode, ``isolation_level=None``)."""
    if db.in_transaction:
        yield
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


class Outbox(Protocol):
    """What the link uses of the outbox (:class:`SqliteOutbox`)."""

    def begin_boot(self) -> OutboxMeta: ...
    def meta(self) -> OutboxMeta: ...
    def pending(self, after: int, limit: int) -> list[OutboxRow]: ...
    def since(self, after: int, limit: int) -> list[OutboxRow]: ...
    def oldest_kept(self) -> int: ...
    def depth(self) -> int: ...
    def mark_sent(self, seqs: list[int]) -> None: ...
    def load_nonces(self) -> tuple[dict[str, float], float]: ...
    def save_nonce(self, nonce: str, expires_at: float, forget: list[str], forgotten_until: float) -> None: ...


class SqliteOutbox:
    """The outbox as the link sees it, over one connection (autocommit: ``isolation_level=None``) on the loop's
    thread.

    ``transaction`` opens a write transaction for :meth:`mark_sent` and
    :meth:`begin_boot`: the table database's ``TableStore.batch`` on a table
    (so a failing write is the store's E98, not an exception in the link),
    by default one of our own on the connection.  Reads raise
    ``sqlite3.Error`` if the file fails; the link catches and retries."""

    def __init__(self, db: sqlite3.Connection,
                 transaction: Callable[[], ContextManager[Any]] | None = None) -> None:
        self.db = db
        self._transaction = transaction or (lambda: _transaction(db))
        if transaction is None:
            ensure_schema(db)

    def begin_boot(self) -> OutboxMeta:
        with self._transaction():
            begin_boot(self.db)
        return meta(self.db)

    def meta(self) -> OutboxMeta:
        return meta(self.db)

    def pending(self, after: int, limit: int) -> list[OutboxRow]:
        return pending(self.db, after, limit)

    def since(self, after: int, limit: int) -> list[OutboxRow]:
        return since(self.db, after, limit)

    def oldest_kept(self) -> int:
        return oldest_kept(self.db)

    def depth(self) -> int:
        return depth(self.db)

    def mark_sent(self, seqs: list[int]) -> None:
        with self._transaction():
            mark_sent(self.db, seqs)

    def load_nonces(self) -> tuple[dict[str, float], float]:
        """The accepted commands' nonces kept (nonce -> expires_at) and the latest expiry of those forgotten."""
        with self._transaction():
            self.db.execute(NONCES_SCHEMA)
        rows = dict(self.db.execute("SELECT nonce, expires_at FROM fleet_nonces").fetchall())
        return {str(n): float(e) for n, e in rows.items() if n != FORGOTTEN}, float(rows.get(FORGOTTEN, 0.0))

    def save_nonce(self, nonce: str, expires_at: float, forget: list[str], forgotten_until: float) -> None:
        """An accepted command's nonce, the expired ones forgotten and the latest expiry forgotten, in one write."""
        with self._transaction():
            self.db.execute(NONCES_SCHEMA)
            self.db.executemany("DELETE FROM fleet_nonces WHERE nonce = ?", [(n,) for n in forget])
            self.db.execute("INSERT OR REPLACE INTO fleet_nonces (nonce, expires_at) VALUES (?, ?)",
                            (FORGOTTEN, forgotten_until))
            self.db.execute("INSERT OR REPLACE INTO fleet_nonces (nonce, expires_at) VALUES (?, ?)",
                            (nonce, expires_at))

    def add(self, kind: EventKind | str, payload: Any) -> int:
        """An event in a transaction of its own (tests, tools; the controller calls :func:`add` in its batch)."""
        with self._transaction():
            return add(self.db, kind, payload)
