"""The tournament's storage: its facts in SQLite or PostgreSQL through one data layer (SQLAlchemy Core, Alembic)."""
