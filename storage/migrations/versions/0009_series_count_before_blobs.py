"""series.count before the two blobs on SQLite: a long series is written into zero-filled blobs a piece
at a time, and SQLite keeps a zero-filled blob unwritten only when no stored value follows it in the row;
with count after them it builds both blobs in memory whole (hundreds of MB for a month of telemetry).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26
"""
from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

ORDER = ("id", "run_id", "name", "device", "unit", "count", "t_blob", "values_blob")


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return   # where a column sits does not change how PostgreSQL stores a row
    # batch mode recreates `series` (copy, drop, rename): safe, no table refers to it (see 0006); its
    # foreign key (ON DELETE CASCADE to runs) and index are recreated with it
    with op.batch_alter_table("series", recreate="always", partial_reordering=[ORDER]):
        pass


def downgrade() -> None:
    """Nothing to undo: every version reads the columns by name."""
