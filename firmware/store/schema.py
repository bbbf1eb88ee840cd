"""The table database's schema, its version (``PRAGMA user_version``) and one migration per change.

Version 0 is the first release's unversioned file (a key/value table with
the bookkeeping and the whole scoreboard as one rewritten document, faults,
hands).  Version 1 keeps the scoreboard as rows: one per game, per hand's
result and per payment, with the chips kept incrementally, one row per hand
number, the bookkeeping as one typed row, the progress of a stacking cycle
as one tiny row per side (written once per stack, not the whole bookkeeping
once per tile) and the UIDs read in a few appended rows, each stacked set's
wall as a row of one byte per tile: small rows in 512-byte pages, so that a
write is one page.  Version 2 keeps one row per payment (payer, payee, amount, its reason, the
action of the hand's record that caused it, held off the board or not), each
hand's record with its result, the end of a game (局结) and whether the
dealer's first discard was followed (for the dealer rotation), and fleet
telemetry's outbox (:mod:`firmware.store.outbox`: each event written in
the transaction of what it reports, until the broker has it).  Version 3
keeps a side's UIDs, in count order, in its progress row.  Version 4 keeps,
for the dealer rotation, the side whose discard the last hand's first win
was on when several won on it (一炮多响: 四川's discarder deals next).  Version
5 keeps a tournament round's assignments (``assignments``: the one waiting,
the one being played with its game, the ones played), so a power cut in a
round resumes that round's game and never starts it again.  Version 6
keeps the time each fault was cleared (``cleared_at_s``: a latched fault's
acknowledge, a hold's release, a recoverable fault's acknowledge) and the
table sessions staff open (开台: ``table_sessions``, one row per session,
its minutes, hands and how it ended; :mod:`firmware.game.staff`).  Version
7 keeps committed walls (:mod:`firmware.store.seal_rows`): each stacked
set's seal (its commitment and preimage, rewritten with its wall) and each
hand's (appended at the deal: the commitment, the preimage revealed when
the hand ends, how its dice were thrown).  Version 8 indexes a game's
hand results and payments by game: the dealer rotation and the held
payments are read for the game in play at every hand's result, and without
the index each read scanned every hand the table had ever played (a table
with a year of hands spent milliseconds a hand on it, growing).  A
migration runs inside the transaction that sets the new version, so a power
cut during an upgrade leaves the old file as it was.
A file from a newer release is never opened for writing: the caller moves
it aside.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Callable

from firmware.store.records import RecordError
from firmware.store.outbox import OUTBOX_SCHEMA, OUTBOX_TABLES

CURRENT = 8

SCHEMA_1 = """
CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE faults (id INTEGER PRIMARY KEY, code TEXT NOT NULL, tier TEXT NOT NULL, at_s REAL NOT NULL,
    state TEXT NOT NULL, source TEXT NOT NULL, detail TEXT NOT NULL, acknowledged_at_s REAL);
CREATE TABLE hands (hand INTEGER PRIMARY KEY, set_id TEXT NOT NULL,
    dealer INTEGER NOT NULL, dice TEXT NOT NULL, started_s REAL NOT NULL, ended_s REAL, result TEXT);
CREATE TABLE games (id INTEGER PRIMARY KEY, rules TEXT NOT NULL, start_chips INTEGER NOT NULL,
    first_hand INTEGER NOT NULL);
CREATE TABLE chips (game INTEGER NOT NULL, side INTEGER NOT NULL, chips INTEGER NOT NULL, PRIMARY KEY (game, side));
CREATE TABLE hand_results (hand INTEGER PRIMARY KEY, game INTEGER NOT NULL, dealer INTEGER NOT NULL,
    winners TEXT NOT NULL, drawn INTEGER NOT NULL, fans TEXT NOT NULL, note TEXT NOT NULL,
    round_wind INTEGER NOT NULL);
CREATE TABLE payments (id INTEGER PRIMARY KEY, hand INTEGER NOT NULL, game INTEGER NOT NULL, side INTEGER NOT NULL,
    amount INTEGER NOT NULL, reason TEXT NOT NULL);
