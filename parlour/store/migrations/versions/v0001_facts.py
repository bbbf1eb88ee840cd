"""The events and their append-only facts."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

APPEND_ONLY_SQLITE = [
    "CREATE TRIGGER {t}_no_update BEFORE UPDATE ON {t} BEGIN SELECT RAISE(ABORT, '{t} are append-only'); END",
    "CREATE TRIGGER {t}_no_delete BEFORE DELETE ON {t} BEGIN SELECT RAISE(ABORT, '{t} are append-only'); END",
]
APPEND_ONLY_PG = [
    "CREATE FUNCTION mjtable_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "RAISE EXCEPTION '% are append-only', TG_TABLE_NAME; END $$",
    "CREATE TRIGGER {t}_append_only BEFORE UPDATE OR DELETE ON {t} FOR EACH ROW EXECUTE FUNCTION mjtable_append_only()",
]


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(40), nullable=False, unique=True),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "facts",
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
    op.create_index("facts_event_seq", "facts", ["event_id", "seq"])
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        op.execute(APPEND_ONLY_PG[0])
        for table in ("events", "facts"):
            op.execute(APPEND_ONLY_PG[1].format(t=table))
    else:
        for table in ("events", "facts"):
            for statement in APPEND_ONLY_SQLITE:
                op.execute(statement.format(t=table))


def downgrade() -> None:
    op.drop_table("facts")
    op.drop_table("events")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION mjtable_append_only()")
