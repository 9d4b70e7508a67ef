"""How long a reader's cable may be: the SPI bus of one board as a lumped RC.

Every reader of a board hangs on the same SCK, MOSI and MISO lines, so each
line carries the capacitance of *all* the board's cables and reader inputs.
The weakest driver is MISO: one small pad of the MFRC522 (about 100 ohm of
source impedance; the RP2040 drives SCK and MOSI at 12 mA through 33 ohm,
about the same). A line's 10-90 % edge is about 2.2 R C, and it must stay
under a quarter of the SPI period, or the RP2040 samples MISO before it has
settled. Figures from the field notes: flat ribbon about 50 pF a metre a
conductor, about 10 pF a reader input, and the board's own pad, trace and
connector about 15 pF.

At 2 MHz a quarter period is 125 ns, so a line may carry 568 pF: 16 readers
on 490 mm of cable each, 12 on 720 mm, 7 on 1.38 m (capped at
:data:`MAX_ROUTE_MM`); at 4 MHz (284 pF) 16 readers get 136 mm and 7 get
570 mm. hardware/wiring.md tabulates it; ``tablesense hw check`` holds every
reader of a layout to its board's figure.

The lumped model holds while a cable's round trip (about 10 ns a metre) is
well under the edge; :data:`MAX_ROUTE_MM` keeps it there (and keeps
unshielded ribbon short enough for its crosstalk not to matter).

Cables run along the table's x and y under the top, so a reader's cable is
the x-then-y distance from its board plus :data:`ROUTE_SLACK_MM` for the
drop to the antenna and a service loop.
"""

from __future__ import annotations

CABLE_PF_PER_MM = 0.05
READER_INPUT_PF = 10.0
BOARD_PF = 15.0
DRIVER_OHMS = 100.0
ROUTE_SLACK_MM = 50.0
MAX_ROUTE_MM = 1000.0


def route_mm(board: tuple[float, float], cell: tuple[float, float]) -> float:
    """The cable a reader at ``cell`` needs from a board at ``board`` (mm)."""
    return abs(board[0] - cell[0]) + abs(board[1] - cell[1]) + ROUTE_SLACK_MM


def bus_budget_pf(baudrate: int) -> float:
    """The most capacitance one line may carry at this SPI clock."""
    quarter_period_ns = 1e9 / (4 * baudrate)
    return quarter_period_ns / (2.2 * DRIVER_OHMS * 1e-3)


def edge_ns(capacitance_pf: float) -> float:
    """The 10-90 % edge of a line of this capacitance."""
    return 2.2 * DRIVER_OHMS * capacitance_pf * 1e-3


def bus_pf(routes_mm: list[float]) -> float:
    """A board's line capacitance with readers on cables of these lengths."""
    return BOARD_PF + len(routes_mm) * READER_INPUT_PF + CABLE_PF_PER_MM * sum(routes_mm)


def reach_mm(readers: int, baudrate: int) -> float:
    """The cable every one of ``readers`` readers may have at ``baudrate``
    (each gets an equal share of the line's budget; 0 if none fits)."""
    if readers <= 0:
        return 0.0
    spare = bus_budget_pf(baudrate) - BOARD_PF - readers * READER_INPUT_PF
    return min(MAX_ROUTE_MM, max(0.0, spare / (readers * CABLE_PF_PER_MM)))
