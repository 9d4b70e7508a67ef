"""How long a reader's cable may be on the sensor board in hardware/kicad/.

The board splits its 32 readers into four groups of 8 (one 74LVC138A decoder
and one 74LVC125A buffer each). The Pico's SCK, MOSI and reset drive only the
four buffer inputs and a few cm of track; each buffer drives its own group's
SCK, MOSI and RST through 33 ohm (R10/R11 ... on the board) onto the 8 cables
of that group, and returns the group's MISO to the Pico only while the group
is enabled. So a line on a reader cable carries the capacitance of its
*group's* cables and reader inputs, never the whole board's.

Each group line is a lumped RC whose 10-90 % edge is about 2.2 R C and must
stay under a quarter of the SPI period. The weakest driver is MISO: one small
pad of the MFRC522 (about 100 ohm) into the group's segment; SCK and MOSI
have the buffer's ~25 ohm plus the 33 ohm resistor. Figures from the field
notes: ribbon or jumper wire about 50 pF a metre a conductor, about 10 pF a
reader input, and about 10 pF of the board's track from a buffer to its 8
connectors.

At 2 MHz (the reference clock) a quarter period is 125 ns, so a group's MISO
may carry 568 pF: a full group of 8 readers 1195 mm of cable each, capped at
:data:`MAX_ROUTE_MM` (1000 mm); a full group's MISO edge at 1000 mm is
108 ns, its SCK edge 63 ns. At 4 MHz (284 pF) a full group gets 485 mm.
docs/kicad.md and hardware/wiring.md quote these figures;
``tablesense hw check`` holds every reader of a layout to its group's reach.

The lumped model holds while a cable's round trip (about 10 ns a metre) is
well under the edge; :data:`MAX_ROUTE_MM` keeps it there, and keeps an
8-wire cable with one ground wire short enough for its crosstalk and the
field current's ground drop (0.1 A through 0.2 ohm) not to matter.

Cables run along the table's x and y under the top, so a reader's cable is
the x-then-y distance from its board plus :data:`ROUTE_SLACK_MM` for the
drop to the antenna and a service loop.
"""

from __future__ import annotations

GROUP_SIZE = 8  # readers per decoder and buffer on the board
CABLE_PF_PER_MM = 0.05
READER_INPUT_PF = 10.0
SEGMENT_PF = 10.0  # a buffer's track to its group's 8 connectors
READER_MISO_OHMS = 100.0  # the MFRC522's MISO pad: the weakest driver
BUFFER_OHMS = 25.0  # a 74LVC125A output at 3.3 V
SERIES_OHMS = 33.0  # the board's resistor on each group's SCK and MOSI
ROUTE_SLACK_MM = 50.0
MAX_ROUTE_MM = 1000.0


def route_mm(board: tuple[float, float], cell: tuple[float, float]) -> float:
    """The cable a reader at ``cell`` needs from a board at ``board`` (mm)."""
    return abs(board[0] - cell[0]) + abs(board[1] - cell[1]) + ROUTE_SLACK_MM


def group_of(channel: int) -> int:
    """The decoder/buffer group a reader channel belongs to."""
    return channel // GROUP_SIZE


def bus_budget_pf(baudrate: int) -> float:
    """The most capacitance a group's MISO (the weakest line) may carry."""
    quarter_period_ns = 1e9 / (4 * baudrate)
    return quarter_period_ns / (2.2 * READER_MISO_OHMS * 1e-3)


def edge_ns(capacitance_pf: float, ohms: float = READER_MISO_OHMS) -> float:
    """The 10-90 % edge of a line of this capacitance (MISO unless told)."""
    return 2.2 * ohms * capacitance_pf * 1e-3


def clock_edge_ns(capacitance_pf: float) -> float:
    """The edge of a group's SCK or MOSI: buffer plus series resistor."""
    return edge_ns(capacitance_pf, BUFFER_OHMS + SERIES_OHMS)


def segment_pf(routes_mm: list[float]) -> float:
    """A group's line capacitance with readers on cables of these lengths."""
    return SEGMENT_PF + len(routes_mm) * READER_INPUT_PF + CABLE_PF_PER_MM * sum(routes_mm)


def reach_mm(readers: int, baudrate: int) -> float:
    """The cable every one of a group's ``readers`` may have at ``baudrate``
    (each gets an equal share of the group's budget; 0 if none fits)."""
    if readers <= 0:
        return 0.0
    if readers > GROUP_SIZE:
        raise ValueError(f"a group has at most {GROUP_SIZE} readers, not {readers}")
    spare = bus_budget_pf(baudrate) - SEGMENT_PF - readers * READER_INPUT_PF
    return min(MAX_ROUTE_MM, max(0.0, spare / (readers * CABLE_PF_PER_MM)))
