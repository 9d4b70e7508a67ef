"""Commands of the referee room: ``tablesense play`` and ``tablesense demo``.

``play`` referees a match on a real table (or on ``tablesense sim boards``
started in another terminal); ``demo`` plays a whole match on the virtual
table with computer seats and serves the display page. Heavy imports stay
inside the commands so that ``tablesense --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from tablesense.games.common import message_of, say
from tablesense.games.registry import find_game, names
from tablesense.i18n import N_, Translator
from tablesense.i18n.cli import LANG_OPTION as _SHARED_LANG_OPTION
from tablesense.i18n.cli import PlainHelpCommand, _, activate
from tablesense.referee.console import log_events as _log_events
from tablesense.referee.keyboard import read_keys
from tablesense.referee.reporting import archive_record, match_over_line, record_path

#: The game ``--game`` names when it is not given.
DEFAULT_GAME = names()[0]

def _err(message: object, code: int = 2) -> typer.Exit:
    """Print ``error: MESSAGE`` in the command's language (a Sentence is
    translated; a plain string is printed as it is) and exit with ``code``."""
    from rich.console import Console

    text = _(message) if hasattr(message, "template") else str(message)
    Console(stderr=True).print(f"[bold red]{escape(_('error:'))}[/] {escape(text)}", highlight=False)
    return typer.Exit(code)


class TableCommand(PlainHelpCommand):
    """``play`` and ``demo`` as a person reads them at 80 columns (the plain
    help of :class:`PlainHelpCommand`), and a value that is not a number is
    answered with a sentence, not the validator's."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except typer.BadParameter as exc:
            better = _number_sentence(exc)
            if better is not None:
                exc.message = better
            raise


def _number_sentence(exc: typer.BadParameter) -> str | None:
    """``'fast' is not a number (for example: --speed 1.5)`` for a value the
    validator could not read as a number; None for any other refusal (Click's
    own sentences are already readable)."""
    from pydantic import ValidationError  # what Typer reads numbers with

    cause = exc.__cause__
    if not isinstance(cause, ValidationError) or not cause.errors():
        return None
    first = cause.errors()[0]
    kind = str(first.get("type", ""))
    option = exc.param.opts[0] if exc.param is not None and exc.param.opts else "the option"
    if kind == "int_parsing":
        return _(say("{value!r} is not a whole number (for example: {option} 3)", value=first.get("input"),
                     option=option))
    if kind == "float_parsing":
        return _(say("{value!r} is not a number (for example: {option} 1.5)", value=first.get("input"),
                     option=option))
    return None


def _demo_failure(exc: BaseException) -> object:
    """What stopped the demo: a sentence a person reads as it was raised (a
    bad --seats, --player or --variant, a journal that cannot be used);
    anything else with its type, as a developer needs it."""
    message = message_of(exc)
    return message if hasattr(message, "template") else f"{type(exc).__name__}: {exc}"


def _afresh(exc: BaseException) -> Any:
    """A journal that cannot be used, and the way out (exit 1)."""
    return say("{error}; to start afresh, move it aside or use --journal PATH", error=message_of(exc))


def default_journal() -> Path:
    env = os.environ.get("TABLESENSE_JOURNAL")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "tablesense" / "journal.sqlite"


#: The table's language and voice, shared by ``play`` and ``demo``: the
#: language option is every command's (``tablesense.i18n.cli``), which for a
#: table also chooses the table's language.
LANG_OPTION = _SHARED_LANG_OPTION
SPEECH_OPTION = typer.Option(
    False, "--speech", help="Say turns, instructions and results aloud (espeak-ng)."
)
VOLUME_OPTION = typer.Option(80, "--volume", metavar="0-100", min=0, max=100, help="Voice volume 0-100.")
QUIET_HOURS_OPTION = typer.Option(
    None, "--quiet-hours", metavar="HH:MM-HH:MM", help="No voice between these hours: HH:MM-HH:MM."
)


def _invocation() -> str:
    """How to run ``tablesense`` from here: its name when it is on the PATH,
    else the path it was started by (``.venv/bin/tablesense`` after
    ``bash scripts/demo.sh``), so a printed command can be typed as it is."""
    import os
    import shutil
    import sys

    exe = sys.argv[0] if sys.argv and sys.argv[0] else "tablesense"
    if os.path.basename(exe) != "tablesense":
        return "tablesense"
    found = shutil.which("tablesense")
    if found and os.path.realpath(found) == os.path.realpath(exe):
        return "tablesense"
    rel = os.path.relpath(exe)
    return rel if not rel.startswith("..") else exe


def _stop_on_signals(stop: threading.Event) -> None:
    def handler(signum: int, frame: Any) -> None:
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError):  # not the main thread (tests)
            signal.signal(sig, handler)


PLAYER_OPTION = typer.Option(
    None,
    "--player", metavar="NAME",
    help="Computer player of the computer seats: random, greedy, montecarlo, search (dominoes); "
    "random, greedy, tracking, reasoner (kems). Default: greedy for dominoes, tracking for kems.",
)
THINK_OPTION = typer.Option(
    None,
    "--think-ms", metavar="MS",
    min=1.0,
    help="Time budget of the search player's decision, in milliseconds (default 200: within it this "
    "machine plays all its worlds in most decisions; a slower computer plays fewer).",
)


