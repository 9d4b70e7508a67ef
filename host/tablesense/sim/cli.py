"""Commands of the ``sim`` room: ``tablesense sim boards --table FILE``.

``sim boards`` starts the virtual boards of a table (the real firmware over
emulated readers, one pseudo-terminal each), prints each board's device path
on its own line on stdout as soon as it is ready (flushed, so a script can
read them), and runs until SIGINT/SIGTERM. Messages for people go to stderr.

The command is built as "parse options -> start something that has paths ->
serve until a signal", so another kind of virtual board (e.g. a MicroPython
raw-REPL board) is one more branch in :func:`boards_command` that builds a
different :class:`_Served`.
"""

from __future__ import annotations

import functools
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Protocol

import typer
from rich.markup import escape

from tablesense.i18n.cli import LANG_OPTION, PlainHelpCommand, _
from tablesense.table.words import message_of

sim_app = typer.Typer(
    name="sim",
    help="The virtual table: virtual sensor boards on pseudo-terminals.",
    no_args_is_help=True,
    add_completion=False,
)


class _Served(Protocol):
    """What `sim boards` serves until interrupted."""

    def start(self) -> dict[int, str]: ...

    def stop(self) -> None: ...


@sim_app.command("boards", cls=PlainHelpCommand)
def boards_command(
    table: str | None = typer.Option(
        None,
        "--table",
        "-t",
        metavar="FILE",
        help="Table geometry TOML (or a shipped name: dominoes-4, kems-4, ...).",
    ),
    micropython: bool = typer.Option(
        False,
        "--micropython",
        help="Instead: virtual MicroPython boards (raw REPL) to flash and diagnose.",
    ),
    rp2040: bool = typer.Option(
        False,
        "--rp2040",
        help="Emulated RP2040 boards running the real MicroPython v1.27.0 (rp2040js); "
        "with --table, the table's boards, else --count bench boards. Flash them with `tablesense flash`.",
    ),
    state_dir: Path | None = typer.Option(
        None, "--state-dir", metavar="DIR", help="With --rp2040: where boards keep their flash (default: the user's state folder)."
    ),
    fresh: bool = typer.Option(
        False, "--fresh", help="With --rp2040: erase the boards' flash first (bare MicroPython, as from the factory)."
    ),
    count: int = typer.Option(1, "--count", help="With --micropython or --rp2040: how many boards."),
    seed: int = typer.Option(
        0, "--seed", help="Seed of board identities, reader noise and link faults."
    ),
    faults: float = typer.Option(
        0.0, "--faults", help="Fraction of link bytes dropped/corrupted/duplicated (e.g. 0.02)."
    ),
    burst: float = typer.Option(
        8.0, "--burst", help="Mean length of a run of faulty bytes (1 = every byte independent)."
    ),
    link_dir: Path | None = typer.Option(
        None,
        "--link-dir",
        metavar="DIR",
        help="Also keep DIR/board-<id> symlinks that follow each board across replugs.",
    ),
    scenario: Path | None = typer.Option(
        None, "--scenario", metavar="FILE", help="Play this scenario file (TOML/JSON) on the world."
    ),
    exit_after_scenario: bool = typer.Option(
        False, "--exit-after-scenario", help="Stop once the scenario has run."
    ),
    scan_interval_ms: float = typer.Option(
        4.0,
        "--scan-ms",
        min=0.2,
        max=1000.0,
        help="Milliseconds per cell read (pacing of the scan loop).",
    ),
    unplug_every: float | None = typer.Option(
        None, "--unplug-every", help="Mean seconds between random unplugs of a board."
    ),
    reboot_every: float | None = typer.Option(
        None, "--reboot-every", help="Mean seconds between random reboots of a board."
    ),
    tabletop: bool = typer.Option(
        True,
        "--tabletop/--no-tabletop",
        help="Serve the table-top page: move the pieces by hand (mouse or finger).",
    ),
    web_port: int = typer.Option(8081, "--web-port", metavar="PORT", help="Port of the table-top page (0: any free port)."),
    host: str = typer.Option("127.0.0.1", "--host", metavar="ADDRESS", help="Address the table-top page listens on."),
    display: str | None = typer.Option(
        "http://127.0.0.1:8080/",
        "--display",
        metavar="URL",
        help="The referee's display page (tablesense play): the table top shows its banner and turn lights.",
    ),
    open_hands: bool = typer.Option(
        False, "--open-hands", help="The table top may show every piece face up (teaching, testing)."
    ),
    save_session: Path | None = typer.Option(
        None, "--save-session", metavar="FILE", help="On exit, write the table top's moves to this scenario file (.json)."
    ),
    lang: str = LANG_OPTION,
) -> None:
    """Start the virtual boards of a table and run until interrupted.

    Point the host at them from another terminal, e.g.
    ``tablesense play --table T --port /dev/pts/5 --port /dev/pts/6``
    (or at the --link-dir symlinks, which survive an unplug/replug).
    """
    if tabletop and table is not None:
        _port_free_or_exit(host, web_port)  # before any board starts: nothing to stop, no path printed
    if rp2040:
        from tablesense.sim.rp2040.cli import rp2040_boards

        hooks = functools.partial(_tabletop_hooks, enabled=tabletop, display=display, link_dir=link_dir,
                                  host=host, web_port=web_port, open_hands=open_hands,
                                  save_session=save_session, seed=seed, flash_first=True)
        raise typer.Exit(rp2040_boards(table, count, seed, faults, burst, link_dir, state_dir, fresh,
                                       scenario, exit_after_scenario, _serve, _play, hooks))
    if micropython or table is None:  # the flash+diag room's boards (tablesense.sim.mpboard)
        from tablesense.sim.mpboard import boards_command as micropython_boards

        raise typer.Exit(micropython_boards(count, micropython))
    from rich.console import Console

    from tablesense.sim.faults import FaultPlan
    from tablesense.sim.scenario import Scenario, ScenarioError
    from tablesense.sim.virtual_table import VirtualTable
    from tablesense.table.geometry import GeometryError, TableGeometry

    err = Console(stderr=True, highlight=False)
    try:
        geometry = TableGeometry.load(table)
    except (GeometryError, FileNotFoundError) as exc:
        err.print(f"[red]{escape(_(message_of(exc)))}[/]")
        raise typer.Exit(2) from None
    try:
        plan = FaultPlan.from_rate(faults, seed=seed, burst=burst)
    except ValueError as exc:
        err.print(f"[red]{escape(_(message_of(exc)))}[/]")
        raise typer.Exit(2) from None
    plan.unplug_every = unplug_every
    plan.reboot_every = reboot_every
    script = None
    if scenario is not None:
        try:
            script = Scenario.load(scenario, geometry)
        except ScenarioError as exc:
            err.print(f"[red]{escape(_(message_of(exc)))}[/]")
            raise typer.Exit(2) from None

    started = threading.Event()

    def on_path(board: int, path: str) -> None:
        if started.is_set():  # a replug: the board is back under a new path
            err.print(_("board {board} plugged in again: {path}", board=board, path=path))

    vt = VirtualTable(
        geometry,
        seed=seed,
        faults=plan,
        scan_interval=scan_interval_ms / 1000.0,
        link_dir=link_dir,
        stable_links=link_dir is not None,
        on_path=on_path,
    )
    start_tabletop, stop_tabletop = _tabletop_hooks(
        vt, geometry, err, enabled=tabletop, display=display, link_dir=link_dir, host=host, web_port=web_port,
        open_hands=open_hands, save_session=save_session, seed=seed)
    status = _serve(
        vt,
        err,
        on_started=start_tabletop,
        on_stop=stop_tabletop,
        script_runner=(lambda stop: _play(script, vt, stop, err)) if script else None,
        exit_after_script=exit_after_scenario,
        started=started,
        describe=lambda b: _("board {board} ({name}, {cells} cells)", board=b, name=geometry.board(b).name,
                             cells=geometry.board(b).channels),
        stable=vt.stable_paths,
    )
    raise typer.Exit(status)