CREATE TABLE book (id INTEGER PRIMARY KEY CHECK (id = 1), state TEXT NOT NULL, hand INTEGER NOT NULL,
    dealer INTEGER NOT NULL, dealer_streak INTEGER NOT NULL, long_hair INTEGER NOT NULL, last_winner INTEGER,
    hand_open INTEGER NOT NULL, hand_over INTEGER NOT NULL, raising INTEGER NOT NULL,
    unknown_on_disk INTEGER NOT NULL, players_waited_s REAL NOT NULL, cycles INTEGER NOT NULL,
    stacking_set TEXT, stacking_cycle INTEGER, sets TEXT NOT NULL, rejected TEXT NOT NULL);
CREATE TABLE walls (set_id TEXT PRIMARY KEY, stacks INTEGER NOT NULL, tiles_per_side INTEGER NOT NULL,
    faces BLOB NOT NULL);
CREATE TABLE stack_progress (side INTEGER PRIMARY KEY, cycle INTEGER NOT NULL, stacked INTEGER NOT NULL,
    counted INTEGER NOT NULL);
CREATE TABLE stack_uids (id INTEGER PRIMARY KEY, cycle INTEGER NOT NULL, side INTEGER NOT NULL,
    first INTEGER NOT NULL, uids BLOB NOT NULL);
"""

# What version 2 changes: a payment is a row from a payer to a payee (``event``: the index of the action in the
# hand's record, ``seq``: its place among that action's payments; the pair is unique, so a payment delivered
# twice is kept once), a hand's result keeps the hand's record, a game may end (局结), the bookkeeping keeps
# whether the last hand's first discard was followed (跟庄), and the hand in play's record so far is kept as
# rows (``hand_log``: appended with the money it makes, one row per write holding that write's consecutive action
# lines from its ``event`` on, cleared when the hand's result is written); the fleet's
# outbox (``fleet_meta``, ``outbox``, ``outbox_unsent``).
SCHEMA_2_CHANGES = """
CREATE TABLE payments_2 (id INTEGER PRIMARY KEY, game INTEGER NOT NULL, hand INTEGER NOT NULL,
    event INTEGER NOT NULL, seq INTEGER NOT NULL, payer INTEGER NOT NULL, payee INTEGER NOT NULL,
    amount INTEGER NOT NULL, reason TEXT NOT NULL, held INTEGER NOT NULL, UNIQUE (hand, event, seq));
ALTER TABLE hand_results ADD COLUMN record TEXT NOT NULL DEFAULT '';
ALTER TABLE games ADD COLUMN ended_hand INTEGER;
ALTER TABLE games ADD COLUMN end_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE book ADD COLUMN last_followed INTEGER NOT NULL DEFAULT 0;
CREATE TABLE hand_log (hand INTEGER NOT NULL, event INTEGER NOT NULL, seq INTEGER, action TEXT NOT NULL,
    PRIMARY KEY (hand, event)) WITHOUT ROWID;
""" + OUTBOX_SCHEMA

# What version 3 changes: a stacking cycle's progress row keeps the UIDs its side has read, in count order (the
# stacked tiles and those waiting in the feed track), rewritten with the row as each stack begins: one page, as
# before; after a power cut the tiles found in a track take their places from it.
SCHEMA_3_CHANGES = """
ALTER TABLE stack_progress ADD COLUMN uids BLOB NOT NULL DEFAULT x''
"""

# What version 4 changes: the bookkeeping keeps the discarder of the last hand's first win when several won on that
# discard (一炮多响), for the dealer rotation of the rule sets that follow it (四川: the discarder deals next).
SCHEMA_4_CHANGES = """
ALTER TABLE book ADD COLUMN last_discarder INTEGER
"""

# What version 5 changes: a tournament round's assignments (firmware/game/rounds.py): ``state`` is pending (waiting
# for the game in play to end), taken (its game is ``game``), ended or cleared; ``body`` its data as JSON.
SCHEMA_5_CHANGES = """
CREATE TABLE assignments (id TEXT PRIMARY KEY, body TEXT NOT NULL, state TEXT NOT NULL, game INTEGER,
    received_s REAL NOT NULL)
