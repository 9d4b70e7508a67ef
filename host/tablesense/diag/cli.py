"""Commands of the ``diag`` room: ``tablesense diag`` and ``tablesense tags ...``.

``diag`` exits 0 when every check passes, 1 when one fails (each failure is
printed with its fix), 2 on bad arguments. Heavy imports stay inside the
command functions.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

tags_app = typer.Typer(name="tags", help="The tag registry: enrol, export, import, check.", no_args_is_help=True,
                       add_completion=False)


def _err(message: str, status: int) -> typer.Exit:
    from rich.console import Console

    Console(stderr=True, highlight=False).print(f"[red]{message}[/]")
    return typer.Exit(status)


def _load_geometry(table: str | None):  # noqa: ANN202
    if table is None:
        return None
    from tablesense.table.geometry import GeometryError, TableGeometry

    try:
        return TableGeometry.load(table)
    except (GeometryError, OSError) as exc:
        raise _err(str(exc), 2) from None


def _table_ports(geometry, ports: list[str]) -> list[str]:  # noqa: ANN001
    if ports:
        return ports
    from tablesense.link.discovery import candidate_ports

    found = [c.path for c in candidate_ports()]
    if not found:
        raise _err("no boards found (USB 2E8A:0005): plug them in, or give --port PATH", 1)
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
) -> None:
    """Diagnose boards: identity, uptime, readers, cells, LEDs, link; exit 1 on a failure."""
    from rich.console import Console
    from rich.table import Table

    from tablesense.diag.core import CellResult, check_seat_gpio, diagnose_board
    from tablesense.diag.core import sweep as run_sweep
    from tablesense.flash.client import BoardClient, BoardError

    geometry = _load_geometry(table)
    if not port and geometry is None:
        raise _err("say which board: --port PATH, or --table FILE for all of a table's boards", 2)
    ports = _table_ports(geometry, port)
    console = Console(stderr=as_json, highlight=False)
    reports = []
    for p in ports:
        if not as_json:
            console.print(f"[bold]{p}[/]: diagnosing…")
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
                        client, cells, lambda cell, ch: console.print(f"Put the test tag on [bold]{cell}[/] (lit blue)"),
                        on_done=lambda r: console.print(
                            f"  {r.cell}: " + ("not detected" if not r.detected else f"{r.good}/{r.reads} good reads")))
            except BoardError as exc:
                rep.add("sweep", False, str(exc), "Check the cable and run the sweep again.")
                continue
            worst = [r for r in sweeps[rep.port] if not r.detected or (r.reliability or 0) < 0.95]
            rep.cells = sweeps[rep.port]
            rep.add("sweep", not worst, f"{len(sweeps[rep.port]) - len(worst)}/{len(sweeps[rep.port])} cells read "
                                        "the test tag at least 95 % of the time",
                    "Cells below 95 %: check their antenna cable and that no metal or second tag is near them.")
    if heatmap is not None:
        from tablesense.diag import heatmap as hm

        results = [r for rs in sweeps.values() for r in rs] or [c for rep in reports for c in rep.cells]
        data = hm.png(results, geometry) if heatmap.suffix.lower() == ".png" else hm.svg(results, geometry).encode()
        heatmap.write_bytes(data)
    gpio_checks = []
    if gpio:
        if geometry is None:
            raise _err("--gpio needs --table FILE (which pins)", 2)
        ask = (lambda label: console.print(f"Press {label}")) if interactive else None
        gpio_checks = check_seat_gpio(geometry, ask=ask)
    ok = all(r.ok for r in reports) and all(c.ok is not False for c in gpio_checks)
    if as_json:
        typer.echo(json.dumps({"ok": ok, "boards": [r.to_json() for r in reports],
                               "gpio": [c.to_json() for c in gpio_checks]}, indent=2))
        raise typer.Exit(0 if ok else 1)
    for rep in reports:
        t = Table(title=f"{rep.port}" + (f" — board {rep.identity.board}" if rep.identity else ""))
        t.add_column("check")
        t.add_column("result")
        t.add_column("detail / fix")
        for c in rep.checks:
            mark = "[green]ok[/]" if c.ok else "[red]FAIL[/]" if c.ok is False else "[dim]-[/]"
            t.add_row(c.name, mark, c.detail + (f"\n[bold]Fix:[/] {c.fix}" if c.fix else ""))
        if rep.uptime_s is not None:
            t.add_row("uptime", "", f"{rep.uptime_s:.1f} s")
        console.print(t)
        if rep.port in sweeps:
            ct = Table(title="per-cell reliability")
            for col in ("cell", "channel", "good/reads", "errors", "reliability"):
                ct.add_column(col)
            for r in sweeps[rep.port]:
                rel = "not detected" if not r.detected else f"{(r.reliability or 0) * 100:.0f} %"
                ct.add_row(r.cell, str(r.channel), f"{r.good}/{r.reads}", str(r.errors), rel)
            console.print(ct)
    for c in gpio_checks:
        mark = "[green]ok[/]" if c.ok else "[red]FAIL[/]" if c.ok is False else "-"
        console.print(f"{mark} {c.name}: {c.detail}" + (f" — {c.fix}" if c.fix else ""))
    if heatmap is not None:
        console.print(f"heatmap written to {heatmap}")
    console.print("[green]all checks passed[/]" if ok else "[red]some checks failed: see the fixes above[/]")
    raise typer.Exit(0 if ok else 1)


def _runtime(rep) -> None:  # noqa: ANN001 - a BoardReport
    """Ask the board's MicroPython about itself (machine, version, memory, its own sweep time)."""
    from tablesense.diag.runtime import query_runtime

    rt = query_runtime(rep.port)
    rep.machine = rt.machine
    rep.micropython = rt.micropython
    rep.runtime = rt.to_json()
    if rt.error is not None:
        rep.add("runtime", None, f"the board's MicroPython did not answer at the raw REPL: {rt.error}")
        return
    sweep = rt.sweeps[0] if rt.sweeps else {}
    rep.add("runtime", True,
            f"{rt.machine}, MicroPython {rt.micropython}; {rt.mem_free_boot} bytes free after boot, "
            f"{sweep.get('mem_free_sweeping')} while sweeping; a sweep of {sweep.get('cells')} cells takes "
            f"{sweep.get('sweep_ms')} ms measured by the board")


