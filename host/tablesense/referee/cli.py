"""Commands of the referee room: ``tablesense play`` and ``tablesense demo``.

``play`` referees a match on a real table (or on ``tablesense sim boards``
started in another terminal); ``demo`` plays a whole match on the virtual
table with computer seats and serves the display page. Each command only
reads its options into a typed object, builds and runs: ``play`` a
:class:`~tablesense.referee.table_session.TableSession` from
:class:`~tablesense.referee.table_session.PlayOptions`, ``demo`` a
:class:`~tablesense.referee.demo.DemoConfig` checked by
:func:`~tablesense.referee.demo.prepare_demo` and run by
:class:`~tablesense.referee.demo_console.DemoConsole`; a refusal
(:class:`~tablesense.referee.options.CommandRefused`) is printed as
``error: ...`` with its exit code. Heavy imports stay inside the commands so
that ``tablesense --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from tablesense.games.common import say
from tablesense.games.registry import names
from tablesense.i18n.cli import LANG_OPTION as _SHARED_LANG_OPTION
from tablesense.i18n.cli import PlainHelpCommand, _
from tablesense.referee.options import CommandRefused, default_journal, table_lang

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
            help="Report the match to the tournament director at the URL 'tablesense tournament "
            "mosquitto-config' prints for this table (its password from a file).",
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
            help="Seats at another table (docs/remote.md): 'host' prints a code, 'join CODE' joins it, 'auto' plays the "
            "director's assignment, 'page': a person on the table-top page hosts or joins.",
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
                remote, code, table=table, game=game, variant=variant, seats=seats, broker=broker,
                ports=[p for item in ports for p in item.split(",") if p], tags=tags, seed=seed, timeout=remote_timeout,
                target=target, journal_dir=(journal or default_journal()).parent / "remote",
                page=PageOptions(web, host, web_port, table_lang(lang)),
                director=None if director is None else DirectorOptions(director, table_no, table_key, outbox, announce_wait),
            ))
        if code is not None:
            raise _err(say("{code!r}: a code goes with --remote join, or with --remote host to resume that match", code=code))
        from rich.console import Console

        from tablesense.referee.table_session import PlayOptions, TableSession

        options = PlayOptions(
            table=table, seats=seats, game=game, variant=variant, ports=ports, journal=journal, tags=tags,
            web=web, web_port=web_port, host=host, seed=seed, target=target, new=new, deal=deal, lang=lang,
            speech=speech, volume=volume, quiet_hours=quiet_hours, keys=keys, records=records,
            director=director, table_no=table_no, table_key=table_key, outbox=outbox,
            announce_wait=announce_wait, seat_header=seat_header, coach=coach, player=player,
            think_ms=think_ms, virtual_table=virtual_table, speed=speed,
        )
        stop = threading.Event()
        try:
            session = TableSession.build(options, Console(stderr=True))
            _stop_on_signals(stop)
            session.run(stop)
        except CommandRefused as exc:
            raise _err(exc.message, exc.code) from None

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

        from tablesense.referee.demo import DemoConfig, prepare_demo
        from tablesense.referee.demo_console import DemoConsole

        cfg = DemoConfig(
            game=game, variant=variant, hands=hands, seed=seed, speed=speed, web=web, port=port, host=host,
            link_faults=link_faults, link=link, boards=boards, seats=seats,
            journal=str(journal) if journal else None, player=player, think_ms=think_ms,
            world_file=str(world_file) if world_file else None, timeout=timeout, trace=trace,
            stay=web and hands is None, open_hands=open_hands, coach=coach,
        )
        stop = threading.Event()
        try:
            prepare_demo(cfg, lang=lang, speech=speech, volume=volume, quiet_hours=quiet_hours, sit=sit)
            _stop_on_signals(stop)
            DemoConsole(cfg, Console(stderr=True)).run(stop)
        except CommandRefused as exc:
            raise _err(exc.message, exc.code) from None
