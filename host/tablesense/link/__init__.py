"""The link room."""