"""

# What version 6 changes: when a fault was cleared (on the table's loop time, as ``at_s``), and the table sessions
# (开台) staff open for a number of minutes: opened and due (Unix seconds on the table's wall clock), the first hand
# played in it, when and why it ended and how many hands it had.
SCHEMA_6_CHANGES = """
ALTER TABLE faults ADD COLUMN cleared_at_s REAL;
CREATE TABLE table_sessions (id INTEGER PRIMARY KEY, opened_s REAL NOT NULL, minutes INTEGER NOT NULL,
    ends_s REAL NOT NULL, first_hand INTEGER NOT NULL, opened_by TEXT NOT NULL, ended_s REAL, hands INTEGER,
    reason TEXT, ended_by TEXT)
"""

# What version 8 changes: the game in play's results and payments found by its number (the dealer rotation at each
# hand's end, the held payments), not by a scan of every hand the table has played.
SCHEMA_8_CHANGES = """
CREATE INDEX hand_results_by_game ON hand_results (game, hand);
CREATE INDEX payments_by_game ON payments (game, held, hand)
"""

# What version 7 changes: committed walls (firmware/tiles/fair_walls.py).  ``wall_seals``: the seal of each stacked
# set's walls (one row per set, rewritten with its ``walls`` row when the set is stacked again); ``hand_seals``: the
# seal a hand was dealt from, appended once at its deal, with how its dice were thrown (``physical``/``electronic``).
SCHEMA_7_CHANGES = """
CREATE TABLE wall_seals (set_id TEXT PRIMARY KEY, commitment TEXT NOT NULL, preimage TEXT NOT NULL);
CREATE TABLE hand_seals (hand INTEGER PRIMARY KEY, set_id TEXT NOT NULL, commitment TEXT NOT NULL,
    preimage TEXT NOT NULL, dice_by TEXT NOT NULL)
"""

TABLES = ("kv", "faults", "hands", "games", "chips", "hand_results", "payments", "book", "walls", "stack_progress",
          "stack_uids", "hand_log", "assignments", "table_sessions", "wall_seals", "hand_seals", *OUTBOX_TABLES)
BOOK_COLUMNS = ("state", "hand", "dealer", "dealer_streak", "long_hair", "last_winner", "hand_open", "hand_over",
                "raising", "unknown_on_disk", "players_waited_s", "cycles", "stacking_set", "stacking_cycle", "sets",
                "rejected", "last_followed", "last_discarder")
BOOK_COLUMNS_1 = BOOK_COLUMNS[:-2]                 # (schema 1 had no last_followed and no last_discarder)
UNKNOWN_FACE = 255      # a wall position whose tile was not read
PAGE_SIZE = 512         # small pages: a stack's progress row is one page written, not eight
NO_UID = bytes(8)       # an unread tile's place in a stack's UIDs
UIDS_PER_ROW = 9        # 72 bytes: a row of UIDs stays inside its page (no overflow page)


def tables(db: sqlite3.Connection) -> set[str]:
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def run_script(db: sqlite3.Connection, script: str) -> None:
    """Each statement on its own (``executescript`` would commit the transaction a migration runs in)."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def create(db: sqlite3.Connection) -> None:
    """A new, empty database of the current version."""
    run_script(db, SCHEMA_1)
    _migrate_1_to_2(db)
    _migrate_2_to_3(db)
    _migrate_3_to_4(db)
    _migrate_4_to_5(db)
    _migrate_5_to_6(db)
    _migrate_6_to_7(db)
    _migrate_7_to_8(db)


def _migrate_7_to_8(db: sqlite3.Connection) -> None:
    """The indexes by game (built from the rows there are: a few milliseconds for a year of hands)."""
    run_script(db, SCHEMA_8_CHANGES)


def _migrate_6_to_7(db: sqlite3.Connection) -> None:
    """Committed walls (an older file's hands were dealt before them: they have no seal)."""
    run_script(db, SCHEMA_7_CHANGES)


def _migrate_5_to_6(db: sqlite3.Connection) -> None:
    """Faults' cleared times (an older row has none: its clearing was not recorded) and the table sessions."""
    run_script(db, SCHEMA_6_CHANGES)


