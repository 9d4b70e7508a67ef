"""Commands of the ``diag`` room: ``tablesense diag`` and ``tablesense tags ...``.

``diag`` exits 0 when every check passes, 1 when one fails (each failure is
printed with its fix), 2 on bad arguments. Heavy imports stay inside the
command functions.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from tablesense.i18n import NC_
from tablesense.i18n.cli import LANG_OPTION, _
from tablesense.sentence import message_of, say

tags_app = typer.Typer(name="tags", help="The tag registry: enrol, export, import, check.", no_args_is_help=True,
                       add_completion=False)


def _err(message: str, status: int) -> typer.Exit:
    from rich.console import Console
    from rich.markup import escape

    # a Sentence is translated here; other text arrives in the command's language already
    text = _(message) if hasattr(message, "template") else message
    # escaped: a geometry problem quotes the file's [[boards]]
    Console(stderr=True, highlight=False).print(f"[red]{escape(text)}[/]")
    return typer.Exit(status)


#: The checks ``diag`` runs (``diag.core``), as the human table names them;
#: ``--json`` keeps these English names (and English details) for scripts.
CHECK_NAMES = (
    NC_("diag check", "port"), NC_("diag check", "link"), NC_("diag check", "handshake"),
    NC_("diag check", "firmware version"), NC_("diag check", "protocol"), NC_("diag check", "config"),
    NC_("diag check", "readers"), NC_("diag check", "cells"), NC_("diag check", "link errors"),
    NC_("diag check", "leds"), NC_("diag check", "sweep"), NC_("diag check", "runtime"),
    NC_("diag check", "seat gpio"),
)


def _check_name(name: str) -> str:
    """A check's name in the command's language (a seat pin's is a Sentence)."""
    return _(name) if hasattr(name, "template") else _.context("diag check", name)


def _load_geometry(table: str | None):
    if table is None:
        return None
    from tablesense.table.geometry import GeometryError, TableGeometry

    try:
        return TableGeometry.load(table)
    except (GeometryError, OSError) as exc:
        raise _err(message_of(exc), 2) from None


def _table_ports(geometry, ports: list[str]) -> list[str]:
    if ports:
        return ports
    from tablesense.link.discovery import candidate_ports

    found = [c.path for c in candidate_ports()]
    if not found:
        raise _err(say("no boards found (USB 2E8A:0005): plug them in, or give --port PATH"), 1)
    return found


def diag_command(
    port: list[str] = typer.Option([], "--port", "-p", help="Board serial port (repeat for several)."),
    table: str | None = typer.Option(None, "--table", "-t", help="Table geometry: check configs, cells, seat GPIO."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object for machines."),
    sweep: bool = typer.Option(False, "--sweep", help="Guided per-cell reliability sweep with a test tag."),
    heatmap: Path | None = typer.Option(None, "--heatmap", help="Write the sweep heatmap here (.svg or .png)."),
    gpio: bool = typer.Option(False, "--gpio", help="Also test seat buttons and turn LEDs (needs --table)."),
    interactive: bool = typer.Option(False, "--interactive", help="With --gpio: ask for each button press."),
    pings: int = typer.Option(20, "--pings", help="Round trips measured for the link statistics."),
    no_leds: bool = typer.Option(False, "--no-leds", help="Skip the LED test pattern."),
    no_runtime: bool = typer.Option(
        False, "--no-runtime",
        help="Do not ask the board's MicroPython (raw REPL) for its machine, version, free memory and sweep times."),
    lang: str = LANG_OPTION,
) -> None:
    """Diagnose boards: identity, uptime, readers, cells, LEDs, link; exit 1 on a failure."""
    from rich.console import Console
    from rich.table import Table

    from tablesense.diag.core import CellResult, check_seat_gpio, diagnose_board
    from tablesense.diag.core import sweep as run_sweep
    from tablesense.flash.client import BoardClient, BoardError

    geometry = _load_geometry(table)
    if not port and geometry is None:
        raise _err(say("say which board: --port PATH, or --table FILE for all of a table's boards"), 2)
    ports = _table_ports(geometry, port)
    console = Console(stderr=as_json, highlight=False)
    reports = []
    for p in ports:
        if not as_json:
            console.print(f"[bold]{p}[/]: " + _("diagnosing…"))
        rep = diagnose_board(p, geometry=geometry, pings=pings, led_test=not no_leds)
        reports.append(rep)
        if not no_runtime and rep.identity is not None:
            _runtime(rep)
    sweeps: dict[str, list[CellResult]] = {}
    if sweep:
        for rep in reports:
            if rep.identity is None:
                continue
            cells: list[tuple[str, int, int | None]] = [(c.cell, c.channel, None) for c in rep.cells]
            if geometry is not None:
                cells = [(c.id, c.channel, c.led) for c in sorted(geometry.cells.values(), key=lambda c: c.channel)
                         if c.board == rep.identity.board]
            try:
                with BoardClient(rep.port) as client:
                    sweeps[rep.port] = run_sweep(
                        client, cells,
                        lambda cell, ch: console.print(_("Put the test tag on {cell} (lit blue)", cell=f"[bold]{cell}[/]")),
                        on_done=lambda r: console.print(
                            f"  {r.cell}: " + (_("not detected") if not r.detected
                                               else _("{good}/{reads} good reads", good=r.good, reads=r.reads))))
            except BoardError as exc:
                rep.add("sweep", False, message_of(exc), say("Check the cable and run the sweep again."))
                continue
            worst = [r for r in sweeps[rep.port] if not r.detected or (r.reliability or 0) < 0.95]
            rep.cells = sweeps[rep.port]
            rep.add("sweep", not worst,
                    say("{good}/{cells} cells read the test tag at least 95 % of the time",
                        good=len(sweeps[rep.port]) - len(worst), cells=len(sweeps[rep.port])),
                    say("Cells below 95 %: check their antenna cable and that no metal or second tag is near them."))
    if heatmap is not None:
        from tablesense.diag import heatmap as hm

        results = [r for rs in sweeps.values() for r in rs] or [c for rep in reports for c in rep.cells]
        data = hm.png(results, geometry) if heatmap.suffix.lower() == ".png" else hm.svg(results, geometry).encode()
        heatmap.write_bytes(data)
    gpio_checks = []
    if gpio:
        if geometry is None:
            raise _err(say("--gpio needs --table FILE (which pins)"), 2)
        ask = (lambda label: console.print(_("Press {label}", label=_(label)))) if interactive else None
        gpio_checks = check_seat_gpio(geometry, ask=ask)
    ok = all(r.ok for r in reports) and all(c.ok is not False for c in gpio_checks)
    if as_json:
        typer.echo(json.dumps({"ok": ok, "boards": [r.to_json() for r in reports],
                               "gpio": [c.to_json() for c in gpio_checks]}, indent=2))
        raise typer.Exit(0 if ok else 1)
    for rep in reports:
        t = Table(title=f"{rep.port}" + (" — " + _("board {board}", board=rep.identity.board) if rep.identity else ""))
        t.add_column(_("check"))
        t.add_column(_("result"))
        t.add_column(_("detail / fix"))
        for c in rep.checks:
            mark = _mark(c.ok, "[dim]-[/]")
            t.add_row(_check_name(c.name), mark,
                      _(c.detail) + ("\n[bold]" + _("Fix:") + f"[/] {_(c.fix)}" if c.fix else ""))
        if rep.uptime_s is not None:
            t.add_row(_("uptime"), "", f"{rep.uptime_s:.1f} s")
        console.print(t)
        if rep.port in sweeps:
            ct = Table(title=_("per-cell reliability"))
            for col in (_("cell"), _("channel"), _("good/reads"), _("errors"), _("reliability")):
                ct.add_column(col)
            for r in sweeps[rep.port]:
                rel = _("not detected") if not r.detected else f"{(r.reliability or 0) * 100:.0f} %"
                ct.add_row(r.cell, str(r.channel), f"{r.good}/{r.reads}", str(r.errors), rel)
            console.print(ct)
    for c in gpio_checks:
        console.print(f"{_mark(c.ok, '-')} {_check_name(c.name)}: {_(c.detail)}" + (f" — {_(c.fix)}" if c.fix else ""))
    if heatmap is not None:
        console.print(_("heatmap written to {file}", file=heatmap))
    console.print("[green]" + _("all checks passed") + "[/]" if ok
                  else "[red]" + _("some checks failed: see the fixes above") + "[/]")
    raise typer.Exit(0 if ok else 1)


def _mark(ok: bool | None, skipped: str) -> str:
    """A check's verdict: ok, FAIL, or the mark of a check that could not run."""
    return "[green]" + _("ok") + "[/]" if ok else "[red]" + _("FAIL") + "[/]" if ok is False else skipped


def _runtime(rep) -> None:  # a BoardReport
    """Ask the board's MicroPython about itself (machine, version, memory, its own sweep time)."""
    from tablesense.diag.runtime import query_runtime

    rt = query_runtime(rep.port)
    rep.machine = rt.machine
    rep.micropython = rt.micropython
    rep.runtime = rt.to_json()
    if rt.error is not None:
        rep.add("runtime", None, say("the board's MicroPython did not answer at the raw REPL: {error}", error=rt.error))
        return
    sweep = rt.sweeps[0] if rt.sweeps else {}
    rep.add("runtime", True,
            say("{machine}, MicroPython {version}; {free} bytes free after boot, {sweeping} while sweeping; "
                "a sweep of {cells} cells takes {ms} ms measured by the board",
                machine=rt.machine, version=rt.micropython, free=rt.mem_free_boot,
                sweeping=sweep.get("mem_free_sweeping"), cells=sweep.get("cells"), ms=sweep.get("sweep_ms")))


# --- tags -----------------------------------------------------------------------


def _load_registry(path: Path, create: bool):
    from tablesense.table.tags import TagRegistry, TagRegistryError

    name = str(path)
    if not create and (name == "virtual" or name.startswith("virtual:")) and not path.exists():
        # the virtual table's tags (`play --tags virtual`, `sim boards`): virtual or virtual:SEED
        seed = name.partition(":")[2] or "0"
        if not seed.isdigit():
            raise _err(say("--registry virtual:SEED takes a number, not {seed}", seed=repr(seed)), 2)
        return TagRegistry.virtual(int(seed))
    if create and not path.exists():
        return TagRegistry()
    try:
        return TagRegistry.load(path)
    except TagRegistryError as exc:
        raise _err(message_of(exc), 2) from None


@tags_app.command("enroll")
def tags_enroll(
    set_: str = typer.Option(..., "--set", help="tiles, cards32, cards52 or badges."),
    table: str = typer.Option(..., "--table", "-t", help="Table geometry (which cell enrols)."),
    registry: Path = typer.Option(..., "--registry", help="Registry JSON file (created if missing; saved after each piece)."),
    port: str | None = typer.Option(None, "--port", "-p", help="Port of the board that owns the enrolment cell."),
    cell: str | None = typer.Option(None, "--cell", help="Enrolment cell id (default: the line's centre or first cell)."),
    names: str | None = typer.Option(None, "--names", help="With --set badges: 'Alice,Bob,...'."),
    reads: int = typer.Option(4, "--reads", help="Consecutive identical reads that confirm a UID."),
    lang: str = LANG_OPTION,
) -> None:
    """Enrol a set: the table asks for each piece in turn and reads its tag."""
    from rich.console import Console

    from tablesense.diag.enroll import Enroller, EnrollError, set_members
    from tablesense.flash.client import BoardClient, BoardError, identify

    console = Console(highlight=False)
    geometry = _load_geometry(table)
    assert geometry is not None
    reg = _load_registry(registry, create=True)
    try:
        pieces = set_members(set_, reg, names.split(",") if names else None)
    except ValueError as exc:
        raise _err(message_of(exc), 2) from None
    if not pieces:
        console.print("[green]" + _("{set} is complete in {registry}", set=set_, registry=registry) + "[/]")
        return
    cell_id = cell or (geometry.line.center if geometry.line is not None else sorted(geometry.cells)[0])
    if cell_id not in geometry.cells:
        raise _err(say("the table has no cell {cell}", cell=repr(cell_id)), 2)
    c = geometry.cells[cell_id]
    if port is None:
        for p in _table_ports(geometry, []):
            ident = identify(p)
            if ident is not None and ident.board == c.board:
                port = p
                break
        if port is None:
            raise _err(say("no connected board is board {board} (which owns {cell}); give --port",
                           board=c.board, cell=cell_id), 1)
    try:
        with BoardClient(port) as client:
            steps = Enroller(client, reg, registry, c.channel, c.led, confirm_reads=reads,
                             say=lambda s: console.print(_(s))).run(pieces)
    except (EnrollError, BoardError) as exc:
        raise _err(say("enrolment stopped: {error}. What was enrolled so far is saved in {registry}.",
                       error=message_of(exc), registry=str(registry)), 1) from None
    done = sum(1 for s in steps if s.outcome == "enrolled")
    console.print(_("{done} piece(s) enrolled into {registry}", done=f"[green]{done}[/]", registry=registry))


@tags_app.command("export")
def tags_export(
    registry: Path = typer.Option(
        ..., "--registry", help="Registry JSON file, or 'virtual' ('virtual:SEED') for the virtual table's tags."
    ),
    out: Path | None = typer.Option(None, "--out", help="File (.json or .csv); default: stdout JSON."),
    lang: str = LANG_OPTION,
) -> None:
    """Write the registry as JSON (the file format) or CSV (uid,piece)."""
    reg = _load_registry(registry, create=False)
    if out is not None and out.suffix.lower() == ".csv":
        lines = ["uid,piece"] + [f"{uid.hex()},{piece}" for uid, piece in sorted(reg, key=lambda t: str(t[1]))]
        out.write_text("\n".join(lines) + "\n")
        return
    text = json.dumps(reg.to_json(), indent=2, sort_keys=True)
    if out is None:
        typer.echo(text)
    else:
        out.write_text(text + "\n")


@tags_app.command("import")
def tags_import(
    source: Path = typer.Argument(..., help="A registry JSON file, or a CSV of uid,piece."),
    registry: Path = typer.Option(..., "--registry"),
    lang: str = LANG_OPTION,
) -> None:
    """Merge tags into the registry; refuses (changing nothing) on any conflict."""
    from tablesense.table.tags import TagRegistry, TagRegistryError

    reg = _load_registry(registry, create=True)
    try:
        if source.suffix.lower() == ".csv":
            pairs = []
            for n, line in enumerate(source.read_text().splitlines(), start=1):
                if not line.strip() or line.lower().startswith("uid,"):
                    continue
                uid, _comma, piece = line.partition(",")
                if not piece:
                    raise TagRegistryError(say("{file}:{line}: expected uid,piece", file=str(source), line=n))
                pairs.append((uid.strip(), piece.strip()))
        else:
            pairs = [(uid.hex(), str(p)) for uid, p in TagRegistry.load(source)]
    except (TagRegistryError, OSError) as exc:
        raise _err(message_of(exc), 2) from None
    merged = TagRegistry(dict(reg.to_json()["tags"]))  # type: ignore[arg-type]
    problems = []
    added = 0
    for uid, piece in pairs:
        try:
            if (bytes.fromhex(uid), piece) in [(u, str(p)) for u, p in merged]:
                continue
            merged.add(uid, piece)
            added += 1
        except (TagRegistryError, ValueError) as exc:
            problems.append(_(message_of(exc)))
    if problems:
        raise _err(_("nothing imported:") + "\n  " + "\n  ".join(problems), 1)
    merged.save(registry)
    typer.echo(_("{added} tag(s) imported into {registry}", added=added, registry=registry))


@tags_app.command("check")
def tags_check(
    registry: Path = typer.Option(..., "--registry"),
    set_: str = typer.Option("tiles", "--set", help="tiles, cards32 or cards52."),
    lang: str = LANG_OPTION,
) -> None:
    """Exit 0 when the set is complete, 1 listing what is missing."""
    reg = _load_registry(registry, create=False)
    if set_ not in ("tiles", "cards32", "cards52"):
        raise _err(say("unknown set {set}: use tiles, cards32 or cards52", set=repr(set_)), 2)
    missing = reg.missing(set_)  # type: ignore[arg-type]
    if missing:
        typer.echo(_("{n} missing from {set}: {pieces}", n=len(missing), set=set_, pieces=", ".join(missing)))
        raise typer.Exit(1)
    typer.echo(_("{set} complete ({n} tags in the registry)", set=set_, n=len(reg)))


def register(app: typer.Typer) -> None:
    """Add this room's commands to the root ``tablesense`` app."""
    app.command("diag")(diag_command)
    app.add_typer(tags_app)
