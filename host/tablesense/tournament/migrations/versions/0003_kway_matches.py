"""Matches between more than two entrants: the seat-order list and per-entrant scores.

A table of three brazilian-points players, or of three or four Kems teams,
plays one match between k entrants. ``entrants`` holds all of them in seat
order and ``scores`` their match scores in the same order; ``entrant_a`` /
``entrant_b`` and ``score_a`` / ``score_b`` keep the first two, so every
two-entrant reader keeps working. Both are NULL for two-entrant matches.

Revision ID: 0003_kway
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_kway"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("ts_matches", sa.Column("entrants", sa.JSON(), nullable=True))
    op.add_column("ts_matches", sa.Column("scores", sa.JSON(), nullable=True))


def downgrade() -> None:
    # Plain ALTER TABLE ... DROP COLUMN (SQLite 3.35+, PostgreSQL): a batch
    # rebuild of ts_matches would have to drop a table that results refer to.
    op.execute("ALTER TABLE ts_matches DROP COLUMN scores")
    op.execute("ALTER TABLE ts_matches DROP COLUMN entrants")
