"""The computer seats' hands on a virtual table: they carry out the
session's ``suggestion`` events the way a person at a real table follows the
lights (lift the tile, lay it on the lit cell; press the seat button to pass
or call). ``demo`` drives them (:mod:`.demo`), and ``demo --sit`` keeps them
in step with the people at their pages (:mod:`.sit`)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

from tablesense.outputs.events import EventBus, TableEvent
from tablesense.table.tags import TagRegistry

__all__ = ["HandsStopped", "VirtualHands"]


class HandsStopped(Exception):
    """The demo is stopping: the hands put down what they hold and leave."""


class VirtualHands:
    """Computer players' hands: carry out ``suggestion`` events on the world.

    ``world`` has ``place(cell, uid)`` and ``remove(cell)`` (the virtual table
    or a :class:`~tablesense.referee.direct.DirectTable`); ``press(seat,
    button)`` reaches the session's seat buttons; ``accepted()`` tells how
    many moves the referee has accepted (the hands wait for it between steps);
    ``pace`` is the pause between two physical steps, in seconds.
    """

    def __init__(
        self,
        bus: EventBus,
        world: Any,
        registry: TagRegistry,
        press: Callable[[int, str], None],
        accepted: Callable[[], int],
        *,
        pace: float = 0.5,
        initial: dict[str, str] | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.bus = bus
        self.world = world
        self.registry = registry
        self.press = press
        self.accepted = accepted
        self.pace = pace
        self.timeout = timeout
        self.cells: dict[str, str] = dict(initial or {})
        self.held: set[str] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sub = bus.subscribe(
            ["suggestion", "move_rejected", "hand_ended"], replay=False, maxsize=10000
        )
        self._groups: dict[str, list[dict[str, Any]]] = {}
        self.errors: list[str] = []

    # -- thread ---------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="virtual-hands", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._sub.close()
        if self._thread is not None:
            self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.is_set():
            ev = self._sub.get(timeout=0.1)
            if ev is None:
                continue
            try:
                self.handle(ev)
            except HandsStopped:
                return
            except Exception as exc:  # noqa: BLE001 - keep the demo going; the referee will ask again
                self.errors.append(f"{ev.kind}: {exc!r}")

    # -- physical steps ------------------------------------------------------------
    def _pause(self, factor: float = 1.0) -> None:
        if self._stop.wait(self.pace * factor):
            raise HandsStopped

    def lift(self, cell: str) -> str | None:
        piece = self.cells.pop(cell, None)
        if piece is None:
            return None
        with contextlib.suppress(KeyError, ValueError):
            self.world.remove(cell)
        self.held.add(piece)
        return piece

    def lay(self, piece: str, cell: str) -> None:
        if cell in self.cells:
            if self.cells[cell] == piece:
                return
            self.lift(cell)
        old = self.where(piece)
        if old is not None:
            self.lift(old)
        self.world.place(cell, self.registry.uid_of(piece))
        self.cells[cell] = piece
        self.held.discard(piece)

    def where(self, piece: str) -> str | None:
        return next((c for c, p in self.cells.items() if p == piece), None)

    def wait_accepted(self, count: int) -> None:
        deadline = time.monotonic() + self.timeout
        while self.accepted() < count:
            if self._stop.wait(0.01):
                raise HandsStopped
            if time.monotonic() > deadline:
                raise TimeoutError(f"the referee did not accept move {count} in {self.timeout} s")

    # -- suggestions -------------------------------------------------------------------
    def handle(self, ev: TableEvent) -> None:
        d = ev.data
        if ev.kind == "move_rejected":
            # the hands are the table's own: they read the seat's private fix
            fix = (d.get("private") or {}).get("fix") or d.get("fix")
            if fix:
                self._pause(0.5)
                piece, to = fix["piece"], fix.get("to")
                if to is None:
                    cell = self.where(piece)
                    if cell is not None:
                        self.lift(cell)
                elif self.cells.get(to) != piece:
                    self.lay(piece, to)
            return
        if ev.kind != "suggestion":
            return
        kind = d.get("kind")
        base = self.accepted()
        if kind == "setup":
            self.setup(d["cells"])
        elif kind in ("play", "draw"):
            self._pause()
            if d.get("from_cell"):
                self.lift(d["from_cell"])
            self._pause(0.6)
            if d.get("to_cell"):
                self.lay(d["piece"], d["to_cell"])
            self.wait_accepted(base + 1)
        elif kind == "pass":
            self._pause()
            self.press(d["seat"], "main")
            self.wait_accepted(base + 1)
        elif kind == "announce":
            self._pause()
            self.press(d["seat"], "call")
            self._pause(0.5)
            cell = d.get("from_cell")
            if cell:
                self.lift(cell)
                self.wait_accepted(base + 1)
                self._pause(0.5)
                self.lay(d["piece"], cell)
        elif kind == "call":
            self._pause()
            if d["call"] == "contre":
                self.press(d["seat"], "call")
                self._pause(0.4)
                self.press(d["target"], "main")
            else:
                self.press(d["seat"], "main")
            self.wait_accepted(base + 1)
        elif kind == "refresh":
            self._pause()
            for cell in d["slots"]:
                self.lift(cell)
                self.held.clear()  # the old board goes under the stock
            self._pause(0.5)
            for cell, card in zip(d["slots"], d["cards"], strict=True):
                self.lay(card, cell)
                self._pause(0.2)
            self.wait_accepted(base + 1)
        elif kind == "swap":
            group = self._groups.setdefault(d["group"], [])
            group.append(d)
            if len(group) == d["size"]:
                del self._groups[d["group"]]
                self.swaps(sorted(group, key=lambda s: s["index"]), base)

    def setup(self, cells: dict[str, str]) -> None:
        """Lay out a deal: clear what is not where it belongs, then deal."""
        self._pause()
        wanted_pieces = set(cells.values())
        for cell, piece in sorted(self.cells.items()):
            if cells.get(cell) != piece:
                self.lift(cell)
                self._pause(0.05)
        self.held.clear()
        for cell, piece in cells.items():
            if self.cells.get(cell) != piece:
                self.lay(piece, cell)
                self._pause(0.08)
        del wanted_pieces

    def swaps(self, group: list[dict[str, Any]], base: int) -> None:
        """Several seats swap at once: all lift their card, then each lays it on
        its slot and takes the slot's card, one after the other."""
        self._pause()
        for sw in group:
            self.lift(sw["from_cell"])
            self._pause(0.15)
        done = 0
        for sw in group:
            self._pause(0.4)
            if self.cells.get(sw["take_cell"]) != sw["take"]:
                # somebody took that card first (a person at the table-top
                # page): this swap is off, the card goes back on its rack cell
                self.lay(sw["piece"], sw["from_cell"])
                continue
            self.lift(sw["take_cell"])
            self.lay(sw["piece"], sw["to_cell"])
            self._pause(0.3)
            self.lay(sw["take"], sw["from_cell"])
            done += 1
            self.wait_accepted(base + done)
