"""The sim room."""
