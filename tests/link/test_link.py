"""The table link against virtual boards running the real firmware, over real
pseudo-terminals opened with pyserial: handshake, sync, LEDs, mismatches,
unplug/replug, reboot, and every kind of byte fault."""

from __future__ import annotations

import copy
import time

import pytest

from tablesense.link.board_conn import ConnState, LinkOptions
from tablesense.link.manager import TableLink
from tablesense.sim.faults import FaultPlan
from tablesense.sim.layouts import bench_geometry
from tablesense.table.state import OFFLINE, Empty, Offline, Tag

from .conftest import RigFactory

UID_A = bytes.fromhex("04a1b2c3d4e5f6")
UID_B = bytes.fromhex("04c0ffee123456")
UID_C = bytes.fromhex("0a0b0c0d")


def test_handshake_sync_and_world_changes(rig: RigFactory) -> None:
    r = rig()
    st = r.wait(lambda s: s.complete)
    assert set(st.values()) == {Empty()}
    assert st.boards_online == {1: True, 2: True}
    statuses = {s.board: s for s in r.link.board_statuses()}
    assert all(s.state is ConnState.ONLINE for s in statuses.values())
    ident = statuses[1].identity
    assert ident is not None and ident.cells == 8 and ident.has_leds and ident.fw_version
    r.table.place("b1-2", UID_A)
    st = r.wait_world()
    assert st["b1-2"] == Tag(UID_A)
    r.table.move("b1-2", "b2-5")  # across boards
    st = r.wait_world()
    assert st["b1-2"] == Empty() and st["b2-5"] == Tag(UID_A)
    r.table.place("b2-6", UID_C)
    r.table.remove("b2-5")
    r.wait_world()
    # stable_since follows cell changes only
    since = r.link.state().stable_since
    time.sleep(0.3)
    assert r.link.state().stable_since == since


def test_leds_are_whole_frames_coalesced_and_rate_limited(rig: RigFactory) -> None:
    r = rig(options=LinkOptions(led_min_interval=0.05))
    r.wait(lambda s: s.complete)
    for i in range(60):
        r.link.set_leds({"b1-1": (i, 0, 0), "b2-3": (0, i, 0)})
    r.link.set_leds({"b1-1": (1, 2, 3)})  # the final picture: b2-3 must go dark
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        if r.table.leds("b1-1") == (1, 2, 3) and r.table.leds("b2-3") == (0, 0, 0):
            break
        time.sleep(0.02)
    assert r.table.leds("b1-1") == (1, 2, 3)
    assert r.table.leds("b2-3") == (0, 0, 0)
    assert r.table.leds("b1-2") == (0, 0, 0)
    for b in (1, 2):
        conn = r.link.connection(b)
        assert conn is not None
        # 61 pictures in a burst: a handful of frames reached the board
        assert 1 <= conn.stats.led_frames <= 10, conn.stats
        assert r.table.boards[b].neopixel.writes <= 12


def test_board_without_leds_never_gets_an_led_frame(rig: RigFactory) -> None:
    r = rig(boards={2: {"with_leds": False}})
    r.wait(lambda s: s.complete)
    conn2 = r.link.connection(2)
    assert conn2 is not None and conn2.identity is not None and not conn2.identity.has_leds
    r.link.set_leds({"b1-0": (5, 5, 5), "b2-0": (7, 7, 7)})
    time.sleep(0.3)
    assert r.table.leds("b1-0") == (5, 5, 5)
    assert conn2.stats.led_frames == 0
    fw = r.table.boards[2].firmware
    assert fw is not None and fw.decoder.frames > 0
    # the firmware never saw a LEDS frame: it would have answered NAK unsupported
    assert fw.errors == 0


def test_config_mismatch_keeps_the_board_offline_with_a_clear_message(rig: RigFactory) -> None:
    g = bench_geometry(2, 8)
    other = copy.deepcopy(g.board_config(2))
    other["name"] = "flashed-for-another-table"
    r = rig(geometry=g, boards={2: {"config": other}}, options=LinkOptions(mismatch_retry=0.2))
    r.wait(lambda s: s.boards_online.get(1, False))
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and not any(
        s.state is ConnState.MISMATCH for s in r.rec.statuses
    ):
        time.sleep(0.02)
    mism = [s for s in r.rec.statuses if s.state is ConnState.MISMATCH]
    assert mism, r.rec.statuses
    msg = mism[0].message
    assert "board 2" in msg and "config hash" in msg and "tablesense flash" in msg
    st = r.link.state()
    assert st.boards_online == {1: True, 2: False}
    assert st["b2-0"] == OFFLINE and not st.complete


