"""Merge the boards' channel readings into one :class:`TableState`.

Each board reports readings by channel; the table geometry says which cell
each ``(board, channel)`` is. The merger keeps the latest reading of every
cell, marks every cell of a board that is not online as ``Offline``, and
builds a new immutable :class:`TableState` for each change (no change, no new
state). It is thread-safe: board connections call it from their own threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from tablesense.table.geometry import CellId, TableGeometry
from tablesense.table.state import OFFLINE, Reading, TableState


class Merger:
    """Channel readings of all boards -> the table's cell readings."""

    def __init__(
        self, geometry: TableGeometry, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.geometry = geometry
        self._clock = clock
        self._lock = threading.Lock()
        self._cells: dict[CellId, Reading] = {cid: OFFLINE for cid in geometry.cells}
        self._online: dict[int, bool] = {b.id: False for b in geometry.boards}
        self._channel_cell: dict[tuple[int, int], CellId] = {
            (c.board, c.channel): c.id for c in geometry.cells.values()
        }
        self._board_cells: dict[int, list[CellId]] = {
            b.id: [c.id for c in geometry.cells_of_board(b.id)] for b in geometry.boards
        }
        # Readings of a board that is not online yet (its first snapshot arrives
        # just before it is declared online).
        self._pending_store: dict[int, dict[CellId, Reading]] = {}
        # Online boards whose cells may be stale (a resync is pending).
        self._syncing: set[int] = set()
        self._version = 0
        self._state = TableState(self._cells, self._online, clock(), 0)

    @property
    def state(self) -> TableState:
        return self._state

    def apply(
        self,
        board: int,
        readings: Mapping[int, Reading],
        full: bool = False,
        received_at: float | None = None,
    ) -> TableState | None:
        """Apply channel readings of one board (a snapshot when ``full``).

        Returns the new state, or None when nothing changed. Readings of an
        offline board are kept (they will show once it is online)."""
        with self._lock:
            changed = False
            cells = self._cells
            online = self._online.get(board, False)
            pending = self._pending(board)
            for channel, reading in readings.items():
                cid = self._channel_cell.get((board, channel))
                if cid is None:
                    continue  # a channel with no cell in this layout
                if online:
                    if cells[cid] != reading:
                        cells[cid] = reading
                        changed = True
                else:
                    pending[cid] = reading
            if not changed:
                return None
            return self._publish(cells_changed=True, received_at=received_at)

    def set_online(
        self, board: int, online: bool, received_at: float | None = None
    ) -> TableState | None:
        """Mark a board online (its last readings show) or offline (its cells read Offline)."""
        with self._lock:
            if board not in self._online or self._online[board] == online:
                return None
            self._online[board] = online
            self._syncing.discard(board)
            cells_changed = False
            pending = self._pending(board)
            for cid in self._board_cells.get(board, []):
                new = pending.get(cid, OFFLINE) if online else OFFLINE
                if self._cells[cid] != new:
                    self._cells[cid] = new
                    cells_changed = True
            # Going offline, readings from before are stale (the next snapshot decides);
            # coming online, the pending snapshot is now the live state.
            pending.clear()
            return self._publish(cells_changed=cells_changed, received_at=received_at)

    def set_sync(
        self, board: int, in_sync: bool, received_at: float | None = None
    ) -> TableState | None:
        """Mark an online board's cells as trustworthy or as possibly stale
        (a sequence gap or CRC error; a snapshot is on its way)."""
        with self._lock:
            if board not in self._online:
                return None
            was = board in self._syncing
            if in_sync:
                self._syncing.discard(board)
            else:
                self._syncing.add(board)
            if was == (board in self._syncing):
                return None
            return self._publish(cells_changed=False, received_at=received_at)

    def _pending(self, board: int) -> dict[CellId, Reading]:
        return self._pending_store.setdefault(board, {})

    def _publish(self, cells_changed: bool, received_at: float | None) -> TableState:
        self._version += 1
        since = self._clock() if cells_changed else self._state.stable_since
        at = received_at if received_at is not None else time.perf_counter()
        st = TableState(
            self._cells,
            self._online,
            since,
            self._version,
            received_at=at,
            syncing=frozenset(self._syncing),
        )
        self._state = st
        return st