def register(app: typer.Typer) -> None:
    """Add this room's commands to the root ``tablesense`` app."""

    @app.command(cls=TableCommand)
    def play(
        table: str = typer.Option(
            ..., "--table", metavar="FILE", help="Table geometry file (or a shipped layout name)."
        ),
        seats: str | None = typer.Option(
            None,
            "--seats", metavar="NAMES",
            help='Players in seat order, "bot" for a computer seat: "Ana,Bia,bot,Caio".',
        ),
        game: str | None = typer.Option(
            None, "--game", metavar="GAME", help=" or ".join(names()) + " (default: the table's first game)."
        ),
        variant: str | None = typer.Option(
            None, "--variant", metavar="VARIANT", help="pairs-pips, pips-two-player, brazilian-points, classic."
        ),
        ports: list[str] = typer.Option(
            [],
            "--ports",
            "--port", metavar="PORT",
            help="Board serial ports (repeat, or comma-separated); default: find by USB id.",
        ),
        journal: Path = typer.Option(
            None,
            "--journal", metavar="FILE",
            help="Journal file (SQLite); default ~/.local/share/tablesense/journal.sqlite.",
        ),
        tags: str = typer.Option(
            "virtual",
            "--tags", metavar="FILE",
            help="Tag registry file, or 'virtual' for the virtual table's tags.",
        ),
        web: bool = typer.Option(True, "--web/--no-web", help="Serve the display page."),
        web_port: int = typer.Option(
            8080, "--web-port", metavar="PORT", help="Port of the display page (0: any free port)."
        ),
        host: str = typer.Option("0.0.0.0", "--host", metavar="ADDRESS", help="Address the display page listens on."),
        seed: int | None = typer.Option(
            None, "--seed", metavar="N", help="Seed for computer players and virtual tags."
        ),
        target: float | None = typer.Option(None, "--target", metavar="POINTS", help="Match target (points)."),
        new: bool = typer.Option(
            False, "--new", help="Start a new match even if the journal holds a running one."
        ),
        deal: str = typer.Option(
            "table",
            "--deal", metavar="table|host",
            help="table: read each deal from the racks; host: the host deals and lights where each piece goes.",
        ),
        lang: str | None = LANG_OPTION,
        speech: bool = SPEECH_OPTION,
        volume: int = VOLUME_OPTION,
        quiet_hours: str | None = QUIET_HOURS_OPTION,
        keys: bool = typer.Option(
            True,
            "--keys/--no-keys",
            help="Also read buttons from the keyboard: 'p N' seat N, 'c N' call N, 'r' referee.",
        ),
        records: Path | None = typer.Option(
            None,
            "--records", metavar="DIR",
            help="Directory where the match's game record is archived after every hand "
            "(default: 'records' next to the journal).",
        ),
        director: str | None = typer.Option(
            None,
            "--director", metavar="URL",
            help="Report the match to the tournament director: mqtt://table-N:PASSWORD@HOST:PORT "
            "(the table's broker user from 'tablesense tournament mosquitto-config').",
        ),
        table_no: int | None = typer.Option(
            None, "--table-no", metavar="N", help="This table's number in the event (with --director)."
        ),
        table_key: Path | None = typer.Option(
            None, "--table-key", metavar="FILE", help="The table's private key file from 'tablesense tournament add-table' (with --director)."
        ),
        outbox: Path | None = typer.Option(
            None,
            "--outbox", metavar="FILE",
            help="The table's durable outbox (SQLite) for the director; default 'outbox.sqlite' next to the journal.",
        ),
        announce_wait: float = typer.Option(
            15.0, "--announce-wait", metavar="SECONDS", help="Seconds to wait for the director's announcement of the match."
        ),
        seat_header: str | None = typer.Option(
            None,
            "--seat-header", metavar="SOCKET",
            help="Seat buttons and turn LEDs of `tablesense sim boards` (the socket it prints), "
            "instead of the Pi's GPIO.",
        ),
        coach: bool = typer.Option(
            False,
            "--coach/--no-coach",
            help="The coach: a seat button held a second shows that seat a suggested move on its "
            "LEDs and on its own seat page (printed), and each hand ends with a review of the "
            "costliest moves. Not with --director.",
        ),
        player: str | None = PLAYER_OPTION,
        think_ms: float | None = THINK_OPTION,
        remote: str | None = typer.Option(
            None, "--remote", metavar="host|join|auto",
            help="Seats at another table (docs/remote.md): 'host' prints a code, 'join CODE' joins that match, 'auto' (with --director) plays the part the director assigned.",
        ),
        code: str | None = typer.Argument(
            None, metavar="CODE", help="With --remote join: the host table's code (with --remote host: resume that match)."
        ),
        broker: str | None = typer.Option(
            None, "--broker", metavar="URL", help="With --remote: the broker both tables reach (mqtts://table-N@host:port?ca=FILE)."
        ),
        remote_timeout: float | None = typer.Option(None, "--remote-timeout", hidden=True),
        virtual_table: bool = typer.Option(
            False,
            "--virtual-table",
            help="Play on the table's virtual boards, started here (no hardware, no 'sim boards'): "
            "the computer's hands move every piece. Every seat must be 'bot'; the host deals.",
        ),
        speed: float = typer.Option(
            1.0, "--speed", metavar="FACTOR", min=0.05, help="With --virtual-table: the computer hands' pace (2 = twice as fast)."
        ),
    ) -> None:
        """Referee a match on the table: recognise moves, explain mistakes, score, journal."""
        if remote is not None:  # the remote room plays this table's seats of a match hosted here or elsewhere
            from tablesense.remote.cli import DirectorOptions, PageOptions, play_remote

            raise typer.Exit(play_remote(
                remote, code, table=table, seats=seats, broker=broker,
                ports=[p for item in ports for p in item.split(",") if p], tags=tags, seed=seed, timeout=remote_timeout,
                target=target, journal_dir=(journal or default_journal()).parent / "remote",
                page=PageOptions(web, host, web_port, _table_lang(lang)),
                director=None if director is None else DirectorOptions(director, table_no, table_key, outbox, announce_wait),
            ))
        if code is not None:
            raise _err(say("{code!r}: a code goes with --remote join, or with --remote host to resume that match", code=code))
        from rich.console import Console

        from tablesense.journal.store import Journal, JournalError
        from tablesense.outputs.events import EventBus
        from tablesense.referee.core import MatchSpec, Referee, RefereeError
        from tablesense.referee.session import Session
        from tablesense.table.geometry import GeometryError, TableGeometry
        from tablesense.table.tags import TagRegistry, TagRegistryError

        console = Console(stderr=True)
        if deal not in ("table", "host"):
            raise _err(say("--deal is 'table' (read from the racks) or 'host' (the host deals)"))
        if coach and director is not None:
            raise _err(_("a tournament table plays without the coach: --coach cannot go with --director"))
        try:
            geometry = TableGeometry.load(table)
        except (GeometryError, FileNotFoundError) as exc:
            raise _err(message_of(exc)) from None
        chosen_game = game or geometry.games[0]
        computer = _computer_seats(seats, len(geometry.seats), geometry.name, virtual_table, ports)
        if virtual_table:
            deal = "host"  # the computer's hands lay out the deal the host lights
        try:
            the_game = find_game(chosen_game)
            the_game.player(player, think_ms)  # a bad --player is refused before anything is opened
        except ValueError as exc:
            raise _err(message_of(exc)) from None
        n = len(geometry.seats)
        reporter = None
        announced: dict[str, Any] | None = None
        if director is not None:
            reporter = _start_reporter(director, table_no, table_key, outbox, journal)
            console.print(_("waiting for the director's announcement for table {table} ...", table=table_no))
            announced = reporter.current_match(timeout=announce_wait)
            if announced is None:
                console.print("[yellow]" + _("no match announced for this table yet: the result is reported "
                                             "when the match ends") + "[/]")
            else:
                if (seats is None or director is not None) and len(announced["seats"]) == n:
                    seats = ",".join(str(x["player"]) for x in sorted(announced["seats"], key=lambda x: int(x["seat"])))
                if target is None:
                    target = float(announced["options"]["target"])
                if variant is None:
                    variant = str(announced["variant"])
        names = [s.strip() for s in seats.split(",")] if seats else [s.name for s in geometry.seats]
        if len(names) != n:
            raise _err(say("table {table} has {n} seats; --seats names {named}", table=geometry.name, n=n,
                           named=len(names)))
        kinds = ["bot" if x.lower() == "bot" or i in computer else "human" for i, x in enumerate(names)]
        names = [
            f"Bot {i + 1}" if x.lower() == "bot" else x  # a director's player keeps their name
            for i, x in enumerate(names)
        ]
        try:
            registry = (
                TagRegistry.virtual(seed or 0) if tags == "virtual" else TagRegistry.load(tags)
            )
        except TagRegistryError as exc:
            raise _err(message_of(exc)) from None
        options: dict[str, Any] = {}
        if target is not None:
            options["target"] = int(target) if float(target).is_integer() else target
        spec = MatchSpec(
            game=chosen_game,
            variant=variant or the_game.variant_for_seats(n),
            options=options,
            seat_names=names,
            seat_kinds=kinds,
            seed=seed,
            table=geometry.name,
            lang=_table_lang(lang),
        )
        announcer = _announcer(spec.lang, speech, volume, quiet_hours)
        port_list = [p for item in ports for p in item.split(",") if p]
        vtable = None
        timing = None
        if virtual_table:
            from tablesense.referee.spec import Timing
            from tablesense.sim.virtual_table import VirtualTable

            vtable = VirtualTable(geometry, seed=seed or 0)
            try:
                port_list = list(vtable.start().values())
            except OSError as exc:
                raise _err(say("cannot start the virtual boards: {error}", error=str(exc)), 1) from None
            # the referee's waits never drop below what the virtual link needs to see a piece land
            timing = Timing(between_hands=2.0).scaled(max(1.0 / speed, 0.5))
        for port in port_list:
            if not Path(port).exists():
                raise _err(
                    say("--port {port}: no such device (is the board plugged in? "
                        "'tablesense boards list' shows the boards found)", port=port)
                )
        try:
            jour = Journal(journal or default_journal())
        except JournalError as exc:
            if vtable is not None:
                vtable.stop()
            raise _err(_afresh(exc), 1) from None
        bus = EventBus(history_size=2000)
        if reporter is not None:
            reporter.attach(bus)
            from tablesense.referee.evening import drop_unplayed

            drop_unplayed(jour)  # a match begun while waiting for an announcement is not resumed as such
        given = {
            "game": game,
            "variant": variant,
            "seats": names if seats else None,
            "target": options.get("target"),
        }
        try:
            spec, running = _choose_match(jour, spec, geometry.name, given, new, console)
            activate(spec.lang)  # a resumed match keeps its language: the table's words and the console's
            referee = Referee(
                spec,
                geometry,
                registry,
                emit=bus.publish,
                store=jour.append,
                deal="engine" if deal == "host" else "table",
                **({} if timing is None else {"timing": timing}),
            )
            if running is None:
                jour.begin(spec.to_json())
            else:
                jour.resume(running.id)
        except RefereeError as exc:
            jour.close()
            raise _err(message_of(exc)) from None
        except JournalError as exc:
            jour.close()
            raise _err(_afresh(exc), 1) from None
        referee.set_coach(coach)
        if port_list and all(_is_virtual_port(port) for port in port_list):
            referee.boards_kind = "sim"  # an offline board is told about sim boards, never a USB cable
        elif not port_list:
            _hint_without_boards(console, geometry.name)
        bots = {i: referee.game.player(player, think_ms) for i, k in enumerate(spec.seat_kinds) if k == "bot"}

        from tablesense.link.manager import TableLink

        link = TableLink(geometry, ports=port_list or None)
        from tablesense.referee.demo import attach_leds

        session = Session(referee, link, bus, bots=bots, seed=seed, paint_leds=False)
        hands = None
        if vtable is not None:
            from tablesense.referee.demo import VirtualHands

            # the computer's hands carry out its seats' moves on the virtual boards; a seat
            # button goes through session.press, looked up at each press (check-in takes them)
            hands = VirtualHands(bus, vtable, registry, lambda seat, button: session.press(seat, button),
                                 lambda: session.referee.accepted, pace=0.6 / speed, timeout=120.0)
        if announcer is not None:
            from tablesense.referee.speaking import TableVoice

            # a resumed match speaks the language it was started in
            announcer.lang = spec.lang
            TableVoice(bus, announcer)
        leds = attach_leds(geometry, link, bus)
        if leds is None:
            session.paint_leds = True
        stop = threading.Event()
        _stop_on_signals(stop)
        server = None
        seat_pages = None
        gpio = None
        _log_events(bus, console, spec.lang)
        archive = records or (Path(jour.path).parent / "records")
        match_id = jour.match_id or "match"
        bus.add_listener(lambda ev: archive_record(ev, archive, jour.match_id or match_id, console))
        try:
            link.start()
            if hands is not None:
                hands.start()
            if web:
                from tablesense.referee.demo import serve_display

                seat_pages = _seat_pages(bus, spec, session) if coach else None
                try:
                    url, server = serve_display(bus, host, web_port, lang=spec.lang,
                                                routers=[seat_pages.router()] if seat_pages else ())
                except Exception as exc:
                    busy = _port_busy(exc, "--web-port", host)
                    if busy is None:
                        raise
                    raise _err(busy, 1) from None
                if url:
                    console.print(Translator(spec.lang)(N_("display: {url}"), url=f"[bold]{url}[/]"))
                    for line in seat_pages.lines(url, spec.lang) if seat_pages else ():
                        console.print(line, markup=False, highlight=False, soft_wrap=True)
            try:
                from tablesense.outputs.gpio import TableGPIO

                if seat_header:
                    from tablesense.referee.sit import SocketHeaderBackend

                    header = SocketHeaderBackend(seat_header)
                    gpio = TableGPIO(
                        header,
                        [(s.turn_led_pin, s.button_pin, s.call_button_pin) for s in geometry.seats],
                        geometry.referee_button_pin,
                        own_backend=True,
                    )
                else:
                    gpio = TableGPIO.from_geometry(geometry)
                gpio.attach(bus)
                from tablesense.outputs.gpio import LONG_PRESS_S, forward_buttons

                # session.press is looked up at each press: the result's
                # confirmation (reporting.confirm_by_buttons) takes the presses a while
                forward_buttons(
                    gpio,
                    lambda seat, button: session.press(seat, button),
                    lambda: session.referee_press(),
                    long_press=LONG_PRESS_S if coach else None,
                )
            except Exception as exc:  # noqa: BLE001 - no GPIO on this machine: keyboard only
                console.print("[yellow]" + escape(_(say("seat buttons unavailable ({error}); use the keyboard",
                                                        error=_(message_of(exc))))) + "[/]")
            evening = None
            evening_matches: Any = None  # the director's next matches, played one after another (referee.evening)
            if reporter is not None:  # match after match as the director announces them (referee.evening)
                from tablesense.referee.evening import Evening, MatchMaker, TableMatches

                evening = Evening(reporter, bus, console, stop, link, session, registry, computer=computer)
                maker = MatchMaker(geometry, registry, jour, bus, spec.game, deal, spec.lang, seed, computer, timing)

                def next_bots() -> dict[int, Any]:
                    return {i: the_game.player(player, think_ms) for i in sorted(computer)}
                evening_matches = TableMatches(maker, session, jour, stop, bots=next_bots, records=archive)
                if running is not None and running.entries == 0:
                    running = None  # begun while waiting for the announcement, never played
                if running is None:
                    evening.resume()  # a confirmation still owed from before a restart
                    if announced is None or reporter.current_match() != announced:
                        announced = evening.wait_next()
                        if announced is None:
                            return
                    referee = maker(announced)  # the journal's unplayed match is reused when it is this one
                    session.next_match(referee, next_bots())
                    reporter.show_match(announced)
                    if not evening.check_in(announced) and stop.is_set():
                        return
            if running is not None:
                entries = jour.entries()
                referee.replay(entries, session.clock())
                score = "-".join(str(p) for p in referee.view()["scores"])
                template = referee.game.per_deal(
                    hand=N_("resuming match {id}: {match}, hand {n}, score {score} ({entries} journal entries)"),
                    round=N_("resuming match {id}: {match}, round {n}, score {score} ({entries} journal entries)"),
                )
                console.print(
                    Translator(spec.lang)(
                        say(template, id=running.id, match=_describe(spec), n=referee.hand_no,
                            score=score, entries=len(entries)),
                    ),
                    highlight=False,
                )
            else:
                referee.start(session.clock())
            session.attach()
            if reporter is not None and announced is not None:
                reporter.show_match(announced)
            if keys and sys.stdin.isatty():
                threading.Thread(target=read_keys, args=(session, stop, console), daemon=True).start()
            session.run(stop, until=lambda s: referee.phase == "over")
            if referee.phase == "over":
                path = record_path(archive, jour.match_id or match_id)  # before the journal moves on
                jour.close_match("finished")
                sys.stdout.write(match_over_line(referee.view().get("scores"), path) + "\n")
                sys.stdout.flush()
                if evening is not None:
                    evening.finish(referee.record())
                    evening.run(evening_matches)
        except (RefereeError, JournalError) as exc:
            raise _err(message_of(exc), 1) from None
        finally:
            if hands is not None:
                hands.stop()
            session.detach()
            if leds is not None:
                leds.close()
            if gpio is not None:
                gpio.close()
            if server is not None:
                server.stop()
            if seat_pages is not None:
                seat_pages.close()
            link.stop()
            if vtable is not None:
                vtable.stop()
            jour.close()
            if reporter is not None:
                reporter.close()

    @app.command(cls=TableCommand)
    def demo(
        game: str = typer.Option(DEFAULT_GAME, "--game", metavar="GAME", help=" or ".join(names()) + "."),
        variant: str | None = typer.Option(
            None,
            "--variant", metavar="VARIANT",
            help="pairs-pips, pips-two-player, brazilian-points (dominoes); classic (kems).",
        ),
        hands: int | None = typer.Option(
            None,
            "--hands", metavar="N",
            min=1,
            help="Stop after N hands and print the record (default: the whole match).",
        ),
        seed: int = typer.Option(1, "--seed", metavar="N", help="Seed of the deals and the computer players."),
        speed: float = typer.Option(1.0, "--speed", metavar="FACTOR", min=0.05, help="Pace: 2 = twice as fast."),
        web: bool = typer.Option(True, "--web/--no-web", help="Serve the display page."),
        link_faults: float = typer.Option(
            0.0,
            "--link-faults", metavar="RATE",
            min=0.0,
            max=0.5,
            help="Rate of link faults (bytes dropped/corrupted...).",
        ),
        port: int = typer.Option(
            8080, "--port", metavar="PORT", help="Port of the display page (0: any free port)."
        ),
        host: str = typer.Option("127.0.0.1", "--host", metavar="ADDRESS", help="Address of the display page."),
        seats: int | None = typer.Option(
            None, "--seats", metavar="N", help="Seats (dominoes 2-4 by variant; kems 4, 6, 8)."
        ),
        player: str | None = PLAYER_OPTION,
        think_ms: float | None = THINK_OPTION,
        boards: str = typer.Option(
            "virtual",
            "--boards", metavar="virtual|rp2040",
            help="virtual: the firmware on CPython; rp2040: emulated RP2040 boards running MicroPython "
            "(rp2040js; the firmware is deployed to them first).",
        ),
        link: str = typer.Option(
            "virtual",
            "--link", metavar="virtual|direct",
            help="virtual: the virtual boards over pseudo-terminals; direct: no boards (tests).",
        ),
        journal: Path | None = typer.Option(
            None, "--journal", metavar="FILE", help="Keep a journal (resume the demo after a crash)."
        ),
        world_file: Path | None = typer.Option(None, "--world-file", hidden=True),
        timeout: float | None = typer.Option(None, "--timeout", hidden=True),
        trace: bool = typer.Option(False, "--trace", hidden=True),
        sit: str | None = typer.Option(
            None,
            "--sit", metavar="SEATS",
            help='Sit down against the computer: your seat(s) by number from 1 or by name, e.g. "1", '
            '"1,3" or "south"; play them by hand on the table-top page (its address is printed).',
        ),
        lang: str | None = LANG_OPTION,
        speech: bool = SPEECH_OPTION,
        volume: int = VOLUME_OPTION,
        quiet_hours: str | None = QUIET_HOURS_OPTION,
        open_hands: bool = typer.Option(
            False,
            "--open-hands",
            help="With --sit: the table-top page may show every piece face up (teaching).",
        ),
        coach: bool | None = typer.Option(
            None,
            "--coach/--no-coach",
            help="The coach: your seat's suggested move on request (hold your seat button a second, "
            "or the page's Suggest a move) and a review after each hand. Default: on with --sit.",
        ),
    ) -> None:
        """Play a whole match on the virtual table, with the display page."""
        from rich.console import Console

        from tablesense.referee.demo import DemoConfig, run_demo

        console = Console(stderr=True)
        try:
            the_game = find_game(game)
        except ValueError as exc:
            raise _err(message_of(exc)) from None
        if variant is not None and variant not in the_game.variants:
            raise _err(say("unknown {game} variant {variant!r}: use {variants}", game=game, variant=variant,
                           variants=", ".join(the_game.variants)))
        table_lang = _table_lang(lang)
        announcer = _announcer(table_lang, speech, volume, quiet_hours)
        _ = Translator(table_lang)
        if link not in ("virtual", "direct"):
            raise _err(say("--link is virtual or direct"))
        if boards not in ("virtual", "rp2040"):
            raise _err(say("--boards is virtual or rp2040"))
        cfg = DemoConfig(
            game=game,
            variant=variant,
            hands=hands,
            seed=seed,
            speed=speed,
            web=web,
            port=port,
            host=host,
            link_faults=link_faults,
            link=link,
            boards=boards,
            seats=seats,
            journal=str(journal) if journal else None,
            player=player,
            think_ms=think_ms,
            world_file=str(world_file) if world_file else None,
            timeout=timeout,
            trace=trace,
            stay=web and hands is None,
            open_hands=open_hands,
            lang=table_lang,
            announcer=announcer,
            coach=coach,
        )
        # the options that name things (--variant above, --seats, --player) are
        # usage errors, exit 2, before anything starts
        from tablesense.referee.demo import demo_table, demo_variant
        try:
            demo_table(cfg, demo_variant(cfg))
            the_game.player(player, think_ms)
        except ValueError as exc:
            raise _err(message_of(exc)) from None
        if sit is not None:
            from tablesense.referee.sit import parse_seats
            from tablesense.referee.words import seat_word
            from tablesense.table.geometry import TableGeometry

            try:
                layout = TableGeometry.load(demo_table(cfg, demo_variant(cfg)))
                names = [seat.name for seat in layout.seats]
                cfg.sit = parse_seats(sit, names, [_(seat_word(name)) for name in names])
            except (ValueError, FileNotFoundError) as exc:
                raise _err(message_of(exc)) from None
            if not web or link != "virtual":
                raise _err(say("--sit needs the page and the virtual boards (no --no-web, no --link direct)"))
        elif open_hands:
            raise _err(say("--open-hands goes with --sit"))
        stop = threading.Event()
        _stop_on_signals(stop)
        quiet = not web and hands is not None

        def ready(url: str | None) -> None:
            if url:
                console.print(_(N_("display page: {url}  (Ctrl-C stops the demo)"), url=f"[bold]{url}[/]"))
                if not cfg.sit:
                    command = f"{_invocation()} demo --sit 1" + ("" if game == DEFAULT_GAME else f" --game {game}")
                    console.print(
                        _(
                            N_("to play yourself: {command} (you take the first seat on a table-top page; the computer plays the others)"),
                            command=f"[bold]{command}[/]",
                        )
                    )
                elif coach is not False:
                    console.print(
                        the_game.per_deal(
                            hand=_(N_("the coach is on: on your turn press Suggest a move on your page, or hold "
                                      "your Pass button a second (only you see the answer); --no-coach turns it off")),
                            round=_(N_("the coach is on: press Suggest a move on your page, or hold your Kems! button "
                                       "a full second (a short press calls Kems; only you see the answer); "
                                       "--no-coach turns it off")),
                        )
                    )
            elif web:
                console.print(f"[yellow]{_(N_('the display page is not available (web room missing)'))}[/]")

        def tabletop(sitting: Any) -> None:
            # stdout, one line each, flushed: a script (or a test) reads them
            # (each carries its seat's key: the page refuses a seat without it)
            for line in sitting.lines():
                sys.stdout.write(line + "\n")
            sys.stdout.flush()

        try:
            if not quiet:
                console.print(
                    _(N_("demo: {game} {variant}, seed {seed}"), game=game,
                      variant=variant or the_game.default_variant, seed=seed)
                )
            result = run_demo(
                cfg,
                on_ready=ready,
                stop=stop,
                log=None if quiet else console,
                on_tabletop=tabletop,
            )
        except Exception as exc:  # noqa: BLE001 - a clear message, never a traceback
            busy = _port_busy(exc, "--port", host)
            raise _err(busy or _demo_failure(exc), 1) from None
        if announcer is not None:
            announcer.drain(timeout=60.0)
            announcer.close()
        if quiet:
            sys.stdout.write(json.dumps(result.record, separators=(",", ":")) + "\n")
        else:
            score = result.record
            n = result.hands_played
            if result.match_over:
                line = the_game.per_deal(
                    hand=_.plural("played {n} hand; the match is over", "played {n} hands; the match is over", n),
                    round=_.plural("played {n} round; the match is over", "played {n} rounds; the match is over", n),
                )
            else:
                line = the_game.per_deal(
                    hand=_.plural("played {n} hand; the match goes on", "played {n} hands; the match goes on", n),
                    round=_.plural("played {n} round; the match goes on", "played {n} rounds; the match goes on", n),
                )
            console.print(line)
            del score


