"""``tablesense play --remote host``, ``tablesense play --remote join CODE``
and ``tablesense play --remote page`` (a person on the table-top page hosts
or joins by code).

The ``play`` command hands a remote match over here (its one hook). This
module wires the rooms together for one physical table of a remote match:
the table's boards (``--port``, or without ports a virtual table in this
process: virtual boards running the real firmware, whose virtual hands
place the pieces), the tag registry, the broker (``--broker``), the host's
authority or the joining table's link to it, and the
:class:`~tablesense.remote.match.TableSide` that judges the table's sensors.

A match is between two tables; it plays the game and variant the host's
layout and ``--game``/``--variant`` name (every dominoes variant on its
``dominoes-N-remote`` layout, Kems ``classic`` on ``kems-4-remote``): the
host's seats are the even ones (North–South, a Kems team), the joining
table's the odd ones, which it learns from the host's lobby. Both print
the match's record (one JSON line) on stdout when it ends; messages for
people go to stderr.

Exit codes: 0 the match was played to its end; 1 the broker or the other
table was lost for good, or the time given by ``--remote-timeout`` ran out;
2 a bad option (a layout without a stock, a bad code, a broker URL without
a user); 3 the table that opened the code is not its host table (the code
does not name its key, or the director's host table did not endorse it),
so this table refused to join it.
"""

from __future__ import annotations

import json
import random
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from tablesense.games.registry import find_game
from tablesense.remote.authority import Authority, Seating
from tablesense.remote.journal import HostJournal, RemoteJournalError
from tablesense.remote.judge import PLACE, TARGET
from tablesense.remote.match import HostSide, Message, TableSide
from tablesense.table.geometry import CellId, GeometryError, TableGeometry
from tablesense.table.state import Empty, Tag
from tablesense.table.tags import Piece, TagRegistry, TagRegistryError

if TYPE_CHECKING:  # the wire loads paho: only a remote match needs it, not every command's start
    from tablesense.remote.wire import Wire
    from tablesense.tournament.broker_client import BrokerURL
from tablesense.table.words import message_of, say


@dataclass(frozen=True)
class MatchSpec:
    """What a remote match plays: the game, its variant and seat count, its
    options. The host takes them from its layout and options; the joining
    table from the host's lobby."""

    game: str
    variant: str
    players: int
    options: dict[str, Any]

    def split(self) -> tuple[frozenset[int], frozenset[int]]:
        """The host's seats (the even ones: North–South, a pair or a Kems
        team) and the joining table's (the odd ones)."""
        return (frozenset(range(0, self.players, 2)), frozenset(range(1, self.players, 2)))

    def pieces(self) -> list[str]:
        """Every piece of the set the match plays with (one stock cell each)."""
        rules = find_game(self.game)
        return sorted(rules.all_pieces(rules.new_match(self.variant, self.options, seats=self.players).options))

    def lobby(self) -> dict[str, Any]:
        return {"game": self.game, "variant": self.variant, "options": self.options, "players": self.players,
                "seats": sorted(self.split()[1])}

    @classmethod
    def for_table(cls, geometry: TableGeometry, game: str | None, variant: str | None,
                  options: dict[str, Any]) -> MatchSpec:
        """The host's match on its layout: ``--game`` (the layout's first game),
        ``--variant`` (the game's variant for the layout's seats); a layout
        that does not fit is a :class:`RemoteExit` (2) that says which does."""
        name = game or geometry.games[0]
        try:
            rules = find_game(name)
            chosen = variant or rules.variant_for_seats(len(geometry.seats))
            rules.check_variant(chosen)
            counts = rules.seat_counts(chosen)
            spec = cls(name, chosen, len(geometry.seats) if len(geometry.seats) in counts else counts[0],
                       dict(options))
            spec.pieces()  # the options are the game's
        except ValueError as exc:  # an unknown game or variant, options the game refuses
            raise RemoteExit(message_of(exc), 2) from None
        spec.check(geometry)
        return spec

    def check(self, geometry: TableGeometry) -> None:
        """``geometry`` seats this match and holds its whole set in its stock."""
        rules = find_game(self.game)
        fits = self.game in geometry.games and len(geometry.seats) == self.players
        if not fits or len(geometry.stock) < len(self.pieces()):
            raise RemoteExit(say("table {name} cannot play a remote {variant} match ({players} seats): it needs a "
                                 "layout of {players} {game} seats with a stock for the whole set, such as {layout}",
                                 name=geometry.name, variant=self.variant, players=self.players, game=self.game,
                                 layout=rules.layout_name(self.players) + "-remote"), 2)
#: A table that sent nothing for this long is away: the match pauses.
AWAY_AFTER_S = 3.0
ALIVE_EVERY_S = 1.0


class RemoteExit(Exception):
    """Ends the command with ``code`` after printing ``message``."""

    def __init__(self, message: object, code: int) -> None:
        super().__init__(str(message))
        self.message = message
        self.code = code


def sensed_pieces(state: Mapping[CellId, Any], registry: TagRegistry) -> dict[CellId, str] | None:
    """Cell -> piece for every tagged cell; None while any cell cannot be
    trusted (not scanned yet, a read error, an offline board): the table is
    judged only on a whole, clean reading."""
    out: dict[CellId, str] = {}
    for cell, reading in state.items():
        if isinstance(reading, Tag):
            piece = registry.piece(reading.uid)
            if not isinstance(piece, Piece):
                return None
            out[cell] = piece.text
        elif not isinstance(reading, Empty):
            return None
    return out


