"""The referee room: table state to moves or explained rejections (asking the match's `Game` for
everything game-specific, and `rules.py` for how each game's pieces lie on a table), and the session
that wires link → referee → journal → events for `play` and `demo`.
"""
