"""The virtual table: every board of a table layout, and the world on it.

:class:`VirtualTable` builds one :class:`~tablesense.sim.virtual_board.VirtualBoard`
per board of a :class:`~tablesense.table.geometry.TableGeometry` (each the real
firmware over emulated MFRC522 readers, on its own pseudo-terminal) and keeps
the world model: which tag lies on which cell. The world API is by cell id::

    table = VirtualTable(TableGeometry.load("dominoes-4"), seed=1)
    paths = table.start()                  # {board_id: "/dev/pts/N"}
    table.place("center", bytes.fromhex("04a1b2c3d4e5f6"))
    table.move("center", "left-1")
    table.remove("left-1")
    table.unplug(2); table.replug(2)       # replug gives a new path
    table.reboot(1)
    table.leds("center")                   # what that cell's LED shows
    table.stop()

Tag flicker, RF noise and unreadable tags are per-cell knobs
(:meth:`VirtualTable.set_noise`). The readers share one space
(:mod:`tablesense.sim.space`): on a layout packed too tight a tag answers
the neighbour's reader too, as on a real table. Link faults come from a
:class:`~tablesense.sim.faults.FaultPlan`; scheduled unplugs and reboots run
on a timer thread started with the table.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from tablesense.sim.faults import FaultPlan, ScheduledFault
from tablesense.sim.mfrc522_emu import EmulatedCard
from tablesense.sim.space import Space
from tablesense.sim.virtual_board import RGB, VirtualBoard
from tablesense.table.geometry import CellId, TableGeometry


class WorldError(ValueError):
    """A world change that cannot happen (a tag on an occupied cell, ...)."""


class VirtualTable:
    """Virtual boards + world model for one table layout; see the module docstring.

    ``link_dir``: a directory for stable per-board symlinks
    (``board-<id>`` -> the current ``/dev/pts/N``), like udev names; a
    temporary one is made when None and ``stable_links`` is true.
    ``on_path(board, path)`` is called whenever a board (re)appears.
    """

    def __init__(
        self,
        geometry: TableGeometry,
        seed: int = 0,
        faults: FaultPlan | None = None,
        *,
        scan_interval: float = 0.004,
        link_dir: str | Path | None = None,
        stable_links: bool = True,
        on_path: Callable[[int, str], None] | None = None,
        boards: dict[int, dict] | None = None,
        board_class: Callable[..., VirtualBoard] | None = None,
    ) -> None:
        self.geometry = geometry
        self.seed = seed
        self.faults = faults or FaultPlan(seed=seed)
        self._own_link_dir = False
        if link_dir is None and stable_links:
            link_dir = tempfile.mkdtemp(prefix="tablesense-sim-")
            self._own_link_dir = True
        self.link_dir = Path(link_dir) if link_dir is not None else None
        if self.link_dir is not None:
            self.link_dir.mkdir(parents=True, exist_ok=True)
        self._on_path = on_path
        self._lock = threading.RLock()
        self._world: dict[CellId, EmulatedCard] = {}
        self.boards: dict[int, VirtualBoard] = {}
        for b in geometry.boards:
            extra = (boards or {}).get(b.id, {})
            # board_class: another kind of board with VirtualBoard's interface
            # (an emulated RP2040: tablesense.sim.rp2040.board.Rp2040Board)
            self.boards[b.id] = (board_class or VirtualBoard)(
                geometry,
                b.id,
                seed=seed,
                faults=self.faults,
                link_dir=self.link_dir,
                scan_interval=scan_interval,
                on_path=self._path_changed,
                **extra,
            )
        # every reader's field in one space: a neighbour's tag close enough answers
        self.space = Space.of_boards(geometry, {bid: vb.chips for bid, vb in self.boards.items()})
        self.history: list[tuple[float, str, int | CellId, object]] = []
        self._t0 = time.monotonic()
        self._timer: threading.Thread | None = None
        self._stop = threading.Event()
        self._started = False

    # --- lifecycle ---------------------------------------------------------------

    def start(self, horizon: float = 3600.0) -> dict[int, str]:
        """Plug every board in; start the fault timeline. Returns the device paths."""
        self._t0 = time.monotonic()
        for vb in self.boards.values():
            vb.start()
        self._started = True
        timeline = self.faults.timeline(sorted(self.boards), horizon)
        if timeline:
            self._stop.clear()
            self._timer = threading.Thread(
                target=self._run_timeline,
                args=(timeline,),
                name="virtual-table faults",
                daemon=True,
            )
            self._timer.start()
        return self.device_paths()

    def stop(self) -> None:
        """Unplug everything and stop every thread; idempotent."""
        self._stop.set()
        if self._timer is not None:
            self._timer.join(2.0)
            self._timer = None
        for vb in self.boards.values():
            vb.stop()
        if self._own_link_dir and self.link_dir is not None:
            shutil.rmtree(self.link_dir, ignore_errors=True)
        self._started = False

    def __enter__(self) -> VirtualTable:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- paths -----------------------------------------------------------------------

    def device_paths(self) -> dict[int, str]:
        """Board id -> current /dev/pts/N of every plugged board."""
        return {bid: vb.path for bid, vb in self.boards.items() if vb.path is not None}

    def stable_paths(self) -> dict[int, str]:
        """Board id -> the symlink that follows the board across replugs."""
        return {
            bid: vb.stable_path for bid, vb in self.boards.items() if vb.stable_path is not None
        }

    # --- the world ---------------------------------------------------------------------

    def place(self, cell: CellId, uid: bytes) -> None:
        """Put a tag on an empty cell."""
        with self._lock:
            self._check(cell)
            if cell in self._world:
                raise WorldError(f"cell {cell!r} already holds {self._world[cell].uid.hex()}")
            for other, card in self._world.items():
                if card.uid == bytes(uid):
                    raise WorldError(f"tag {bytes(uid).hex()} already lies on {other!r}")
            card = _card(uid)
            self._world[cell] = card
            with self._board_lock(cell):  # not in the middle of the firmware's SPI exchange
                self._chip(cell).place(card)
            self._log("place", cell, bytes(uid))
            self._changed(cell)

    def remove(self, cell: CellId) -> bytes:
        """Take the tag off a cell; returns its UID."""
        with self._lock:
            self._check(cell)
            card = self._world.pop(cell, None)
            if card is None:
                raise WorldError(f"cell {cell!r} is empty")
            with self._board_lock(cell):
                self._chip(cell).remove()
            self._log("remove", cell, card.uid)
            self._changed(cell)
            return card.uid

    def move(self, from_cell: CellId, to_cell: CellId) -> None:
        """Lift a tag off one cell and put it on another."""
        with self._lock:
            self._check(to_cell)
            if to_cell in self._world:
                raise WorldError(f"cell {to_cell!r} already holds {self._world[to_cell].uid.hex()}")
            uid = self.remove(from_cell)
            self.place(to_cell, uid)

    def stack(self, cell: CellId, uid: bytes) -> None:
        """Put a second tag on an occupied cell (the reader sees a collision)."""
        with self._lock:
            self._check(cell)
            card = _card(uid)
            with self._board_lock(cell):
                self._chip(cell).add(card)
            self._log("stack", cell, bytes(uid))
            self._changed(cell)

    def clear(self) -> None:
        """Take every tag off the table."""
        with self._lock:
            for cell in list(self._world):
                self.remove(cell)
            for cid in self.geometry.cells:
                with self._board_lock(cid):
                    chip = self._chip(cid)
                    stacked = bool(chip.cards)
                    chip.remove()
                if stacked:  # a tag stacked on a cell the world no longer holds
                    self._changed(cid)

    def tags(self) -> dict[CellId, bytes]:
        """The world: cell -> UID of the tag lying there."""
        with self._lock:
            return {c: card.uid for c, card in self._world.items()}

    def set_noise(
        self,
        cell: CellId,
        *,
        noise: float | None = None,
        flicker: float | None = None,
        dead: bool | None = None,
    ) -> None:
        """Per-cell reader knobs: ``noise`` (answers corrupted: 1.0 = an
        unreadable tag), ``flicker`` (a tag misses exchanges), ``dead`` (the
        reader chip does not answer)."""
        chip = self._chip(cell)
        if noise is not None:
            chip.noise = noise
        if flicker is not None:
            chip.flicker = flicker
        if dead is not None:
            chip.dead = dead

    def leds(self, cell: CellId) -> RGB | None:
        """The colour the cell's LED shows now (None: the cell has no LED)."""
        c = self.geometry.cells[cell]
        if c.led is None:
            return None
        return self.boards[c.board].leds()[c.led]

    # --- board faults --------------------------------------------------------------------

    def unplug(self, board: int) -> None:
        self.boards[board].unplug()
        self._log("unplug", board, None)

    def replug(self, board: int) -> str:
        path = self.boards[board].replug()
        self._log("replug", board, path)
        return path

    def reboot(self, board: int) -> None:
        self.boards[board].reboot()
        self._log("reboot", board, None)

    # --- internals -----------------------------------------------------------------------

    def _check(self, cell: CellId) -> None:
        if cell not in self.geometry.cells:
            raise WorldError(f"table {self.geometry.name!r} has no cell {cell!r}")

    def _board_lock(self, cell: CellId) -> threading.RLock:
        """The lock the cell's board holds while its firmware steps."""
        return self.boards[self.geometry.cells[cell].board].lock

    def _changed(self, cell: CellId) -> None:
        """The world changed on ``cell``: every board that can read a
        difference steps fast again. That is the cell's own board and the
        boards of the readers whose field reaches the cell (a neighbour's
        field on a table laid out too tightly, :attr:`Space.heard_at`); the
        other boards stay quiet, since their chips answer exactly as before.
        During a match a move wakes one or two boards, not the whole table."""
        cells = self.space.heard_at.get(cell, [cell])
        for bid in sorted({self.geometry.cells[c].board for c in cells}):
            changed = getattr(self.boards[bid], "world_changed", None)  # another kind of board may not slow down
            if changed is not None:
                changed()

    def _chip(self, cell: CellId):
        c = self.geometry.cells[cell]
        return self.boards[c.board].chips[c.channel]

    def _log(self, what: str, target: int | CellId, detail: object) -> None:
        self.history.append((time.monotonic() - self._t0, what, target, detail))

    def _path_changed(self, board: int, path: str) -> None:
        if self._on_path is not None:
            with contextlib.suppress(Exception):
                self._on_path(board, path)

    def _run_timeline(self, timeline: list[ScheduledFault]) -> None:
        pending: list[tuple[float, str, int]] = []
        for f in timeline:
            pending.append((f.at, f.kind, f.board))
            if f.kind == "unplug" and f.duration is not None:
                pending.append((f.at + f.duration, "replug", f.board))
        pending.sort()
        for at, kind, board in pending:
            delay = self._t0 + at - time.monotonic()
            if delay > 0 and self._stop.wait(delay):
                return
            if self._stop.is_set():
                return
            if kind == "unplug":
                self.unplug(board)
            elif kind == "replug":
                self.replug(board)
            elif kind == "reboot":
                self.reboot(board)


def _card(uid: bytes) -> EmulatedCard:
    try:
        return EmulatedCard(bytes(uid))
    except ValueError as exc:
        raise WorldError(str(exc)) from None