class VirtualHands:
    """The hands at a virtual table: they move a piece and wait until the
    sensors have seen it. A remote piece is moved only once its stock cell
    and its target light on the virtual boards (a person follows the lights)."""

    def __init__(self, vt: Any, link: Any, trace: Callable[[str], None]) -> None:
        self.sent_at: Callable[[], float | None] = lambda: None
        """When the authority sent the move being placed (to say how long the lights took)."""
        self.vt = vt
        self.link = link
        self.trace = trace
        self.stock = set(vt.geometry.stock)
        # where a remote piece goes: the line of play, or the board's slots
        self.line = set(vt.geometry.line.cells) if vt.geometry.line is not None else set(vt.geometry.kems_slots)

    def move(self, from_cell: CellId, to_cell: CellId) -> None:
        if from_cell in self.stock and to_cell in self.line:
            deadline = time.monotonic() + 3.0
            while time.monotonic() < deadline and not (self._lit(from_cell, PLACE) and self._lit(to_cell, TARGET)):
                time.sleep(0.005)
            lit = self._lit(from_cell, PLACE) and self._lit(to_cell, TARGET)
            sent = self.sent_at()
            after = "" if sent is None else f", {1000 * (time.time() - sent):.0f} ms after the authority sent the move"
            self.trace(f"remote piece: {from_cell} -> {to_cell} ({'lit' if lit else 'NOT lit'}{after})")
        tags = self.vt.tags()
        if from_cell not in tags or to_cell in tags:
            return  # a person's hand was quicker (the page): the next reading is judged again
        uid = tags[from_cell]
        self.vt.move(from_cell, to_cell)
        self.link.wait_until(
            lambda st: isinstance(st.get(to_cell), Tag) and st[to_cell].uid == uid and isinstance(st.get(from_cell), Empty),
            3.0,
        )

    def _lit(self, cell: CellId, colour: tuple[int, int, int]) -> bool:
        shown = self.vt.leds(cell)
        return shown is not None and shown != (0, 0, 0) and (shown[0] > 0) == (colour[0] > 0)


@dataclass(frozen=True)
class PageOptions:
    """Where the table-top page of a virtual table's people is served (``play``'s
    ``--web/--no-web``, ``--host``, ``--web-port``) and in which language."""

    web: bool = True
    host: str = "127.0.0.1"
    port: int = 0
    lang: str = "en"


@dataclass(frozen=True)
class DirectorOptions:
    """``play``'s ``--director``, ``--table-no``, ``--table-key``, ``--outbox``,
    ``--announce-wait``: the host table reports the match to the director."""

    url: str
    table_no: int | None
    table_key: Path | None
    outbox: Path | None
    announce_wait: float = 15.0


def play_remote(
    mode: str,
    code: str | None,
    *,
    table: str,
    game: str | None = None,
    variant: str | None = None,
    seats: str | None,
    broker: str | None,
    ports: list[str],
    tags: str,
    seed: int | None,
    timeout: float | None,
    target: float | None = None,
    journal_dir: Path = Path("remote"),
    page: PageOptions = PageOptions(),
    director: DirectorOptions | None = None,
) -> int:
    """Run one table of a remote match; the exit code (see the module docstring)."""
    console = Console(stderr=True, soft_wrap=True)
    try:
        return _run(mode, code, table=table, game=game, variant=variant, seats=seats, broker=broker, ports=ports, tags=tags,
                    seed=seed, timeout=timeout, target=target, journal_dir=journal_dir, console=console,
                    page=page, director=director)
    except RemoteExit as exc:
        console.print(f"[bold red]error:[/] {exc.message}", highlight=False)
        return exc.code


