"""Cell LEDs: table events in, whole LED frames out.

The boards carry one WS2812 LED per cell. :class:`CellLeds` follows the event
bus and keeps a few *layers* of lit cells; each frame is the whole table (every
cell that has an LED, unlit cells black), because e-board hosts learned that
whole idempotent frames survive lost packets and board reboots where "turn LED
7 on" commands do not. Layers, highest priority first:

==============  =====================================  ==========================
layer           set by                                 cleared by
==============  =====================================  ==========================
``error``       ``move_rejected`` (``cells``), a       ``correction_cleared``,
                ``view`` whose ``correction`` has      ``move_accepted``, a ``view``
                cells                                  with ``correction: null``
``coach``       ``coach`` (``private.cells``, only     ``move_accepted``, a new hand,
                the cells of ``private.seat``'s        the next ``coach``
                rack; ``private.target``, only
                line cells)
``suggestion``  ``suggestion`` (``from_cell``,          ``move_accepted``, a new hand
                ``to_cell``)
``targets``     ``targets`` (``cells``, on a            ``move_accepted``, ``targets``
                player's request)                      with no cells, a new hand
``last_move``   ``move_accepted`` (``cells`` or         the next move, a new hand
                ``from_cell``/``to_cell``/``cell``;
                else the cells of the suggestion
                it carried out)
``turn``        ``view`` (``to_play``: that seat's      the next ``view``
                ``led_cells``, else its rack)
==============  =====================================  ==========================

The ``coach`` layer is the coach's private hint (issue 19): the tile a seat
is advised to play, lit on that seat's own rack, and where it goes on the
line (``target``: a dominoes play, asked on the seat's own turn, so the
table sees that cell filled a moment later). Another seat's rack cell is
never lit, whatever the event names: the filter is here, where the frame is
made, not only where the hint is made.

Frames are coalesced and rate-limited: the first change after a quiet spell is
sent at once, changes within ``min_interval`` of the last frame are merged
into one trailing frame, and an unchanged frame is not sent again, except
after a board comes back online (it lost its LEDs when it went away).
The sink is the link's ``set_leds(cell_colors)`` or any callable, so this is
tested without boards; :meth:`CellLeds.board_frames` gives the per-board view.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tablesense.outputs.clock import Scheduler, ThreadScheduler, TimerHandle
from tablesense.outputs.events import EventBus, TableEvent

__all__ = ["LAYERS", "RGB", "CellLeds", "LedPalette"]

log = logging.getLogger(__name__)

RGB = tuple[int, int, int]
CellColors = dict[str, RGB]
Sink = Callable[[CellColors], Any]

OFF: RGB = (0, 0, 0)

#: Layer names, highest priority first.
LAYERS: tuple[str, ...] = ("error", "coach", "suggestion", "targets", "last_move", "turn")


@dataclass(frozen=True)
class LedPalette:
    """Colours per layer (0..255 each; WS2812s are bright, so most are dim)."""

    error: RGB = (255, 0, 0)
    coach: RGB = (0, 110, 110)
    suggestion: RGB = (120, 0, 160)
    targets: RGB = (0, 110, 0)
    last_move: RGB = (90, 60, 0)
    turn: RGB = (0, 0, 60)

    def color(self, layer: str) -> RGB:
        return getattr(self, layer)

    def __post_init__(self) -> None:
        for layer in LAYERS:
            value = getattr(self, layer)
            if len(value) != 3 or any(not isinstance(c, int) or not 0 <= c <= 255 for c in value):
                raise ValueError(f"palette {layer} must be three integers 0..255, got {value!r}")


class CellLeds:
    """Turns table events into LED frames for the cells of one table geometry.

    ``geometry`` is a :class:`~tablesense.table.geometry.TableGeometry`;
    ``sink(cell_colors)`` receives every frame (all LED cells). Call
    :meth:`attach` to follow a bus, or :meth:`handle_event` directly.
    """

    def __init__(
        self,
        geometry: Any,
        sink: Sink,
        *,
        palette: LedPalette | None = None,
        min_interval: float = 0.05,
        scheduler: Scheduler | None = None,
    ) -> None:
        if min_interval < 0:
            raise ValueError(f"min_interval must be >= 0, got {min_interval}")
        self.geometry = geometry
        self.sink = sink
        self.palette = palette or LedPalette()
        self.min_interval = min_interval
        self._own_scheduler = scheduler is None
        self.scheduler: Scheduler = scheduler or ThreadScheduler()
        self._lock = threading.RLock()
        self._layers: dict[str, frozenset[str]] = {name: frozenset() for name in LAYERS}
        self._led_cells: tuple[str, ...] = tuple(
            cid for cid, cell in geometry.cells.items() if getattr(cell, "led", None) is not None
        )
        self._known = frozenset(self._led_cells)
        self._last_sent: CellColors | None = None
        self._last_flush: float | None = None
        self._timer: TimerHandle | None = None
        self._force = False
        self._detach: list[Callable[[], None]] = []
        self._closed = False
        self.frames_sent = 0
        self.events_seen = 0
        self.unknown_cells: set[str] = set()
        self._suggested: tuple[dict[str, Any], tuple[str, ...]] | None = None

    # -- layers -------------------------------------------------------------------

    def set_layer(self, layer: str, cells: Iterable[str]) -> None:
        """Replace one layer's cells (unknown or LED-less cells are ignored and
        remembered in :attr:`unknown_cells`), then schedule a frame."""
        if layer not in self._layers:
            raise ValueError(f"unknown LED layer {layer!r}: use one of {', '.join(LAYERS)}")
        wanted = set()
        for cid in cells:
            if cid in self._known:
                wanted.add(cid)
            elif cid is not None:
                self.unknown_cells.add(str(cid))
        with self._lock:
            self._layers[layer] = frozenset(wanted)
        self._request_flush()

    def layer(self, layer: str) -> frozenset[str]:
        return self._layers[layer]

    def clear(self, *layers: str) -> None:
        """Clear the named layers (all when none named)."""
        with self._lock:
            for name in layers or LAYERS:
                if name not in self._layers:
                    raise ValueError(f"unknown LED layer {name!r}")
                self._layers[name] = frozenset()
        self._request_flush()

    def frame(self) -> CellColors:
        """The whole frame as it stands: every LED cell, unlit ones black."""
        with self._lock:
            colors: CellColors = dict.fromkeys(self._led_cells, OFF)
            for name in reversed(LAYERS):  # lowest first, so higher layers win
                rgb = self.palette.color(name)
                for cid in self._layers[name]:
                    colors[cid] = rgb
            return colors

    def board_frames(self, colors: Mapping[str, RGB] | None = None) -> dict[int, list[RGB]]:
        """The frame split per board: ``{board_id: [rgb per LED index]}``."""
        colors = self.frame() if colors is None else colors
        frames: dict[int, list[RGB]] = {}
        for board in self.geometry.boards:
            frames[board.id] = [OFF] * int(board.leds)
        for cid, rgb in colors.items():
            cell = self.geometry.cells[cid]
            strip = frames.get(cell.board)
            if strip is not None and cell.led is not None and 0 <= cell.led < len(strip):
                strip[cell.led] = rgb
        return frames

    # -- events ---------------------------------------------------------------------

    def handle_event(self, ev: TableEvent) -> None:
        """Update the layers from one table event."""
        if self._closed:
            return
        self.events_seen += 1
        kind, data = ev.kind, ev.data
        if kind in ("match_started", "hand_started", "hand_ended", "match_ended"):
            self.clear("error", "coach", "suggestion", "targets", "last_move")
        elif kind == "move_accepted":
            cells = _cells_of(data)
            if not cells and self._suggested is not None and _same_move(self._suggested[0], data):
                # The referee names no cells: the move carried out the lit
                # suggestion, so it went where the suggestion said.
                cells = list(self._suggested[1])
            self._suggested = None
            with self._lock:
                self._layers["error"] = frozenset()
                self._layers["coach"] = frozenset()
                self._layers["suggestion"] = frozenset()
                self._layers["targets"] = frozenset()
            self.set_layer("last_move", cells)
        elif kind == "move_rejected":
            self.set_layer("error", _cells_of(data))
        elif kind == "correction_cleared":
            self.clear("error")
        elif kind == "suggestion":
            cells = _cells_of(data)
            self._suggested = (dict(data), tuple(cells))
            self.set_layer("suggestion", cells)
        elif kind == "targets":
            self.set_layer("targets", _cells_of(data))
        elif kind == "coach":
            self.set_layer("coach", self._coach_cells(data))
        elif kind == "view":
            self.set_layer("turn", self._turn_cells(data.get("to_play")))
            if "correction" in data:
                # The view is the truth: a correction still open keeps its
                # cells red (also for an output attached late), none clears.
                correction = data.get("correction") or {}
                self.set_layer(
                    "error", _cells_of(correction) if isinstance(correction, dict) else []
                )
        elif kind == "board_status" and data.get("online"):
            with self._lock:
                self._force = True  # the board lost its LEDs: send the frame again
            self._request_flush()

    def _coach_cells(self, data: Mapping[str, Any]) -> list[str]:
        """The coach's hint: its cells on the asking seat's rack, and its
        ``target`` on the line (the cell a play goes to); never a cell of
        another seat's rack, whatever the event names."""
        private = data.get("private")
        if not isinstance(private, Mapping):
            return []
        seat = private.get("seat")
        rack = next(
            (set(s.rack) for s in self.geometry.seats if s.index == seat and isinstance(seat, int)),
            set(),
        )
        line = set(getattr(self.geometry.line, "cells", None) or ())
        target = private.get("target")
        targets = [str(c) for c in target if c in line] if isinstance(target, list | tuple) else []
        return [c for c in _cells_of(private) if c in rack] + targets

    def _turn_cells(self, seat: Any) -> list[str]:
        if not isinstance(seat, int) or isinstance(seat, bool):
            return []
        for s in self.geometry.seats:
            if s.index == seat:
                return list(getattr(s, "led_cells", None) or s.rack)
        return []

    def attach(self, bus: EventBus) -> Callable[[], None]:
        """Follow ``bus`` (in the publisher's thread: handling is quick, the
        sink is called at most every ``min_interval``)."""
        remove = bus.add_listener(self.handle_event, replay=True)
        self._detach.append(remove)
        return remove

    # -- frames ---------------------------------------------------------------------

    def _request_flush(self) -> None:
        with self._lock:
            if self._closed or self._timer is not None:
                return  # a trailing frame is already due: it will carry this change
            now = self.scheduler.now()
            if self._last_flush is None or now - self._last_flush >= self.min_interval:
                self._flush_locked()
            else:
                delay = self._last_flush + self.min_interval - now
                self._timer = self.scheduler.call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        with self._lock:
            self._timer = None
            if not self._closed:
                self._flush_locked()

    def _flush_locked(self) -> None:
        colors = self.frame()
        if colors == self._last_sent and not self._force:
            return
        self._force = False
        self._last_flush = self.scheduler.now()
        self._last_sent = colors
        self.frames_sent += 1
        try:
            self.sink(dict(colors))
        except Exception:  # a lost board must never stop the game (ChessnutPy #2/#8)
            log.exception("sending the LED frame failed")

    def flush(self) -> None:
        """Send the current frame now if it changed (ignores the rate limit)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if not self._closed:
                self._flush_locked()

    # -- life cycle -----------------------------------------------------------------

    def close(self, *, blank: bool = True) -> None:
        """Stop following the bus; with ``blank`` send one all-off frame. Idempotent."""
        with self._lock:
            if self._closed:
                return
            for remove in self._detach:
                remove()
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if blank:
                for name in LAYERS:
                    self._layers[name] = frozenset()
                self._flush_locked()
            self._closed = True
        if self._own_scheduler:
            stop = getattr(self.scheduler, "stop", None)
            if callable(stop):
                stop()

    def __enter__(self) -> CellLeds:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _cells_of(data: Mapping[str, Any]) -> list[str]:
    """Cell ids an event names: ``cells`` plus ``from_cell``/``to_cell``/``cell``."""
    out: list[str] = []
    cells = data.get("cells")
    if isinstance(cells, list | tuple):
        out.extend(str(c) for c in cells if c is not None)
    for key in ("from_cell", "to_cell", "take_cell", "cell"):
        value = data.get(key)
        if isinstance(value, str):
            out.append(value)
    return out


def _same_move(suggestion: Mapping[str, Any], accepted: Mapping[str, Any]) -> bool:
    """Whether an accepted move (``seat`` and the record-form ``move``) is the
    one a ``suggestion`` asked for (same seat, same piece)."""
    if suggestion.get("seat") != accepted.get("seat"):
        return False
    move = accepted.get("move")
    piece = suggestion.get("piece")
    if not isinstance(move, dict) or piece is None:
        return False
    swap = move.get("swap")
    moved = (
        move.get("tile")
        or move.get("draw")
        or (swap.get("give") if isinstance(swap, dict) else None)
    )
    return moved is not None and _piece_key(str(moved)) == _piece_key(str(piece))


def _piece_key(piece: str) -> str:
    """Tiles compare in either order ("5-3" is "3-5"); cards as written."""
    parts = piece.split("-")
    if len(parts) == 2 and all(p.isdigit() for p in parts):
        return "-".join(sorted(parts))
    return piece
