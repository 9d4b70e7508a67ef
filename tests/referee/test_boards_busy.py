"""Issue 14: ``boards list`` on a port that ``play`` holds says the port is
busy, not "MicroPython (no tablesense firmware)" (which invites a needless
reflash)."""

from __future__ import annotations

from tablesense.flash.boards import STATE_BUSY, STATE_FIRMWARE, list_boards
from tablesense.link.serial_link import SerialLink
from tablesense.sim.virtual_table import VirtualTable
from tablesense.table.geometry import TableGeometry


def test_a_port_held_by_play_is_listed_as_busy() -> None:
    geometry = TableGeometry.load("dominoes-4")
    with VirtualTable(geometry, seed=0) as vt:
        paths = list(vt.start().values())
        free = {b.port: b.state for b in list_boards(extra_ports=paths)}
        assert all(free[p] == STATE_FIRMWARE for p in paths), free
        held = SerialLink(paths[0], read_timeout=0.02)
        held.open()  # as play's link does: exclusively
        try:
            seen = {b.port: b.state for b in list_boards(extra_ports=paths)}
        finally:
            held.close()
        assert seen[paths[0]] == STATE_BUSY
        assert seen[paths[1]] == STATE_FIRMWARE