def _run(mode: str, code: str | None, *, table: str, game: str | None, variant: str | None, seats: str | None,
         broker: str | None, ports: list[str],
         tags: str, seed: int | None, timeout: float | None, target: float | None, journal_dir: Path,
         console: Console, page: PageOptions, director: DirectorOptions | None) -> int:
    from tablesense.remote.wire import HostRefused, Wire, WireError, check_code, code_of
    from tablesense.tournament.security import TableKey

    if mode not in ("host", "join", "auto", "page"):
        raise RemoteExit(say("--remote is 'host' (start a match and print its code), 'join' (with the code), "
                             "'page' (a person on the table-top page hosts or joins by code) "
                             "or 'auto' (the part the tournament director assigned)"), 2)
    if mode == "page" and (code or director is not None or ports or not page.web):
        raise RemoteExit(say("--remote page lets a person at a virtual table host or join by code on the "
                             "table-top page: no code, no --director, no --port, no --no-web"), 2)
    reporter: Any = None
    auto = mode == "auto"
    host_key: str | None = None  # the director's word on the host table's key (a joining table of a tournament)
    if auto:  # the director's assignment says host or join, and the code (tournament/remote_pairs.py)
        if director is None:
            raise RemoteExit(say("--remote auto plays the part the director assigned: give --director, "
                                 "--table-no and --table-key"), 2)
        if code:
            raise RemoteExit(say("--remote auto takes the code from the director's assignment: drop {code}",
                                 code=code), 2)
        reporter = _reporter(director, journal_dir)
        try:
            mode, code, variant, host_key = _assigned(reporter, director, console)
        except RemoteExit:
            reporter.close()
            raise
        if mode == "join":  # the host table reports the match
            reporter.close()
            reporter, director = None, None
    if mode == "join" and not code:
        raise RemoteExit(say("--remote join needs the code the host table printed: play --remote join CODE"), 2)
    try:
        joined_code = check_code(code) if code else None  # host with a code: resume that match from the journal
    except WireError as exc:
        raise RemoteExit(exc, 2) from None
    url = _broker_url(broker)
    try:
        geometry = TableGeometry.load(table)
    except (GeometryError, FileNotFoundError) as exc:
        raise RemoteExit(message_of(exc), 2) from None
    options = {} if target is None else {"target": int(target) if float(target).is_integer() else target}
    # --remote page: the match this table would host, until the person chooses (a joining table's comes in the lobby)
    spec = MatchSpec.for_table(geometry, game, variant, options) if mode in ("host", "page") else None
    # the joining table's seats are the odd ones of a match this layout seats (the lobby says which)
    local = spec.split()[0] if spec is not None and mode == "host" else frozenset(range(1, len(geometry.seats), 2))
    names = [s.strip() for s in seats.split(",")] if seats else ["bot"] * len(local)
    if len(names) != len(local):
        raise RemoteExit(say("this table plays seats {seats}: --seats names {n}, one for each",
                             seats=", ".join(geometry.seats[s].name for s in sorted(local)), n=len(local)), 2)
    bots, people = _seated(local, names)
    if mode == "page" and not people:
        raise RemoteExit(say("--remote page needs a person at the table: name one in --seats (not bot)"), 2)
    if people and not ports and find_game(spec.game if spec is not None else geometry.games[0]).play_area != "line":
        raise RemoteExit(say("the table-top page seats people at a remote match of tiles on a line only: name "
                             "this table's seats bot, or play at a physical table (--port)"), 2)
    if people and not ports and not page.web:
        raise RemoteExit(say("at a virtual table the people's seats ({names}) play on the table-top page: "
                             "drop --no-web, or name them bot", names=", ".join(
                                 n for n in names if n.lower() != "bot")), 2)
    if director is not None and mode != "host":
        raise RemoteExit(say("--director goes with --remote host: the host table reports the match"), 2)
    try:
        registry = TagRegistry.virtual(seed or 0) if tags == "virtual" else TagRegistry.load(tags)
    except TagRegistryError as exc:
        raise RemoteExit(message_of(exc), 2) from None

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    deadline = None if timeout is None else time.monotonic() + timeout
    hosting: Hosting | None = None
    endorser: TableKey | None = None  # the host table's registered key vouches for a director's code
    if mode == "host":
        assert spec is not None
        if auto and director is not None and director.table_key is not None:
            endorser = TableKey.load(director.table_key)  # read once already by the reporter
        if joined_code is not None and reporter is not None and not (journal_dir / f"{joined_code}.jsonl").is_file():
            # the director's code, not hosted here yet: a new match under it
            hosting = Hosting.new(journal_dir, joined_code, seed, spec, TableKey.generate())
        elif joined_code is None:  # a code of our own: the one the match key names (wire.code_of)
            key = TableKey.generate()
            hosting = Hosting.new(journal_dir, code_of(key.public), seed, spec, key)
        else:
            try:
                hosting = Hosting.resume(journal_dir, joined_code, spec)
            except (RemoteJournalError, ValueError, OSError, KeyError) as exc:
                raise RemoteExit(message_of(exc), 2) from None
            hosting.spec.check(geometry)
    if reporter is None and director is not None:
        reporter = _reporter(director, journal_dir)
    if reporter is not None and director is not None and hosting is not None and hosting.joiner is None:
        hosting.spec = _announced_options(reporter, director, hosting.spec, console)
    wire = Wire(url, hosting.key if hosting is not None else TableKey.generate())
    vt: Any = None
    link: Any = None
    server: Any = None
    gpio: Any = None
    record: dict[str, Any] | None = None
    try:
        wire.connect()
        found = None
        finder: Any = None
        if mode == "join" and joined_code:  # before the boards
            found = (_find_host(wire, joined_code, stop, deadline, console, host_key) if auto
                     else wire.find(joined_code, timeout=10.0))
            spec = _lobby_spec(found[1], geometry)
            if sorted(spec.split()[1]) != sorted(local):
                raise RemoteExit(say("this table plays seats {seats}: --seats names {n}, one for each", seats=", ".join(
                    geometry.seats[s].name for s in sorted(spec.split()[1])), n=len(local)), 2)
        if hosting is not None:
            spec = hosting.spec
        assert spec is not None
        pieces = spec.pieces()  # --remote page: a joined match of the layout's game plays with the same set
        if mode == "page":  # the page first: the person chooses while the boards come online
            server, finder = _serve_finder(page, geometry, console)
        link, vt, hands = _open_table(geometry, ports, registry, pieces, seed or 0, console)
        if finder is not None:  # the person hosts or joins on the page; then the table is seated as that side
            chosen = _page_choice(wire, finder, journal_dir, seed, spec, stop, deadline, console)
            if chosen is None:
                return 1
            mode, joined_code, found, hosting = chosen
            if found is not None:
                spec = _lobby_spec(found[1], geometry)
                if spec.pieces() != pieces:
                    raise RemoteExit(say("match {code} plays with another set than this table's {name}",
                                         code=joined_code, name=geometry.name), 2)
            local = spec.split()[0] if mode == "host" else spec.split()[1]
            if len(local) != len(names):
                raise RemoteExit(say("this table plays seats {seats}: --seats names {n}, one for each",
                                     seats=", ".join(geometry.seats[s].name for s in sorted(local)), n=len(names)), 2)
            bots, people = _seated(local, names)
        side = TableSide(geometry, local, pieces, bots=bots, people=people, hands=hands, set_leds=link.set_leds,
                         game=spec.game)
        if isinstance(hands, VirtualHands):
            hands.sent_at = lambda: side.frame_sent_at
        if people and vt is not None:
            players = dict(zip(sorted(local), names, strict=True))
            code_now = hosting.code if hosting is not None else joined_code
            server = _serve_page(vt, side, registry, pieces, players, page, seed or 0, console, code_now,
                                 mounted=None if finder is None else (server, finder, mode))
        if vt is None:  # a physical table: its seat buttons and turn LEDs
            gpio = _table_gpio(geometry, side, console)
        if hosting is not None:
            record = _host(wire, hosting, side, link, registry, stop, deadline, console, endorser)
        else:
            assert joined_code is not None and found is not None
            record = _join(wire, joined_code, found, side, link, registry, stop, deadline, console, journal_dir)
        if record is not None and people and vt is not None:
            time.sleep(1.0)  # the page shows the end of the match before it goes
    except HostRefused as exc:
        raise RemoteExit(message_of(exc), 3) from None
    except WireError as exc:
        raise RemoteExit(message_of(exc), 1) from None
    finally:
        wire.close()
        if server is not None:
            server.stop()
        if gpio is not None:
            gpio.close()
        if hosting is not None and hosting.journal is not None:
            hosting.journal.close()
        if link is not None:
            link.stop()
        if vt is not None:
            vt.stop()
    if record is None:
        if reporter is not None:
            reporter.close()
        return 1
    sys.stdout.write(json.dumps(record, separators=(",", ":")) + "\n")
    sys.stdout.flush()
    if reporter is not None:
        try:
            return _report(reporter, record, stop, console)
        finally:
            reporter.close()
    return 0


