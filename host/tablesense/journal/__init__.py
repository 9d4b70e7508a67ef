"""The journal room: the durable log of accepted moves (SQLite WAL, fsync) from which a table resumes,
and a table's outbox towards the director (`outbox.py`: its assignment, unacknowledged messages and
match states, keyed by table and event).
"""
