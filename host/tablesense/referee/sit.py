"""``tablesense demo --sit SEATS``: people sit at the virtual table against
the computer.

The demo's virtual table gets a surface (:class:`~tablesense.sim.hand.TableTop`,
served as the table-top page next to the display page). People move their
pieces on it with the mouse or a finger; the computer players' hands move
theirs on the same table top, so a person sees them lift and lay. Every move
is a tag lifted from one emulated reader and laid on another: board firmware
-> link -> referee -> engine -> journal -> LEDs and display, as at a real table.

The seat header is the outputs room's simulated GPIO: the turn LEDs follow the
display's view exactly as on a Pi, and the page's seat buttons close the
button contacts, so presses go through the same debouncing and the same
:func:`~tablesense.outputs.gpio.forward_buttons` wiring as real buttons.

With the coach on (``demo --coach``, the default with ``--sit``) a seat
button held a second asks the coach (:mod:`.coaching`), and so does the
page's "Suggest a move" button. The answer comes back as the private part
of a ``coach`` event; :class:`SitDown` keeps it per seat and the table-top
page serves it only on that seat's keyed view (``coach.hint``), until the
next move changes the position.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import threading
import time
from collections.abc import Sequence
from typing import Any

from tablesense.games.common import say
from tablesense.games.registry import find_game
from tablesense.outputs.coach_hints import CoachHints
from tablesense.outputs.events import EventBus, TableEvent
from tablesense.outputs.gpio import (
    LONG_PRESS_S,
    GPIOBackend,
    GPIOError,
    SimBackend,
    TableGPIO,
    ThreadScheduler,
    forward_buttons,
)
from tablesense.referee.hands import HandsStopped, VirtualHands
from tablesense.referee.state import Phase
from tablesense.referee.words import in_a_row, seat_word
from tablesense.sim.hand import COMPUTER, HandError, TableTop, game_pieces
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry

#: Kems: polls with nobody swapping before the computer lays a new board
#: when people play (the demo's 2 would leave a person no time to choose).
KEMS_IDLE_POLLS_WITH_PEOPLE = 60

#: Seconds counted down on the seated pages before each hand or round, once
#: every seated person's page is connected: nobody starts before the others
#: see the table (Kems has no turns: a computer would swap away at once).
COUNTDOWN_S = 3.0

#: Kems with people: how long a computer seat looks at the board before its
#: swap, at --speed 1 (a person on a phone needs a few seconds to choose; at
#: the demo's pace without people a computer swaps within a second).
KEMS_THINK_S = 4.0


def parse_seats(text: str, names: Sequence[str], said: Sequence[str] = ()) -> tuple[int, ...]:
    """``--sit`` as a player says it -> the seats' indexes in the table's order.

    A seat is named as the table names it (``south``, ``seat 2``; any case,
    spaces and hyphens ignored), as the table's language says it (``said``,
    in seat order: ``sul``, ``lugar 2`` at a Portuguese table) or by its
    number counted from 1 in the table's order, as players count ("1" is the
    first seat): never the 0-based index a game record writes, which is why a
    ``0`` gets its own sentence. Several seats are separated by commas."""
    def key(word: str) -> str:
        return "".join(ch for ch in word.lower() if ch.isalnum())

    by_name = {key(name): i for i, name in enumerate(said)}
    by_name.update({key(name): i for i, name in enumerate(names)})
    listed = _numbered(names)
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if part.isdigit():
            n = int(part)
            if n == 0:
                raise ValueError(say("seats count from 1 at this table ({seats}): there is no seat 0", seats=listed))
            if n > len(names):
                raise ValueError(say("there is no seat {n} at this table ({seats})", n=n, seats=listed))
            seat = n - 1
        elif key(part) in by_name:
            seat = by_name[key(part)]
        else:
            raise ValueError(say("--sit takes seats by name or number ({seats}), not {part!r}", seats=listed, part=part))
        if seat in out:
            raise ValueError(say("{seat} is named twice in --sit", seat=seat_word(names[seat])))
        out.append(seat)
    if not out:
        raise ValueError(say("--sit needs at least one seat ({seats})", seats=listed))
    if len(out) == len(names):
        raise ValueError(say("--sit leaves no seat to the computer: use `tablesense play` with `sim boards`"))
    return tuple(out)



def _numbered(names: Sequence[str]) -> str:
    """``1 = South, 2 = East, ...``: the seats as players count them, each
    name as the table says it (translated where it is a compass word)."""
    items = [say("{n} = {seat}", n=i + 1, seat=seat_word(name)) for i, name in enumerate(names)]
    return in_a_row(items) if items else say("no seats")

class SocketHeaderBackend(GPIOBackend):
    """The seat header of ``tablesense sim boards`` over its socket (see
    :mod:`tablesense.sim.header`): ``play --seat-header PATH`` drives the
    virtual turn LEDs and hears the virtual buttons through the same
    :class:`TableGPIO`, debouncing and button wiring as on a Pi."""

    name = "virtual-header"

    def __init__(self, path: str, scheduler: Any = None) -> None:
        super().__init__(scheduler or ThreadScheduler())
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._sock.connect(path)
        except OSError as exc:
            raise GPIOError(
                say("cannot reach the virtual seat header at {path}: {error} (is `tablesense sim boards` running?)",
                    path=str(path), error=exc.strerror or str(exc))
            ) from None
        self._levels: dict[int, bool] = {}
        self._watchers: dict[int, Any] = {}
        self._send_lock = threading.Lock()
        self._reader = threading.Thread(target=self._listen, name="seat-header", daemon=True)
        self._reader.start()

    def _send(self, msg: dict[str, Any]) -> None:
        with self._send_lock, contextlib.suppress(OSError):
            self._sock.sendall((json.dumps(msg) + "\n").encode())

    def _setup_output(self, pin: int, initial: bool) -> None:
        self._levels[pin] = initial
        self._send({"out": pin, "level": initial})

    def _setup_input(self, pin: int, pull_up: bool) -> None:
        self._levels[pin] = pull_up

    def _write(self, pin: int, value: bool) -> None:
        self._levels[pin] = value
        self._send({"out": pin, "level": value})

    def _read(self, pin: int) -> bool:
        return self._levels.get(pin, True)

    def _listen(self) -> None:
        """The header's input lines: button edges from the virtual table."""
        buf = b""
        while not self.closed:
            try:
                chunk = self._sock.recv(4096)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    msg = json.loads(line)
                    pin_in, level = int(msg["in"]), bool(msg["level"])
                except (ValueError, KeyError, TypeError):
                    continue
                if self._levels.get(pin_in) == level:
                    continue
                self._levels[pin_in] = level
                cb = self._watchers.get(pin_in)
                if cb is not None:
                    cb(pin_in)

    def _watch(self, pin: int, callback: Any) -> None:
        self._watchers[pin] = callback

    def _release(self, pin: int, mode: Any) -> None:
        self._watchers.pop(pin, None)
        if mode == "out":
            self._send({"out": pin, "level": False})

    def _close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._sock.close()