def _seat_pages(bus: Any, spec: Any, session: Any) -> Any:
    """``play --coach``'s seat pages: one keyed page per person's seat, the
    shared display's twin with that seat's coach (web/seat_page.py); asking
    there is a long press of the seat's button."""
    from tablesense.web.seat_page import SeatPages, people_seats

    return SeatPages(bus, people_seats(spec.seat_names, spec.seat_kinds), lambda seat: session.press(seat, "coach"))


def _computer_seats(seats: str | None, n: int, table: str, virtual_table: bool, ports: list[str]) -> frozenset[int]:
    """The seats ``--seats`` gives the computer (``bot``), checked before anything opens:
    with ``--virtual-table`` every seat is the computer's and no ``--port`` is given (the
    boards are started here). With ``--director`` the names come from the director's seat
    plan: ``--seats`` then says which seats the computer plays."""
    given = [x.strip() for x in seats.split(",")] if seats else []
    if given and len(given) != n:
        raise _err(say("table {table} has {n} seats; --seats names {named}", table=table, n=n, named=len(given)))
    computer = frozenset(i for i, x in enumerate(given) if x.lower() == "bot")
    if virtual_table and len(computer) != n:
        raise _err(say("--virtual-table plays computer seats only: give --seats with 'bot' for each of the {n} seats, "
                       "for example --seats {example}", n=n, example=",".join(["bot"] * n)))
    if virtual_table and ports:
        raise _err(say("--virtual-table starts the table's own virtual boards: leave out --port"))
    return computer


