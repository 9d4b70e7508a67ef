"""A club's memory: players across events, their rating changes, seasons.

- ``ts_players``: a club's players (name, badge, club), kept across events;
- ``ts_entrant_players``: which players an entrant of one event is (one for
  an individual, two for a pair), in seat-partner order;
- ``ts_rating_changes``: one row per player per rated match, in the order
  the ratings were computed (``seq`` per game family), so a player's rating
  history is a query and a correction replays from its first affected row;
- ``ts_seasons`` / ``ts_season_events``: a championship over several events.

Revision ID: 0004_club_players
Revises: 0003_kway
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_club_players"
down_revision = "0003_kway"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ts_players",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("badge", sa.String(64), nullable=True),
        sa.Column("club", sa.String(200), nullable=False, server_default=""),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.UniqueConstraint("badge", name="uq_ts_player_badge"),
    )
    op.create_index("ix_ts_players_name", "ts_players", ["name"])
    op.create_table(
        "ts_entrant_players",
        sa.Column("entrant_id", sa.Integer(), sa.ForeignKey("ts_entrants.id"), primary_key=True),
        sa.Column("position", sa.Integer(), primary_key=True),
        sa.Column("player_id", sa.Integer(), sa.ForeignKey("ts_players.id"), nullable=False, index=True),
    )
    op.create_table(
        "ts_rating_changes",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("family", sa.String(30), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), sa.ForeignKey("ts_players.id"), nullable=False, index=True),
        sa.Column("event_id", sa.Integer(), sa.ForeignKey("ts_events.id"), nullable=False, index=True),
        sa.Column("round_no", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), sa.ForeignKey("ts_matches.id"), nullable=False, index=True),
        sa.Column("outcome", sa.String(64), nullable=False),
        sa.Column("mu_before", sa.Float(), nullable=False),
        sa.Column("sigma_before", sa.Float(), nullable=False),
        sa.Column("mu_after", sa.Float(), nullable=False),
        sa.Column("sigma_after", sa.Float(), nullable=False),
    )
    op.create_index("ix_ts_rating_changes_family_seq", "ts_rating_changes", ["family", "seq"])
    op.create_table(
        "ts_seasons",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
    )
    op.create_table(
        "ts_season_events",
        sa.Column("season_id", sa.Integer(), sa.ForeignKey("ts_seasons.id"), primary_key=True),
        sa.Column("event_id", sa.Integer(), sa.ForeignKey("ts_events.id"), primary_key=True),
    )


def downgrade() -> None:
    op.drop_table("ts_season_events")
    op.drop_table("ts_seasons")
    op.drop_index("ix_ts_rating_changes_family_seq", table_name="ts_rating_changes")
    op.drop_table("ts_rating_changes")
    op.drop_table("ts_entrant_players")
    op.drop_index("ix_ts_players_name", table_name="ts_players")
    op.drop_table("ts_players")