# --- tags -----------------------------------------------------------------------


def _load_registry(path: Path, create: bool):  # noqa: ANN202
    from tablesense.table.tags import TagRegistry, TagRegistryError

    name = str(path)
    if not create and (name == "virtual" or name.startswith("virtual:")) and not path.exists():
        # the virtual table's tags (`play --tags virtual`, `sim boards`): virtual or virtual:SEED
        seed = name.partition(":")[2] or "0"
        if not seed.isdigit():
            raise _err(f"--registry virtual:SEED takes a number, not {seed!r}", 2)
        return TagRegistry.virtual(int(seed))
    if create and not path.exists():
        return TagRegistry()
    try:
        return TagRegistry.load(path)
    except TagRegistryError as exc:
        raise _err(str(exc), 2) from None


@tags_app.command("enroll")
def tags_enroll(
    set_: str = typer.Option(..., "--set", help="tiles, cards32, cards52 or badges."),
    table: str = typer.Option(..., "--table", "-t", help="Table geometry (which cell enrols)."),
    registry: Path = typer.Option(..., "--registry", help="Registry JSON file (created if missing; saved after each piece)."),
    port: str | None = typer.Option(None, "--port", "-p", help="Port of the board that owns the enrolment cell."),
    cell: str | None = typer.Option(None, "--cell", help="Enrolment cell id (default: the line's centre or first cell)."),
    names: str | None = typer.Option(None, "--names", help="With --set badges: 'Alice,Bob,...'."),
    reads: int = typer.Option(4, "--reads", help="Consecutive identical reads that confirm a UID."),
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
        raise _err(str(exc), 2) from None
    if not pieces:
        console.print(f"[green]{set_} is complete in {registry}[/]")
        return
    cell_id = cell or (geometry.line.center if geometry.line is not None else sorted(geometry.cells)[0])
    if cell_id not in geometry.cells:
        raise _err(f"the table has no cell {cell_id!r}", 2)
    c = geometry.cells[cell_id]
    if port is None:
        for p in _table_ports(geometry, []):
            ident = identify(p)
            if ident is not None and ident.board == c.board:
                port = p
                break
        if port is None:
            raise _err(f"no connected board is board {c.board} (which owns {cell_id}); give --port", 1)
    try:
        with BoardClient(port) as client:
            steps = Enroller(client, reg, registry, c.channel, c.led, confirm_reads=reads,
                             say=lambda s: console.print(s)).run(pieces)
    except (EnrollError, BoardError) as exc:
        raise _err(f"enrolment stopped: {exc}. What was enrolled so far is saved in {registry}.", 1) from None
    done = sum(1 for s in steps if s.outcome == "enrolled")
    console.print(f"[green]{done} piece(s) enrolled[/] into {registry}")


@tags_app.command("export")
def tags_export(
    registry: Path = typer.Option(
        ..., "--registry", help="Registry JSON file, or 'virtual' ('virtual:SEED') for the virtual table's tags."
    ),
    out: Path | None = typer.Option(None, "--out", help="File (.json or .csv); default: stdout JSON."),
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
                uid, _, piece = line.partition(",")
                if not piece:
                    raise TagRegistryError(f"{source}:{n}: expected uid,piece")
                pairs.append((uid.strip(), piece.strip()))
        else:
            pairs = [(uid.hex(), str(p)) for uid, p in TagRegistry.load(source)]
    except (TagRegistryError, OSError) as exc:
        raise _err(str(exc), 2) from None
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
            problems.append(str(exc))
    if problems:
        raise _err("nothing imported:\n  " + "\n  ".join(problems), 1)
    merged.save(registry)
    typer.echo(f"{added} tag(s) imported into {registry}")


@tags_app.command("check")
def tags_check(
    registry: Path = typer.Option(..., "--registry"),
    set_: str = typer.Option("tiles", "--set", help="tiles, cards32 or cards52."),
) -> None:
    """Exit 0 when the set is complete, 1 listing what is missing."""
    reg = _load_registry(registry, create=False)
    if set_ not in ("tiles", "cards32", "cards52"):
        raise _err(f"unknown set {set_!r}: use tiles, cards32 or cards52", 2)
    missing = reg.missing(set_)  # type: ignore[arg-type]
    if missing:
        typer.echo(f"{len(missing)} missing from {set_}: {', '.join(missing)}")
        raise typer.Exit(1)
    typer.echo(f"{set_} complete ({len(reg)} tags in the registry)")


def register(app: typer.Typer) -> None:
    """Add this room's commands to the root ``tablesense`` app."""
    app.command("diag")(diag_command)
    app.add_typer(tags_app)
