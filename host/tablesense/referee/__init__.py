"""The referee room."""