def _is_virtual_port(port: str) -> bool:
    """A pseudo-terminal (``tablesense sim boards`` prints them, or its
    stable links to them): a virtual board, not one on a USB cable."""
    return os.path.realpath(port).startswith("/dev/pts/")


def _hint_without_boards(console: Any, table: str) -> None:
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
    command = f"{_invocation()} sim boards --table {table}"
    console.print(
        "[yellow]"
        + escape(_(say("no boards found on USB yet: plug the table's boards in (play starts when they "
                       "answer), or try without a table: run {command} in another terminal, then the "
                       "play command it prints", command=command)))
        + "[/]",
        highlight=False,
    )


def _port_busy(exc: BaseException, option: str, host: str) -> Any:
    """What to do when the display page's port is taken (None for any other
    failure): the same command again with a port that is free now, and how to
    see which program holds the busy one."""
    from tablesense.referee.demo import DisplayPortBusyError

    if not isinstance(exc, DisplayPortBusyError):
        return None
    return say(
        "port {port} is in use by another program (a demo or play still running?): stop it, or choose "
        "another port: {command}\n  ('ss -ltnp' lists the programs that hold ports)",
        port=exc.port,
        command=_again_with(option, str(_free_port_near(exc.port, host))),
    )


def _free_port_near(port: int, host: str) -> int:
    """The first port after ``port`` that nobody listens on at this moment
    (0, any free port, when the next twenty are all taken)."""
    import socket

    for candidate in range(port + 1, min(port + 21, 65536)):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host if ":" not in host else "0.0.0.0", candidate))
            except OSError:
                continue
            return candidate
    return 0


