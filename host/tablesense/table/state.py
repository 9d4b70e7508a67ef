"""The merged table state: what every cell of the table reads right now.

The link layer's merger (:mod:`tablesense.link.merger`) produces a new
:class:`TableState` each time a board's cells change, from board snapshots
(the truth) and cell events (hints). The referee only ever sees whole
``TableState`` values: it never talks to a board.

A cell reads one of:

- :class:`Empty` -- the reader sees no tag;
- :class:`Tag` -- the reader sees exactly this UID;
- :class:`ReadError` -- the reader could not tell (bad CRC, two tags, a tag
  sliding, reader fault): never the same as empty;
- :class:`Unscanned` -- the board is up but has not read this cell since it
  (re)started (lasts one sweep after a reboot);
- :class:`Offline` -- the board of this cell is not connected.

Only the first three are *known* readings; :attr:`TableState.complete` tells the
referee whether every cell is known, i.e. whether it may judge the table.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from tablesense.table.geometry import CellId


@dataclass(frozen=True, slots=True)
class Empty:
    """No tag on the cell."""

    def __str__(self) -> str:
        return "empty"


@dataclass(frozen=True, slots=True)
class Tag:
    """A tag with this UID (4, 7 or 10 bytes) lies on the cell."""

    uid: bytes

    def __str__(self) -> str:
        return self.uid.hex()

    def __repr__(self) -> str:
        return f"Tag(bytes.fromhex({self.uid.hex()!r}))"


@dataclass(frozen=True, slots=True)
class ReadError:
    """The reader could not tell what lies on the cell (``code``: proto.ERR_*)."""

    code: int

    def __str__(self) -> str:
        return f"read-error({ERROR_NAMES.get(self.code, self.code)})"


@dataclass(frozen=True, slots=True)
class Unscanned:
    """The board restarted and has not read this cell yet."""

    def __str__(self) -> str:
        return "unscanned"


@dataclass(frozen=True, slots=True)
class Offline:
    """The cell's board is not connected (unplugged, rebooting, mismatched)."""

    def __str__(self) -> str:
        return "offline"


Reading = Empty | Tag | ReadError | Unscanned | Offline

EMPTY = Empty()
UNSCANNED = Unscanned()
OFFLINE = Offline()

#: Names of the proto.ERR_* codes, for messages.
ERROR_NAMES = {1: "timeout", 2: "crc", 3: "collision", 4: "protocol", 5: "unstable"}


def is_known(reading: Reading) -> bool:
    """True for a reading the referee may judge (empty, a tag, or a read error)."""
    return isinstance(reading, Empty | Tag | ReadError)


class TableState(Mapping[CellId, Reading]):
    """An immutable snapshot of the whole table: cell id -> reading.

    ``boards_online`` maps each board id to whether it is connected and in
    sync; ``stable_since`` is the monotonic time (seconds) at which the cell
    readings last changed (board status changes do not reset it); ``version``
    counts the changes since the link started, so two states can be ordered;
    ``received_at`` is the ``time.perf_counter()`` at which the frame that
    caused this state arrived (latency measurements); ``syncing`` holds the
    online boards whose cells may be stale because a frame was lost and a
    snapshot is on its way (a fraction of a second).
    """

    __slots__ = ("_cells", "boards_online", "stable_since", "version", "received_at", "syncing")

    def __init__(
        self,
        cells: Mapping[CellId, Reading],
        boards_online: Mapping[int, bool],
        stable_since: float,
        version: int = 0,
        received_at: float = 0.0,
        syncing: frozenset[int] = frozenset(),
    ) -> None:
        self._cells: dict[CellId, Reading] = dict(cells)
        self.boards_online: dict[int, bool] = dict(boards_online)
        self.stable_since = stable_since
        self.version = version
        self.received_at = received_at
        self.syncing = syncing

    # Mapping protocol
    def __getitem__(self, cell: CellId) -> Reading:
        return self._cells[cell]

    def __iter__(self) -> Iterator[CellId]:
        return iter(self._cells)

    def __len__(self) -> int:
        return len(self._cells)

    def __eq__(self, other: object) -> bool:
        """Two states are equal when their cell readings and board status are;
        timing (``stable_since``, ``version``) is not compared."""
        if not isinstance(other, TableState):
            return NotImplemented
        return self._cells == other._cells and self.boards_online == other.boards_online

    def __hash__(self) -> int:
        return hash(frozenset(self._cells.items()))

    def __repr__(self) -> str:
        shown = {c: str(r) for c, r in self._cells.items() if not isinstance(r, Empty)}
        return f"TableState(v{self.version}, {shown}, online={self.boards_online})"

    @property
    def complete(self) -> bool:
        """Every board online and in sync, every cell known: the referee may judge this state."""
        return (
            all(self.boards_online.values())
            and not self.syncing
            and all(is_known(r) for r in self._cells.values())
        )

    def tags(self) -> dict[CellId, bytes]:
        """Cells that hold a tag -> its UID."""
        return {c: r.uid for c, r in self._cells.items() if isinstance(r, Tag)}

    def cells(self) -> dict[CellId, Reading]:
        """A mutable copy of the readings."""
        return dict(self._cells)

    def diff(self, other: TableState) -> dict[CellId, tuple[Reading | None, Reading | None]]:
        """Cells whose reading differs: cell -> (self's, other's)."""
        keys = set(self._cells) | set(other._cells)
        return {
            k: (self._cells.get(k), other._cells.get(k))
            for k in sorted(keys)
            if self._cells.get(k) != other._cells.get(k)
        }

    def same_cells(self, other: TableState) -> bool:
        """Equal cell readings, whatever the board status."""
        return self._cells == other._cells
