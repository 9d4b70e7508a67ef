"""The tournament room."""