def test_firmware_version_mismatch(rig: RigFactory) -> None:
    r = rig(options=LinkOptions(expected_fw="9.9.9", mismatch_retry=0.5))
    deadline = time.monotonic() + 3
    while (
        time.monotonic() < deadline
        and len({s.board for s in r.rec.statuses if s.state is ConnState.MISMATCH}) < 2
    ):
        time.sleep(0.02)
    msgs = [s.message for s in r.rec.statuses if s.state is ConnState.MISMATCH]
    assert msgs and all("firmware" in m and "9.9.9" in m for m in msgs)
    assert not any(r.link.state().boards_online.values())


def test_a_board_of_another_table_is_refused(rig: RigFactory) -> None:
    r = rig(start_link=False)
    one = bench_geometry(1, 8)
    link = TableLink(
        one, list(r.table.stable_paths().values()), options=LinkOptions(check_config=False)
    )
    try:
        link.start()
        assert link.wait_online(3)
        deadline = time.monotonic() + 3
        msgs: list[str] = []
        while time.monotonic() < deadline:
            msgs = [s.message for s in link.board_statuses() if s.state is ConnState.MISMATCH]
            if msgs:
                break
            time.sleep(0.02)
        assert any("not part of table" in m for m in msgs)
    finally:
        link.stop()


def test_port_is_opened_exclusively(rig: RigFactory) -> None:
    r = rig()
    r.wait(lambda s: s.complete)
    second = TableLink(r.link.geometry, list(r.table.stable_paths().values()))
    try:
        second.start()
        time.sleep(0.3)
        msgs = [s.message for s in second.board_statuses()]
        assert all("another program has the port open" in m for m in msgs), msgs
        assert not any(second.state().boards_online.values())
    finally:
        second.stop()
    # the first link never noticed
    assert r.link.state().complete


def test_unplug_goes_offline_and_replug_recovers_state_and_leds(rig: RigFactory) -> None:
    r = rig()
    r.wait(lambda s: s.complete)
    r.table.place("b2-4", UID_B)
    r.wait_world()
    r.link.set_leds({"b2-4": (0, 50, 0)})
    r.table.unplug(2)
    st = r.wait(lambda s: not s.boards_online[2])
    assert isinstance(st["b2-4"], Offline) and st["b1-0"] == Empty()
    deadline = time.monotonic() + 2  # statuses reach subscribers on the dispatcher thread
    while time.monotonic() < deadline and not any(
        s.board == 2 and s.state is ConnState.OFFLINE for s in r.rec.statuses
    ):
        time.sleep(0.01)
    assert any(s.board == 2 and s.state is ConnState.OFFLINE for s in r.rec.statuses)
    # the caller keeps going: LED pictures for an absent board do not raise
    r.link.set_leds({"b2-4": (0, 60, 0)})
    r.table.replug(2)
    st = r.wait_world(timeout=6)
    assert st["b2-4"] == Tag(UID_B)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and r.table.leds("b2-4") != (0, 60, 0):
        time.sleep(0.02)
    assert r.table.leds("b2-4") == (0, 60, 0)


def test_a_change_while_unplugged_shows_after_replug(rig: RigFactory) -> None:
    r = rig()
    r.wait(lambda s: s.complete)
    r.table.unplug(1)
    r.wait(lambda s: not s.boards_online[1])
    r.table.place("b1-3", UID_C)
    r.table.replug(1)
    assert r.wait_world(timeout=6)["b1-3"] == Tag(UID_C)


def test_reboot_mid_game_resyncs_and_restores_leds(rig: RigFactory) -> None:
    r = rig()
    r.wait(lambda s: s.complete)
    r.table.place("b1-1", UID_A)
    r.table.place("b2-2", UID_B)
    r.wait_world()
    r.link.set_leds({"b1-1": (9, 9, 9)})
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and r.table.leds("b1-1") != (9, 9, 9):
        time.sleep(0.02)
    conn = r.link.connection(1)
    assert conn is not None
    boots = conn.stats.boots
    r.table.reboot(1)
    assert r.table.leds("b1-1") == (0, 0, 0)  # the strip went dark with the restart
    r.wait(lambda s: conn.stats.boots > boots, timeout=3)
    st = r.wait_world()
    assert st["b1-1"] == Tag(UID_A)
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and r.table.leds("b1-1") != (9, 9, 9):
        time.sleep(0.02)
    assert r.table.leds("b1-1") == (9, 9, 9)


def test_a_failing_subscriber_does_not_stop_the_link(rig: RigFactory) -> None:
    r = rig()

    def bad(_st: object) -> None:
        raise RuntimeError("subscriber bug")

    r.link.subscribe(bad)
    r.wait(lambda s: s.complete)
    r.table.place("b1-0", UID_A)
    r.wait_world()
    assert r.rec.states  # the good subscriber still got every change


