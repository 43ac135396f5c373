"""A running run's remote state and owner, so a workbench can re-attach to it after a crash.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # ADD COLUMN, no batch mode: recreating `runs` on SQLite would cascade to its children (see 0003).
    # Both nullable: runs stored before know neither, and finished runs need neither.
    op.add_column("runs", sa.Column("remote_state", sa.JSON(), nullable=True))
    op.add_column("runs", sa.Column("owner", sa.JSON(), nullable=True))


def downgrade() -> None:
    for column in ("owner", "remote_state"):
        if op.get_bind().dialect.name == "sqlite":
            op.execute(f"ALTER TABLE runs DROP COLUMN {column}")   # SQLite 3.35+; batch mode would cascade
        else:
            op.drop_column("runs", column)
