"""The games room: the pure rules engines (dominoes, Kems) behind one `Game` interface and its registry
(`games/registry.py`: the one list of games, variants and seat counts; see games.md), game records
and replay, the computer players and the coach.
"""