def _migrate_4_to_5(db: sqlite3.Connection) -> None:
    """A tournament round's assignments (an older file has none)."""
    run_script(db, SCHEMA_5_CHANGES)


def _migrate_3_to_4(db: sqlite3.Connection) -> None:
    """The bookkeeping keeps the discarder of an 一炮多响 (none in an older file: its last hand had none)."""
    run_script(db, SCHEMA_4_CHANGES)


def _migrate_2_to_3(db: sqlite3.Connection) -> None:
    """The progress rows keep their side's UIDs (older rows have none: their UIDs are in ``stack_uids``)."""
    run_script(db, SCHEMA_3_CHANGES)


def _migrate_1_to_2(db: sqlite3.Connection) -> None:
    """Payments become rows from a payer to a payee: each hand's per-side amounts are paid by its losers to
    its winners in seat order, with the reason they had (schema 1 only knew "hand")."""
    run_script(db, SCHEMA_2_CHANGES)
    by_hand: dict[tuple[int, int], list[int]] = {}
    reasons: dict[tuple[int, int], str] = {}
    for hand, game, side, amount, reason in db.execute(
            "SELECT hand, game, side, amount, reason FROM payments ORDER BY id").fetchall():
        if not (isinstance(amount, int) and side in (0, 1, 2, 3)):
            raise RecordError(f"schema 1 payments: a row of the wrong shape for hand {hand}")
        by_hand.setdefault((hand, game), [0, 0, 0, 0])[side] += amount
        reasons.setdefault((hand, game), reason)
    for (hand, game), deltas in by_hand.items():
        if sum(deltas) != 0:
            raise RecordError(f"schema 1 payments of hand {hand} sum to {sum(deltas)}, not zero")
        owed = {s: -d for s, d in enumerate(deltas) if d < 0}
        due = {s: d for s, d in enumerate(deltas) if d > 0}
        seq = 0
        for payer in sorted(owed):
            for payee in sorted(due):
                amount = min(owed[payer], due[payee])
                if amount > 0:
                    db.execute("INSERT INTO payments_2 (game, hand, event, seq, payer, payee, amount, reason, held) "
                               "VALUES (?, ?, 0, ?, ?, ?, ?, ?, 0)",
                               (game, hand, seq, payer, payee, amount, reasons[(hand, game)]))
                    owed[payer] -= amount
                    due[payee] -= amount
                    seq += 1
    db.execute("DROP TABLE payments")
    db.execute("ALTER TABLE payments_2 RENAME TO payments")
    for hand, fans in db.execute("SELECT hand, fans FROM hand_results").fetchall():
        try:
            old = json.loads(fans)
            items = [{"name": f[0], "key": "", "en": "", "points": f[1], "count": f[2]} for f in old]
        except (ValueError, TypeError, IndexError, KeyError):
            raise RecordError(f"schema 1 hand {hand}: fans of the wrong shape") from None
        db.execute("UPDATE hand_results SET fans = ? WHERE hand = ?", (json.dumps(items, ensure_ascii=False), hand))


def _migrate_0_to_1(db: sqlite3.Connection) -> None:
    """The scoreboard document becomes rows; hand numbers become unique (the first row of a hand is kept)."""
    have = tables(db)
    for name in ("kv", "faults", "hands"):
        if name not in have:
            raise RecordError(f"schema 0: the table '{name}' is missing")
    db.execute("ALTER TABLE hands RENAME TO hands_0")
    db.execute("ALTER TABLE kv RENAME TO kv_0")
    db.execute("ALTER TABLE faults RENAME TO faults_0")
    run_script(db, SCHEMA_1)
    db.execute("INSERT INTO kv SELECT key, value FROM kv_0 WHERE key NOT IN ('scoreboard', 'book', 'walls', 'state')")
    row = db.execute("SELECT value FROM kv_0 WHERE key = 'book'").fetchone()
    if row is not None:
        state = db.execute("SELECT value FROM kv_0 WHERE key = 'state'").fetchone()
        _book_0(db, row[0], json.loads(state[0]) if state else "boot")
    row = db.execute("SELECT value FROM kv_0 WHERE key = 'walls'").fetchone()
    if row is not None:
        _walls_0(db, row[0])
    db.execute("INSERT INTO faults SELECT * FROM faults_0")
    db.execute("INSERT OR IGNORE INTO hands (hand, set_id, dealer, dice, started_s, ended_s, result) "
               "SELECT hand, set_id, dealer, dice, started_s, ended_s, result FROM hands_0 ORDER BY id")
    row = db.execute("SELECT value FROM kv_0 WHERE key = 'scoreboard'").fetchone()
    if row is not None:
        _scoreboard_0(db, row[0])
    for name in ("hands_0", "kv_0", "faults_0"):
        db.execute(f"DROP TABLE {name}")


