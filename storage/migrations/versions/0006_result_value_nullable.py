"""results.value may be NULL: SQLite stores a NaN float as NULL, so a NaN result (a metric that could not
be computed) could not be stored, nor imported from a document that holds "NaN". NULL now reads back as
NaN (storage.models.NaNDouble).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # SQLite cannot drop NOT NULL in place: batch mode recreates `results` (copy, drop, rename). Safe here,
    # unlike for `runs` (see 0003): no table refers to `results`, so dropping it cascades to nothing, and its
    # own foreign key (ON DELETE CASCADE to runs) and index are recreated with it. Elsewhere: ALTER COLUMN.
    with op.batch_alter_table("results") as batch:
        batch.alter_column("value", existing_type=sa.Double(), nullable=True)


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        nan_results = bind.execute(sa.text("SELECT count(*) FROM results WHERE value IS NULL")).scalar_one()
        if nan_results:
            raise RuntimeError(f"{nan_results} results are NaN, which revision 0005 cannot hold; not downgraded")
    with op.batch_alter_table("results") as batch:
        batch.alter_column("value", existing_type=sa.Double(), nullable=False)
