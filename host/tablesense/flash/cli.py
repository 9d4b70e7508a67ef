"""Commands of the ``flash`` room (filled in by the issue that owns this room)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this room's commands to the root ``tablesense`` app."""
