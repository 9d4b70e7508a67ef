"""The table session of ``tablesense play``, built by a function a test can call.

:meth:`TableSession.build` takes a :class:`PlayOptions` (what the command
line says, typed) and checks every option before anything opens; then it
opens what a refereed match needs: the table's geometry and tags, the
director's announcement (``--director``), the journal (resuming its
unfinished match or beginning a new one), the referee, the board link (or a
virtual table started here, ``--virtual-table``, with the computer's hands),
the event bus with the console, voice and LEDs on it. :meth:`TableSession.run`
starts the link, the display page, the seat buttons and the keyboard, plays
the match (match after match for a director: referee/evening.py) until it is
over or ``stop`` is set, and closes everything it opened.

A refusal is a :class:`~tablesense.referee.options.CommandRefused` carrying
the sentence and exit code the command prints: 2 a bad option (nothing is
opened), 1 a table that cannot start (a journal that cannot be used, a busy
port, a journal write refused), 3 a missing service.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.markup import escape

from tablesense.games.common import listed, message_of, say
from tablesense.games.registry import find_game
from tablesense.i18n import N_, Translator
from tablesense.i18n.cli import _, activate
from tablesense.referee.options import (
    CommandRefused,
    announcer,
    default_journal,
    default_journal_is,
    invocation,
    table_lang,
)
from tablesense.referee.state import Phase

__all__ = ["PlayOptions", "TableSession", "choose_match", "computer_seats", "describe"]


@dataclass
class PlayOptions:
    """What ``tablesense play`` is told (its options, by the same names)."""

    table: str
    """Table geometry file or shipped layout name."""
    seats: str | None = None
    """Players in seat order, ``bot`` for a computer seat: ``"Ana,Bia,bot,Caio"``."""
    game: str | None = None
    variant: str | None = None
    ports: list[str] = field(default_factory=list)
    """Board serial ports (none: found by USB id)."""
    journal: Path | None = None
    """None: :func:`~tablesense.referee.options.default_journal`."""
    tags: str = "virtual"
    web: bool = True
    web_port: int = 8080
    host: str = "0.0.0.0"
    seed: int | None = None
    target: float | None = None
    new: bool = False
    deal: str = "table"
    """``table`` (read from the racks) or ``host`` (the host deals and lights each piece's cell)."""
    lang: str | None = None
    speech: bool = False
    volume: int = 80
    quiet_hours: str | None = None
    keys: bool = True
    records: Path | None = None
    director: str | None = None
    table_no: int | None = None
    table_key: Path | None = None
    outbox: Path | None = None
    announce_wait: float = 15.0
    seat_header: str | None = None
    coach: bool = False
    player: str | None = None
    think_ms: float | None = None
    virtual_table: bool = False
    speed: float = 1.0

    @staticmethod
    def split_ports(given: list[str]) -> list[str]:
        """``--port A --port B,C`` as ``[A, B, C]``."""
        return [p for item in given for p in item.split(",") if p]


def computer_seats(seats: str | None, n: int, table: str, virtual_table: bool, ports: list[str]) -> frozenset[int]:
    """The seats ``--seats`` gives the computer (``bot``), checked before anything opens:
    with ``--virtual-table`` every seat is the computer's and no ``--port`` is given (the
    boards are started here). With ``--director`` the names come from the director's seat
    plan: ``--seats`` then says which seats the computer plays."""
    given = [x.strip() for x in seats.split(",")] if seats else []
    if given and len(given) != n:
        raise CommandRefused(say("table {table} has {n} seats; --seats names {named}", table=table, n=n,
                                 named=len(given)))
    computer = frozenset(i for i, x in enumerate(given) if x.lower() == "bot")
    if virtual_table and len(computer) != n:
        raise CommandRefused(say("--virtual-table plays computer seats only: give --seats with 'bot' for each of "
                                 "the {n} seats, for example --seats {example}", n=n, example=",".join(["bot"] * n)))
    if virtual_table and ports:
        raise CommandRefused(say("--virtual-table starts the table's own virtual boards: leave out --port"))
    return computer


def is_virtual_port(port: str) -> bool:
    """A pseudo-terminal (``tablesense sim boards`` prints them, or its
    stable links to them): a virtual board, not one on a USB cable."""
    return os.path.realpath(port).startswith("/dev/pts/")


def hint_without_boards(console: Any, table: str) -> None:
    """No board on USB when ``play`` starts: say so at once, and how to try
    the referee without a table (it keeps looking: a board plugged in later
    is found by itself)."""
    from tablesense.link.discovery import candidate_ports

    try:
        found = candidate_ports()
    except Exception:  # noqa: BLE001 - listing ports failed: the link says what it finds
        return
    if found:
        return
    command = f"{invocation()} sim boards --table {table}"
    console.print(
        "[yellow]"
        + escape(_(say("no boards found on USB yet: plug the table's boards in (play starts when they "
                       "answer), or try without a table: run {command} in another terminal, then the "
                       "play command it prints", command=command)))
        + "[/]",
        highlight=False,
    )


def describe(spec: Any) -> Any:
    """``dominoes pairs-pips on dominoes-4, seats South, East, North, West``
    (a Sentence: the seat names as the table says them)."""
    from tablesense.referee.words import in_a_row, seat_word

    names = in_a_row([seat_word(name) for name in spec.seat_names])
    if spec.table:
        return say("{game} {variant} on {table}, seats {seats}", game=spec.game, variant=spec.variant,
                   table=spec.table, seats=names)
    return say("{game} {variant} on this table, seats {seats}", game=spec.game, variant=spec.variant, seats=names)


def choose_match(
    jour: Any, spec: Any, table: str, given: dict[str, Any], new: bool, console: Any
) -> tuple[Any, Any]:
    """The match ``play`` referees: the journal's unfinished one (resumed as
    it was), or ``spec`` (new). Never silently: an unfinished match that the
    options contradict (another table, game, variant, seats or target) is
    refused with both ways on; ``--new`` keeps it in the journal as
    abandoned and says so. Returns ``(spec, running row or None)``."""
    from tablesense.journal.store import JournalError
    from tablesense.referee.core import MatchSpec

    running = jour.running()
    if running is None:
        return spec, None
    if _never_played(jour, running.id):
        # begun while no board answered (or the director's announcement was
        # awaited): nothing to resume, so today's options start it afresh
        jour.close_match("abandoned", running.id)
        return spec, None
    try:
        old = MatchSpec.from_json(running.spec)
    except (KeyError, TypeError, ValueError) as exc:
        raise JournalError(
            say("cannot read the journal {path}: match {id} has no valid description ({error}); "
                "the file is left as it is", path=str(jour.path), id=running.id, error=repr(exc))
        ) from None
    if new:
        jour.close_match("abandoned", running.id)
        console.print(
            "[yellow]" + escape(_(say("the unfinished match {id} ({match}) stays in the journal as abandoned; "
                                      "a new match starts", id=running.id, match=describe(old)))) + "[/]",
            highlight=False,
        )
        return spec, None
    differs: list[Any] = []
    if old.table and old.table != table:
        differs.append(say("it is on table {table}, not {given}", table=old.table, given=table))
    if given.get("game") is not None and given["game"] != old.game:
        differs.append(say("its game is {game}, not {given}", game=old.game, given=given["game"]))
    if given.get("variant") is not None and given["variant"] != old.variant:
        differs.append(say("its variant is {variant}, not {given}", variant=old.variant, given=given["variant"]))
    if given.get("seats") is not None and list(given["seats"]) != list(old.seat_names):
        differs.append(say("its seats are {seats}", seats=", ".join(old.seat_names)))
    if given.get("target") is not None and given["target"] != old.options.get("target"):
        if "target" in old.options:
            differs.append(say("its target is {target}", target=old.options["target"]))
        else:
            differs.append(say("its target is the default"))
    if differs:
        journal_opt = "" if default_journal_is(jour.path) else f" --journal {jour.path}"
        raise CommandRefused(
            say("the journal {path} holds an unfinished match {id} ({match}, {n} journal entries): {differs}.\n"
                "  resume it as it was: {command}\n"
                "  or start a new match (the unfinished one stays in the journal as abandoned): add --new",
                path=str(jour.path), id=running.id, match=describe(old), n=running.entries,
                differs=listed(differs), command=f"tablesense play --table {old.table or table}{journal_opt}"),
            2,
        )
    return old, running


def _never_played(jour: Any, match_id: str) -> bool:
    """The journal holds the match's description and nothing after it: no
    deal was read, no move made."""
    return all(entry.get("type") == "match" for entry in jour.entries(match_id))


def _afresh(exc: BaseException) -> CommandRefused:
    """A journal that cannot be used, and the way out (exit 1)."""
    return CommandRefused(say("{error}; to start afresh, move it aside or use --journal PATH",
                              error=message_of(exc)), 1)


@dataclass
class _Plan:
    """The match the options (and the director's announcement) ask for."""

    spec: Any
    given: dict[str, Any]
    """What the options named, checked against a journal's unfinished match."""
    computer: frozenset[int]
    announced: dict[str, Any] | None


class TableSession:
    """One table's refereed match (or evening of matches), built by :meth:`build`."""

    def __init__(self, options: PlayOptions, console: Any) -> None:
        self.options = options
        self.console = console
        self.geometry: Any = None
        self.registry: Any = None
        self.game: Any = None
        self.game_name = ""
        self.spec: Any = None
        self.computer: frozenset[int] = frozenset()
        self.announced: dict[str, Any] | None = None
        self.running: Any = None
        """The journal's unfinished match being resumed (None: a new match)."""
        self.reporter: Any = None
        self.announcer: Any = None
        self.vtable: Any = None
        self.timing: Any = None
        self.ports: list[str] = []
        self.journal: Any = None
        self.bus: Any = None
        self.referee: Any = None
        self.link: Any = None
        self.session: Any = None
        self.hands: Any = None
        self.leds: Any = None
        self.archive = Path("records")
        self.match_id = "match"
        self._server: Any = None
        self._seat_pages: Any = None
        self._gpio: Any = None
        self._maker: Any = None
        self.closed = False
        """:meth:`close` has run (after :meth:`run`, or a refused :meth:`build`)."""

    # -- building ------------------------------------------------------------------
    @classmethod
    def build(cls, options: PlayOptions, console: Any) -> TableSession:
        """Check ``options`` and open the table's session (see the module
        docstring); on any refusal what was opened is closed again."""
        self = cls(options, console)
        try:
            self._check()
            if options.director is not None:
                self._await_director()
            plan = self._plan()
            self.computer, self.announced = plan.computer, plan.announced
            self.announcer = announcer(plan.spec.lang, options.speech, options.volume, options.quiet_hours)
            self._open_boards()
            self._open_journal()
            self._open_referee(plan)
            self._wire()
        except BaseException:
            self.close()
            raise
        return self

    def _check(self) -> None:
        """The refusals before anything opens (exit 2)."""
        from tablesense.table.geometry import GeometryError, TableGeometry

        o = self.options
        if o.deal not in ("table", "host"):
            raise CommandRefused(say("--deal is 'table' (read from the racks) or 'host' (the host deals)"))
        if o.coach and o.director is not None:
            raise CommandRefused(_("a tournament table plays without the coach: --coach cannot go with --director"))
        try:
            self.geometry = TableGeometry.load(o.table)
        except (GeometryError, FileNotFoundError) as exc:
            raise CommandRefused(message_of(exc)) from None
        self.computer = computer_seats(o.seats, len(self.geometry.seats), self.geometry.name, o.virtual_table,
                                       o.ports)
        try:
            self.game_name = o.game or self.geometry.games[0]
            self.game = find_game(self.game_name)
            self.game.player(o.player, o.think_ms)  # a bad --player is refused before anything is opened
        except ValueError as exc:
            raise CommandRefused(message_of(exc)) from None

    def _await_director(self) -> None:
        """``--director``: the table's reporter, and the director's announcement
        of its match (waited for ``--announce-wait`` seconds)."""
        from tablesense.referee.evening import start_reporter

        o = self.options
        self.reporter = start_reporter(o.director or "", o.table_no, o.table_key, o.outbox, o.journal)
        self.console.print(_("waiting for the director's announcement for table {table} ...", table=o.table_no))
        self.announced = self.reporter.current_match(timeout=o.announce_wait)
        if self.announced is None:
            self.console.print("[yellow]" + _("no match announced for this table yet: the result is reported "
                                              "when the match ends") + "[/]")

    def _plan(self) -> _Plan:
        """The match's description: the options, with what the director
        announced (seat names, target, variant) in their place."""
        from tablesense.referee.core import MatchSpec

        o = self.options
        geometry = self.geometry
        n = len(geometry.seats)
        seats, target, variant, announced = o.seats, o.target, o.variant, self.announced
        if announced is not None:
            if len(announced["seats"]) == n:
                seats = ",".join(str(x["player"]) for x in sorted(announced["seats"], key=lambda x: int(x["seat"])))
            if target is None:
                target = float(announced["options"]["target"])
            if variant is None:
                variant = str(announced["variant"])
        names = [s.strip() for s in seats.split(",")] if seats else [s.name for s in geometry.seats]
        if len(names) != n:
            raise CommandRefused(say("table {table} has {n} seats; --seats names {named}", table=geometry.name, n=n,
                                     named=len(names)))
        kinds = ["bot" if x.lower() == "bot" or i in self.computer else "human" for i, x in enumerate(names)]
        names = [
            f"Bot {i + 1}" if x.lower() == "bot" else x  # a director's player keeps their name
            for i, x in enumerate(names)
        ]
        self.registry = self._tags()
        options: dict[str, Any] = {}
        if target is not None:
            options["target"] = int(target) if float(target).is_integer() else target
        spec = MatchSpec(
            game=self.game_name,
            variant=variant or self.game.variant_for_seats(n),
            options=options,
            seat_names=names,
            seat_kinds=kinds,
            seed=o.seed,
            table=geometry.name,
            lang=table_lang(o.lang),
        )
        given = {"game": o.game, "variant": variant, "seats": names if seats else None,
                 "target": options.get("target")}
        return _Plan(spec, given, self.computer, announced)

    def _tags(self) -> Any:
        from tablesense.table.tags import TagRegistry, TagRegistryError

        o = self.options
        try:
            return TagRegistry.virtual(o.seed or 0) if o.tags == "virtual" else TagRegistry.load(o.tags)
        except TagRegistryError as exc:
            raise CommandRefused(message_of(exc)) from None

    def _open_boards(self) -> None:
        """The boards' ports: the given ones (each must exist), or the table's
        own virtual boards started here (``--virtual-table``)."""
        o = self.options
        self.ports = PlayOptions.split_ports(o.ports)
        if o.virtual_table:
            from tablesense.referee.spec import Timing
            from tablesense.sim.virtual_table import VirtualTable

            self.vtable = VirtualTable(self.geometry, seed=o.seed or 0)
            try:
                self.ports = list(self.vtable.start().values())
            except OSError as exc:
                raise CommandRefused(say("cannot start the virtual boards: {error}", error=str(exc)), 1) from None
            # the referee's waits never drop below what the virtual link needs to see a piece land
            self.timing = Timing(between_hands=2.0).scaled(max(1.0 / o.speed, 0.5))
        for port in self.ports:
            if not Path(port).exists():
                raise CommandRefused(
                    say("--port {port}: no such device (is the board plugged in? "
                        "'tablesense boards list' shows the boards found)", port=port)
                )

    @property
    def deal(self) -> str:
        """``host`` when the host deals (always on a virtual table: the computer's
        hands lay out the deal the host lights), else ``table``."""
        return "host" if self.options.virtual_table else self.options.deal

    def _open_journal(self) -> None:
        from tablesense.journal.store import Journal, JournalError
        from tablesense.outputs.events import EventBus

        try:
            self.journal = Journal(self.options.journal or default_journal())
        except JournalError as exc:
            raise _afresh(exc) from None
        self.bus = EventBus(history_size=2000)
        if self.reporter is not None:
            self.reporter.attach(self.bus)
            from tablesense.referee.evening import drop_unplayed

            drop_unplayed(self.journal)  # a match begun while waiting for an announcement is not resumed as such

    def _open_referee(self, plan: _Plan) -> None:
        """The match to referee: the journal's unfinished one, or the planned
        one begun in the journal."""
        from tablesense.journal.store import JournalError
        from tablesense.referee.core import Referee, RefereeError

        o = self.options
        jour = self.journal
        try:
            self.spec, self.running = choose_match(jour, plan.spec, self.geometry.name, plan.given, o.new,
                                                   self.console)
            activate(self.spec.lang)  # a resumed match keeps its language: the table's words and the console's
            self.referee = Referee(
                self.spec,
                self.geometry,
                self.registry,
                emit=self.bus.publish,
                store=jour.append,
                deal="engine" if self.deal == "host" else "table",
                **({} if self.timing is None else {"timing": self.timing}),
            )
            if self.running is None:
                jour.begin(self.spec.to_json())
            else:
                jour.resume(self.running.id)
        except RefereeError as exc:
            raise CommandRefused(message_of(exc)) from None
        except JournalError as exc:
            raise _afresh(exc) from None
        self.referee.set_coach(o.coach)
        if self.vtable is not None:
            # the boards run in this process: nothing for the player to restart
            self.referee.boards_kind = "built-in"
        elif self.ports and all(is_virtual_port(port) for port in self.ports):
            self.referee.boards_kind = "sim"  # an offline board is told about sim boards, never a USB cable
        elif not self.ports:
            hint_without_boards(self.console, self.geometry.name)

    def _wire(self) -> None:
        """The link, the session and what listens on the bus: the computer's
        hands on a virtual table, the voice, the cell LEDs, the console, the
        record's archive."""
        from tablesense.link.manager import TableLink
        from tablesense.referee.console import log_events
        from tablesense.referee.demo import attach_leds
        from tablesense.referee.reporting import archive_record
        from tablesense.referee.session import Session

        o = self.options
        referee = self.referee
        bots = {i: referee.game.player(o.player, o.think_ms) for i, k in enumerate(self.spec.seat_kinds) if k == "bot"}
        self.link = TableLink(self.geometry, ports=self.ports or None)
        session = self.session = Session(referee, self.link, self.bus, bots=bots, seed=o.seed, paint_leds=False)
        if self.vtable is not None:
            from tablesense.referee.hands import VirtualHands

            # the computer's hands carry out its seats' moves on the virtual boards; a seat
            # button goes through session.press, looked up at each press (check-in takes them)
            self.hands = VirtualHands(self.bus, self.vtable, self.registry, self._press,
                                      lambda: session.referee.state.accepted, pace=0.6 / o.speed, timeout=120.0)
        if self.announcer is not None:
            from tablesense.referee.speaking import TableVoice

            # a resumed match speaks the language it was started in
            self.announcer.lang = self.spec.lang
            TableVoice(self.bus, self.announcer)
        self.leds = attach_leds(self.geometry, self.link, self.bus)
        if self.leds is None:
            session.paint_leds = True
        log_events(self.bus, self.console, self.spec.lang)
        self.archive = o.records or (Path(self.journal.path).parent / "records")
        self.match_id = self.journal.match_id or "match"
        jour, archive, console, first = self.journal, self.archive, self.console, self.match_id
        self.bus.add_listener(lambda ev: archive_record(ev, archive, jour.match_id or first, console))

    def _press(self, seat: int, button: str) -> None:
        # session.press is looked up at each press: the result's confirmation
        # (reporting.confirm_by_buttons) takes the presses a while
        self.session.press(seat, button)

    # -- running -------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        """Play until the match is over (for a director: until the evening
        ends) or ``stop`` is set; everything is closed at the end."""
        from tablesense.journal.store import JournalError
        from tablesense.referee.core import RefereeError
        from tablesense.referee.reporting import match_over_line, record_path

        try:
            self.link.start()
            if self.hands is not None:
                self.hands.start()
            if self.options.web:
                self._serve_pages()
            self._attach_buttons()
            evening, evening_matches = self._evening(stop)
            if evening is not None and not self._first_announced_match(evening, stop):
                return
            self.start_or_resume()
            self.session.attach()
            if self.reporter is not None and self.announced is not None:
                self.reporter.show_match(self.announced)
            if self.options.keys and sys.stdin.isatty():
                from tablesense.referee.keyboard import read_keys

                threading.Thread(target=read_keys, args=(self.session, stop, self.console), daemon=True).start()
            self.session.run(stop, until=lambda s: self.referee.state.phase is Phase.OVER)
            if self.referee.state.phase is Phase.OVER:
                path = record_path(self.archive, self.journal.match_id or self.match_id)  # before the journal moves on
                self.journal.close_match("finished")
                sys.stdout.write(match_over_line(self.referee.view().get("scores"), path) + "\n")
                sys.stdout.flush()
                if evening is not None:
                    evening.finish(self.referee.record())
                    evening.run(evening_matches)
        except (RefereeError, JournalError) as exc:
            raise CommandRefused(message_of(exc), 1) from None
        finally:
            self.close()

    def _serve_pages(self) -> None:
        """The display page (and with ``--coach`` each person's seat page), its
        address printed; a busy port is refused with exit 1 and a free one."""
        from tablesense.referee.demo import port_busy, serve_display

        o = self.options
        if o.coach:
            from tablesense.web.seat_page import SeatPages, people_seats

            # asking there is a long press of the seat's button
            self._seat_pages = SeatPages(self.bus, people_seats(self.spec.seat_names, self.spec.seat_kinds),
                                         lambda seat: self.session.press(seat, "coach"))
        pages = self._seat_pages
        try:
            url, self._server = serve_display(self.bus, o.host, o.web_port, lang=self.spec.lang,
                                              routers=[pages.router()] if pages else ())
        except Exception as exc:
            busy = port_busy(exc, "--web-port", o.host)
            if busy is None:
                raise
            raise CommandRefused(busy, 1) from None
        if url:
            self.console.print(Translator(self.spec.lang)(N_("display: {url}"), url=f"[bold]{url}[/]"))
            for line in pages.lines(url, self.spec.lang) if pages else ():
                self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def _attach_buttons(self) -> None:
        """The seat buttons and turn LEDs: the Pi's GPIO, or ``sim boards``'
        seat header (``--seat-header``); none on this machine: the keyboard only."""
        o = self.options
        try:
            from tablesense.outputs.gpio import LONG_PRESS_S, TableGPIO, forward_buttons

            if o.seat_header:
                from tablesense.referee.sit import SocketHeaderBackend

                header = SocketHeaderBackend(o.seat_header)
                self._gpio = TableGPIO(
                    header,
                    [(s.turn_led_pin, s.button_pin, s.call_button_pin) for s in self.geometry.seats],
                    self.geometry.referee_button_pin,
                    own_backend=True,
                )
            else:
                self._gpio = TableGPIO.from_geometry(self.geometry)
            self._gpio.attach(self.bus)
            forward_buttons(
                self._gpio,
                self._press,
                lambda: self.session.referee_press(),
                long_press=LONG_PRESS_S if o.coach else None,
            )
        except Exception as exc:  # noqa: BLE001 - no GPIO on this machine: keyboard only
            self.console.print("[yellow]" + escape(_(say("seat buttons unavailable ({error}); use the keyboard",
                                                         error=_(message_of(exc))))) + "[/]")

    def _evening(self, stop: threading.Event) -> tuple[Any, Any]:
        """With ``--director``: the evening (referee/evening.py) and the
        director's next matches played one after another; else ``(None, None)``."""
        if self.reporter is None:
            return None, None
        from tablesense.referee.evening import Evening, MatchMaker, TableMatches

        o = self.options
        evening = Evening(self.reporter, self.bus, self.console, stop, self.link, self.session, self.registry,
                          computer=self.computer)
        maker = MatchMaker(self.geometry, self.registry, self.journal, self.bus, self.spec.game, self.deal,
                           self.spec.lang, o.seed, self.computer, self.timing)
        self._maker = maker
        matches = TableMatches(maker, self.session, self.journal, stop, bots=self._next_bots, records=self.archive)
        if self.running is not None and self.running.entries == 0:
            self.running = None  # begun while waiting for the announcement, never played
        return evening, matches

    def _next_bots(self) -> dict[int, Any]:
        return {i: self.game.player(self.options.player, self.options.think_ms) for i in sorted(self.computer)}

    def _first_announced_match(self, evening: Any, stop: threading.Event) -> bool:
        """A director's table not resuming a match: a confirmation still owed
        from before a restart, then the announced match and its check-in.
        False: the evening ended (or was stopped) before a match began."""
        if self.running is not None:
            return True
        evening.resume()  # a confirmation still owed from before a restart
        if self.announced is None or self.reporter.current_match() != self.announced:
            self.announced = evening.wait_next()
            if self.announced is None:
                return False
        self.referee = self._maker(self.announced)  # the journal's unplayed match is reused when it is this one
        self.session.next_match(self.referee, self._next_bots())
        self.reporter.show_match(self.announced)
        return evening.check_in(self.announced) or not stop.is_set()

    def start_or_resume(self) -> None:
        """Begin the match, or replay the journal's entries of the one resumed
        (and say where it stands)."""
        referee = self.referee
        if self.running is None:
            referee.start(self.session.clock())
            return
        entries = self.journal.entries()
        referee.replay(entries, self.session.clock())
        score = "-".join(str(p) for p in referee.view()["scores"])
        template = referee.game.per_deal(
            hand=N_("resuming match {id}: {match}, hand {n}, score {score} ({entries} journal entries)"),
            round=N_("resuming match {id}: {match}, round {n}, score {score} ({entries} journal entries)"),
        )
        self.console.print(
            Translator(self.spec.lang)(
                say(template, id=self.running.id, match=describe(self.spec), n=referee.state.hand_no,
                    score=score, entries=len(entries)),
            ),
            highlight=False,
        )

    def close(self) -> None:
        """Stop and close whatever was opened (once: again, nothing happens)."""
        if self.closed:
            return
        self.closed = True
        if self.hands is not None:
            self.hands.stop()
        if self.session is not None:
            self.session.detach()
        if self.leds is not None:
            self.leds.close()
        if self._gpio is not None:
            self._gpio.close()
        if self._server is not None:
            self._server.stop()
        if self._seat_pages is not None:
            self._seat_pages.close()
        if self.link is not None:
            self.link.stop()
        if self.vtable is not None:
            self.vtable.stop()
        if self.journal is not None:
            self.journal.close()
        if self.reporter is not None:
            self.reporter.close()
