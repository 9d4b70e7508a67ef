"""The hw room."""
