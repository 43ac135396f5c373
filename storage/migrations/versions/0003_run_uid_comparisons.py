"""Run uid (a run keeps its identity when it moves to another store) and saved comparisons.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""
from __future__ import annotations

import uuid

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # No batch mode on SQLite: recreating `runs` means DROP TABLE runs, which with foreign keys on
    # cascades to facts, results, series and events. ADD COLUMN keeps the table; NOT NULL needs a
    # default for that, overwritten just below (and dropped where the server allows it).
    op.add_column("runs", sa.Column("uid", sa.String(length=32), nullable=False, server_default=""))
    bind = op.get_bind()
    ids = [row[0] for row in bind.execute(sa.text("SELECT id FROM runs"))]
    if ids:
        bind.execute(
            sa.text("UPDATE runs SET uid = :uid WHERE id = :id"),
            [{"id": run_id, "uid": uuid.uuid4().hex} for run_id in ids],
        )
    if bind.dialect.name != "sqlite":
        op.alter_column("runs", "uid", server_default=None)
    op.create_index("ix_runs_uid", "runs", ["uid"], unique=True)

    op.create_table(
        "comparisons",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("customer", sa.Text(), nullable=False),
        sa.Column("author", sa.Text(), nullable=False),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column("run_uids", sa.JSON(), nullable=False),
        sa.Column("baseline_uid", sa.String(length=32), nullable=True),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_comparisons"),
    )


def downgrade() -> None:
    op.drop_table("comparisons")
    op.drop_index("ix_runs_uid", table_name="runs")
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE runs DROP COLUMN uid")   # SQLite 3.35+; batch mode would cascade (above)
    else:
        op.drop_column("runs", "uid")
