"""Alembic migrations for the Benchbay store (run through storage.migrate, no alembic.ini)."""
