"""Issue 14: ``boards list`` on a port that ``play`` holds says the port is
busy, not "MicroPython (no tablesense firmware)" (which invites a needless
reflash)."""

from __future__ import annotations

from tablesense.flash.boards import STATE_BUSY, STATE_FIRMWARE, list_boards
from tablesense.link.serial_link import SerialLink
from tablesense.sim.virtual_table import VirtualTable
from tablesense.table.geometry import TableGeometry
from testsupport import wait_until


def test_a_port_held_by_play_is_listed_as_busy() -> None:
    geometry = TableGeometry.load("dominoes-4")
    with VirtualTable(geometry, seed=0) as vt:
        paths = list(vt.start().values())

        def states() -> dict[str | None, str]:
            return {b.port: b.state for b in list_boards(extra_ports=paths)}

        # a board that has just started may miss the quick 0.6 s probe on a
        # busy machine: wait until every board has answered once
        wait_until(lambda: all(s == STATE_FIRMWARE for s in states().values()), 30,
                   what="every virtual board to answer the probe")
        held = SerialLink(paths[0], read_timeout=0.02)
        held.open()  # as play's link does: exclusively
        try:
            seen = wait_until(lambda: (s := states())[paths[1]] == STATE_FIRMWARE and s, 30,
                              what="the other boards to answer while one port is held")
        finally:
            held.close()
        assert seen[paths[0]] == STATE_BUSY
