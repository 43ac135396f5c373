"""Repeats of a test (a run's repeat group) and a host's price.

runs.repeat_group names the runs that repeat one test on one host (32 hex digits, NULL for a run
that is not repeated) and repeat_index their order (1, 2, ...). hosts.price_* hold an optional price
per host, so a comparison can show figures per price unit.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_RUN_COLUMNS = ("repeat_index", "repeat_group")
_HOST_COLUMNS = ("price_source", "price_date", "price_period", "price_currency", "price_amount")


def upgrade() -> None:
    # ADD COLUMN, no batch mode: recreating `runs` on SQLite would cascade to its children (see 0003).
    op.add_column("runs", sa.Column("repeat_group", sa.String(32), nullable=True))
    op.add_column("runs", sa.Column("repeat_index", sa.Integer(), nullable=True))
    op.create_index("ix_runs_repeat_group", "runs", ["repeat_group"])
    # NULL amount: no price; the other columns only mean something with an amount
    op.add_column("hosts", sa.Column("price_amount", sa.Double(), nullable=True))
    op.add_column("hosts", sa.Column("price_currency", sa.String(10), nullable=False, server_default=""))
    op.add_column("hosts", sa.Column("price_period", sa.String(20), nullable=False, server_default=""))
    op.add_column("hosts", sa.Column("price_date", sa.String(10), nullable=False, server_default=""))
    op.add_column("hosts", sa.Column("price_source", sa.Text(), nullable=False, server_default=""))


def _drop(table: str, column: str) -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")   # SQLite 3.35+; batch mode would cascade
    else:
        op.drop_column(table, column)


def downgrade() -> None:
    op.drop_index("ix_runs_repeat_group", table_name="runs")
    for column in _RUN_COLUMNS:
        _drop("runs", column)
    for column in _HOST_COLUMNS:
        _drop("hosts", column)
