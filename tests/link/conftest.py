"""Fixtures of the link tests: a virtual table on real pseudo-terminals and a
TableLink on it, both always stopped."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tablesense.link.board_conn import BoardStatus, LinkOptions
from tablesense.link.manager import TableLink
from tablesense.sim.faults import FaultPlan
from tablesense.sim.layouts import bench_geometry
from tablesense.sim.virtual_table import VirtualTable
from tablesense.table.geometry import TableGeometry
from tablesense.table.state import TableState

# this folder's helpers (fw_wire) are imported by name (--import-mode=importlib)
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@dataclass
class Recorder:
    """Everything a subscriber saw, with arrival times."""

    states: list[tuple[float, TableState]] = field(default_factory=list)
    statuses: list[BoardStatus] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def on_state(self, st: TableState) -> None:
        with self.lock:
            self.states.append((time.monotonic(), st))

    def on_status(self, s: BoardStatus) -> None:
        with self.lock:
            self.statuses.append(s)


@dataclass
class Rig:
    table: VirtualTable
    link: TableLink
    rec: Recorder

    def wait(self, pred: Callable[[TableState], bool], timeout: float = 5.0) -> TableState:
        st = self.link.wait_until(pred, timeout)
        assert st is not None, f"timed out; state is {self.link.state()!r}"
        return st

    def wait_world(self, timeout: float = 5.0) -> TableState:
        """Until the link shows exactly the world's tags, complete."""
        return self.wait(lambda st: st.complete and st.tags() == self.table.tags(), timeout)


RigFactory = Callable[..., Rig]


@pytest.fixture
def rig() -> Iterator[RigFactory]:
    made: list[Rig] = []

    def make(
        geometry: TableGeometry | None = None,
        faults: FaultPlan | None = None,
        options: LinkOptions | None = None,
        stable: bool = True,
        boards: dict[int, dict] | None = None,
        seed: int = 1,
        start_link: bool = True,
    ) -> Rig:
        g = geometry or bench_geometry(2, 8)
        vt = VirtualTable(g, seed=seed, faults=faults, scan_interval=0.002, boards=boards)
        vt.start()
        ports = list(vt.stable_paths().values()) if stable else list(vt.device_paths().values())
        link = TableLink(g, ports, options=options)
        rec = Recorder()
        link.subscribe(rec.on_state, rec.on_status)
        r = Rig(vt, link, rec)
        made.append(r)
        if start_link:
            link.start()
        return r

    yield make
    for r in made:
        r.link.stop()
        r.table.stop()
