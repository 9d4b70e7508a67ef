"""Hands over the virtual table: what the table-top page moves, and who sees what.

:class:`TableTop` sits between people (or computer players) and a
:class:`~tablesense.sim.virtual_table.VirtualTable`. Every move is two world
changes, as with a hand over a real table: *lift* takes the tag off a cell's
reader (the piece is now "in the air" and on no reader) and *lay* puts it on
another cell's reader. The boards' firmware sees exactly that, so a move
travels the whole real path (emulated reader -> firmware -> link -> referee).

Pieces that lie on no cell and are in no hand are *off the table* (the stock:
a shuffled pile that can be dealt from). Each hand is named by a string:
``"seat:N"`` for a person at seat N, ``"open"`` for a teaching screen that may
touch and see everything, ``"computer"`` for the computer players.

:meth:`TableTop.view` is the table as one seat may see it: its own rack face
up, other racks, the boneyard, the stock and other hands' pieces face down
(``"hidden"``), the line of play and the Kems slots face up. Nothing else
leaves this module for a seat, so the page's DOM and live messages cannot
carry what that seat may not see.

The lights come from the devices themselves: each cell's colour is what the
cell's virtual LED strip shows (the LED frames the boards received), each
seat's turn LED is the level of its pin on the seat header (``header``: any
object with ``level(pin)``, ``press(pin)`` and ``release_button(pin)``, such
as the outputs room's simulated GPIO). Seat buttons are pressed on that same
header, so they go through the real debouncing and button wiring.

Every lift and lay is logged; :meth:`TableTop.scenario` writes the session as
a scenario file (see :mod:`tablesense.sim.scenario`) that replays it.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from tablesense.table.geometry import CellId, TableGeometry
from tablesense.table.tags import Piece, TagRegistry, UnknownTag, all_cards, all_tiles

#: Zones whose pieces lie face up for everybody.
PUBLIC_ZONES = frozenset({"line", "kems_slot", "spare"})

#: The hand of the computer players.
COMPUTER = "computer"
#: The hand of an "open hands" teaching screen.
OPEN = "open"

#: Seconds a virtual seat button stays down (longer than the GPIO debounce).
PRESS_S = 0.08

BUTTON_KINDS = ("pass", "call", "referee")

#: Other names a button goes by: the referee's seat buttons are ``main`` (the
#: pass button) and ``call`` (``suggestion`` events and the keyboard say ``main``).
BUTTON_ALIASES = {"main": "pass"}


class HandError(ValueError):
    """A move a hand cannot make (an empty cell, someone else's rack, ...);
    the message says why in a sentence for the player."""


class World(Protocol):
    """What a :class:`TableTop` moves tags on (a VirtualTable)."""

    def place(self, cell: CellId, uid: bytes) -> None: ...

    def remove(self, cell: CellId) -> bytes: ...

    def tags(self) -> dict[CellId, bytes]: ...

    def leds(self, cell: CellId) -> tuple[int, int, int] | None: ...


@dataclass(frozen=True)
class Step:
    """One logged world change: ``at`` seconds since the session began."""

    at: float
    action: str  # "place" or "remove"
    cell: CellId
    uid: bytes


def hand_of(seat: int | None, open_hands: bool = False) -> str:
    """The hand name of a page: ``"seat:N"``, or ``"open"``."""
    if open_hands or seat is None:
        return OPEN
    return f"seat:{seat}"


def game_pieces(geometry: TableGeometry, piece: str | None = None) -> list[str]:
    """The pieces of the set this table plays with, by the kind of piece
    (``tile`` or ``card``: the game's ``piece_word``; by default a table with a
    line of play plays tiles): 28 tiles, or a 32-card deck (4 or 6 seats, the
    record format's default deck) or a 52-card deck (8 seats)."""
    kind = piece or ("tile" if geometry.line is not None else "card")
    if kind == "tile":
        return all_tiles()
    return all_cards(32 if len(geometry.seats) <= 6 else 52)


class TableTop:
    """See the module docstring. Thread-safe: pages, computer hands and the
    web server's threads all go through one lock."""

    def __init__(
        self,
        world: World,
        geometry: TableGeometry,
        registry: TagRegistry,
        *,
        pieces: list[str] | None = None,
        header: Any = None,
        banner: Callable[[], dict[str, str] | None] | None = None,
        open_hands: bool = False,
        seats: list[int] | None = None,
        seed: int = 0,
        clock: Callable[[], float] = time.monotonic,
        turns: Callable[[], list[bool]] | None = None,
        elsewhere: list[int] | None = None,
        facts: Mapping[str, Any] | None = None,
    ) -> None:
        self.world = world
        self.facts: dict[str, Any] = dict(facts or {})
        """What the page draws differently per game (``Game.page_facts`` of the
        layout's game, handed in by whoever wires the table: this room knows
        no game), served in the layout so the page never branches on a name."""
        self.geometry = geometry
        self.registry = registry
        self.pieces = list(pieces if pieces is not None else game_pieces(geometry))
        self.header = header
        self.banner = banner
        self.open_hands = open_hands
        """The teaching mode: pages may ask for every piece face up."""
        self.seats = list(seats) if seats is not None else [s.index for s in geometry.seats]
        """Seats people may sit at (others are the computer's)."""
        self.elsewhere = list(elsewhere or [])
        """Seats played at another table (a remote match): the page names them so."""
        self.clock = clock
        self.turns = turns
        """Where the turn LEDs are read when not from ``header`` (e.g. the referee's display)."""
        self._rng = random.Random(f"tablesense-tabletop-{seed}")
        self._lock = threading.RLock()
        self._air: dict[str, str] = {}  # piece -> hand
        self._stock: list[str] = []  # face-down pile, top last
        self.touched: dict[str, str] = {}
        """Piece -> the hand that moved it last (a person fixes their own mistakes)."""
        self.dealer = "people"
        """Who deals: ``"people"`` (the page's shuffle-and-deal button) or ``"computer"``."""
        self._t0 = clock()
        self.log: list[Step] = []
        self.version = 0
        self._reshuffle()

    # -- where things are ------------------------------------------------------
    def piece_map(self) -> dict[CellId, str]:
        """Cell -> piece of every known tag on the table."""
        out: dict[CellId, str] = {}
        for cell, uid in self.world.tags().items():
            p = self.registry.piece(uid)
            out[cell] = str(p) if isinstance(p, Piece) else f"?{uid.hex()}"
        return out

    def piece_at(self, cell: CellId) -> str | None:
        return self.piece_map().get(cell)

    def cell_of(self, piece: str) -> CellId | None:
        return next((c for c, p in self.piece_map().items() if p == piece), None)

    def held(self, hand: str) -> list[str]:
        """The pieces this hand holds in the air, in the order lifted."""
        with self._lock:
            return [p for p, h in self._air.items() if h == hand]

    def stock(self) -> list[str]:
        """The off-table pile, top last (pieces on no cell and in no hand)."""
        with self._lock:
            self._sync_stock()
            return list(self._stock)

    # -- moves -------------------------------------------------------------------
    def lift(self, hand: str, cell: CellId | None = None, *, from_stock: bool = False) -> str:
        """Take the piece off ``cell`` (or the top of the stock) into ``hand``."""
        with self._lock:
            if from_stock:
                if self.dealer == COMPUTER and hand != OPEN:
                    raise HandError("the computer deals at this table: the stock is its")
                self._sync_stock()
                if not self._stock:
                    raise HandError("the stock is empty")
                piece = self._stock.pop()
                self._air[piece] = hand
                self.touched[piece] = hand
                self._changed()
                return piece
            if cell is None or cell not in self.geometry.cells:
                raise HandError(f"there is no cell {cell!r} on this table")
            self._may_touch(hand, cell)
            piece = self.piece_at(cell)
            if piece is None:
                raise HandError("that cell is empty")
            uid = self.world.remove(cell)
            self._record("remove", cell, uid)
            self._air[piece] = hand
            self.touched[piece] = hand
            self._changed()
            return piece

    def lay(self, hand: str, piece: str, cell: CellId | None) -> None:
        """Put a piece this hand holds on an empty ``cell`` (None: back on the
        stock, off the table)."""
        with self._lock:
            if self._air.get(piece) != hand:
                raise HandError("you are not holding that piece")
            if cell is None:
                del self._air[piece]
                self._stock.append(piece)
                self._changed()
                return
            if cell not in self.geometry.cells:
                raise HandError(f"there is no cell {cell!r} on this table{self._beyond_arm(cell)}")
            self._may_touch(hand, cell)
            if cell in self.world.tags():
                raise HandError("that cell already holds a piece")
            uid = self.registry.uid_of(piece)
            self.world.place(cell, uid)
            self._record("place", cell, uid)
            del self._air[piece]
            self.touched[piece] = hand
            self._changed()

    def deal(self, seed: int | None = None) -> None:
        """Shuffle and deal: every piece off the table, shuffled, then each
        rack filled (7 tiles, or 4 cards and a free cell for swaps), the
        boneyard and the Kems slots laid, one piece at a time."""
        with self._lock:
            for cell in sorted(self.world.tags()):
                self._record("remove", cell, self.world.remove(cell))
            self._air.clear()
            rng = random.Random(seed) if seed is not None else self._rng
            order = list(self.pieces)
            rng.shuffle(order)
            kems = bool(self.geometry.kems_slots)
            targets: list[CellId] = []
            for s in self.geometry.seats:
                take = len(s.rack) - 1 if kems else min(7, len(s.rack))
                targets += s.rack[:take]
            targets += list(self.geometry.boneyard) + list(self.geometry.kems_slots)
            for cell, piece in zip(targets, order, strict=False):
                uid = self.registry.uid_of(piece)
                self.world.place(cell, uid)
                self._record("place", cell, uid)
            self._stock = []
            self._sync_stock()
            self._changed()

    # -- the computer's hands (the interface VirtualHands uses) --------------------
    def place(self, cell: CellId, uid: bytes) -> None:
        """Computer hand: lay the piece with this tag on ``cell``, taking it
        from wherever it is; a piece lying on ``cell`` is swept off the table
        first (a dealer clearing a cell)."""
        found = self.registry.piece(uid)
        if isinstance(found, UnknownTag):
            raise HandError(f"unknown tag {uid.hex()}")
        piece = str(found)
        with self._lock:
            here = self.piece_at(cell)
            if here == piece:
                return
            if here is not None:
                self._record("remove", cell, self.world.remove(cell))
                self._air.pop(here, None)
                self._stock.append(here)
            old = self.cell_of(piece)
            if old is not None:
                self._record("remove", old, self.world.remove(old))
            self._air.pop(piece, None)
            with_stock = [p for p in self._stock if p != piece]
            self._stock = with_stock
            self.world.place(cell, uid)
            self._record("place", cell, uid)
            self.touched[piece] = COMPUTER
            self._changed()

    def remove(self, cell: CellId) -> bytes:
        """Computer hand: lift the piece off ``cell``."""
        with self._lock:
            piece = self.piece_at(cell)
            if piece is None:
                raise HandError(f"cell {cell!r} is empty")
            uid = self.world.remove(cell)
            self._record("remove", cell, uid)
            self._air[piece] = COMPUTER
            self.touched[piece] = COMPUTER
            self._changed()
            return uid

    # -- seat buttons and lights ------------------------------------------------------
    def press(self, seat: int, kind: str, hold: float = PRESS_S) -> None:
        """Press a seat's button on the seat header (down, then up after
        ``hold`` seconds: :data:`PRESS_S` as a finger taps; a second or more
        is a long press, which asks the coach when the table has one)."""
        kind = BUTTON_ALIASES.get(kind, kind)
        if kind not in BUTTON_KINDS:
            raise HandError(f"no {kind!r} button: use {', '.join(BUTTON_KINDS)} (or main, the pass button)")
        if not 0 <= seat < len(self.geometry.seats):
            raise HandError(f"there is no seat {seat}")
        if self.header is None:
            raise HandError("this virtual table has no seat buttons connected")
        s = self.geometry.seats[seat]
        pin = {
            "pass": s.button_pin,
            "call": s.call_button_pin,
            "referee": self.geometry.referee_button_pin,
        }[kind]
        if pin is None:
            raise HandError(f"this table has no {kind} button at seat {seat}")
        try:
            self.header.press(pin)
        except Exception as exc:  # noqa: BLE001 - e.g. no referee on the other end of the wire
            raise HandError(str(exc)) from None
        timer = threading.Timer(max(PRESS_S, hold), self._release, args=(pin,))
        timer.daemon = True
        timer.start()

    def _release(self, pin: int) -> None:
        try:
            self.header.release_button(pin)
        except Exception:  # noqa: BLE001 - the header closed meanwhile: nothing to release
            return

    def turn_leds(self) -> list[bool]:
        """Each seat's turn LED as its pin shows it (all off without a header)."""
        if self.turns is not None:
            try:
                flags = list(self.turns())
            except Exception:  # noqa: BLE001 - the display went away: dark
                flags = []
            return [i < len(flags) and bool(flags[i]) for i in range(len(self.geometry.seats))]
        out: list[bool] = []
        for s in self.geometry.seats:
            lit = False
            if self.header is not None and s.turn_led_pin is not None:
                try:
                    lit = bool(self.header.level(s.turn_led_pin))
                except Exception:  # noqa: BLE001 - a pin not set up (yet): dark
                    lit = False
            out.append(lit)
        return out

    # -- what a seat sees ------------------------------------------------------------
    def visible(self, cell: CellId, seat: int | None, open_view: bool) -> bool:
        if open_view:
            return True
        c = self.geometry.cells[cell]
        if c.zone in PUBLIC_ZONES:
            return True
        return c.zone == "rack" and seat is not None and c.seat == seat

    def view(self, seat: int | None, open_view: bool = False) -> dict[str, Any]:
        """The table as ``seat`` may see it (``open_view``: all face up, the
        teaching mode; refused unless the table allows it)."""
        if open_view and not self.open_hands:
            raise HandError("open hands are off on this table (start it with --open-hands)")
        hand = hand_of(seat, open_view)
        with self._lock:
            pieces = self.piece_map()
            cells: dict[str, Any] = {}
            for cid in self.geometry.cells:
                piece = pieces.get(cid)
                shown = None
                if piece is not None:
                    shown = piece if self.visible(cid, seat, open_view) else "hidden"
                led = self.world.leds(cid)
                cells[cid] = {"piece": shown, "led": list(led) if led is not None else None}
            air: list[dict[str, Any]] = []
            for piece, holder in self._air.items():
                mine = holder == hand or open_view
                air.append(
                    {
                        "hand": holder,
                        "piece": piece if mine else "hidden",
                        "mine": holder == hand,
                    }
                )
            self._sync_stock()
            stock = len(self._stock)
            banner = self.banner() if self.banner is not None else None
            return {
                "seat": seat,
                "open": open_view,
                "cells": cells,
                "air": air,
                "stock": stock,
                "turn": self.turn_leds(),
                "banner": banner,
                "version": self.version,
            }

    def layout(self) -> dict[str, Any]:
        """The geometry the page draws (public)."""
        g = self.geometry
        return {
            "name": g.name,
            "game": g.games[0],
            "facts": self.facts,
            "cells": [
                {"id": c.id, "x": c.x, "y": c.y, "zone": c.zone, "seat": c.seat}
                for c in g.cells.values()
            ],
            "seats": [
                {
                    "index": s.index,
                    "name": s.name,
                    "rack": list(s.rack),
                    "buttons": [
                        k
                        for k, pin in (
                            ("pass", s.button_pin),
                            ("call", s.call_button_pin),
                            ("referee", g.referee_button_pin),
                        )
                        if pin is not None and k in getattr(self.header, "kinds", BUTTON_KINDS)
                        and s.index not in self.elsewhere  # another table's seat has its buttons there
                    ],
                    "person": s.index in self.seats,
                    "elsewhere": s.index in self.elsewhere,
                }
                for s in g.seats
            ],
            "line": (
                {"center": g.line.center, "left": g.line.left, "right": g.line.right}
                if g.line is not None
                else None
            ),
            "boneyard": list(g.boneyard),
            "kems_slots": list(g.kems_slots),
            "open_hands": self.open_hands,
            "buttons": self.header is not None,
            "dealer": self.dealer,
        }

    # -- the session as a scenario -------------------------------------------------------
    def scenario(self) -> dict[str, Any]:
        """Every world change so far as a scenario document (JSON-ready)."""
        with self._lock:
            steps: list[dict[str, Any]] = []
            for s in self.log:
                step: dict[str, Any] = {"at": round(s.at, 3), s.action: s.cell}
                if s.action == "place":
                    step["uid"] = s.uid.hex()
                steps.append(step)
            return {"table": self.geometry.name, "steps": steps}

    # -- internals ---------------------------------------------------------------------------
    def _may_touch(self, hand: str, cell: CellId) -> None:
        if hand in (OPEN, COMPUTER):
            return
        c = self.geometry.cells[cell]
        if c.zone == "stock":  # a remote match's stock: face down, the table's helper hands move it
            raise HandError("the stock lies face down: its pieces are moved for you when they light")
        if c.zone == "rack" and hand != f"seat:{c.seat}":
            name = self.geometry.seats[c.seat].name if c.seat is not None else "another seat"
            raise HandError(f"that is {name}'s rack")

    def _beyond_arm(self, cell: CellId) -> str:
        """Where a long arm goes on, for a cell named past its end (``left-14`` on a
        table whose left arm has 13 cells: the track goes on at the far end of the
        right arm); empty for any other unknown cell."""
        line = self.geometry.line
        end, _dash, n = str(cell).rpartition("-")
        if line is None or end not in ("left", "right") or not n.isdigit():
            return ""
        track = line.track(end)
        k = int(n) - 1
        if not len(line.arm(end)) <= k < len(track):
            return ""
        return f": the {end} arm has {len(line.arm(end))} cells and goes on at {track[k]}"

    def _record(self, action: str, cell: CellId, uid: bytes) -> None:
        self.log.append(Step(self.clock() - self._t0, action, cell, bytes(uid)))

    def _changed(self) -> None:
        self.version += 1

    def _sync_stock(self) -> None:
        """Keep the pile equal to the pieces on no cell and in no hand (a
        computer hand may lay a piece straight from the pile)."""
        on_table = set(self.piece_map().values())
        free = [p for p in self.pieces if p not in on_table and p not in self._air]
        known = [p for p in self._stock if p in free]
        new = [p for p in free if p not in set(known)]
        self._rng.shuffle(new)
        self._stock = new + known

    def _reshuffle(self) -> None:
        self._stock = []
        self._sync_stock()