def _tabletop_hooks(
    vt,  # a VirtualTable (of virtual or emulated RP2040 boards)
    geometry,  # its TableGeometry
    err,  # a rich Console
    *,
    enabled: bool,
    display: str | None,
    link_dir: Path | None,
    host: str,
    web_port: int,
    open_hands: bool,
    save_session: Path | None,
    seed: int,
    flash_first: bool = False,
) -> tuple[Any, Any]:
    """(on_started, on_stop) for `_serve`: the table-top page over ``vt``'s
    world, its seat header socket, and the lines that tell a person how to
    use them. One definition for every kind of board a table can be made of
    (``flash_first``: boards that boot bare MicroPython until `tablesense
    flash` deploys the firmware, as emulated RP2040s do)."""
    top_server: Any = None
    follower: Any = None
    top: Any = None
    cleanup: list[Any] = []

    def start_tabletop() -> None:
        nonlocal top_server, follower, top
        if not enabled:
            return
        from tablesense.sim.hand import TableTop
        from tablesense.sim.header import SeatHeaderServer
        from tablesense.table.tags import TagRegistry
        from tablesense.web.server import PortInUseError, WebServerError
        from tablesense.web.tabletop import DisplayFollower, TableKeys, serve_tabletop

        follower = DisplayFollower(display) if display else None
        sock_dir = Path(link_dir) if link_dir is not None else Path(tempfile.mkdtemp(prefix="tablesense-header-"))
        header = SeatHeaderServer(sock_dir / "seat-header.sock")
        cleanup.append(header.close)
        if link_dir is None:
            cleanup.append(lambda: shutil.rmtree(sock_dir, ignore_errors=True))

        def turns() -> list[bool]:
            """The turn LEDs as the referee drives them on the header, else
            as its display shows them."""
            if header.connected:
                return [header.level(s.turn_led_pin) if s.turn_led_pin is not None else False
                        for s in geometry.seats]
            return follower.turns() if follower is not None else []

        from tablesense.games.registry import find_game

        top = TableTop(
            vt,
            geometry,
            TagRegistry.virtual(seed),
            header=header,
            banner=follower.banner if follower else None,
            turns=turns,
            open_hands=open_hands,
            seed=seed,
            facts=find_game(geometry.games[0]).page_facts(),
        )
        keys = TableKeys.for_table(top)  # one per seat (and open hands): printed only here
        try:
            top_server = serve_tabletop(top, host, web_port, keys)
        except PortInUseError:  # taken since the check at start: never served elsewhere without a word
            err.print("[red]" + escape(_port_busy_text(host, web_port)) + "[/]")
            raise typer.Exit(PORT_BUSY_EXIT) from None
        except WebServerError as exc:
            err.print("[red]" + escape(_(message_of(exc))) + "[/]")
            raise typer.Exit(PORT_BUSY_EXIT) from None
        for line in keys.lines(top_server.url, [seat.name for seat in geometry.seats]):
            err.print(line, markup=False, highlight=False, soft_wrap=True)
        paths = vt.stable_paths() or vt.device_paths()
        if flash_first:
            for board, path in sorted(paths.items()):
                err.print("  " + _("deploy the firmware first: {command}", command=(
                    f"tablesense flash --port {path} --table {geometry.name} --board {board}")), soft_wrap=True)
        ports = " ".join(f"--port {p}" for p in paths.values())
        err.print("  " + _("referee it: {command}", command=(
            f"tablesense play --table {geometry.name} {ports} --seat-header {header.path}"
            + (f" --seed {seed}" if seed else ""))), soft_wrap=True)  # one line: it is pasted as it is
        err.print("  " + _("(the tags are the virtual set of seed {seed}: {command})", seed=seed,
                           command=f"`tablesense tags export --registry virtual:{seed}`"), soft_wrap=True)

    def stop_tabletop() -> None:
        for fn in cleanup:
            fn()
        if top_server is not None:
            top_server.stop()
        if follower is not None:
            follower.close()
        if top is not None and save_session is not None:
            import json

            save_session.write_text(json.dumps(top.scenario(), indent=1) + "\n")
            err.print(_("session saved as a scenario: {file}", file=save_session))

    return start_tabletop, stop_tabletop


