"""The tables the facts live in (SQLAlchemy Core), the same on SQLite and PostgreSQL.

``events`` names each tournament a database holds; ``facts`` holds every fact
of every event in the order it was stored (``seq``), its body as JSON text
(the same text on both databases), with the round and table it is about for
queries, and an optional ``dedup`` key (a table's hand ``msg_id``, a result's
game) unique within its event, so a fact told twice is stored once.  Both are
append-only: the migration adds triggers that refuse UPDATE and DELETE.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

events = sa.Table(
    "events", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(40), nullable=False, unique=True),
    sa.Column("created_at", sa.String(40), nullable=False),
)

facts = sa.Table(
    "facts", metadata,
    sa.Column("seq", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
    sa.Column("event_id", sa.Integer, sa.ForeignKey("events.id"), nullable=False),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("round", sa.Integer, nullable=True),
    sa.Column("tbl", sa.String(64), nullable=True),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("recorded_at", sa.String(40), nullable=False),
    sa.Column("dedup", sa.String(200), nullable=True),
    sa.UniqueConstraint("event_id", "dedup", name="facts_event_dedup"),
)
sa.Index("facts_event_seq", facts.c.event_id, facts.c.seq)