class SyncedHands(VirtualHands):
    """The computer's hands on a table top people also touch: where a piece
    lies is read from the table, never remembered (a person may have moved it)."""

    top: TableTop

    def __init__(self, *args: Any, top: TableTop, **kwargs: Any) -> None:
        self.top = top
        super().__init__(*args, **kwargs)

    @property  # type: ignore[override]
    def cells(self) -> dict[str, str]:
        return self.top.piece_map()

    @cells.setter
    def cells(self, value: dict[str, str]) -> None:  # pyright: ignore[reportIncompatibleVariableOverride] - a view of the table, on purpose
        """The table is the truth; VirtualHands' own bookkeeping is ignored."""

    def lift(self, cell: str) -> str | None:
        piece = self.top.piece_at(cell)
        if piece is None:
            return None
        with contextlib.suppress(HandError, KeyError, ValueError):
            self.top.remove(cell)
        self.held.add(piece)
        return piece

    def lay(self, piece: str, cell: str) -> None:
        self.top.place(cell, self.registry.uid_of(piece))
        self.held.discard(piece)

    def where(self, piece: str) -> str | None:
        return self.top.cell_of(piece)

    think: float = 0.0
    """Kems: seconds a computer seat looks at the board before its swap
    (``KEMS_THINK_S`` at the demo's speed when people sit)."""

    def swaps(self, group: list[dict[str, Any]], base: int) -> None:
        if self.think > 0 and self._stop.wait(self.think):
            raise HandsStopped
        super().swaps(group, base)

    def handle(self, ev: TableEvent) -> None:
        if ev.kind == "move_rejected":
            fix = (ev.data.get("private") or {}).get("fix") or ev.data.get("fix") or {}
            piece = fix.get("piece")
            if piece is None or self.top.touched.get(str(piece), COMPUTER) != COMPUTER:
                return  # a person's mistake: the person puts it right
        super().handle(ev)


