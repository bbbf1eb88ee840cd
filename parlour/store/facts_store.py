"""The tournament database: open by URL (SQLite file or PostgreSQL), migrate, append facts, read them back.

``--db`` takes ``sqlite:///PATH`` or a plain file path (SQLite: one file,
nothing to set up) or ``postgresql://user@host/dbname`` (driven by psycopg 3).
Opening migrates the database to the newest schema (Alembic).  Every write is
one append in its own transaction; a fact with a ``dedup`` key already stored
for its event is not stored again (the append answers False), so a hand or a
result a table publishes twice counts once, on both databases.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from sqlalchemy.dialects import postgresql, sqlite

from parlour.core.event import EventFormat
from parlour.core.facts import Fact, FactKind, TournamentState, apply, fold
from parlour.core.words import worded
from parlour.store.schema import events, facts

log = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).with_name("migrations")


FOLDED_EVENTS = 8                   # events whose last folded state is kept (a service follows one)


@dataclass(frozen=True)
class _Folded:
    """An event's state as folded from its first ``count`` facts, the last of them ``last_seq``."""
    count: int
    last_seq: int
    state: TournamentState


class StoreError(ValueError):
    """The database cannot be used as asked (the text says which and why)."""


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def engine_url(db: str) -> str:
    """The SQLAlchemy URL of a ``--db`` value."""
    if not db.strip():
        raise worded(StoreError, "--db is empty: a file path, sqlite:///PATH or postgresql://USER@HOST/DBNAME")
    if db.startswith(("postgresql://", "postgres://")):
        rest = db.split("://", 1)[1]
        if "/" not in rest or not rest.split("/", 1)[1].split("?", 1)[0]:
            raise worded(StoreError, "--db %(db)r: name the database (postgresql://USER@HOST/DBNAME)", db=db)
        return "postgresql+psycopg://" + rest
    if db.startswith("postgresql+"):
        return db
    if db.startswith("sqlite:"):
        return db
    if "://" in db:
        raise worded(StoreError, "--db %(db)r: a file path, sqlite:///PATH or postgresql://USER@HOST/DBNAME", db=db)
    return "sqlite:///" + str(Path(db).expanduser())


