"""The merger (board channels -> table cells) and discovery (USB ids, handshake)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tablesense.link import discovery
from tablesense.link.merger import Merger
from tablesense.sim.layouts import bench_geometry
from tablesense.sim.virtual_table import VirtualTable
from tablesense.table.state import EMPTY, OFFLINE, ReadError, TableState, Tag
from testsupport import wait_until

UID = bytes.fromhex("04a1b2c3d4e5f6")


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_merger_maps_channels_to_cells_and_tracks_online() -> None:
    g = bench_geometry(2, 8)
    clock = Clock()
    m = Merger(g, clock)
    assert set(m.state.values()) == {OFFLINE} and not m.state.complete
    # a snapshot before the board is online is kept for when it is
    assert m.apply(1, {ch: EMPTY for ch in range(8)} | {3: Tag(UID)}, full=True) is None
    st = m.set_online(1, True)
    assert st is not None and st["b1-3"] == Tag(UID) and st["b1-0"] == EMPTY
    assert st["b2-0"] == OFFLINE and not st.complete
    m.apply(2, {ch: EMPTY for ch in range(8)}, full=True)
    st = m.set_online(2, True)
    assert st is not None and st.complete
    # unchanged readings publish nothing; unknown channels are ignored
    assert m.apply(1, {3: Tag(UID)}) is None
    assert m.apply(1, {99: EMPTY}) is None
    clock.t = 105.0
    st = m.apply(2, {4: ReadError(2)})
    assert (
        st is not None and st.stable_since == 105.0 and st.complete
    )  # a read error is known: the referee judges it
    # a sync flag changes completeness but not stable_since
    m.apply(2, {4: EMPTY})
    clock.t = 110.0
    st = m.set_sync(2, False)
    assert st is not None and not st.complete and st.stable_since == 105.0
    st = m.set_sync(2, True)
    assert st is not None and st.complete
    # going offline: every cell of that board reads Offline
    st = m.set_online(1, False)
    assert st is not None and st["b1-3"] == OFFLINE and st["b2-4"] == EMPTY
    assert st.boards_online == {1: False, 2: True}
    assert st.version > 0


def test_table_state_is_an_immutable_mapping() -> None:
    st = TableState({"a": EMPTY, "b": Tag(UID)}, {1: True}, 0.0)
    assert dict(st) == {"a": EMPTY, "b": Tag(UID)}
    assert st.tags() == {"b": UID}
    other = TableState({"a": Tag(UID), "b": Tag(UID)}, {1: True}, 5.0, 9)
    assert st.diff(other) == {"a": (EMPTY, Tag(UID))}
    assert st != other and st == TableState({"a": EMPTY, "b": Tag(UID)}, {1: True}, 3.0, 2)
    with pytest.raises(TypeError):
        st["a"] = EMPTY  # type: ignore[index]
    assert str(Tag(UID)) == UID.hex() and str(ReadError(2)) == "read-error(crc)"


def test_candidate_ports_filter_by_usb_id(monkeypatch: pytest.MonkeyPatch) -> None:
    from serial.tools import list_ports

    ports = [
        SimpleNamespace(
            device="/dev/ttyACM0",
            vid=0x2E8A,
            pid=0x0005,
            serial_number="E6614103E7",
            description="Board",
        ),
        SimpleNamespace(
            device="/dev/ttyACM1", vid=0x2E8A, pid=0x0003, serial_number="X", description="BOOTSEL"
        ),
        SimpleNamespace(
            device="/dev/ttyUSB0", vid=0x0403, pid=0x6001, serial_number="FT", description="FTDI"
        ),
        SimpleNamespace(
            device="/dev/ttyS0", vid=None, pid=None, serial_number=None, description="n/a"
        ),
    ]
    monkeypatch.setattr(list_ports, "comports", lambda: ports)
    found = discovery.candidate_ports()
    assert [c.path for c in found] == ["/dev/ttyACM0"]
    assert discovery.find_by_serial("e6614103e7") == "/dev/ttyACM0"
    assert discovery.find_by_serial("nope") is None


def test_identify_a_virtual_board_and_not_a_silent_port() -> None:
    vt = VirtualTable(bench_geometry(1, 8), seed=2, scan_interval=0.002, stable_links=False)
    paths = vt.start()
    try:
        ident = discovery.identify(paths[1], timeout=2.0)
        assert ident is not None and ident["board"] == 1 and ident["cells"] == 8
        vt.unplug(1)
        assert discovery.identify(paths[1], timeout=0.3) is None  # gone: None, no exception
    finally:
        vt.stop()


def test_discovery_mode_finds_boards_and_finds_them_again_after_a_replug(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tablesense.link.manager import TableLink

    g = bench_geometry(2, 8)
    vt = VirtualTable(g, seed=4, scan_interval=0.002, stable_links=False)
    vt.start()

    def ports() -> list[discovery.PortCandidate]:
        return [
            discovery.PortCandidate(p, vt.boards[b].uid.hex().upper(), "virtual", 0x2E8A, 0x0005)
            for b, p in vt.device_paths().items()
        ]

    monkeypatch.setattr(discovery, "candidate_ports", ports)
    link = TableLink(g, None, rescan_interval=0.1)
    try:
        link.start()
        assert link.wait_online(5)
        vt.place("b2-1", UID)
        assert link.wait_until(lambda s: s.complete and s.tags() == {"b2-1": UID}, 5) is not None
        old = vt.device_paths()[2]
        vt.unplug(2)
        assert link.wait_until(lambda s: not s.boards_online[2], 5) is not None
        # plug it back under another name: keep the old pty number taken meanwhile.
        # The kernel hands out the lowest free number, and other tests (other
        # workers) open and close pseudo-terminals too, so wait until the host
        # has let the old one go, then open terminals until one is the old one.
        import os

        wait_until(lambda: not os.path.exists(old), 10, what=f"{old} to be released")
        blockers: list[tuple[int, int]] = []
        try:
            while len(blockers) < 64:
                blockers.append(os.openpty())
                if os.ttyname(blockers[-1][1]) == old:
                    break
            new = vt.replug(2)
        finally:
            for pair in blockers:
                for fd in pair:
                    os.close(fd)
        assert new != old
        assert link.wait_until(lambda s: s.complete and s.tags() == {"b2-1": UID}, 8) is not None
        assert any(c.port == new for c in link.connections)
    finally:
        link.stop()
        vt.stop()


def test_a_port_that_vanishes_while_it_opens_is_a_link_error_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyserial raises termios.error (not an OSError) when the tty goes away between
    its open() and its settings: an unplugged board, a closed pseudo-terminal."""
    import termios

    import serial

    from tablesense.link.serial_link import LinkError, SerialLink

    def vanish(*args: object, **kwargs: object) -> object:
        raise termios.error(5, "Input/output error")

    monkeypatch.setattr(serial, "serial_for_url", vanish)
    with pytest.raises(LinkError, match="cannot open /dev/ttyACM9"):
        SerialLink("/dev/ttyACM9").open()
    assert discovery.identify("/dev/ttyACM9", timeout=0.1) is None
