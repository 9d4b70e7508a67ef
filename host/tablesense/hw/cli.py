"""``tablesense hw draw``, ``check`` and ``export``: the hardware build pack."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
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


#: Exit status of ``hw export`` when kicad-cli is not installed (or the design is missing).
EXPORT_NO_KICAD = 2
#: Exit status of ``hw export`` when ERC/DRC find errors or kicad-cli fails.
EXPORT_FAILED = 1
GERBER_LAYERS = "F.Cu,B.Cu,F.Paste,B.Paste,F.Silkscreen,B.Silkscreen,F.Mask,B.Mask,Edge.Cuts"
BOM_FIELDS = "Reference,Value,Footprint,MPN,${QUANTITY}"
BOM_LABELS = "References,Value,Footprint,Part number,Quantity"


class KicadError(Exception):
    """kicad-cli refused; the message names the command and repeats what it printed."""


def _kicad(cli: str, *args: str) -> None:
    """Run kicad-cli; its own message becomes the error, since it names what is wrong."""
    done = subprocess.run([cli, *args], capture_output=True, text=True)
    if done.returncode != 0:
        output = (done.stdout + done.stderr).strip()
        command = " ".join(a for a in args[:3] if not a.startswith("-"))
        raise KicadError(f"kicad-cli {command} failed (exit {done.returncode}): {output}")


def kicad_exports(cli: str, board: Path, out: Path) -> list[Path]:
    """Check the design with ERC and DRC, then write what a fab and a maker need.

    Refuses (KicadError) when ERC or DRC report an error, so no Gerbers leave a
    board that fails its own rules. Returns the files written.
    """
    schematic = board.with_suffix(".kicad_sch")
    out.mkdir(parents=True, exist_ok=True)
    reports = out / "reports"
    reports.mkdir(exist_ok=True)
    _kicad(
        cli,
        "sch",
        "erc",
        "--severity-error",
        "--exit-code-violations",
        "-o",
        str(reports / "erc.rpt"),
        str(schematic),
    )
    _kicad(
        cli,
        "pcb",
        "drc",
        "--severity-error",
        "--exit-code-violations",
        "--schematic-parity",
        "-o",
        str(reports / "drc.rpt"),
        str(board),
    )
    gerbers = out / "gerbers"
    if gerbers.exists():
        shutil.rmtree(gerbers)
    gerbers.mkdir()
    _kicad(
        cli, "pcb", "export", "gerbers", "--layers", GERBER_LAYERS, "-o", f"{gerbers}/", str(board)
    )
    _kicad(
        cli,
        "pcb",
        "export",
        "drill",
        "--format",
        "excellon",
        "--excellon-units",
        "mm",
        "--generate-map",
        "--map-format",
        "gerberx2",
        "-o",
        f"{gerbers}/",
        str(board),
    )
    archive = out / f"{board.stem}-gerbers.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(gerbers.iterdir()):
            zf.write(path, path.name)
    bom = out / f"{board.stem}-bom.csv"
    _kicad(
        cli,
        "sch",
        "export",
        "bom",
        "--fields",
        BOM_FIELDS,
        "--labels",
        BOM_LABELS,
        "--group-by",
        "Value,Footprint,MPN",
        "-o",
        str(bom),
        str(schematic),
    )
    positions = out / f"{board.stem}-positions.csv"
    _kicad(
        cli,
        "pcb",
        "export",
        "pos",
        "--format",
        "csv",
        "--units",
        "mm",
        "--side",
        "both",
        "-o",
        str(positions),
        str(board),
    )
    pdf = out / f"{board.stem}-schematic.pdf"
    _kicad(cli, "sch", "export", "pdf", "-o", str(pdf), str(schematic))
    _kicad(cli, "sch", "export", "svg", "-o", f"{out}/", str(schematic))
    return [archive, gerbers, bom, positions, pdf, out / f"{board.stem}.svg", reports]


@hw_app.command("export")
def export(
    out: Path = typer.Option(Path("sensor-board-export"), "--out", help="Output folder."),
) -> None:
    """Export the sensor board for a fab and a maker with kicad-cli.

    Runs ERC and DRC first, then writes Gerbers and drill files (also zipped),
    the BOM (CSV), pick-and-place positions (CSV), and the schematic as PDF and
    SVG. Exits 1 when ERC/DRC find an error or kicad-cli fails, 2 when
    kicad-cli (KiCad 9) is not installed.
    """
    from rich.console import Console

    from tablesense.hw.pack import HARDWARE_DIR

    console = Console(stderr=True)
    board = HARDWARE_DIR / "kicad" / "sensor-board.kicad_pcb"
    cli = shutil.which("kicad-cli")
    if cli is None:
        console.print(
            "[red]error[/red]: kicad-cli is not installed: install KiCad 9 "
            "(Debian bookworm-backports: apt-get install -t bookworm-backports kicad)"
        )
        raise typer.Exit(EXPORT_NO_KICAD)
    if not board.is_file():
        console.print(f"[red]error[/red]: the KiCad design is missing: {board}")
        raise typer.Exit(EXPORT_NO_KICAD)
    try:
        written = kicad_exports(cli, board, out)
    except KicadError as exc:
        console.print(f"[red]error[/red]: {exc}", highlight=False)
        raise typer.Exit(EXPORT_FAILED) from None
    for path in written:
        typer.echo(str(path))


def register(app: typer.Typer) -> None:
    """Add ``tablesense hw ...`` to the root app."""
    app.add_typer(hw_app, name="hw")
