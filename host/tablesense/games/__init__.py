"""The games room."""
