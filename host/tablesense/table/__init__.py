"""The table room: the table's vocabulary, knowing no game (a layout names its games as plain strings):
geometry files, tag registry, `TableState` cell readings, the antenna model of how far a reader's
field reaches a tag (`antenna.py`, shared by `hw check` and the emulator), the table room's
sentences (`words.py`).
"""