def _seated(local: frozenset[int], names: list[str]) -> tuple[frozenset[int], frozenset[int]]:
    """The computer seats and the people's of this table's ``local`` seats, by ``--seats``."""
    bots = frozenset(s for s, n in zip(sorted(local), names, strict=True) if n.lower() == "bot")
    return bots, frozenset(local) - bots


def _serve_finder(page: PageOptions, geometry: TableGeometry, console: Console) -> tuple[Any, Any]:
    """``--remote page``: the table-top server with only the page's "play another
    table" (web/tabletop_find.py) until the person chooses; prints its keyed
    ``find a game:`` address. The server and the finder (remote/people.py)."""
    from tablesense.i18n import N_, Translator
    from tablesense.outputs.events import EventBus
    from tablesense.remote.people import PageFinder
    from tablesense.web.app import create_app
    from tablesense.web.server import WebServerError, serve_in_thread
    from tablesense.web.tabletop_find import find_router, find_url

    finder = PageFinder()
    router, key = find_router(finder)
    app = create_app(EventBus(), title=f"virtual table {geometry.name}", lang=page.lang, routers=[router],
                     optional_routers=())
    try:
        server = serve_in_thread(app, host=page.host, port=page.port)
    except WebServerError as exc:
        raise RemoteExit(message_of(exc), 1) from None
    console.print(Translator(page.lang)(N_("find a game: {url}"), url=find_url(server.url, key)),
                  markup=False, highlight=False)
    console.file.flush()
    return server, finder


def _page_choice(wire: Wire, finder: Any, journal_dir: Path, seed: int | None, spec: MatchSpec,
                 stop: threading.Event, deadline: float | None,
                 console: Console) -> tuple[str, str, tuple[str, dict[str, Any]] | None, Hosting | None] | None:
    """The person's choice on the page, taken in turn: ``host`` opens a match
    under the code this table's key names; ``join`` looks the typed code up
    (its host checked as for ``--remote join``), and a code that leads
    nowhere is said on the page, which asks again. ``(mode, code, the host's
    lobby, hosting)``, or None when stopped."""
    from tablesense.remote.wire import WireError, code_of

    while not _over(stop, deadline):
        ask = finder.next(0.2)
        if ask is None:
            continue
        kind, code = ask
        if kind == "host":
            hosting = Hosting.new(journal_dir, code_of(wire.key.public), seed, spec, wire.key)
            return "host", hosting.code, None, hosting
        assert code is not None
        finder.searching(code)
        try:
            found = wire.find(code, timeout=10.0)
        except WireError as exc:  # no such match, or a table that is not its host: the page says it
            console.print("[yellow]" + str(message_of(exc)) + "[/]", highlight=False)
            finder.refuse(exc.args[0] if exc.args else str(exc))
            continue
        return "join", code, found, None
    return None


def _serve_page(vt: Any, side: TableSide, registry: TagRegistry, pieces: list[str], players: dict[int, str],
                page: PageOptions, seed: int, console: Console, code: str | None = None,
                mounted: tuple[Any, Any, str] | None = None) -> Any:
    """The table-top page of the people's seats at this virtual table (docs/remote.md,
    "A person on the table-top page"); prints one keyed ``table top:`` address per person.
    ``mounted``: ``--remote page``'s server, finder and the side chosen there: the
    seats' routes join that server and the finder hands the page its seats."""
    from tablesense.i18n import Translator
    from tablesense.remote.people import Refusals, SeatButtons, page_banner, turn_lights
    from tablesense.sim.hand import COMPUTER, TableTop
    from tablesense.web.server import WebServerError
    from tablesense.web.tabletop import TableKeys, serve_tabletop, tabletop_router

    geometry = side.geometry
    n = len(geometry.seats)

    def turns() -> list[bool]:
        # not while the other table's piece is being placed: the judge takes no claim before it lies
        return turn_lights(side.view, n, side.current_legal() if side.judge.pending_place() is None else [])

    from tablesense.games.registry import find_game

    top = TableTop(vt, geometry, registry, pieces=pieces, header=SeatButtons(geometry, side.people, side.press, turns),
                   banner=page_banner(side, Refusals(), Translator(page.lang), code), seats=sorted(side.people),
                   seed=seed, turns=turns, elsewhere=[s.index for s in geometry.seats if s.index not in side.view.seats],
                   facts=find_game(geometry.games[0]).page_facts())
    top.dealer = COMPUTER  # the authority deals; the table's hands lay each deal out by its lights
    keys = TableKeys.for_table(top)
    finder: Any = None
    role = ""
    if mounted is not None:
        server, finder, role = mounted
        server.app.include_router(tabletop_router(top, keys))  # the finder's server: the same address
    else:
        try:
            server = serve_tabletop(top, page.host, page.port, keys)
        except WebServerError as exc:
            raise RemoteExit(message_of(exc), 1) from None
    names = [players.get(s.index, s.name) for s in geometry.seats]
    for line in keys.lines(server.url, names, page.lang):
        console.print(line, markup=False, highlight=False)
    console.file.flush()
    if finder is not None:
        finder.ready(role, code or "", [(names[s], keys.url(server.url, s)) for s in sorted(side.people)])
    return server