#: Exit status of ``sim boards`` when its table-top page cannot listen (a
#: port another program holds): 1, as ``play`` and ``demo`` for theirs.
PORT_BUSY_EXIT = 1


def _port_free_or_exit(host: str, web_port: int) -> None:
    """Stop with :data:`PORT_BUSY_EXIT` and a sentence that names the busy
    port, a free one and the command to type, when the table-top page could
    not listen on ``web_port``: the page is never moved to another port
    without a word (the printed addresses and a ``play --display`` pointing
    at it would be wrong)."""
    from rich.console import Console

    from tablesense.web.server import PortInUseError, WebServerError, check_port

    err = Console(stderr=True, highlight=False)
    try:
        check_port(host, web_port)
    except PortInUseError:
        err.print("[red]" + escape(_port_busy_text(host, web_port)) + "[/]", soft_wrap=True)
        raise typer.Exit(PORT_BUSY_EXIT) from None
    except WebServerError as exc:
        err.print("[red]" + escape(_(message_of(exc))) + "[/]", soft_wrap=True)
        raise typer.Exit(PORT_BUSY_EXIT) from None


def _port_busy_text(host: str, web_port: int) -> str:
    """The busy port's sentence: this command again with a port free now."""
    import shlex

    from tablesense.table.words import say
    from tablesense.web.server import free_port_near

    free = str(free_port_near(web_port, host))
    args = list(sys.argv[1:])
    for i, arg in enumerate(args):
        if arg == "--web-port" and i + 1 < len(args):
            args[i + 1] = free
            break
        if arg.startswith("--web-port="):
            args[i] = f"--web-port={free}"
            break
    else:
        args += ["--web-port", free]
    command = " ".join(["tablesense", *(shlex.quote(a) for a in args)])
    return _(say(
        "port {port} is in use by another program (another sim boards still running?): stop it, or choose "
        "another port for the table-top page: {command}\n  ('ss -ltnp' lists the programs that hold ports)",
        port=web_port, command=command,
    ))


