"""Initial tournament schema: events, entrants, tables, rounds, matches, results, audit.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ts_events",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("game", sa.String(20), nullable=False),
        sa.Column("variant", sa.String(40), nullable=False),
        sa.Column("format", sa.String(20), nullable=False),
        sa.Column("options", sa.JSON, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "ts_entrants",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("event_id", sa.Integer, sa.ForeignKey("ts_events.id"), nullable=False, index=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("members", sa.JSON, nullable=False),
        sa.Column("badges", sa.JSON, nullable=False),
        sa.Column("seed", sa.Integer, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("bye_rounds", sa.JSON, nullable=False),
        sa.UniqueConstraint("event_id", "name", name="uq_ts_entrant_name"),
    )
    op.create_table(
        "ts_tables",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("event_id", sa.Integer, sa.ForeignKey("ts_events.id"), nullable=False, index=True),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("public_key", sa.Text, nullable=False),
        sa.Column("online", sa.Boolean, nullable=False),
        sa.Column("last_seen", sa.Float, nullable=False),
        sa.UniqueConstraint("event_id", "number", name="uq_ts_table_number"),
    )
    op.create_table(
        "ts_rounds",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("event_id", sa.Integer, sa.ForeignKey("ts_events.id"), nullable=False, index=True),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("stage", sa.String(20), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.UniqueConstraint("event_id", "number", name="uq_ts_round_number"),
    )
    op.create_table(
        "ts_matches",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("event_id", sa.Integer, sa.ForeignKey("ts_events.id"), nullable=False, index=True),
        sa.Column("round_id", sa.Integer, sa.ForeignKey("ts_rounds.id"), nullable=False, index=True),
        sa.Column("round_no", sa.Integer, nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("table_no", sa.Integer, nullable=True),
        sa.Column("entrant_a", sa.Integer, sa.ForeignKey("ts_entrants.id"), nullable=False),
        sa.Column("entrant_b", sa.Integer, sa.ForeignKey("ts_entrants.id"), nullable=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("group_no", sa.Integer, nullable=True),
        sa.Column("best_of", sa.Integer, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("score_a", sa.Float, nullable=True),
        sa.Column("score_b", sa.Float, nullable=True),
        sa.Column("winner_id", sa.Integer, nullable=True),
        sa.Column("games", sa.JSON, nullable=False),
        sa.Column("result_id", sa.Integer, nullable=True),
        sa.Column("confirmed", sa.Boolean, nullable=False),
    )
    op.create_table(
        "ts_results",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("event_id", sa.Integer, sa.ForeignKey("ts_events.id"), nullable=False, index=True),
        sa.Column("round_no", sa.Integer, nullable=False),
        sa.Column("table_no", sa.Integer, nullable=False),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("match_id", sa.Integer, sa.ForeignKey("ts_matches.id"), nullable=False, index=True),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("received_at", sa.Float, nullable=False),
        sa.UniqueConstraint("event_id", "round_no", "table_no", "revision", name="uq_ts_result_key"),
    )
    op.create_table(
        "ts_audit",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("event_id", sa.Integer, sa.ForeignKey("ts_events.id"), nullable=False, index=True),
        sa.Column("ts", sa.Float, nullable=False),
        sa.Column("actor", sa.String(80), nullable=False),
        sa.Column("action", sa.String(40), nullable=False),
        sa.Column("match_id", sa.Integer, nullable=True),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("detail", sa.JSON, nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
    )


def downgrade() -> None:
    for name in ("ts_audit", "ts_results", "ts_matches", "ts_rounds", "ts_tables", "ts_entrants", "ts_events"):
        op.drop_table(name)