def seat_devices(gpio: Any, side: TableSide, stop: threading.Event, every: float = 0.1) -> threading.Thread:
    """A physical table's seat devices at a remote match (``gpio``: a
    :class:`~tablesense.outputs.gpio.TableGPIO`): a person's seat button is
    their pass (``TableSide.press``: claimed when it is one of the seat's
    legal moves), and every seat's turn LED follows
    :func:`~tablesense.remote.people.turn_lights` (this table's seats while
    their legal moves are here and nothing is being placed, the other
    table's seat to play). The LEDs are kept by a thread until ``stop``."""
    from tablesense.remote.people import turn_lights

    def pressed(ev: Any) -> None:
        if ev.button == "seat" and ev.pressed and ev.seat in side.people:
            side.press(ev.seat)

    gpio.on_button(pressed)
    n = len(side.geometry.seats)

    def keep() -> None:
        shown: list[bool | None] = [None] * n
        while not stop.is_set():
            legal = side.current_legal() if side.judge.pending_place() is None else []
            for io, lit in zip(gpio.seats, turn_lights(side.view, n, legal), strict=False):
                if io.turn_led is not None and shown[io.index] != lit:
                    (io.turn_led.on if lit else io.turn_led.off)()
                    shown[io.index] = lit
            stop.wait(every)

    thread = threading.Thread(target=keep, name="remote-turn-leds", daemon=True)
    thread.start()
    return thread


class _SeatDevices:
    """The table's GPIO and the thread keeping its turn LEDs; ``close()`` stops both."""

    def __init__(self, gpio: Any, side: TableSide) -> None:
        self.gpio, self.stop = gpio, threading.Event()
        self.thread = seat_devices(gpio, side, self.stop)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        self.gpio.close()


def _table_gpio(geometry: TableGeometry, side: TableSide, console: Console) -> _SeatDevices | None:
    """The table's seat buttons and turn LEDs, or None with a warning where it has none."""
    from tablesense.outputs.gpio import TableGPIO

    try:
        gpio = TableGPIO.from_geometry(geometry)
    except Exception as exc:  # noqa: BLE001 - no GPIO on this machine: the table plays without buttons
        console.print("[yellow]" + str(say("seat buttons unavailable ({error}): a person at this table cannot "
                                           "pass", error=message_of(exc))) + "[/]")
        return None
    return _SeatDevices(gpio, side)


