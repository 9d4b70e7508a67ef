"""Alembic environment of the tournament database.

Used only through :func:`tablesense.tournament.db.upgrade`, which hands over an
open connection (so a PostgreSQL ``search_path`` chosen by the URL is kept).
"""

from __future__ import annotations

from alembic import context

from tablesense.tournament.db import Base

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reached through the alembic CLI
    raise RuntimeError("run migrations through tablesense.tournament.db.upgrade()")

context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
