"""The diag room."""
