"""The flash room."""
