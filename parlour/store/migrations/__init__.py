"""Alembic's migrations of the tournament database (run by :func:`parlour.store.facts_store.migrate`)."""
