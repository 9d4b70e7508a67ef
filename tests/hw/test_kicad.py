"""The KiCad sensor board: ERC/DRC clean, wired as hardware/pinmap.toml says, exportable.

The netlist test reads the schematic through kicad-cli (not through our
generator) and follows each RP2040 function from the Pico pad of its GPIO to
the parts it must reach, through the series resistors and the buffer gates on
the way: a pin moved in the pin map and not in the design (or the reverse)
fails, which the mutated-pin-map cases show.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

from tablesense.cli import app
from testsupport import REPO, need

KICAD_DIR = REPO / "hardware" / "kicad"
SCHEMATIC = KICAD_DIR / "sensor-board.kicad_sch"
BOARD = KICAD_DIR / "sensor-board.kicad_pcb"
KICAD_CLI = shutil.which("kicad-cli")
NO_KICAD = "kicad-cli (KiCad 9) is not installed: bash scripts/setup.sh dev installs it as root"

# pin numbers of the reader connector (the RC522 header order)
READER_PIN = {"cs": "1", "sck": "2", "mosi": "3", "miso": "4", "gnd": "6", "rst": "7", "vcc": "8"}
# gates a signal passes through: buffer input pin -> output pin (74LVC125 / 74AHCT125)
GATE_PINS = {"2": "3", "5": "6", "9": "8", "12": "11"}
BUFFER_PARTS = {"74LVC125", "74AHCT125"}
DECODER_ADDRESS_PINS = ("1", "2", "3")
DECODER_ENABLE_PIN = "4"  # the active-low /E1 (KiCad's symbol: ~E0)
DECODER_OUTPUT_PINS = ("15", "14", "13", "12", "11", "10", "9", "7")  # Y0..Y7
MISO_BUFFER_OE_PIN = "10"  # /OE of the gate 9 -> 8


@dataclass
class Netlist:
    """Nets and parts of the schematic as kicad-cli exports them."""

    nets: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    net_of: dict[tuple[str, str], str] = field(default_factory=dict)
    function_of: dict[tuple[str, str], str] = field(default_factory=dict)
    part: dict[str, str] = field(default_factory=dict)  # ref -> library part name
    channel: dict[int, str] = field(default_factory=dict)  # reader channel -> connector ref

    @classmethod
    def parse(cls, xml_text: str) -> Netlist:
        root = ET.fromstring(xml_text)
        netlist = cls()
        for comp in root.iter("comp"):
            ref = comp.get("ref", "")
            lib = comp.find("libsource")
            netlist.part[ref] = lib.get("part", "") if lib is not None else ""
            for f in comp.iter("field"):
                if f.get("name") == "Channel" and f.text is not None:
                    netlist.channel[int(f.text)] = ref
        for net in root.iter("net"):
            name = net.get("name", "")
            nodes = set()
            for node in net.iter("node"):
                key = (node.get("ref", ""), node.get("pin", ""))
                nodes.add(key)
                netlist.net_of[key] = name
                netlist.function_of[key] = node.get("pinfunction", "")
            netlist.nets[name] = nodes
        return netlist

    def pico(self) -> str:
        return next(ref for ref, part in self.part.items() if part == "RaspberryPi_Pico")

    def gpio_net(self, gpio: int) -> str | None:
        pico = self.pico()
        for (ref, pin), function in self.function_of.items():
            if ref == pico and function == f"GPIO{gpio}":
                return self.net_of[(ref, pin)]
        return None

    def refs_of(self, part: str) -> list[str]:
        return sorted(ref for ref, p in self.part.items() if p == part)

    def _through(self, ref: str, pin: str) -> str | None:
        """The pin on the other side of a series part (resistor between two signals, or a gate)."""
        part = self.part.get(ref, "")
        if part == "R":
            other = "2" if pin == "1" else "1"
            if any(self.net_of.get((ref, p), "").startswith(("/+", "/GND")) for p in ("1", "2")):
                return (
                    None  # a pull-up or pull-down joins a signal to a rail, not to another signal
                )
            return other
        if part in BUFFER_PARTS:
            outputs = {v: k for k, v in GATE_PINS.items()}
            return GATE_PINS.get(pin) or outputs.get(pin)
        return None

    def reach(self, net: str) -> set[tuple[str, str]]:
        """Every pin a signal on ``net`` reaches through series resistors and buffer gates."""
        seen_nets = {net}
        todo = [net]
        pins: set[tuple[str, str]] = set()
        while todo:
            current = todo.pop()
            for ref, pin in self.nets.get(current, set()):
                pins.add((ref, pin))
                other = self._through(ref, pin)
                if other is None:
                    continue
                nxt = self.net_of.get((ref, other))
                if nxt is not None and nxt not in seen_nets:
                    seen_nets.add(nxt)
                    todo.append(nxt)
        return pins


def pinmap_problems(netlist: Netlist, rp2040: dict) -> list[str]:
    """Every way the schematic and ``[rp2040]`` of the pin map disagree (empty: they agree)."""
    problems: list[str] = []
    readers = netlist.channel
    decoders = netlist.refs_of("74HC138")

    def gpio(name: str, number: int) -> str | None:
        net = netlist.gpio_net(number)
        if net is None or net.startswith("unconnected-"):
            problems.append(f"{name} (GP{number}): the Pico's GPIO{number} pad is not wired")
            return None
        return net

    for name, key in (
        ("spi_sck", "sck"),
        ("spi_mosi", "mosi"),
        ("spi_miso", "miso"),
        ("rfid_reset", "rst"),
    ):
        net = gpio(name, int(rp2040[name]))
        if net is None:
            continue
        reached = netlist.reach(net)
        missing = [ch for ch, ref in readers.items() if (ref, READER_PIN[key]) not in reached]
        if missing:
            problems.append(
                f"{name} (GP{rp2040[name]}) does not reach the {key.upper()} pin of reader(s) {missing}"
            )
        for other_key, pin in READER_PIN.items():
            if other_key != key and any((ref, pin) in reached for ref in readers.values()):
                problems.append(
                    f"{name} (GP{rp2040[name]}) reaches reader {other_key.upper()} pins too"
                )
    for i, number in enumerate(rp2040["decoder_address"]):
        net = gpio(f"decoder_address[{i}]", int(number))
        if net is None:
            continue
        missing = [d for d in decoders if (d, DECODER_ADDRESS_PINS[i]) not in netlist.nets[net]]
        if missing:
            problems.append(f"decoder_address[{i}] (GP{number}) does not reach A{i} of {missing}")
    for g, number in enumerate(rp2040["decoder_enables"]):
        net = gpio(f"decoder_enables[{g}]", int(number))
        if net is None:
            continue
        # the decoder of group g is the one whose outputs select channels 8g..8g+7
        owner = [
            d
            for d in decoders
            if all(
                (readers.get(8 * g + k, ""), READER_PIN["cs"])
                in netlist.nets.get(netlist.net_of.get((d, y), ""), set())
                for k, y in enumerate(DECODER_OUTPUT_PINS)
            )
        ]
        if len(owner) != 1:
            problems.append(f"no single 74HC138 selects channels {8 * g}-{8 * g + 7}")
            continue
        if (owner[0], DECODER_ENABLE_PIN) not in netlist.nets[net]:
            problems.append(
                f"decoder_enables[{g}] (GP{number}) does not reach /E1 (pin 4) of {owner[0]} (channels {8 * g}-{8 * g + 7})"
            )
        miso_of_group = netlist.net_of.get((readers.get(8 * g, ""), READER_PIN["miso"]), "")
        buffers = [
            ref
            for ref, pin in netlist.nets.get(miso_of_group, set())
            if netlist.part.get(ref) == "74LVC125"
        ]
        if not buffers or (buffers[0], MISO_BUFFER_OE_PIN) not in netlist.nets[net]:
            problems.append(
                f"decoder_enables[{g}] (GP{number}) does not enable the MISO buffer of channels {8 * g}-{8 * g + 7}"
            )
    net = gpio("led_data", int(rp2040["led_data"]))
    if net is not None:
        led_out = [
            ref for ref, part in netlist.part.items() if part == "Conn_01x02" and ref != "J1"
        ]
        reached = netlist.reach(net)
        if not led_out or (led_out[0], "1") not in reached:
            problems.append(
                f"led_data (GP{rp2040['led_data']}) does not reach the LED connector's DIN pin"
            )
        if not any(netlist.part.get(ref) == "74AHCT125" for ref, _ in reached):
            problems.append(
                f"led_data (GP{rp2040['led_data']}) does not pass the 74AHCT125 level shifter"
            )
    return problems


@pytest.fixture(scope="module")
def netlist(tmp_path_factory: pytest.TempPathFactory) -> Netlist:
    need(KICAD_CLI is not None, NO_KICAD)
    assert KICAD_CLI is not None
    out = tmp_path_factory.mktemp("kicad") / "sensor-board.xml"
    subprocess.run(
        [
            KICAD_CLI,
            "sch",
            "export",
            "netlist",
            "--format",
            "kicadxml",
            "-o",
            str(out),
            str(SCHEMATIC),
        ],
        check=True,
        capture_output=True,
    )
    return Netlist.parse(out.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def rp2040() -> dict:
    return tomllib.loads((REPO / "hardware" / "pinmap.toml").read_text(encoding="utf-8"))["rp2040"]


def test_the_schematic_follows_the_pin_map(netlist: Netlist, rp2040: dict) -> None:
    assert pinmap_problems(netlist, rp2040) == []
    assert len(netlist.channel) == 8 * len(rp2040["decoder_enables"]) == 32
    assert len(netlist.refs_of("74HC138")) == len(rp2040["decoder_enables"])


def _free_gpio(rp2040: dict) -> int:
    used = {rp2040[k] for k in ("spi_sck", "spi_mosi", "spi_miso", "rfid_reset", "led_data")}
    used |= set(rp2040["decoder_address"]) | set(rp2040["decoder_enables"])
    return next(n for n in range(29) if n not in used)


@pytest.mark.parametrize(
    ("key", "index", "expect"),
    [
        ("spi_sck", None, "spi_sck"),
        ("spi_mosi", None, "spi_mosi"),
        ("spi_miso", None, "spi_miso"),
        ("rfid_reset", None, "rfid_reset"),
        ("decoder_address", 1, "decoder_address[1]"),
        ("decoder_enables", 2, "decoder_enables[2]"),
        ("led_data", None, "led_data"),
    ],
)
def test_a_pin_moved_in_the_pin_map_only_fails(
    netlist: Netlist, rp2040: dict, key: str, index: int | None, expect: str
) -> None:
    moved = copy.deepcopy(rp2040)
    free = _free_gpio(rp2040)
    if index is None:
        moved[key] = free
    else:
        moved[key][index] = free
    problems = pinmap_problems(netlist, moved)
    assert any(p.startswith(expect) for p in problems), problems


def test_two_functions_swapped_in_the_pin_map_fail(netlist: Netlist, rp2040: dict) -> None:
    swapped = copy.deepcopy(rp2040)
    swapped["spi_mosi"], swapped["spi_miso"] = rp2040["spi_miso"], rp2040["spi_mosi"]
    problems = pinmap_problems(netlist, swapped)
    assert any(p.startswith("spi_mosi") for p in problems) and any(
        p.startswith("spi_miso") for p in problems
    )
    enables = copy.deepcopy(rp2040)
    enables["decoder_enables"] = list(reversed(rp2040["decoder_enables"]))
    assert any("decoder_enables[0]" in p for p in pinmap_problems(netlist, enables))


def _violations(report: Path) -> list[dict]:
    data = json.loads(report.read_text(encoding="utf-8"))
    found = list(data.get("violations", []))
    for sheet in data.get("sheets", []):
        found += sheet.get("violations", [])
    found += data.get("unconnected_items", []) + data.get("schematic_parity", [])
    return found


def test_erc_and_drc_report_nothing(tmp_path: Path) -> None:
    """Zero errors and zero warnings: nothing is waived (DRC includes schematic parity)."""
    need(KICAD_CLI is not None, NO_KICAD)
    assert KICAD_CLI is not None
    erc, drc = tmp_path / "erc.json", tmp_path / "drc.json"
    subprocess.run(
        [
            KICAD_CLI,
            "sch",
            "erc",
            "--format",
            "json",
            "--severity-all",
            "-o",
            str(erc),
            str(SCHEMATIC),
        ],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [
            KICAD_CLI,
            "pcb",
            "drc",
            "--format",
            "json",
            "--severity-all",
            "--schematic-parity",
            "-o",
            str(drc),
            str(BOARD),
        ],
        check=True,
        capture_output=True,
    )
    assert _violations(erc) == []
    assert _violations(drc) == []


def test_hw_export_writes_what_a_fab_and_a_maker_need(tmp_path: Path) -> None:
    need(KICAD_CLI is not None, NO_KICAD)
    out = tmp_path / "export"
    result = CliRunner().invoke(app, ["hw", "export", "--out", str(out)])
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(out / "sensor-board-gerbers.zip") as zf:
        names = zf.namelist()
    for suffix in (
        "F_Cu.gtl",
        "B_Cu.gbl",
        "F_Mask.gts",
        "B_Mask.gbs",
        "F_Silkscreen.gto",
        "Edge_Cuts.gm1",
        ".drl",
    ):
        assert any(n.endswith(suffix) for n in names), (suffix, names)
    bom = (out / "sensor-board-bom.csv").read_text(encoding="utf-8")
    readers = next(line for line in bom.splitlines() if "PinHeader_1x08" in line)
    assert readers.endswith('"32"')
    positions = (out / "sensor-board-positions.csv").read_text(encoding="utf-8").splitlines()
    assert positions[0].startswith("Ref,Val,Package,PosX,PosY,Rot,Side")
    assert any(line.startswith('"U1"') for line in positions)
    assert (out / "sensor-board-schematic.pdf").read_bytes().startswith(b"%PDF")
    assert "<svg" in (out / "sensor-board.svg").read_text(encoding="utf-8")[:2000]


def test_hw_export_without_kicad_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    result = CliRunner().invoke(app, ["hw", "export", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "kicad-cli is not installed" in result.output
    assert not (tmp_path / "x").exists()


def _kicad_module(name: str) -> ModuleType:
    """A script of hardware/kicad/, loaded under a name no other module uses."""
    key = f"hardware_kicad_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, KICAD_DIR / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


def test_docs_harness_tables_match_the_design() -> None:
    design, harness = _kicad_module("design"), _kicad_module("harness")
    expected = harness.markdown(design.Pinmap.load())
    doc = (REPO / "docs" / "kicad.md").read_text(encoding="utf-8")
    start, end = doc.index(harness.BEGIN), doc.index(harness.END) + len(harness.END)
    assert doc[start:end] + "\n" == expected, (
        "docs/kicad.md: run python3 hardware/kicad/harness.py and paste its output"
    )


def test_the_committed_schematic_is_what_the_generator_writes_from_the_pin_map() -> None:
    """A pin map edited without regenerating the board (or a hand-edited schematic) fails here."""
    symbols = Path("/usr/share/kicad/symbols")
    need(symbols.is_dir(), "KiCad's symbol libraries are not installed (kicad-symbols)")
    design, generate = _kicad_module("design"), _kicad_module("generate")
    parts = design.build(design.Pinmap.load())
    text, _uuids, _nets = generate.build_schematic(parts, generate.Library(symbols))
    assert text == SCHEMATIC.read_text(encoding="utf-8"), "run python3 hardware/kicad/generate.py"


def test_export_refuses_a_board_that_fails_drc(tmp_path: Path) -> None:
    """Every track of one chip select removed leaves it open: DRC reports it and no Gerbers are written."""
    need(KICAD_CLI is not None, NO_KICAD)
    assert KICAD_CLI is not None
    from tablesense.hw.cli import KicadError, kicad_exports

    design_dir = tmp_path / "kicad"
    shutil.copytree(KICAD_DIR, design_dir, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    pcb = design_dir / BOARD.name
    text = pcb.read_text(encoding="utf-8")
    net = re.search(r'\(net (\d+) "/CS00"\)', text)
    assert net is not None
    tracks = re.compile(r"\n\t\((?:segment|via)\n(?:\t\t[^\n]*\n)*?\t\t\(net " + net.group(1) + r"\)\n(?:\t\t[^\n]*\n)*?\t\)")
    cut, removed = tracks.subn("", text)
    assert removed > 0
    pcb.write_text(cut, encoding="utf-8")
    with pytest.raises(KicadError, match=r"(?s)kicad-cli pcb drc failed.*[1-9]\d* unconnected"):
        kicad_exports(KICAD_CLI, pcb, tmp_path / "out")
    assert not (tmp_path / "out" / "gerbers").exists()


def test_the_drawings_outline_is_the_boards() -> None:
    """hw/draw.py outlines each board with the PCB's size, so the maker sees
    which cells it passes under; a resized PCB must resize the outline."""
    from tablesense.hw.draw import BOARD_MM

    design = _kicad_module("design")
    assert BOARD_MM == (design.BOARD_W, design.BOARD_H)
