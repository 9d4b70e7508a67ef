"""``tablesense hw draw`` and ``tablesense hw check``: the hardware build pack."""

from __future__ import annotations

from pathlib import Path

import typer

hw_app = typer.Typer(help="Hardware build pack: drawings and cross-checks.", no_args_is_help=True)


def _tables(table: list[Path] | None) -> list[Path]:
    from tablesense.table.geometry import shipped_tables

    return list(table) if table else shipped_tables()


@hw_app.command("draw")
def draw(
    table: list[Path] = typer.Option(None, "--table", help="Geometry file(s); default: every shipped layout."),
    out: Path = typer.Option(None, "--out", help="Output folder (default: hardware/drawings)."),
) -> None:
    """Draw each layout as SVG: cells with ids and LED indices, boards, seats."""
    from rich.console import Console

    from tablesense.hw.draw import draw_tables
    from tablesense.hw.pack import HARDWARE_DIR
    from tablesense.table.geometry import GeometryError, TableGeometry

    console = Console(stderr=True)
    try:
        geometries = [TableGeometry.load(p) for p in _tables(table)]
    except (GeometryError, FileNotFoundError) as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    for path in draw_tables(geometries, out or HARDWARE_DIR / "drawings"):
        typer.echo(str(path))


@hw_app.command("check")
def check(
    table: list[Path] = typer.Option(None, "--table", help="Geometry file(s); default: every shipped layout."),
) -> None:
    """Cross-check geometry, board configs, BOM quantities, pin maps and power.

    Exits 1 when anything is wrong, with one sentence per problem.
    """
    from rich.console import Console

    from tablesense.hw.check import Finding, check_rp2040_pins, check_table
    from tablesense.hw.pack import PackError, load_pinmap
    from tablesense.table.geometry import GeometryError, TableGeometry

    console = Console()
    findings: list[Finding] = []
    try:
        pinmap = load_pinmap()
    except PackError as exc:
        console.print(f"[red]error[/red]: {exc}")
        raise typer.Exit(1) from None
    findings += check_rp2040_pins(pinmap)
    for path in _tables(table):
        try:
            geometry = TableGeometry.load(path)
        except GeometryError as exc:
            findings.append(Finding("error", str(path), "; ".join(exc.problems)))
            continue
        except FileNotFoundError as exc:
            findings.append(Finding("error", str(path), str(exc)))
            continue
        table_findings = check_table(geometry, pinmap)
        findings += table_findings
        ok = not any(f.level == "error" for f in table_findings)
        console.print(f"{'[green]ok[/green]' if ok else '[red]FAIL[/red]'}  {geometry.name}")
    for f in findings:
        colour = "red" if f.level == "error" else "yellow"
        console.print(f"[{colour}]{f.level}[/{colour}]: {f.where}: {f.message}", highlight=False)
    if any(f.level == "error" for f in findings):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``tablesense hw ...`` to the root app."""
    app.add_typer(hw_app, name="hw")