FAULTS = {
    "drop": FaultPlan(seed=5, drop=0.03),
    "corrupt": FaultPlan(seed=5, corrupt=0.03),
    "duplicate": FaultPlan(seed=5, duplicate=0.03),
    "delay": FaultPlan(seed=5, delay=0.3, delay_ms=(1.0, 40.0)),
}


@pytest.mark.parametrize("kind", sorted(FAULTS))
def test_every_byte_fault_kind_ends_in_the_true_state(rig: RigFactory, kind: str) -> None:
    r = rig(faults=FAULTS[kind])
    r.wait(lambda s: s.complete, timeout=10)
    moves = [
        ("place", "b1-1", UID_A),
        ("place", "b2-5", UID_B),
        ("move", "b1-1", "b2-7"),
        ("remove", "b2-5", None),
    ]
    for op, a, b in moves:
        if op == "place":
            assert isinstance(b, bytes)
            r.table.place(a, b)
        elif op == "move":
            assert isinstance(b, str)
            r.table.move(a, b)
        else:
            r.table.remove(a)
        r.wait_world(timeout=10)
    conns = [c for c in (r.link.connection(1), r.link.connection(2)) if c is not None]
    counts = {k: v for vb in r.table.boards.values() for k, v in vb.fault_counts().items()}
    assert sum(counts.values()) > 0, "the fault plan must have hit something"
    if kind in ("drop", "corrupt"):
        assert sum(c.stats.rx_errors + c.stats.gaps for c in conns) > 0
    # never a tag the world did not hold
    held = {UID_A, UID_B}
    for _t, st in r.rec.states:
        assert set(st.tags().values()) <= held


def test_explicit_port_that_moves_is_found_again_by_usb_serial(
    rig: RigFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from tablesense.link import discovery

    r = rig(stable=False)  # raw /dev/pts paths: a replug gives a new name
    r.wait(lambda s: s.complete)

    def find_by_serial(serial: str) -> str | None:
        for b, vb in r.table.boards.items():
            if vb.uid.hex().upper() == serial.upper():
                return r.table.device_paths().get(b)
        return None

    monkeypatch.setattr(discovery, "find_by_serial", find_by_serial)
    old = r.table.device_paths()[1]
    r.table.unplug(1)
    r.wait(lambda s: not s.boards_online[1])
    blocker = os.openpty()  # make sure the board comes back under another number
    try:
        new = r.table.replug(1)
    finally:
        for fd in blocker:
            os.close(fd)
    assert new != old
    r.table.place("b1-2", UID_A)
    assert r.wait_world(timeout=8)["b1-2"] == Tag(UID_A)
    conn = r.link.connection(1)
    assert conn is not None and conn.port == new


def test_direct_subscribers_see_every_state_in_order(rig: RigFactory) -> None:
    import threading

    r = rig(start_link=False)
    seen: list[int] = []
    threads: set[str] = set()

    def on_state(st: object) -> None:
        assert hasattr(st, "version")
        seen.append(st.version)  # type: ignore[attr-defined]
        threads.add(threading.current_thread().name)

    r.link.subscribe(on_state, direct=True)
    r.link.start()
    r.wait(lambda s: s.complete)
    for cell in ("b1-1", "b2-1", "b1-2", "b2-2"):
        r.table.place(cell, bytes([4, 0x10 + len(seen)]) + cell.encode()[-4:].rjust(5, b"0"))
    r.wait_world()
    time.sleep(0.1)
    assert seen == sorted(seen) and len(set(seen)) == len(seen)
    assert seen[-1] == r.link.state().version
    assert all(name.startswith("board-conn") for name in threads)  # no dispatcher hop


def test_hot_cells_reach_each_board_and_come_back_after_a_reboot(rig: RigFactory) -> None:
    """set_hot_cells splits the referee's hint per board (HOT); a board that
    restarts forgets it and is told again."""
    r = rig()
    r.wait(lambda s: s.complete)
    geometry = r.link.geometry
    hot = ["b1-2", "b1-5", "b2-0"]
    r.link.set_hot_cells(hot)
    want = {b: sorted(geometry.cells[c].channel for c in hot if geometry.cells[c].board == b) for b in (1, 2)}

    def boards_hold(expected: dict[int, list[int]]) -> bool:
        for b in (1, 2):
            fw = r.table.boards[b].firmware
            if fw is None or sorted(fw.hot) != expected[b]:
                return False
        return True

    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and not boards_hold(want):
        time.sleep(0.02)
    assert boards_hold(want)
    conn = r.link.connection(1)
    assert conn is not None
    boots = conn.stats.boots
    r.table.reboot(1)
    r.wait(lambda s: conn.stats.boots > boots, timeout=3)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and not boards_hold(want):
        time.sleep(0.02)
    assert boards_hold(want)
    r.link.set_hot_cells([])
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and not boards_hold({1: [], 2: []}):
        time.sleep(0.02)
    assert boards_hold({1: [], 2: []})
