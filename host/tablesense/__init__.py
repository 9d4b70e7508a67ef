"""tablesense: the software of a smart game table.

RFID-tagged domino tiles and playing cards lie on a sensor table; MicroPython
sensor boards read the tags and talk to this host over USB serial; the host
referees every move against a pure rules engine and drives LEDs and a display.

Rooms (a room imports only rooms to its left in the data flow):

    games -> link -> table -> referee -> journal -> outputs -> web
    tournament, flash, diag, sim, hw: tools built on the rooms above
"""

__version__ = "0.1.0"
