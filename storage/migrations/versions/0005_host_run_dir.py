"""A host's run directory: where the user wants the agent's run directories on that host.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # ADD COLUMN with a default: hosts stored before have none set ("" = $TMPDIR, /tmp ...)
    op.add_column("hosts", sa.Column("run_dir", sa.Text(), nullable=False, server_default=""))


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE hosts DROP COLUMN run_dir")   # SQLite 3.35+, as in 0004
    else:
        op.drop_column("hosts", "run_dir")