def _reporter(director: DirectorOptions, journal_dir: Path) -> Any:
    """The host table's link to the tournament director (its signed, durable outbox)."""
    from tablesense.tournament.reporter import TableReporter
    from tablesense.tournament.security import SignatureError, TableKey

    if director.table_no is None or director.table_key is None:
        raise RemoteExit(say("--director needs --table-no and --table-key"), 2)
    url = _broker_url(director.url, "--director")
    try:
        key = TableKey.load(director.table_key)
    except (OSError, ValueError, SignatureError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else message_of(exc)
        raise RemoteExit(say("--table-key {path}: {error}", path=str(director.table_key), error=reason), 2) from None
    path = director.outbox or journal_dir.parent / "outbox.sqlite"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return TableReporter(director.table_no, key, path, url).start()
    except Exception as exc:  # noqa: BLE001 - whatever stops the outbox opening is said, never a traceback
        raise RemoteExit(say("cannot open the outbox {path}: {error}", path=str(path), error=str(exc)), 1) from None


def _assigned(reporter: Any, director: DirectorOptions, console: Console) -> tuple[str, str, str, str | None]:
    """``--remote auto``: this table's part of the remote match the director
    assigned it (``host`` or ``join``), the match's code, its variant, and for
    a joining table the host table's registered key (whose endorsement its
    lobby must carry)."""
    m = reporter.current_match(timeout=director.announce_wait)
    if m is None:
        raise RemoteExit(say("no match announced for table {table}: the director pairs the round and its remote "
                             "matches (tournament pair-remote) first", table=director.table_no), 1)
    remote = m.get("remote")
    if not isinstance(remote, dict) or remote.get("role") not in ("host", "join"):
        raise RemoteExit(say("the director's match {match} for table {table} is not a remote match: play it with "
                             "play --director", match=m["match"], table=director.table_no), 2)
    role, code = str(remote["role"]), str(remote["code"])
    host_key = remote.get("key")
    if role == "join" and not isinstance(host_key, str):
        raise RemoteExit(say("the director's assignment names no key for host table {table}, so this table "
                             "cannot tell it from another: the director needs this version", table=remote["table"]), 2)
    line = (say("tournament match {match}: this table hosts remote match {code} with table {other}",
                match=m["match"], code=code, other=remote["table"]) if role == "host" else
            say("tournament match {match}: this table joins remote match {code} with table {other}",
                match=m["match"], code=code, other=remote["table"]))
    console.print(str(line), highlight=False)
    return role, code, str(m["variant"]), host_key if role == "join" else None


def _find_host(wire: Any, code: str, stop: threading.Event, deadline: float | None,
               console: Console, host_key: str | None = None) -> tuple[str, dict[str, Any]]:
    """The host of ``code``, waited for: at a tournament the two tables start in
    any order, so the joining table waits for the host's lobby (WireError when
    stopped or out of time; HostRefused then when only other tables opened
    it, each said once as it is refused)."""
    from tablesense.remote.wire import WireError

    said = False
    told = 0
    while True:
        try:
            return wire.find(code, timeout=2.0, host_key=host_key)
        except WireError:
            for reason in wire.impostors[told:]:
                console.print("[yellow]" + str(say("refused: {reason}", reason=reason)) + "[/]", highlight=False)
            told = len(wire.impostors)
            if stop.is_set() or (deadline is not None and time.monotonic() > deadline):
                raise
            if not said:
                console.print(str(say("waiting for the host table to open match {code} ...", code=code)),
                              highlight=False)
                said = True


def _announced_options(reporter: Any, director: DirectorOptions, spec: MatchSpec,
                       console: Console) -> MatchSpec:
    """The match the director announced for this table: its target (the
    director's word over ``--target``); a match of another variant than the
    table plays is refused."""
    m = reporter.current_match(timeout=director.announce_wait)
    if m is None:
        console.print("[yellow]" + str(say("no match announced for table {table} yet: the result is reported "
                                           "when the match ends", table=director.table_no)) + "[/]")
        return spec
    if m["variant"] != spec.variant:
        raise RemoteExit(say("the director announced {variant} for table {table}; a remote match plays {ours}",
                             variant=m["variant"], table=director.table_no, ours=spec.variant), 2)
    reporter.show_match(m)
    target = m["options"]["target"]
    console.print(f"tournament match {m['match']}: " + " v ".join(e["name"] for e in m["entrants"])
                  + f" (to {target})", highlight=False)
    return MatchSpec(spec.game, spec.variant, spec.players,
                     {**spec.options, "target": int(target) if float(target).is_integer() else target})


def _report(reporter: Any, record: dict[str, Any], stop: threading.Event, console: Console) -> int:
    """Send the host's record, signed, to the director and wait for its echo.
    A remote match's sides sit at two tables, so the director confirms it
    (console or ``tournament confirm``); 1 when the director did not accept it
    (the result stays in the outbox, sent again by the table's next start)."""
    from tablesense.tournament.reporter import ReportError

    try:
        key = reporter.report(record)
    except ReportError as exc:
        console.print("[red]" + str(say("not reported: {error}; call the director", error=str(exc))) + "[/]",
                      highlight=False)
        return 1
    console.print(str(say("result sent to the director; waiting for its acknowledgement ...")), highlight=False)
    status = reporter.wait_echo(key, stop=stop)
    if status is None:
        console.print("[yellow]" + str(say("not acknowledged yet: the result stays in the outbox and is "
                                           "re-sent when the table starts again")) + "[/]", highlight=False)
        return 1
    console.print(f"director: result {status}", highlight=False)
    if status not in ("accepted", "duplicate"):
        return 1
    console.print(str(say("the director confirms a remote match (its sides are at two tables): "
                          "console or tournament confirm")), highlight=False)
    return 0


def _lobby_spec(lobby: Mapping[str, Any], geometry: TableGeometry) -> MatchSpec:
    """What the host's lobby says the match plays (a lobby of the first slice
    names no seat count: its four seats), checked against this table's layout."""
    try:
        spec = MatchSpec(str(lobby["game"]), str(lobby["variant"]), int(lobby.get("players", 4)),
                         dict(lobby.get("options") or {}))
        spec.pieces()  # a game, variant, seat count and options the engine takes
    except (KeyError, TypeError, ValueError) as exc:
        raise RemoteExit(say("the host's lobby does not say what the match plays: {error}", error=message_of(exc)),
                         1) from None
    spec.check(geometry)
    return spec


def _broker_url(broker: str | None, option: str = "--broker") -> BrokerURL:
    """The ``--broker`` URL with its password from a file or the environment.
    A password written in the URL is refused (exit 2): ``ps`` shows every
    command line to every user of the machine, and a table's password lets
    anyone on it play in that table's name."""
    from tablesense.tournament.broker_client import PASSWORD_ENV, BrokerURL, password_in_url

    if not broker:
        raise RemoteExit(say("a remote match needs the broker both tables reach: "
                             "--broker 'mqtts://table-1@host:8883?ca=ca.crt&password_file=table-1.password'"), 2)
    if password_in_url(broker):
        raise RemoteExit(say("the broker password is written in {option}, where ps shows it to every user of this "
                             "machine: put it in a file and add &password_file=FILE to the URL (broker-config "
                             "writes table-N.password), or set {variable}", option=option, variable=PASSWORD_ENV), 2)
    try:
        url = BrokerURL.parse(broker)
    except ValueError as exc:
        raise RemoteExit(message_of(exc), 2) from None
    if url.username is not None and url.password is None:
        raise RemoteExit(say("no password for broker user {user}: add &password_file=FILE to the URL or set "
                             "{variable}", user=url.username, variable=PASSWORD_ENV), 2)
    return url


def _open_table(geometry: TableGeometry, ports: list[str], registry: TagRegistry, pieces: list[str], seed: int,
                console: Console) -> tuple[Any, Any, Any]:
    """The table's link; without ports a virtual table with the whole set in its stock, and its hands."""
    from tablesense.link.manager import TableLink

    if ports:
        link = TableLink(geometry, ports=ports)
        link.start()
        return link, None, None
    from tablesense.sim.virtual_table import VirtualTable

    vt = VirtualTable(geometry, seed=seed)
    paths = vt.start()
    stock = list(geometry.stock)
    random.Random(seed).shuffle(stock)
    for cell, piece in zip(stock, pieces, strict=False):
        vt.place(cell, registry.uid_of(piece))
    link = TableLink(geometry, ports=list(paths.values()))
    link.start()
    if not link.wait_online(20.0):
        raise RemoteExit(say("the virtual boards did not come online within 20 s"), 1)
    console.print(f"virtual table {geometry.name}: {len(paths)} boards, the {len(pieces)} pieces face down in the stock")
    return link, vt, VirtualHands(vt, link, lambda text: console.print(text, highlight=False))


def _sense(link: Any, registry: TagRegistry) -> dict[CellId, str] | None:
    return sensed_pieces(link.state(), registry)


def _over(stop: threading.Event, deadline: float | None) -> bool:
    if deadline is not None and time.monotonic() > deadline:
        raise RemoteExit(say("the match did not end within --remote-timeout"), 1)
    return stop.is_set()


class Hosting:
    """The host's match: its code, seed, what it plays, key, journal, and (once a
    table joined, or from the journal) the joining table's user and key."""

    def __init__(self, folder: Path, code: str, seed: int, spec: MatchSpec, key: Any) -> None:
        self.folder, self.code, self.seed, self.spec, self.key = folder, code, seed, spec, key
        self.journal: HostJournal | None = None
        self.joiner: str | None = None
        self.joiner_key: str | None = None
        self.inputs: list[dict[str, Any]] = []

    @classmethod
    def new(cls, folder: Path, code: str, seed: int | None, spec: MatchSpec, key: Any) -> Hosting:
        return cls(folder, code, seed if seed is not None else random.SystemRandom().randrange(2**32), spec, key)

    @classmethod
    def resume(cls, folder: Path, code: str, layout: MatchSpec) -> Hosting:
        """The match of ``code`` from this table's journal (a journal of the
        first slice names no game: it is ``layout``'s, the table's own)."""
        journal, match, inputs, key = HostJournal.open(folder, code)
        spec = MatchSpec(str(match.get("game", layout.game)), str(match.get("variant", layout.variant)),
                         int(match.get("players", layout.players)), dict(match["options"]))
        hosting = cls(folder, code, int(match["seed"]), spec, key)
        hosting.journal, hosting.inputs = journal, inputs
        hosting.joiner, hosting.joiner_key = str(match["joiner"]), str(match["joiner_key"])
        return hosting

    def begin(self, joiner: str, joiner_key: str) -> None:
        """A table joined: the journal starts with the match and that table."""
        self.joiner, self.joiner_key = joiner, joiner_key
        self.journal = HostJournal.create(self.folder, self.code, {
            "code": self.code, "seed": self.seed, "game": self.spec.game, "variant": self.spec.variant,
            "players": self.spec.players, "options": self.spec.options, "joiner": joiner, "joiner_key": joiner_key,
        }, self.key)


def _host(wire: Wire, hosting: Hosting, side: TableSide, link: Any, registry: TagRegistry, stop: threading.Event,
          deadline: float | None, console: Console, endorser: Any = None) -> dict[str, Any] | None:
    code = hosting.code
    spec = hosting.spec
    host_seats, join_seats = spec.split()
    wire.announce(code, spec.lobby(), endorsed_by=endorser)
    welcome = {"type": "welcome", "code": code, "seats": sorted(join_seats), "game": spec.game, "variant": spec.variant}
    if hosting.joiner is None:
        console.print(f"remote match code: [bold]{code}[/]  (at the other table: tablesense play --remote join {code})")
        console.file.flush()
        while hosting.joiner is None:
            if _over(stop, deadline):
                wire.withdraw(code)
                return None
            got = wire.receive(0.2)
            if got is not None and got[1].get("type") == "join" and got[1].get("code") == code:
                hosting.begin(got[0], str(got[1]["key"]))
        console.print(f"{hosting.joiner} joined: seats {', '.join(side.geometry.seats[s].name for s in sorted(join_seats))}")
    else:
        console.print(f"resuming remote match {code} from its journal ({len(hosting.inputs)} entries)")
    joiner, journal = hosting.joiner, hosting.journal
    assert joiner is not None and journal is not None and hosting.joiner_key is not None
    wire.trusted[joiner] = hosting.joiner_key
    wire.send(joiner, welcome)
    me = wire.user
    authority = Authority(spec.game, spec.variant, Seating({me: host_seats, joiner: join_seats}),
                          options=spec.options, seed=hosting.seed)
    host = HostSide(authority)

    def deliver(out: list[tuple[str, Message]]) -> None:
        for table, msg in out:
            if table == me:
                side.receive(msg)
            else:
                wire.send(table, msg)

    if hosting.inputs:  # the same facts as before the restart; the joining table's alive says what it lacks
        authority.replay(hosting.inputs)
        authority.on_input = journal.add_input
        deliver(host.rejoin(me))
    else:
        authority.on_input = journal.add_input
        deliver(host.start())
    seen = time.monotonic()
    while not _over(stop, deadline):
        while (got := wire.receive(0.005)) is not None:
            sender, body = got
            if body.get("type") == "join" and body.get("code") == code:
                if sender != joiner:  # the match is full
                    wire.send(sender, {"type": "reject", "reason": f"match {code} is full"})
                    continue
                wire.trusted[joiner] = str(body["key"])  # the joining table started again: a new key
                journal.append({"joiner_key": wire.trusted[joiner]})
                console.print(f"{joiner} started again: it gets the match from its first frame")
                wire.send(joiner, welcome)
                seen = time.monotonic()
                deliver(host.rejoin(joiner))
                continue
            if sender != joiner:
                continue
            if joiner in host.authority.paused:
                console.print(f"{joiner} is back: the match resumes")
            seen = time.monotonic()
            deliver(host.handle(sender, body))
        if time.monotonic() - seen > AWAY_AFTER_S and joiner not in host.authority.paused:
            console.print(f"[yellow]{joiner} is away: the match pauses[/]")
            deliver(host.drop(joiner))
        sensed = _sense(link, registry)
        if sensed is not None:
            for msg in side.step(sensed):
                deliver(host.handle(me, msg))
        if side.view.record is not None:
            _wait_acked(host, joiner, wire, stop, deadline)
            wire.withdraw(code)
            console.print("match over: " + "-".join(str(p) for p in host.authority.match.score))
            return side.view.record
    return None


def _wait_acked(host: HostSide, joiner: str, wire: Wire, stop: threading.Event, deadline: float | None) -> None:
    """The joining table has applied the last frame (or 10 s passed)."""
    last = len(host.authority.facts) - 1
    until = time.monotonic() + 10.0
    while host.acked.get(joiner, -1) < last and time.monotonic() < until and not _over(stop, deadline):
        got = wire.receive(0.05)
        if got is not None and got[0] == joiner and got[1].get("type") == "alive":
            host.handle(joiner, got[1])


def _join(wire: Wire, code: str, found: tuple[str, dict[str, Any]], side: TableSide, link: Any,
          registry: TagRegistry, stop: threading.Event, deadline: float | None,
          console: Console, journal_dir: Path) -> dict[str, Any] | None:
    from tablesense.remote.journal import TableJournal

    host_user, lobby = found
    try:
        journal, frames = TableJournal.open_or_create(journal_dir, code, host_user)
    except (RemoteJournalError, OSError) as exc:
        raise RemoteExit(message_of(exc), 2) from None
    try:
        for frame in frames:  # the match as this table saw it before it started again
            side.receive({"type": "frame", "frame": frame})
        if frames:
            console.print(f"this table's journal of match {code}: {len(frames)} frames")
        side.on_frame = journal.add_frame
        return _joined(wire, code, host_user, lobby, side, link, registry, stop, deadline, console)
    finally:
        journal.close()


def _joined(wire: Wire, code: str, host_user: str, lobby: dict[str, Any], side: TableSide, link: Any,
            registry: TagRegistry, stop: threading.Event, deadline: float | None,
            console: Console) -> dict[str, Any] | None:
    wire.send(host_user, {"type": "join", "code": code, "key": wire.key.public, "table": side.geometry.name})
    console.print(f"joining {host_user}'s match {code} ({lobby.get('variant')}) ...")
    alive = 0.0
    welcomed = False
    while not _over(stop, deadline):
        while (got := wire.receive(0.005)) is not None:
            sender, body = got
            if sender != host_user:
                continue
            if body.get("type") == "welcome":
                welcomed = True
                console.print(f"joined: this table plays seats {', '.join(side.geometry.seats[s].name for s in body['seats'])}")
            elif body.get("type") == "reject" and not welcomed:  # the match has its two tables already
                raise RemoteExit(str(body.get("reason")), 1)
            side.receive(body)
        now = time.monotonic()
        if now - alive >= ALIVE_EVERY_S or side.view.record is not None:
            alive = now
            wire.send(host_user, side.alive())
        sensed = _sense(link, registry)
        if sensed is not None:
            for msg in side.step(sensed):
                wire.send(host_user, msg)
        if side.view.record is not None:
            wire.send(host_user, side.alive())
            time.sleep(0.5)  # let the last acknowledgement leave
            console.print("match over: " + "-".join(str(p) for p in side.view.score))
            return side.view.record
    return None


def register(app: Any) -> None:
    """``tablesense remote broker-config``: a club's broker for remote play."""
    import typer

    remote_app = typer.Typer(name="remote", help="Remote seats: a club's broker for matches between tables.",
                             no_args_is_help=True, add_completion=False)

    @remote_app.command("broker-config")
    def broker_config(
        out: Path = typer.Option(..., "--out", help="Directory for mosquitto.conf, passwd, acl, credentials, ca.crt."),
        tables: int = typer.Option(2, "--tables", min=1, help="Table users to create (table-1 .. table-N)."),
        port: int = typer.Option(8883, "--port", help="The broker's port (MQTT over TLS)."),
        bind: str = typer.Option("127.0.0.1", "--bind", help="Address it listens on (0.0.0.0: every network)."),
        name: list[str] = typer.Option([], "--name", help="A host name or address the tables use (for the certificate; repeat)."),
        run_as: str | None = typer.Option(None, "--user", help="Write a `user` line (the account the broker runs as)."),
        bridge_to: Path | None = typer.Option(None, "--bridge-to", help="The other club's broker folder: bridge this broker to it."),
        bridge_host: str = typer.Option("127.0.0.1", "--bridge-host", help="How this broker reaches the other club's."),
        bridge_port: int = typer.Option(8883, "--bridge-port", help="The other club's broker port."),
    ) -> None:
        """Write a TLS broker's files with the remote-play ACL (and optionally a bridge to another club's broker)."""
        from tablesense.remote.wire import bridge_brokers, table_url, write_remote_broker
        from tablesense.tournament.mosquitto import BrokerFiles, read_credentials

        console = Console(stderr=True, soft_wrap=True)
        if bridge_to is not None and not (bridge_to / "mosquitto.conf").is_file():
            console.print(f"[bold red]error:[/] {bridge_to} holds no broker (mosquitto.conf): write the other club's first")
            raise typer.Exit(2)
        files = write_remote_broker(out, tables=tables, port=port, tls=True, run_as=run_as, bind=bind, names=name)
        if bridge_to is not None:
            there = BrokerFiles(conf=bridge_to / "mosquitto.conf", passwd=bridge_to / "passwd", acl=bridge_to / "acl",
                                credentials=read_credentials(bridge_to), ca=bridge_to / "ca.crt")
            bridge_brokers(files, there, bridge_host, bridge_port, f"bridge-{out.resolve().name}")
            console.print(f"bridged to {bridge_host}:{bridge_port} (restart that broker: it has a new account)")
        host = name[0] if name else bind if bind not in ("0.0.0.0", "::") else "127.0.0.1"
        for n in range(1, tables + 1):  # each password stays in its file, never on a command line
            typer.echo(table_url(files, f"table-{n}", host, port))
        console.print(f"each table's password is in table-N.password beside it (copy a table its own file, or "
                      f"give it in TABLESENSE_BROKER_PASSWORD); start the broker with: mosquitto -c {files.conf}",
                      soft_wrap=True)

    app.add_typer(remote_app)
