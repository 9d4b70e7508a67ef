"""Commands of the ``flash`` room: ``tablesense boards list`` and ``tablesense flash``.

Heavy imports stay inside the command functions so ``tablesense --help``
stays fast. Every failure ends as one message saying what to do and a
non-zero exit status, never a traceback.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import typer

from tablesense.i18n import NC_
from tablesense.i18n.cli import LANG_OPTION, _
from tablesense.sentence import message_of, say

boards_app = typer.Typer(name="boards", help="The sensor boards the host can see.", no_args_is_help=True,
                         add_completion=False)


@boards_app.command("list")
def boards_list(
    port: list[str] = typer.Option([], "--port", "-p", help="Also look at this port (a virtual board's /dev/pts/N)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON for machines."),
    no_handshake: bool = typer.Option(False, "--no-handshake", help="Do not talk to the boards (USB identity only)."),
    lang: str = LANG_OPTION,
) -> None:
    """Every board: USB identity, serial, port, state, firmware version and config hash."""
    from rich.console import Console
    from rich.table import Table

    from tablesense.flash.boards import list_boards

    boards = list_boards(extra_ports=port, handshake=not no_handshake)
    if as_json:
        typer.echo(json.dumps([b.to_json() for b in boards], indent=2))
        return
    console = Console()
    if not boards:
        console.print(_("No boards found. Plug a board in (hold BOOTSEL for a new one), or pass --port for a virtual board."))
        return
    t = Table(title=_("Boards"))
    for col in (_("state"), _("port"), _("USB id"), _("serial"), _("board"), _("firmware"), _("config")):
        t.add_column(col)
    for b in boards:
        ident = b.identity
        t.add_row(_(b.state), b.port or b.location, b.usb_id, b.serial or "-",
                  str(ident.board) if ident else "-", ident.fw_version if ident else "-",
                  ident.config_hash.hex() if ident else "-")
    console.print(t)


def _deploy_error(exc: Any) -> str:
    """A failed deploy in the command's language: what failed, the board's
    state, what to do (``DeployError.parts``; English as ``str(exc)`` gives it)."""
    message, state, hint = exc.parts()
    return f"{_(message)}\n{_(state)} {_(hint)}".rstrip()


def _fail(message: str, status: int = 1) -> typer.Exit:
    from rich.console import Console
    from rich.markup import escape

    # escaped: a geometry problem quotes the file's [[boards]]
    Console(stderr=True, highlight=False).print(f"[red]{escape(message)}[/]")
    return typer.Exit(status)


def flash_command(
    port: list[str] = typer.Option([], "--port", "-p", help="Board serial port (repeat for several)."),
    all_boards: bool = typer.Option(False, "--all", help="Every board of the table (needs --table)."),
    table: str | None = typer.Option(None, "--table", "-t", help="Table geometry: writes each board's config."),
    board: int | None = typer.Option(None, "--board", help="With one --port and --table: which board of the table it is."),
    micropython: Path | None = typer.Option(
        None, "--micropython",
        help="Install this MicroPython UF2 first (BOOTSEL); 'bundled' = the MicroPython v1.27.0 shipped with tablesense."),
    install_micropython: bool = typer.Option(
        False, "--install-micropython", help="Install the bundled MicroPython v1.27.0 first (BOOTSEL)."),
    chip: str = typer.Option("rp2040", "--chip", help="rp2040 or rp2350: the family the UF2 must be for."),
    check: bool = typer.Option(False, "--check", help="Only check the --micropython UF2 file and exit."),
    firmware: Path | None = typer.Option(None, "--firmware", help="Firmware folder (default: the installed firmware/)."),
    source_only: bool = typer.Option(False, "--no-compile", help="Ship .py sources instead of mpy-cross output."),
    force: bool = typer.Option(False, "--force", help="Take the REPL path even if the board says it is up to date."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
    lang: str = LANG_OPTION,
) -> None:
    """Install MicroPython (optional) and deploy the firmware app + board config.

    Uploads only files whose sha256 differs, to temporary names, swaps them in,
    resets the board and confirms the new version through the handshake. A
    failed deploy leaves the previous firmware running and says what to do.
    """
    from rich.console import Console

    from tablesense.flash import deploy as dp
    from tablesense.flash.repl import check_mpremote_version

    err = Console(stderr=True, highlight=False)
    micropython = _micropython_image(micropython, install_micropython, bool(port or all_boards), err)
    if micropython is not None:
        image = _load_uf2(micropython, chip)
        if check:
            err.print(_("{file}: {blocks} blocks for {family}, {start}..{end} ({kib} KiB, {sectors} sectors)",
                        file=micropython, blocks=image.blocks, family=_family(image.family),
                        start=f"0x{image.start:08x}", end=f"0x{image.end:08x}", kib=image.size // 1024,
                        sectors=len(image.sectors())))
            return
        _install_micropython(micropython, image, chip, port[0] if port else None, err)
        if not port and not all_boards:
            return
    elif check:
        raise _fail(_("--check needs --micropython FILE.uf2"), 2)
    warning = check_mpremote_version()
    if warning:
        err.print(f"[yellow]{_(warning)}[/]")

    geometry = None
    if table is not None:
        from tablesense.table.geometry import GeometryError, TableGeometry

        try:
            geometry = TableGeometry.load(table)
        except (GeometryError, OSError) as exc:
            raise _fail(_(message_of(exc)), 2) from None
    if all_boards and geometry is None:
        raise _fail(_("--all needs --table FILE (which boards, and their configs)"), 2)
    if not port and not all_boards:
        raise _fail(_("say which board: --port PATH (see `tablesense boards list`), or --all --table FILE"), 2)
    try:
        base = dp.build_payload(firmware or dp.FIRMWARE_DIR, compile=not source_only,
                                fallback_config=dp.bench_config())
    except dp.DeployError as exc:
        raise _fail(_deploy_error(exc), 1) from None

    # which payload goes to which port
    jobs: list[tuple[str, dp.Payload, str]] = []  # (port, payload, label)
    if geometry is None:
        jobs = [(p, base, p) for p in port]
    else:
        try:
            targets = _assign(geometry, port if port else None, board)
        except ValueError as exc:
            raise _fail(_(message_of(exc)), 2) from None
        for p, bid in targets:
            jobs.append((p, base.with_config(geometry.board_config(bid)),
                         _("board {board} ({name})", board=bid, name=geometry.board(bid).name)))

    results: dict[str, object] = {}
    failures: dict[str, str] = {}
    _run_jobs(jobs, force, results, failures, quiet=as_json)
    if as_json:
        typer.echo(json.dumps({"results": [results[p] for p, _pl, _l in jobs if p in results],
                               "failures": failures}, indent=2))
    else:
        console = Console(highlight=False)
        for p, _pl, label in jobs:
            r = results.get(p)
            if isinstance(r, dict):
                ident = r.get("identity") or {}
                if r["action"] == "up-to-date":
                    console.print(f"[green]{label}[/]: " + _(
                        "up to date (firmware {version}, config {config}) in {seconds} s",
                        version=ident.get("fw_version"), config=ident.get("config_hash"),
                        seconds=f"{r['seconds']:.2f}"))
                else:
                    console.print(f"[green]{label}[/]: " + _(
                        "deployed firmware {version} (config {config}); uploaded {uploaded} file(s), "
                        "{unchanged} unchanged, {seconds} s",
                        version=ident.get("fw_version"), config=ident.get("config_hash"),
                        uploaded=len(r["uploaded"]), unchanged=len(r["unchanged"]), seconds=f"{r['seconds']:.1f}"))
        for p, msg in failures.items():
            err.print(f"[red]{p}: {msg}[/]")
    if failures:
        raise typer.Exit(1)


#: The stages a deploy reports (``deploy.deploy(progress=...)``) and PICOBOOT's
#: steps, as the progress bars show them in the command's language.
STAGES = (
    NC_("deploy stage", "handshake"), NC_("deploy stage", "up to date"), NC_("deploy stage", "raw REPL"),
    NC_("deploy stage", "upload"), NC_("deploy stage", "install"), NC_("deploy stage", "reset"),
    NC_("deploy stage", "done"), NC_("deploy stage", "write"), NC_("deploy stage", "verify"),
)


def _run_jobs(jobs, force: bool, results: dict, failures: dict, quiet: bool) -> None:
    """Deploy every job at once (one thread per board) under Rich progress bars."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from tablesense.flash.deploy import DeployError, deploy

    progress = Progress(TextColumn("{task.description:<28}"), BarColumn(), TextColumn("{task.fields[stage]:<12}"),
                        TimeElapsedColumn(), console=Console(stderr=True), disable=quiet, transient=False)
    with progress:
        tasks = {p: progress.add_task(label, total=1.0, stage=_("waiting")) for p, _pl, label in jobs}

        def one(p: str, payload) -> None:
            def tell(what: str, done: int, total: int) -> None:
                frac = (done / total) if total else 0.0
                if what == "upload":
                    frac = 0.1 + 0.7 * frac
                elif what in ("install", "reset"):
                    frac = 0.85 if what == "install" else 0.9
                elif what in ("done", "up to date"):
                    frac = 1.0
                else:
                    frac = 0.05
                progress.update(tasks[p], completed=frac, stage=_.context("deploy stage", what))

            try:
                results[p] = deploy(p, payload, progress=tell, force=force).to_json()
                progress.update(tasks[p], completed=1.0, stage=_.context("deploy stage", "done"))
            except DeployError as exc:
                failures[p] = _deploy_error(exc)
                progress.update(tasks[p], stage=_("FAILED"))
            except Exception as exc:  # noqa: BLE001 - one board must not take the others down
                failures[p] = _("unexpected error: {error}", error=repr(exc))
                progress.update(tasks[p], stage=_("FAILED"))

        threads = [threading.Thread(target=one, args=(p, pl), daemon=True) for p, pl, _l in jobs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


def _assign(geometry, ports: list[str] | None, board: int | None) -> list[tuple[str, int]]:
    """Match ports to the table's boards: by --board, by the board id the
    running firmware reports, by the geometry's usb_serial, else by order."""
    from tablesense.flash.client import identify
    from tablesense.link.discovery import candidate_ports

    ids = [b.id for b in geometry.boards]
    if ports is None:
        cands = candidate_ports()
        ports = [c.path for c in cands]
        serials = {c.path: c.serial_number for c in cands}
        if not ports:
            raise ValueError(say("no MicroPython boards (USB 2E8A:0005) found; plug them in or give --port"))
    else:
        serials = {}
    if board is not None:
        if len(ports) != 1:
            raise ValueError(say("--board goes with exactly one --port"))
        if board not in ids:
            raise ValueError(say("the table has no board {board} (it has {ids})", board=board, ids=ids))
        return [(ports[0], board)]
    out: dict[str, int] = {}
    free = list(ids)
    unknown: list[str] = []
    for p in ports:
        ident = identify(p)
        by_serial = next((b.id for b in geometry.boards if b.usb_serial and serials.get(p)
                          and b.usb_serial.upper() == str(serials[p]).upper()), None)
        if by_serial is None and ident is not None:
            by_serial = next((b.id for b in geometry.boards if b.usb_serial
                              and b.usb_serial.upper() == ident.serial), None)
        bid = by_serial if by_serial is not None else (ident.board if ident is not None and ident.board in free else None)
        if bid is not None and bid in free:
            out[p] = bid
            free.remove(bid)
        else:
            unknown.append(p)
    for p in unknown:
        if not free:
            raise ValueError(say("{port}: the table has no board left for it (boards {ids} are taken)", port=p, ids=ids))
        out[p] = free.pop(0)
    return sorted(out.items(), key=lambda kv: kv[1])


def _micropython_image(given: Path | None, install: bool, has_target: bool, err) -> Path | None:
    """Which UF2 to install: the user's file, else the bundled MicroPython when
    asked (--install-micropython, --micropython bundled) or when no port was
    named and a board waits in BOOTSEL mode (a new board: that is the default)."""
    from tablesense.flash import images

    if given is not None and str(given) != "bundled":
        return given
    if given is None and not install and has_target:
        return None
    if given is None and not install:
        from tablesense.flash.mass_storage import mounted_volumes
        from tablesense.flash.picoboot import find_devices

        try:
            waiting = bool(find_devices()) or bool(mounted_volumes())
        except Exception:  # noqa: BLE001 - no USB access: nothing is waiting that we can see
            waiting = False
        if not waiting:
            return None
    try:
        images.check(images.MICROPYTHON_UF2, images.MICROPYTHON_UF2_SHA256)
    except (OSError, ValueError) as exc:
        raise _fail(_(message_of(exc)), 1) from None
    err.print(_("MicroPython image: the bundled v{version} ({file})", version=images.MICROPYTHON_VERSION,
                file=images.MICROPYTHON_UF2.name))
    return images.MICROPYTHON_UF2


def _load_uf2(path: Path, chip: str):
    from tablesense.flash.uf2 import UF2Error, load

    try:
        return load(path, chip)
    except UF2Error as exc:
        raise _fail(_(message_of(exc)), 2) from None


def _family(family: int | None) -> str:
    from tablesense.flash.uf2 import family_name

    return _("no family") if family is None else family_name(family)


def _install_micropython(path: Path, image, chip: str, port: str | None, err) -> None:
    """Send a running board to BOOTSEL (if a port is given), then write the
    image over PICOBOOT, or copy the file to the mounted boot volume."""
    from tablesense.flash.mass_storage import MassStorageError, copy_uf2, mounted_volumes
    from tablesense.flash.picoboot import Picoboot, PicobootError, PyUsbIO, find_devices

    if port is not None:
        _to_bootsel(port, err)
    deadline = time.monotonic() + 10.0
    devices = find_devices()
    volumes = mounted_volumes()
    while not devices and not volumes and time.monotonic() < deadline:
        time.sleep(0.3)
        devices = find_devices()
        volumes = mounted_volumes()
    devices = [(d, c) for d, c in devices if c == chip]
    if devices:
        dev, _chip = devices[0]
        try:
            usb = PyUsbIO(dev)
        except PicobootError as exc:
            usb = None
            err.print("[yellow]" + _("PICOBOOT not usable ({error}); trying the boot volume", error=_(message_of(exc))) + "[/]")
        except Exception as exc:  # noqa: BLE001 - pyusb permission errors
            usb = None
            err.print("[yellow]" + _("cannot open the USB device ({error}); trying the boot volume "
                                     "(install hardware/udev rules for USB access)", error=exc) + "[/]")
        if usb is not None:
            try:
                pb = Picoboot(usb, chip=chip)
                pb.flash_image(image, progress=lambda what, d, t: err.print(
                    f"{_.context('deploy stage', what)} {d}/{t}", end="\r"))
                if image.in_ram:
                    err.print("\n" + _("{file} loaded to RAM ({kib} KiB, verified) and started",
                                        file=path.name, kib=image.size // 1024))
                else:
                    err.print("\n" + _("MicroPython written ({sectors} sectors, verified); the board reboots",
                                        sectors=len(image.sectors())))
                return
            except PicobootError as exc:
                raise _fail(_(message_of(exc))) from None
            finally:
                usb.close()
    if volumes:
        try:
            copy_uf2(path, volumes[0])
            err.print(_("MicroPython copied to {volume}; the board reboots", volume=volumes[0]))
            return
        except MassStorageError as exc:
            raise _fail(_(message_of(exc))) from None
    raise _fail(_("no board in BOOTSEL mode: unplug the board, hold its BOOTSEL button, plug it in, "
                  "and run this again"))


def _to_bootsel(port: str, err) -> None:
    """Ask the board to enter its boot ROM: BOOTLOADER frame, else machine.bootloader() at the REPL."""
    from tablesense.flash.client import BoardClient, BoardError
    from tablesense.flash.repl import ReplError, ReplSession

    try:
        with BoardClient(port, timeout=0.5) as c:
            c.hello(retries=1)
            c.bootloader()
            err.print(_("{port}: entering BOOTSEL (firmware command)", port=port))
            return
    except BoardError:
        pass
    try:
        with ReplSession(port) as s:
            s.exec("import machine\nmachine.bootloader()", timeout=1)
    except ReplError:
        pass  # the board drops off USB as it obeys; any error here is expected
    err.print(_("{port}: asked MicroPython to enter BOOTSEL", port=port))


def register(app: typer.Typer) -> None:
    """Add this room's commands to the root ``tablesense`` app."""
    app.add_typer(boards_app)
    app.command("flash")(flash_command)