def _play(script, vt, stop: threading.Event, err) -> None:  # typed at the call site
    from tablesense.sim.virtual_table import WorldError

    try:
        script.run(vt, stop, on_step=lambda s: err.print(f"[dim]{s.describe()}[/]"))
        err.print(_("scenario done"))
    except WorldError as exc:
        err.print("[red]" + _("scenario stopped: {error}", error=exc) + "[/]")


def _serve(
    served: _Served,
    err,  # a rich Console
    *,
    script_runner=None,
    exit_after_script: bool = False,
    started: threading.Event | None = None,
    describe=lambda b: _("board {board}", board=b),
    stable=lambda: {},
    on_started=None,
    on_stop=None,
) -> int:
    """Start ``served``, print its paths (stdout, one per line), run until a
    signal (or until the script ends when asked); always stop it."""
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            paths = served.start()
        except OSError as exc:
            err.print("[red]" + _("cannot start the virtual boards: {error}", error=exc) + "[/]")
            return 1
        links = stable()
        for board in sorted(paths):
            sys.stdout.write(paths[board] + "\n")
            sys.stdout.flush()
            extra = " " + _("(stable name {name})", name=links[board]) if board in links else ""
            err.print(f"{describe(board)}: {paths[board]}{extra}")
        if started is not None:
            started.set()
        if on_started is not None:
            on_started()
        err.print(_("{running}; Ctrl-C to stop", running="[green]" + _("virtual boards running") + "[/]"))
        if script_runner is not None:
            t = threading.Thread(
                target=lambda: (script_runner(stop), exit_after_script and stop.set()), daemon=True
            )
            t.start()
        while not stop.wait(0.5):
            pass
        return 0
    finally:
        if on_stop is not None:
            on_stop()
        served.stop()
        for s, h in old.items():
            signal.signal(s, h)
        err.print(_("virtual boards stopped"))


def register(app: typer.Typer) -> None:
    """Add this room's commands to the root ``tablesense`` app."""
    app.add_typer(sim_app)