def _scoreboard_0(db: sqlite3.Connection, text: str) -> None:
    try:
        doc = json.loads(text)
        rules, chips, history = doc["rules"], doc["chips"], doc["history"]
        if not (isinstance(rules, str) and isinstance(chips, list) and len(chips) == 4
                and all(type(c) is int for c in chips) and isinstance(history, list)):
            raise TypeError("rules, chips or history of the wrong type")
        paid = [0] * 4
        rows = []
        for h in history:
            payments = h["payments"]
            if not (isinstance(payments, list) and len(payments) == 4 and all(type(p) is int for p in payments)):
                raise TypeError(f"hand {h.get('hand')}: payments of the wrong shape")
            paid = [a + b for a, b in zip(paid, payments)]
            rows.append(h)
        start = chips[0] - paid[0]
        if any(chips[s] - paid[s] != start for s in range(4)):
            raise ValueError(f"chips {chips} do not follow from the payments from one start")
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise RecordError(f"schema 0 scoreboard: {exc}") from None
    first = min((h["hand"] for h in rows), default=1)
    game = db.execute("INSERT INTO games (rules, start_chips, first_hand) VALUES (?, ?, ?)",
                      (rules, start, first)).lastrowid
    db.executemany("INSERT INTO chips (game, side, chips) VALUES (?, ?, ?)", [(game, s, chips[s]) for s in range(4)])
    for h in rows:
        db.execute("INSERT OR IGNORE INTO hand_results (hand, game, dealer, winners, drawn, fans, note, round_wind) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (h["hand"], game, h["dealer"], json.dumps(h["winners"]), int(bool(h["drawn"])),
                    json.dumps(h.get("fans", []), ensure_ascii=False), h.get("note", ""), h.get("round_wind", 0)))
        db.executemany("INSERT INTO payments (hand, game, side, amount, reason) VALUES (?, ?, ?, ?, ?)",
                       [(h["hand"], game, s, amount, "hand") for s, amount in enumerate(h["payments"]) if amount])


def _book_0(db: sqlite3.Connection, text: str, state: str) -> None:
    """Schema 0 kept the bookkeeping as a document, a stacking cycle's progress (counts and UIDs per side)
    inside it; it becomes the bookkeeping row and the cycle's progress rows (the tiles counted but not yet
    stacked are found in the tracks at the restart)."""
    try:
        book = json.loads(text)
        stacking = book.get("stacking")
        cycle = None
        if stacking is not None:
            cycle = int(book.get("cycles", 0)) + 1
            for side in range(4):
                stacked, counted = int(stacking["stacked"][side]), int(stacking["counted"][side])
                db.execute("INSERT INTO stack_progress (side, cycle, stacked, counted) VALUES (?, ?, ?, ?)",
                           (side, cycle, stacked, counted))
                uids = list(stacking["uids"][side])[:stacked]
                for first in range(0, len(uids), UIDS_PER_ROW):
                    blob = b"".join(bytes.fromhex(u) if u else NO_UID for u in uids[first:first + UIDS_PER_ROW])
                    db.execute("INSERT INTO stack_uids (cycle, side, first, uids) VALUES (?, ?, ?, ?)",
                               (cycle, side, first, blob))
        write_book(db, state, book, None if stacking is None else stacking["set_id"], cycle, BOOK_COLUMNS_1)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        raise RecordError(f"schema 0 bookkeeping: {exc}") from None


