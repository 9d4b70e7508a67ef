"""``tablesense sim boards --rp2040``: emulated RP2040 boards on pseudo-terminals.

With ``--table FILE`` the boards of that table (the same world as the virtual
boards: scenarios, tags placed by cell id), else ``--count N`` bench boards.
Device paths go to stdout one per line, like ``sim boards``: it is a drop-in.
A board whose flash is new boots bare MicroPython; ``tablesense flash --port P
--table T --board N`` deploys the firmware onto it through mpremote.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from tablesense.sim.rp2040.board import Rp2040Board, Rp2040Error, available, default_state_dir


class Rp2040Bench:
    """N bench boards (no table): board ids 1..N, each with the bench config."""

    def __init__(self, count: int, *, seed: int = 0, state_dir: Path | None = None, fresh: bool = False,
                 link_dir: Path | None = None) -> None:
        self.boards = {
            i: Rp2040Board(None, i, seed=seed, state_dir=state_dir, fresh=fresh, link_dir=link_dir)
            for i in range(1, count + 1)
        }

    def start(self) -> dict[int, str]:
        started: dict[int, str] = {}
        try:
            for bid, b in self.boards.items():
                started[bid] = b.start()
        except BaseException:
            self.stop()
            raise
        return started

    def stop(self) -> None:
        for b in self.boards.values():
            b.stop()

    def stable_paths(self) -> dict[int, str]:
        return {bid: b.stable_path for bid, b in self.boards.items() if b.stable_path is not None}


def rp2040_table(geometry, *, seed: int = 0, faults=None, state_dir: Path | None = None,
                 fresh: bool = False, link_dir: Path | None = None, on_path=None,
                 stable_links: bool | None = None):
    """A VirtualTable whose boards are emulated RP2040s (same world API)."""
    from tablesense.sim.virtual_table import VirtualTable

    factory = functools.partial(Rp2040Board, state_dir=state_dir, fresh=fresh)
    stable = link_dir is not None if stable_links is None else stable_links
    return VirtualTable(geometry, seed=seed, faults=faults, link_dir=link_dir, stable_links=stable,
                        on_path=on_path, board_class=cast(Any, factory))


def rp2040_boards(
    table: str | None,
    count: int,
    seed: int,
    faults: float,
    burst: float,
    link_dir: Path | None,
    state_dir: Path | None,
    fresh: bool,
    scenario: Path | None,
    exit_after_scenario: bool,
    serve: Callable[..., int],
    play: Callable[..., None],
    tabletop: Callable[..., tuple[Any, Any]] | None = None,
) -> int:
    """Run emulated boards until a signal; returns the exit status (2: bad input).
    ``tabletop(vt, geometry, err) -> (on_started, on_stop)`` serves the
    table-top page over a table's boards, as `sim boards` does."""
    from rich.console import Console
    from rich.markup import escape

    from tablesense.i18n.cli import _  # the language of `sim boards --lang`
    from tablesense.table.words import message_of

    err = Console(stderr=True, highlight=False)
    reason = available()
    if reason is not None:
        err.print("[red]" + _("cannot start emulated RP2040 boards: {reason}", reason=reason) + "[/]")
        return 1
    where = state_dir or default_state_dir()
    if table is None:
        if count < 1:
            err.print("[red]" + _("--count must be at least 1") + "[/]")
            return 2
        bench = Rp2040Bench(count, seed=seed, state_dir=where, fresh=fresh, link_dir=link_dir)
        err.print(_("emulated RP2040 boards (rp2040js, MicroPython v1.27.0); flash kept in {folder}", folder=where))
        try:
            return serve(bench, err, describe=lambda b: _("board {board} (bench, USB serial {serial})", board=b,
                                                          serial=bench.boards[b].serial),
                         stable=bench.stable_paths)
        except Rp2040Error as exc:
            err.print(f"[red]{exc}[/]")
            return 1
    from tablesense.sim.faults import FaultPlan
    from tablesense.sim.scenario import Scenario, ScenarioError
    from tablesense.table.geometry import GeometryError, TableGeometry

    try:
        geometry = TableGeometry.load(table)
        plan = FaultPlan.from_rate(faults, seed=seed, burst=burst)
        script = Scenario.load(scenario, geometry) if scenario is not None else None
    except (GeometryError, FileNotFoundError, ValueError, ScenarioError) as exc:
        err.print(f"[red]{escape(_(message_of(exc)))}[/]")
        return 2
    started = threading.Event()

    def on_path(board: int, path: str) -> None:
        if started.is_set():
            err.print(_("board {board} plugged in again: {path}", board=board, path=path))

    vt = rp2040_table(geometry, seed=seed, faults=plan, state_dir=where, fresh=fresh, link_dir=link_dir,
                      on_path=on_path)
    err.print(_("emulated RP2040 boards of {table} (rp2040js, MicroPython v1.27.0); flash kept in {folder}",
                table=geometry.name, folder=where))
    on_started, on_stop = tabletop(vt, geometry, err) if tabletop is not None else (None, None)
    try:
        return serve(
            vt, err, on_started=on_started, on_stop=on_stop,
            script_runner=(lambda stop: play(script, vt, stop, err)) if script else None,
            exit_after_script=exit_after_scenario, started=started,
            describe=lambda b: _("board {board} ({name}, {cells} cells, USB serial {serial})", board=b,
                                 name=geometry.board(b).name, cells=geometry.board(b).channels,
                                 serial=cast(Rp2040Board, vt.boards[b]).serial),
            stable=vt.stable_paths,
        )
    except Rp2040Error as exc:
        err.print(f"[red]{exc}[/]")
        return 1
