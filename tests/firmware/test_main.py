"""firmware/main.py on CPython with the fake machine module: real wiring from
a config file, the keyboard interrupt handling, the maintenance break."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from fw_support import Loopback

from tablesense.firmware import proto
from tablesense.sim import fake_machine
from tablesense.sim.mfrc522_emu import Emulated138, EmulatedCard, EmulatedMFRC522

REPO = Path(__file__).resolve().parents[2]
FIRMWARE = str(REPO / "firmware")
_NAMES = ("machine", "neopixel", "micropython", "main", "board", "config", "proto", "leds", "mfrc522")
UID7 = bytes.fromhex("04a1b2c3d4e5f6")


@pytest.fixture
def fw() -> Iterator[ModuleType]:
    """Import firmware/main.py as the board would (top-level modules), with
    the fakes installed; undo everything afterwards."""
    saved = {n: sys.modules.get(n) for n in _NAMES}
    for n in _NAMES:
        sys.modules.pop(n, None)
    fake_machine.reset_world()
    fake_machine.install()
    sys.path.insert(0, FIRMWARE)
    try:
        import main  # type: ignore[import-not-found]

        yield main
    finally:
        sys.path.remove(FIRMWARE)
        for n, m in saved.items():
            if m is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = m
        fake_machine.reset_world()


def write_config(tmp_path: Path, **cfg: Any) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"board": 4, **cfg}))
    return str(path)


def frames_of(t: Loopback) -> list[tuple[int, int, int, bytes]]:
    return t.frames


def test_main_wires_gpio_readers_and_leds_and_restores_kbd_intr(fw: ModuleType, tmp_path: Path) -> None:
    path = write_config(tmp_path, cells=3, leds=3, led_max_level=128, cs={"kind": "gpio", "pins": [17, 18, 19]})
    bus = fake_machine.SPI(0)
    chips = [bus.attach(fake_machine.Pin(p), EmulatedMFRC522()) for p in (17, 18, 19)]
    chips[1].place(EmulatedCard(UID7))
    seen: list[int] = []

    class Watching(Loopback):
        def read(self) -> bytes:
            seen.append(fake_machine.state["kbd_intr"])  # Ctrl-C state while framing
            return super().read()

    t = Watching()
    t.send(proto.HELLO, 1, b"\x01")
    t.send(proto.LEDS, 2, proto.encode_leds([(255, 0, 0), (0, 2, 0), (0, 0, 1)]))
    b = fw.main(path, t, max_steps=12)
    assert b is not None
    assert seen and set(seen) == {-1}
    assert fake_machine.calls[:2] == [("kbd_intr", -1), ("kbd_intr", 3)]
    assert fake_machine.state["kbd_intr"] == 3
    types = [f[0] for f in t.frames]
    assert types[0] == proto.BOOT and proto.IDENTITY in types
    cells = [proto.decode_cell_event(f[3]) for f in t.frames if f[0] == proto.CELL]
    assert sorted(cells) == [(0, None), (1, UID7), (2, None)]
    assert fake_machine.strips[0].written[-1] == [(128, 0, 0), (0, 1, 0), (0, 0, 0)]  # capped
    assert fake_machine.Pin(5).history[:2] == [0, 1]  # the readers' hard reset
    # MISO pulled up (RP2040 pads reset pulled down): a missing reader reads 0xFF
    assert fake_machine.Pin(4).pull == fake_machine.Pin.PULL_UP and bus.absent_miso == 0xFF


def test_main_through_a_74hc138_decoder(fw: ModuleType, tmp_path: Path) -> None:
    path = write_config(tmp_path, cells=12)
    P = fake_machine.Pin
    decoders = [Emulated138(P(6), P(7), P(8), P(en)) for en in (9, 10)]
    bus = fake_machine.SPI(0)
    chips = [bus.attach(decoders[ch // 8].output(ch % 8), EmulatedMFRC522()) for ch in range(12)]
    chips[11].place(EmulatedCard(UID7))
    t = Loopback()
    fw.main(path, t, max_steps=12 * 3)
    cells = dict(proto.decode_cell_event(f[3]) for f in t.frames if f[0] == proto.CELL)
    assert cells == {**{ch: None for ch in range(11)}, 11: UID7}
    assert bus.contention == 0


def test_main_through_mcp23017_expanders(fw: ModuleType, tmp_path: Path) -> None:
    from tablesense.sim.mfrc522_emu import EmulatedMCP23017

    path = write_config(tmp_path, cells=20, cs={"kind": "mcp23017", "addresses": [32, 33]})
    i2c = fake_machine.I2C(1)
    exps = [EmulatedMCP23017(), EmulatedMCP23017()]
    i2c.attach(32, exps[0])
    i2c.attach(33, exps[1])
    bus = fake_machine.SPI(0)
    chips = [bus.attach(exps[ch // 16].output(ch % 16), EmulatedMFRC522()) for ch in range(20)]
    chips[17].place(EmulatedCard(UID7))
    t = Loopback()
    fw.main(path, t, max_steps=20 * 3)
    cells = dict(proto.decode_cell_event(f[3]) for f in t.frames if f[0] == proto.CELL)
    assert cells[17] == UID7 and cells[3] is None and len(cells) == 20


def test_maintenance_break_returns_to_the_repl_with_ctrl_c_enabled(fw: ModuleType, tmp_path: Path) -> None:
    path = write_config(tmp_path, cells=1, cs={"kind": "gpio", "pins": [17]})

    class Stdin:
        """USB CDC input: bytes waiting in the host->board buffer."""

        def __init__(self, data: bytes) -> None:
            self.data = bytearray(data)

        def read(self, n: int) -> bytes:
            out = bytes(self.data[:n])
            del self.data[:n]
            return out

    class Poller:
        def __init__(self, stdin: Stdin) -> None:
            self.stdin = stdin

        def poll(self, timeout: int) -> list[int]:
            return [1] if self.stdin.data else []

    class Stdout:
        def __init__(self) -> None:
            self.data = bytearray()

        def write(self, b: bytes) -> int:
            self.data += b
            return len(b)

    ping = proto.encode_frame(proto.PING, 0, 1)
    stdin = Stdin(ping + b"\r\x03\r\x01")  # mpremote: Ctrl-C, then Ctrl-A
    stdout = Stdout()
    transport = fw.UsbTransport(stdin, stdout, Poller(stdin))
    b = fw.main(path, transport, max_steps=1000)
    assert b.maintenance and b.steps < 5
    assert fake_machine.state["kbd_intr"] == 3
    assert bytes(stdin.data) == b"\r\x01"  # left for the REPL's raw mode
    frames = proto.FrameDecoder().feed(bytes(stdout.data))
    assert [f[0] for f in frames][:2] == [proto.BOOT, proto.ACK]


def test_bad_config_prints_a_message_and_keeps_the_repl(fw: ModuleType, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path, cells=2, cs={"kind": "spaghetti"})
    assert fw.main(path, Loopback(), max_steps=5) is None
    assert "cs.kind" in capsys.readouterr().out
    assert fake_machine.calls == []  # kbd_intr never touched


def test_reboot_and_bootloader_call_machine(fw: ModuleType, tmp_path: Path) -> None:
    path = write_config(tmp_path, cells=1, cs={"kind": "gpio", "pins": [17]})
    t = Loopback()
    t.send(proto.REBOOT, 3)
    t.send(proto.BOOTLOADER, 4)
    fw.main(path, t, max_steps=4)
    # the first command wins (on a real board machine.reset() never returns)
    assert ("reset",) in fake_machine.calls and ("bootloader",) not in fake_machine.calls
    info_t = Loopback()
    info_t.send(proto.HELLO, 1, b"\x01")
    fw.main(path, info_t, max_steps=2)
    ident = proto.decode_identity([f for f in info_t.frames if f[0] == proto.IDENTITY][0][3])
    assert ident["uid"] == fake_machine.state["unique_id"]
    assert ident["caps"] & proto.CAP_BOOTLOADER


def test_file_hashes_cover_program_and_config(fw: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "main.py").write_bytes(b"print(1)\n")
    (tmp_path / "config.json").write_bytes(b"{}")
    (tmp_path / "notes.txt").write_bytes(b"x")
    import hashlib

    got = fw.file_hashes(str(tmp_path))
    assert got == [
        ("config.json", hashlib.sha256(b"{}").digest()),
        ("main.py", hashlib.sha256(b"print(1)\n").digest()),
    ]


def test_usb_transport_without_poll_reads_a_non_blocking_stdin(fw: ModuleType) -> None:
    class NonBlockingStdin:
        def __init__(self, data: bytes) -> None:
            self.data = bytearray(data)

        def read(self, n: int) -> bytes:  # b"" when nothing waits, like the wasm board
            out = bytes(self.data[:n])
            del self.data[:n]
            return out

    stdin = NonBlockingStdin(b"A" * 100 + b"\x03rest")
    t = fw.UsbTransport(stdin, object(), poller=object())
    t.poller = None
    assert t.read() == b"A" * 64  # at most READ_CHUNK per read
    assert t.read() == b"A" * 36 + b"\x03"  # stops right after 0x03
    assert bytes(stdin.data) == b"rest"
    stdin.data.clear()
    assert t.read() == b""


def test_usb_transport_polls_with_ipoll_when_the_port_has_it(fw: ModuleType) -> None:
    """MicroPython's ipoll() answers without allocating (poll() builds a list
    each call, once per board step): the transport uses it when it exists."""

    class Stdin:
        def __init__(self) -> None:
            self.data = bytearray()

        def read(self, n: int) -> bytes:
            out = bytes(self.data[:n])
            del self.data[:n]
            return out

    class IPoller:
        def __init__(self, stdin: Stdin) -> None:
            self.stdin = stdin
            self.calls = 0

        def poll(self, timeout: int) -> list[int]:
            raise AssertionError("poll() used although ipoll() exists")

        def ipoll(self, timeout: int) -> list[tuple[object, int]]:
            self.calls += 1
            return [(self.stdin, 1)] if self.stdin.data else []

    stdin = Stdin()
    poller = IPoller(stdin)
    t = fw.UsbTransport(stdin, object(), poller)
    assert t.read() == b"" and poller.calls == 1
    stdin.data += b"ab\x03cd"
    assert t.read() == b"ab\x03"  # stops right after 0x03
    assert t.read() == b"cd"
    assert t.read() == b""
    assert bytes(stdin.data) == b""


def test_main_survives_every_ctrl_c_that_comes_before_kbd_intr() -> None:
    """A host retrying HELLO while the board boots can put several 0x03 in
    the USB buffer before main.py's first statement turns Ctrl-C into data:
    each raises KeyboardInterrupt where it lands, even inside the handler
    of the one before. The guard takes them all and still disables Ctrl-C
    (seen on an emulated board: two of them left it at the REPL)."""
    source = (Path(__file__).resolve().parents[2] / "firmware" / "main.py").read_text()
    guard = source[: source.index("import sys  # after the Ctrl-C guard")]

    class Micropython(ModuleType):
        def __init__(self, interrupts: int) -> None:
            super().__init__("micropython")
            self.interrupts = interrupts
            self.calls: list[int] = []

        def kbd_intr(self, v: int) -> None:
            if self.interrupts:
                self.interrupts -= 1
                raise KeyboardInterrupt  # a 0x03 that arrived before this took effect
            self.calls.append(v)

    saved = sys.modules.get("micropython")
    try:
        for interrupts in (0, 1, 2, 5):
            fake = Micropython(interrupts)
            sys.modules["micropython"] = fake
            try:
                exec(compile(guard, "main.py", "exec"), {"__name__": "__main__"})  # the board's own first lines
            except KeyboardInterrupt:
                pytest.fail(f"{interrupts} early Ctrl-C: main.py stopped at its guard (the board at the REPL)")
            assert fake.calls == [-1] and fake.interrupts == 0
    finally:
        if saved is None:
            sys.modules.pop("micropython", None)
        else:
            sys.modules["micropython"] = saved
