"""Emulated RP2040 boards (rp2040js + the real MicroPython v1.27.0 UF2): the
whole lifecycle of one board of a small table, in order, on one emulator:
boot bare MicroPython, deploy through mpremote, handshake, a sweep that sees
tags placed and removed in the shared world, an LED frame read back from the
decoded WS2812 line, unplug/replug with the flash kept, and a deploy cut
mid-way that leaves the previous firmware running.

Emulated time is not wall time: every wait here is a deadline on a condition,
generous for a loaded machine, never a sleep that assumes a speed."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tablesense.flash import deploy as dp
from tablesense.flash.boards import STATE_MICROPYTHON, list_boards
from tablesense.flash.client import BoardClient, BoardError
from tablesense.flash.repl import ReplSession
from tablesense.sim.rp2040.board import Rp2040Board, available, wait_for_prompt
from tablesense.sim.rp2040.cli import rp2040_table
from tablesense.table.geometry import TableGeometry
from testsupport import need

TABLE = """
name = "rp2040-test"
games = ["dominoes"]

[[boards]]
id = 1
name = "bench"
channels = 8
leds = 8

[[seats]]
index = 0
name = "South"
rack = ["s0"]

[[seats]]
index = 1
name = "North"
rack = ["s1"]

[line]
center = "center"
left = ["left-1"]
right = ["right-1"]

[cells]
"center" = { board = 1, channel = 0, led = 0, x = 100.0, y = 0.0, zone = "line" }
"left-1" = { board = 1, channel = 1, led = 1, x = 50.0, y = 0.0, zone = "line" }
"right-1" = { board = 1, channel = 2, led = 2, x = 150.0, y = 0.0, zone = "line" }
"s0" = { board = 1, channel = 3, led = 3, x = 100.0, y = 100.0, zone = "rack" }
"s1" = { board = 1, channel = 4, led = 4, x = 100.0, y = -100.0, zone = "rack" }

[build]
led_max_level = 255  # the LED test reads back full levels
spi_baudrate = 4000000  # the bench's short cables: the emulated board as fast as before
"""
UID7 = bytes.fromhex("04a1b2c3d4e5f6")


def until(cond, timeout: float, step: float = 0.2):
    """Poll cond() until it returns something true (returned) or timeout (None)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            v = cond()
        except BoardError:
            v = None
        if v:
            return v
        time.sleep(step)
    return None


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    need(available() is None, f"emulated RP2040 boards: {available()}")
    tmp = tmp_path_factory.mktemp("rp2040")
    table_file = tmp / "t.toml"
    table_file.write_text(TABLE)
    geometry = TableGeometry.load(table_file)
    t0 = time.monotonic()
    vt = rp2040_table(geometry, seed=5, state_dir=tmp / "state", fresh=True)
    paths = vt.start()
    rig = {"vt": vt, "geometry": geometry, "paths": paths, "t0": t0, "tmp": tmp}
    try:
        yield rig
    finally:
        vt.stop()


def _board(rig: dict) -> Rp2040Board:
    b = rig["vt"].boards[1]
    assert isinstance(b, Rp2040Board)
    return b


def _payload(rig: dict, source: Path = dp.FIRMWARE_DIR) -> dp.Payload:
    return dp.build_payload(source, config=rig["geometry"].board_config(1))


def _firmware_running(rig: dict) -> str:
    """The board's path once it runs this tree's firmware and config.

    The tests below need a deployed board. In file order the deploy test has
    just done it and this is one no-change round trip; a test run alone (or
    after a failed deploy test) would otherwise start on the fixture's bare
    MicroPython and fail for want of firmware, not for what it tests."""
    path = rig["vt"].boards[1].path
    assert path is not None, "the board is unplugged"
    ident = dp.deploy(path, _payload(rig), confirm_timeout=60.0).identity
    assert ident is not None and ident.fw_version == dp.firmware_version()
    return path


def test_a_new_board_boots_bare_micropython(rig: dict) -> None:
    path = rig["paths"][1]
    assert wait_for_prompt(path, timeout=30.0)
    boot_s = time.monotonic() - rig["t0"]
    assert boot_s < 30.0  # the 2 s on an idle machine; here a loaded one is allowed
    (seen,) = [b for b in list_boards(extra_ports=[path]) if b.port == path]
    assert seen.state == STATE_MICROPYTHON
    with ReplSession(path, timeout=15) as s:
        machine = s.eval("__import__('sys').implementation._machine")
        uid = s.eval("__import__('machine').unique_id()")
        listing = s.eval("__import__('os').listdir('/')")
    assert machine == "Raspberry Pi Pico with RP2040"
    assert uid == _board(rig).uid  # the flash chip's unique id, answered by the NOR model
    assert listing == []  # a littlefs was made on the empty flash: the filesystem works