def write_book(db: sqlite3.Connection, state: str, book: dict, stacking_set: str | None,
               stacking_cycle: int | None, columns: tuple[str, ...] = BOOK_COLUMNS) -> None:
    """The bookkeeping row (``book`` as :meth:`Bookkeeping.to_dict` gives it, without its stacking)."""
    values = {"state": state, "hand": book["hand"], "dealer": book["dealer"], "dealer_streak": book["dealer_streak"],
              "long_hair": book["long_hair"], "last_winner": book["last_winner"], "hand_open": int(book["hand_open"]),
              "hand_over": int(book["hand_over"]), "raising": int(book["raising"]),
              "unknown_on_disk": int(book["unknown_on_disk"]), "players_waited_s": book["players_waited_s"],
              "cycles": book["cycles"], "stacking_set": stacking_set, "stacking_cycle": stacking_cycle,
              "sets": json.dumps(book["sets"], sort_keys=True, separators=(",", ":")),
              "rejected": json.dumps(book["rejected"], sort_keys=True, separators=(",", ":"), ensure_ascii=False),
              "last_followed": int(book.get("last_followed", False)), "last_discarder": book.get("last_discarder")}
    db.execute(f"INSERT INTO book (id, {', '.join(columns)}) VALUES (1, {', '.join('?' * len(columns))}) "
               f"ON CONFLICT(id) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in columns)}",
               tuple(values[c] for c in columns))


def _walls_0(db: sqlite3.Connection, text: str) -> None:
    """Schema 0 kept every set's wall in one document of [side, stack, level, tile] rows; each set becomes a
    row of the walls table."""
    try:
        for set_id, rows in json.loads(text).items():
            by_pos = {(side, stack, level): kind for side, stack, level, kind in rows}
            stacks = max(stack for _, stack, _ in by_pos)
            sides = [[[by_pos.get((side, stack, "bottom")), *([by_pos[(side, stack, "top")]]
                                                              if (side, stack, "top") in by_pos else [])]
                      for stack in range(1, stacks + 1)] for side in range(4)]
            write_wall(db, set_id, sides)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise RecordError(f"schema 0 walls: {exc}") from None


def write_wall(db: sqlite3.Connection, set_id: str, sides: list) -> None:
    """A set's wall (sides, stacks from stack 1, [bottom, top] tiles) as one byte per tile."""
    stacks = len(sides[0])
    tiles_per_side = sum(len(stack) for stack in sides[0])
    faces = bytes(UNKNOWN_FACE if kind is None else kind for side in sides for stack in side for kind in stack)
    db.execute("INSERT INTO walls (set_id, stacks, tiles_per_side, faces) VALUES (?, ?, ?, ?) ON CONFLICT(set_id) "
               "DO UPDATE SET stacks = excluded.stacks, tiles_per_side = excluded.tiles_per_side, "
               "faces = excluded.faces", (set_id, stacks, tiles_per_side, faces))


def read_wall(stacks: int, tiles_per_side: int, faces: bytes) -> list:
    """The sides of a wall row (the 108 set's last stack holds one tile)."""
    if len(faces) != 4 * tiles_per_side or not 0 < stacks <= 18 or tiles_per_side not in (stacks * 2, stacks * 2 - 1):
        raise RecordError(f"a wall row of {len(faces)} tiles for {stacks} stacks of {tiles_per_side}")
    sides, i = [], 0
    for _ in range(4):
        side = []
        for stack in range(stacks):
            n = 2 if stack < stacks - 1 or tiles_per_side == stacks * 2 else 1
            side.append([None if faces[i + k] == UNKNOWN_FACE else faces[i + k] for k in range(n)])
            i += n
        sides.append(side)
    return sides


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {0: _migrate_0_to_1, 1: _migrate_1_to_2,
                                                               2: _migrate_2_to_3, 3: _migrate_3_to_4,
                                                               4: _migrate_4_to_5, 5: _migrate_5_to_6,
                                                               6: _migrate_6_to_7, 7: _migrate_7_to_8}