class SitDown:
    """The pieces `demo --sit` adds to a demo: the table top, the seat header,
    the page's routes. ``close()`` releases them."""

    def __init__(
        self,
        geometry: TableGeometry,
        registry: TagRegistry,
        world: Any,
        bus: EventBus,
        session: Any,
        *,
        game: str,
        seats: tuple[int, ...],
        open_hands: bool = False,
        seed: int = 0,
        coach: bool = False,
    ) -> None:
        self.bus = bus
        self.coach = coach
        """Whether the table's coach is on (the page offers "Suggest a move")."""
        self._session = session
        self.hints = CoachHints()
        """Each seat's hint and review, from the bus (:class:`CoachHints`)."""
        self.url: str | None = None
        """The table-top page's address once it is served."""
        self.keys: Any = None
        """The page's :class:`~tablesense.web.tabletop.TableKeys`, made when it is served."""
        self.seats = seats
        self.backend = SimBackend(ThreadScheduler())
        self.gpio = TableGPIO.from_geometry(geometry, backend=self.backend)
        self.gpio.attach(bus)
        self._unforward = forward_buttons(
            self.gpio,
            session.press,
            session.referee_press,
            long_press=LONG_PRESS_S if coach else None,
        )
        self._unfollow = bus.add_listener(self.hints.follow)
        self.top = TableTop(
            world,
            geometry,
            registry,
            pieces=game_pieces(geometry, find_game(game).piece_word),
            header=self.backend,
            banner=self.banner,
            open_hands=open_hands,
            seats=list(seats),
            seed=seed,
            facts=find_game(game).page_facts(),
        )
        self.top.dealer = "computer"
        if not find_game(game).has_turns:
            # people act whenever they like: the computer seats wait longer for them
            session.idle_polls = max(session.idle_polls, KEMS_IDLE_POLLS_WITH_PEOPLE)
        self.game = game
        self._pages: dict[int, int] = {}
        """Seat -> how many of its keyed pages are connected now."""
        self._go: tuple[int, float] | None = None
        """(hand number, when it starts): the countdown under way."""
        self._presence_lock = threading.Lock()
        self.clock: Any = time.monotonic
        session.hold = self.holding

    # -- people at their pages ---------------------------------------------------
    def arrive(self, seat: int) -> None:
        """A seat's keyed page connected (its live view opened)."""
        with self._presence_lock:
            self._pages[seat] = self._pages.get(seat, 0) + 1

    def leave(self, seat: int) -> None:
        """A seat's keyed page closed."""
        with self._presence_lock:
            self._pages[seat] = max(0, self._pages.get(seat, 0) - 1)

    def absent(self) -> list[int]:
        """The seated people whose page is not connected."""
        with self._presence_lock:
            return [seat for seat in self.seats if not self._pages.get(seat)]

    def holding(self) -> bool:
        """Whether the computers wait (the session asks before each of their
        moves): until every seated person's page is connected, then
        :data:`COUNTDOWN_S` at the start of each hand or round."""
        hand_no = self._session.referee.state.hand_no
        if self.absent():
            self._go = None  # counted again from the start once everybody is back
            return True
        now = self.clock()
        if self._go is None or self._go[0] != hand_no:
            self._go = (hand_no, now + COUNTDOWN_S)
        return now < self._go[1]

    def _waiting_text(self) -> str | None:
        """What the seated pages say while the computers wait (None once play runs)."""
        absent = self.absent()
        names = self.top.geometry.seats
        lang = getattr(self._session.referee.spec, "lang", "en") or "en"
        from tablesense.i18n import Translator

        _ = Translator(lang)
        if absent:
            return _(say("waiting for {seats} to open the table-top page (the address printed for that seat)",
                         seats=in_a_row([seat_word(names[seat].name) for seat in absent])))
        go = self._go
        hand_no = self._session.referee.state.hand_no
        if go is None or go[0] != hand_no:
            return None
        left = go[1] - self.clock()
        if left <= 0:
            return None
        seconds = max(1, math.ceil(left))
        return find_game(self.game).per_deal(
            hand=_.plural("hand {hand} starts in {n} second", "hand {hand} starts in {n} seconds", seconds,
                          hand=hand_no),
            round=_.plural("round {round} starts in {n} second", "round {round} starts in {n} seconds", seconds,
                           round=hand_no),
        )

    def banner(self) -> dict[str, str] | None:
        """The referee's message as the display shows it (public); before a
        hand starts, who is awaited or the countdown."""
        ev = self.bus.latest("view")
        waiting = self._waiting_text() if ev is not None and ev.data.get("phase") == Phase.PLAY else None
        if waiting is not None and not (ev is not None and (ev.data.get("message") or {}).get("level") == "error"):
            return {"text": waiting, "level": "info"}
        msg = ev.data.get("message") if ev is not None else None
        if not isinstance(msg, dict) or not msg.get("text"):
            return None
        return {"text": str(msg["text"]), "level": str(msg.get("level") or "info")}

    # -- the coach ---------------------------------------------------------------
    def hint(self, seat: int) -> dict[str, Any] | None:
        """Seat ``seat``'s current hint (its keyed page only shows it)."""
        return self.hints.hint(seat)

    def review(self, seat: int) -> dict[str, Any] | None:
        """The last hand's review as seat ``seat`` may read it."""
        return self.hints.review(seat)

    def ask(self, seat: int) -> None:
        """The page's "Suggest a move": the same request as a long press."""
        self._session.press(seat, "coach")

    def routers(self) -> list[Any]:
        """The page's routes, guarded by fresh keys: one per seated person
        (and one for open hands), printed only in that seat's line."""
        from tablesense.web.tabletop import TableKeys, tabletop_router

        self.keys = TableKeys.for_table(self.top)
        return [tabletop_router(self.top, self.keys, coach=self, presence=self)]

    def seat_url(self, seat: int) -> str:
        """Seat ``seat``'s address, key included (after the page is served)."""
        if self.url is None or self.keys is None:
            raise RuntimeError("the table-top page is not served yet")
        return str(self.keys.url(self.url, seat))

    def open_url(self) -> str | None:
        """The open-hands address, key included (None unless --open-hands)."""
        if self.url is None or self.keys is None or self.keys.open is None:
            return None
        return str(self.keys.url(self.url, open_hands=True))

    def lines(self) -> list[str]:
        """The ``table top: URL`` lines to print: one per seat, then open hands."""
        if self.url is None or self.keys is None:
            return []
        lang = getattr(self._session.referee.spec, "lang", "en") or "en"
        names = [seat.name for seat in self.top.geometry.seats]
        return [str(line) for line in self.keys.lines(self.url, names, lang)]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._unfollow()
        with contextlib.suppress(Exception):
            self._unforward()
        with contextlib.suppress(Exception):
            self.gpio.close()
        with contextlib.suppress(Exception):
            self.backend.close()


__all__ = [
    "COUNTDOWN_S",
    "KEMS_IDLE_POLLS_WITH_PEOPLE",
    "KEMS_THINK_S",
    "CoachHints",
    "SitDown",
    "SocketHeaderBackend",
    "SyncedHands",
    "parse_seats",
]
