"""tablesense: the software of a smart game table.

RFID-tagged domino tiles and playing cards lie on a sensor table; MicroPython
sensor boards read the tags and talk to this host over USB serial; the host
referees every move against a pure rules engine and drives LEDs and a display.

Data flows one way: boards -> link -> table state -> referee -> engine
(games) -> journal -> outputs (LEDs, display, director). docs/architecture.md
names every room and which may import which; tests/architecture holds the
code to it.

``__version__`` is the one place the version is written (pyproject.toml reads
it from here).
"""

__version__ = "0.1.0"