def _again_with(option: str, value: str) -> str:
    """This command line again with ``option`` set to ``value`` (a command a
    person can paste)."""
    import shlex

    args = list(sys.argv[1:])
    for i, arg in enumerate(args):
        if arg == option and i + 1 < len(args):
            args[i + 1] = value
            break
        if arg.startswith(option + "="):
            args[i] = f"{option}={value}"
            break
    else:
        args += [option, value]
    return " ".join([_invocation(), *(shlex.quote(a) for a in args)])


def _table_lang(option: str | None) -> str:
    """``--lang``, else the locale (LANG...), else English; exit 2 for a
    language without a catalog."""
    from tablesense.i18n import UnknownLanguageError, resolve

    try:
        return resolve(option)
    except UnknownLanguageError as exc:
        raise _err(str(exc)) from None  # before any language is known: English


def _announcer(lang: str, speech: bool, volume: int, quiet_hours: str | None) -> Any:
    """The table's voice for ``--speech`` (None without it). No espeak-ng:
    exit 3 with how to install it; bad ``--quiet-hours``: exit 2."""
    from tablesense.outputs.speech import Announcer, EspeakVoice, QuietHours, SpeechUnavailableError

    # the outputs room words these in English (it imports no Sentence):
    # the command says them in its language
    try:
        quiet = QuietHours.parse(quiet_hours) if quiet_hours else None
    except ValueError:
        raise _err(say("quiet hours {text!r}: write them as HH:MM-HH:MM, for example 22:00-08:00",
                       text=quiet_hours)) from None
    if not speech:
        return None
    try:
        voice = EspeakVoice()
    except SpeechUnavailableError:
        raise _err(say("espeak-ng is not installed: sudo apt-get install espeak-ng (or run without --speech)"),
                   3) from None
    _say_it_speaks(lang, volume, quiet_hours)
    return Announcer(voice, lang=lang, volume=volume, quiet=quiet)