def migrate(engine: sa.Engine) -> None:
    """Bring the database to the newest schema."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


class TourneyStore:
    """One tournament database (any number of events in it)."""

    def __init__(self, db: str, clock: Callable[[], datetime] = utc_now) -> None:
        self.clock = clock
        self.facts_read = 0             # rows read back, for the tests and the curious
        self._folded: OrderedDict[int, _Folded] = OrderedDict()
        self._folding = threading.Lock()
        url = engine_url(db)
        try:
            if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
                path = Path(url[len("sqlite:///"):])
                if not path.parent.is_dir():
                    raise worded(StoreError, "--db %(db)r: the folder %(folder)s does not exist",
                                 db=db, folder=path.parent)
                if path.is_dir():
                    raise worded(StoreError, "--db %(db)r is a folder: name a file in it (e.g. %(file)s)", db=db,
                                 file=path / "event.db")
            self.engine = sa.create_engine(url, connect_args=_connect_args(url))
            if self.engine.dialect.name == "sqlite":
                sa.event.listen(self.engine, "connect", _sqlite_pragmas)
            migrate(self.engine)
        except StoreError:
            raise
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            shown = _safe(db) if "://" in db else repr(db)
            raise worded(StoreError, "--db %(db)s: cannot open it (%(problem)s)", db=shown, problem=_first_line(exc)) \
                from None

    def close(self) -> None:
        self.engine.dispose()

    # ---- events

    def create_event(self, fmt: EventFormat) -> int:
        """A new event with its format as its first fact; StoreError if the name is taken."""
        with self.engine.begin() as conn:
            if conn.execute(sa.select(events.c.id).where(events.c.name == fmt.name)).first():
                raise worded(StoreError, "an event named %(event)r is in this database already", event=fmt.name)
            inserted = conn.execute(events.insert().values(name=fmt.name, created_at=self._now()))
            event_id = inserted.inserted_primary_key[0]
            self._insert(conn, event_id, FactKind.EVENT, {"format": fmt.as_dict(), "key": secrets.token_hex(4)}, None)
        return int(event_id)

    def event_id(self, name: str | None = None) -> int:
        """The event named, or the only one; StoreError saying what there is otherwise."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(events.c.id, events.c.name).order_by(events.c.id)).all()
        if name is not None:
            for row in rows:
                if row.name == name:
                    return int(row.id)
            if rows:
                raise worded(StoreError, "no event named %(event)r here (there is: %(events)s)", event=name,
                             events=", ".join(r.name for r in rows))
            raise worded(StoreError, "no event named %(event)r here", event=name)
        if not rows:
            raise worded(StoreError, "no tournament in this database: create one with mjtable tourney new")
        if len(rows) > 1:
            raise worded(StoreError, "this database holds %(count)s events (%(events)s): name one with --event",
                         count=len(rows), events=", ".join(r.name for r in rows))
        return int(rows[0].id)

    # ---- facts

    def append(self, event_id: int, kind: FactKind, body: Mapping[str, Any], dedup: str | None = None) -> bool:
        """Store one fact; False (nothing stored) when a fact with the same ``dedup`` is there already."""
        with self.engine.begin() as conn:
            return self._insert(conn, event_id, kind, body, dedup)

    def append_many(self, event_id: int, items: list[tuple[FactKind, Mapping[str, Any]]]) -> None:
        """Several facts in one transaction (all or none): a seating plan's rounds, say."""
        with self.engine.begin() as conn:
            for kind, body in items:
                self._insert(conn, event_id, kind, body, None)

    def facts(self, event_id: int) -> list[Fact]:
        with self.engine.connect() as conn:
            return self._read(conn, event_id, None)

    def state(self, event_id: int) -> TournamentState:
        """What the event is now: its facts folded (:func:`~parlour.core.facts.fold`).

        A hall's service asks this at every result, and an event's facts grow with every hand its tables
        play: the state folded last (per event, FOLDED_EVENTS kept) is kept with how many facts and which
        last ``seq`` it was folded from, and only the facts stored since are read and applied, to a copy (a
        state handed out is never changed afterwards).  A fact committed late below that ``seq``
        (PostgreSQL numbers a fact when it is inserted, so two writers may commit out of order) shows in the
        count of facts up to it: then every fact is read again."""
        with self._folding:
            kept = self._folded.get(event_id)
            with self.engine.connect() as conn:
                if kept is not None:
                    count = conn.execute(sa.select(sa.func.count()).select_from(facts).where(
                        facts.c.event_id == event_id, facts.c.seq <= kept.last_seq)).scalar_one()
                    if count != kept.count:
                        log.info("event %s: a fact was stored late below seq %s: every fact read again", event_id,
                                 kept.last_seq)
                        kept = None
                new = self._read(conn, event_id, None if kept is None else kept.last_seq)
            if kept is not None and not new:
                self._folded.move_to_end(event_id)
                return kept.state
            state = fold(new) if kept is None else apply(kept.state.snapshot(), new)
            count = len(new) + (kept.count if kept is not None else 0)
            last_seq = new[-1].seq if new else kept.last_seq if kept is not None else 0
            self._folded[event_id] = _Folded(count, int(last_seq or 0), state)
            self._folded.move_to_end(event_id)
            while len(self._folded) > FOLDED_EVENTS:
                self._folded.popitem(last=False)
            return state

    def _read(self, conn: sa.Connection, event_id: int, after_seq: int | None) -> list[Fact]:
        query = sa.select(facts.c.seq, facts.c.kind, facts.c.body, facts.c.recorded_at).where(
            facts.c.event_id == event_id)
        if after_seq is not None:
            query = query.where(facts.c.seq > after_seq)
        rows = conn.execute(query.order_by(facts.c.seq)).all()
        self.facts_read += len(rows)
        return [Fact(FactKind(row.kind), json.loads(row.body), int(row.seq), row.recorded_at) for row in rows]

    def _insert(self, conn: sa.Connection, event_id: int, kind: FactKind, body: Mapping[str, Any],
                dedup: str | None) -> bool:
        values = {"event_id": event_id, "kind": FactKind(kind).value, "round": body.get("round"),
                  "tbl": body.get("table"), "body": json.dumps(body, ensure_ascii=False, sort_keys=True),
                  "recorded_at": self._now(), "dedup": dedup}
        dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
        statement = dialect.insert(facts).values(**values)
        if dedup is not None:
            statement = statement.on_conflict_do_nothing(index_elements=["event_id", "dedup"])
        return conn.execute(statement.returning(facts.c.seq)).first() is not None

    def _now(self) -> str:
        return self.clock().isoformat(timespec="milliseconds")


def _connect_args(url: str) -> dict[str, Any]:
    return {"timeout": 30} if url.startswith("sqlite") else {"connect_timeout": 10}


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _safe(db: str) -> str:
    """The URL without its password."""
    try:
        return sa.engine.make_url(engine_url(db)).render_as_string(hide_password=True)
    except Exception:                                       # noqa: BLE001 - only for a message
        return "(the --db given)"