def test_deploy_then_handshake_then_unchanged_redeploy(rig: dict) -> None:
    path = rig["vt"].boards[1].path
    r = dp.deploy(path, _payload(rig), confirm_timeout=60.0)
    assert r.action == "deployed" and "main.py" in r.uploaded and "config.json" in r.uploaded
    with BoardClient(path, timeout=2.0) as c:
        ident = c.hello(retries=5)
    assert ident.board == 1
    assert ident.uid == _board(rig).uid
    assert ident.config_hash == rig["geometry"].config_hash(1)
    again = dp.deploy(path, _payload(rig), confirm_timeout=60.0)
    assert again.action == "up-to-date"


def test_a_sweep_sees_tags_placed_and_removed(rig: dict) -> None:
    vt = rig["vt"]
    path = _firmware_running(rig)
    with BoardClient(path, timeout=2.0) as c:
        c.hello(retries=5)
        assert until(lambda: c.snapshot()[1] is None, 60.0), "cells never read empty"
        vt.place("left-1", UID7)
        assert until(lambda: c.snapshot()[1] == UID7, 60.0), "the placed tag was not read"
        assert c.snapshot()[0] is None
        vt.remove("left-1")
        assert until(lambda: c.snapshot()[1] is None, 60.0), "the removed tag is still reported"
        stats, _errs = c.stats_request()
    assert stats["sweeps"] > 0 and stats["sweep_us"] > 0  # measured by the board on its own clock


def test_an_led_frame_comes_back_from_the_decoded_strip(rig: dict) -> None:
    vt = rig["vt"]
    board = _board(rig)
    frame = [(255, 0, 0), (0, 128, 0), (0, 0, 64), (1, 2, 3), (0, 0, 0), (10, 20, 30), (255, 255, 255), (7, 0, 7)]
    with BoardClient(_firmware_running(rig), timeout=2.0) as c:
        c.hello(retries=5)
        c.leds(frame)
    assert until(lambda: board.leds() == frame, 30.0), f"strip shows {board.leds()}"
    assert vt.leds("left-1") == (0, 128, 0)


def test_unplug_and_replug_keep_the_flash(rig: dict) -> None:
    vt = rig["vt"]
    board = _board(rig)
    old = _firmware_running(rig)
    vt.unplug(1)
    assert board.path is None and not board.running
    new = vt.replug(1)
    assert new != old or new is not None
    with BoardClient(new, timeout=2.0) as c:
        ident = until(lambda: c.hello(retries=0), 60.0)
    assert ident is not None, "the firmware did not come back after the replug"
    assert ident.uid == board.uid and ident.config_hash == rig["geometry"].config_hash(1)


def test_a_deploy_cut_mid_way_leaves_the_previous_firmware_running(rig: dict) -> None:
    vt = rig["vt"]
    newer = rig["tmp"] / "fw-newer"
    shutil.copytree(dp.FIRMWARE_DIR, newer)
    text = (newer / "board.py").read_text()
    (newer / "board.py").write_text(text.replace('FW_VERSION = "', 'FW_VERSION = "9.9.9-', 1))
    payload = _payload(rig, newer)
    assert payload.fw_version.startswith("9.9.9-")
    cut = threading.Event()

    def progress(what: str, done: int, total: int) -> None:
        if what == "upload" and done >= total // 3 and not cut.is_set():
            cut.set()
            vt.unplug(1)  # the cable comes out while files are being written

    running = _firmware_running(rig)  # the previous firmware the cut must not lose
    with pytest.raises(dp.DeployError):
        dp.deploy(running, payload, progress=progress, confirm_timeout=10.0)
    assert cut.is_set()
    path = vt.replug(1)
    with BoardClient(path, timeout=2.0) as c:
        ident = until(lambda: c.hello(retries=0), 60.0)
    assert ident is not None, "no firmware answers after the cut deploy"
    assert ident.fw_version == dp.firmware_version()  # the previous one
    # and its files are exactly the previous payload's: nothing to upload. (Not `action ==
    # "up-to-date"`: under load the emulated board can miss deploy's 1 s handshake, and deploy
    # then compares the files' hashes over the REPL, finds them equal and reports "deployed".)
    again = dp.deploy(path, _payload(rig), confirm_timeout=60.0)
    assert again.uploaded == [], again
