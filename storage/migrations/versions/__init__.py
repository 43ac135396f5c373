"""Revision scripts; Alembic loads them by path (this file only makes them ship with the package)."""
