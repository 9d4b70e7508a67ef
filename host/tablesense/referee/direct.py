"""A table without boards: the pieces' places, turned straight into TableStates.

:class:`DirectTable` is the in-process stand-in for the link when what is
under test is the referee and the match flow, not the boards: the journal
crash test, fast referee integration tests, and ``tablesense demo --link
direct``. It offers both faces the demo needs: the link's (``state()``,
``subscribe``, ``set_leds``) and the virtual table's world API (``place``,
``remove``, ``move``). With ``path`` it keeps the pieces' places in a file
(written atomically on every change), as a real table keeps its tiles when
the host loses power, so a restarted host finds them where they were.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tablesense.table.geometry import TableGeometry
from tablesense.table.state import EMPTY, TableState, Tag

StateCallback = Callable[[TableState], None]


class DirectTable:
    """See the module docstring. Thread-safe; callbacks run in the caller's
    thread after the change."""

    def __init__(
        self,
        geometry: TableGeometry,
        *,
        path: str | os.PathLike[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.geometry = geometry
        self.path = Path(path) if path is not None else None
        self._clock = clock
        self._lock = threading.RLock()
        self._uids: dict[str, bytes] = {}
        self._leds: dict[str, tuple[int, int, int]] = {}
        self._subs: list[tuple[StateCallback | None, Any]] = []
        self._version = 0
        self._since = clock()
        if self.path is not None and self.path.exists():
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self._uids = {c: bytes.fromhex(u) for c, u in data.get("cells", {}).items()}

    # -- world ---------------------------------------------------------------
    def place(self, cell_id: str, uid: bytes) -> None:
        with self._lock:
            if cell_id not in self.geometry.cells:
                raise KeyError(f"no cell {cell_id!r} on table {self.geometry.name!r}")
            self._uids[cell_id] = bytes(uid)
            self._changed()

    def remove(self, cell_id: str) -> bytes | None:
        with self._lock:
            uid = self._uids.pop(cell_id, None)
            self._changed()
            return uid

    def move(self, from_cell: str, to_cell: str) -> None:
        with self._lock:
            uid = self._uids.pop(from_cell)
            self._uids[to_cell] = uid
            self._changed()

    def uid_at(self, cell_id: str) -> bytes | None:
        with self._lock:
            return self._uids.get(cell_id)

    def contents(self) -> dict[str, bytes]:
        with self._lock:
            return dict(self._uids)

    # -- link face -------------------------------------------------------------
    def state(self) -> TableState:
        with self._lock:
            cells = {
                c: (Tag(self._uids[c]) if c in self._uids else EMPTY) for c in self.geometry.cells
            }
            return TableState(
                cells, {b.id: True for b in self.geometry.boards}, self._since, self._version
            )

    def subscribe(
        self, on_state: StateCallback | None = None, on_status: Any = None
    ) -> Callable[[], None]:
        entry = (on_state, on_status)
        with self._lock:
            self._subs.append(entry)

        def unsubscribe() -> None:
            with self._lock:
                if entry in self._subs:
                    self._subs.remove(entry)

        return unsubscribe

    def set_leds(self, cell_colors: Mapping[str, tuple[int, int, int]]) -> None:
        with self._lock:
            self._leds = dict(cell_colors)

    def leds(self, cell_id: str) -> tuple[int, int, int]:
        with self._lock:
            return self._leds.get(cell_id, (0, 0, 0))

    def start(self) -> None:
        """Nothing to start (the link face is always up)."""

    def stop(self) -> None:
        with self._lock:
            self._subs.clear()

    def _changed(self) -> None:
        self._version += 1
        self._since = self._clock()
        if self.path is not None:
            tmp = self.path.with_name(self.path.name + ".tmp")
            data = json.dumps({"cells": {c: u.hex() for c, u in sorted(self._uids.items())}})
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        state = self.state()
        for on_state, _ in list(self._subs):
            if on_state is not None:
                on_state(state)
