"""Alembic migrations of the tournament database (a package so wheels ship them)."""
