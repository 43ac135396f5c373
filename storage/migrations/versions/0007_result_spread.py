"""Spread of a result: how much the figure varied within its run (per-interval rates) or across the
repeats of a test, as one JSON object (storage.spread) in results.spread; NULL for a figure without one,
which every result stored before this revision is.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # a nullable column: ALTER TABLE ADD COLUMN in place, also on SQLite (no table copy)
    op.add_column("results", sa.Column("spread", sa.JSON(none_as_null=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.drop_column("spread")