def _say_it_speaks(lang: str, volume: int, quiet_hours: str | None) -> None:
    """A sign that ``--speech`` is on, before the first word is said (a table
    whose speaker is off or muted would otherwise give none)."""
    from rich.console import Console

    line = (
        say("the table speaks aloud in {lang} at volume {volume} (espeak-ng), except {hours}",
            lang=lang, volume=volume, hours=quiet_hours)
        if quiet_hours
        else say("the table speaks aloud in {lang} at volume {volume} (espeak-ng)", lang=lang, volume=volume)
    )
    Console(stderr=True, highlight=False).print(escape(_(line)))


def _describe(spec: Any) -> Any:
    """``dominoes pairs-pips on dominoes-4, seats South, East, North, West``
    (a Sentence: the seat names as the table says them)."""
    from tablesense.referee.words import in_a_row, seat_word

    names = in_a_row([seat_word(name) for name in spec.seat_names])
    if spec.table:
        return say("{game} {variant} on {table}, seats {seats}", game=spec.game, variant=spec.variant,
                   table=spec.table, seats=names)
    return say("{game} {variant} on this table, seats {seats}", game=spec.game, variant=spec.variant, seats=names)


def _choose_match(
    jour: Any, spec: Any, table: str, given: dict[str, Any], new: bool, console: Any
) -> tuple[Any, Any]:
    """The match ``play`` referees: the journal's unfinished one (resumed as
    it was), or ``spec`` (new). Never silently: an unfinished match that the
    options contradict (another table, game, variant, seats or target) is
    refused with both ways on; ``--new`` keeps it in the journal as
    abandoned and says so. Returns ``(spec, running row or None)``."""
    from tablesense.games.common import listed
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
        from tablesense.journal.store import JournalError

        raise JournalError(
            say("cannot read the journal {path}: match {id} has no valid description ({error}); "
                "the file is left as it is", path=str(jour.path), id=running.id, error=repr(exc))
        ) from None
    if new:
        jour.close_match("abandoned", running.id)
        console.print(
            "[yellow]" + escape(_(say("the unfinished match {id} ({match}) stays in the journal as abandoned; "
                                      "a new match starts", id=running.id, match=_describe(old)))) + "[/]",
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
        journal_opt = "" if _default_journal_is(jour.path) else f" --journal {jour.path}"
        raise _err(
            say("the journal {path} holds an unfinished match {id} ({match}, {n} journal entries): {differs}.\n"
                "  resume it as it was: {command}\n"
                "  or start a new match (the unfinished one stays in the journal as abandoned): add --new",
                path=str(jour.path), id=running.id, match=_describe(old), n=running.entries,
                differs=listed(differs), command=f"tablesense play --table {old.table or table}{journal_opt}"),
            2,
        )
    return old, running


def _never_played(jour: Any, match_id: str) -> bool:
    """The journal holds the match's description and nothing after it: no
    deal was read, no move made."""
    return all(entry.get("type") == "match" for entry in jour.entries(match_id))


def _default_journal_is(path: Any) -> bool:
    try:
        return Path(path).resolve() == default_journal().resolve()
    except OSError:
        return False


def _start_reporter(
    director: str, table_no: int | None, table_key: Path | None, outbox: Path | None, journal: Path | None
) -> Any:
    """Connect the table to the director (tournament.reporter: the headless
    table's outbox, signing and re-sending, without its computer players)."""
    from tablesense.tournament.bridge import BrokerURL
    from tablesense.tournament.reporter import TableReporter
    from tablesense.tournament.security import SignatureError, TableKey

    if table_no is None or table_key is None:
        raise _err(_("--director needs --table-no and --table-key"))
    try:
        broker = BrokerURL.parse(director)
    except ValueError as exc:
        raise _err(say("--director: {error}", error=message_of(exc))) from None
    try:
        key = TableKey.load(table_key)
    except (OSError, ValueError, SignatureError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else message_of(exc)
        raise _err(say("--table-key {path}: {error}", path=str(table_key), error=reason)) from None
    path = outbox or Path(journal or default_journal()).with_name("outbox.sqlite")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return TableReporter(table_no, key, path, broker).start()
    except Exception as exc:  # noqa: BLE001 - whatever stops the outbox opening is said, never a traceback
        raise _err(_("cannot open the outbox {path}: {error}", path=path, error=exc)) from None
