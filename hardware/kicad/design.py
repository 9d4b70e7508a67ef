"""The sensor board as data: parts, the net of every pin, and where each part sits.

One board serves one cluster of nearby cells: a Raspberry Pi Pico, one
74LVC138A chip-select decoder per enable pin of ``hardware/pinmap.toml`` (so
four decoders and 8 x 4 = 32 reader connectors), one 74LVC125 buffer per
decoder group (SCK, MOSI and reset out to the group's 8 readers, the group's
MISO back, enabled by the same pin that enables its decoder), a 5 V input with
polyfuse, TVS and reverse-polarity MOSFET, an AP63203 buck for the readers'
3.3 V and a 74AHCT125 for the WS2812 data. Every RP2040 pin comes from
``[rp2040]`` of the pin map, so the schematic, the PCB, the harness tables of
docs/kicad.md and the netlist test all follow that one file.

This module is plain Python (no KiCad import): ``generate.py`` turns it into
KiCad files and ``harness.py`` into the harness tables.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PINMAP = REPO / "hardware" / "pinmap.toml"

#: The RC522 module's 8-pin 2.54 mm header, pin 1 first (SDA is its chip
#: select in SPI mode). IRQ is not used: the firmware polls.
READER_PINS: tuple[str, ...] = ("SDA/NSS", "SCK", "MOSI", "MISO", "IRQ", "GND", "RST", "3.3V")
READERS_PER_DECODER = 8


@dataclass(frozen=True)
class Pinmap:
    """The GPIO numbers of ``[rp2040]`` the board is wired to."""

    sck: int
    mosi: int
    miso: int
    reset: int
    address: tuple[int, ...]
    enables: tuple[int, ...]
    led_data: int

    @classmethod
    def load(cls, path: Path = PINMAP) -> Pinmap:
        rp = tomllib.loads(path.read_text(encoding="utf-8"))["rp2040"]
        return cls(
            sck=int(rp["spi_sck"]),
            mosi=int(rp["spi_mosi"]),
            miso=int(rp["spi_miso"]),
            reset=int(rp["rfid_reset"]),
            address=tuple(int(p) for p in rp["decoder_address"]),
            enables=tuple(int(p) for p in rp["decoder_enables"]),
            led_data=int(rp["led_data"]),
        )


@dataclass
class Part:
    """One symbol unit set and its footprint.

    ``nets`` maps pin numbers to net names; a pin not in it is marked "not
    connected" in the schematic. ``at`` is the footprint position on the PCB
    in mm (x right, y down) and ``rot`` its rotation in degrees.
    """

    ref: str
    lib_id: str
    value: str
    footprint: str
    nets: dict[str, str]
    at: tuple[float, float]
    rot: float = 0.0
    description: str = ""
    mpn: str = ""
    in_bom: bool = True
    extra: dict[str, str] = field(default_factory=dict)
    #: schematic column (0 power, 1 Pico and LED, 2 + g decoder group g) and
    #: whether the symbol sits right of the previous one instead of below it
    section: int = 0
    beside: bool = False
    #: where the PCB prints the reference, relative to ``at`` (None: the footprint's default)
    ref_offset: tuple[float, float] | None = None


def cs_net(channel: int) -> str:
    return f"CS{channel:02d}"


def group_net(signal: str, group: int) -> str:
    return f"{signal}_G{group}"


# Board outline (mm) and the grid the rows of reader connectors sit on.
BOARD_W = 166.0
BOARD_H = 134.0
ROW_Y0 = 10.0
ROW_PITCH = 25.0
CONN_X0 = 80.0
CONN_PITCH = 10.5
PIN_PITCH = 2.54

PICO_PIN_OF_GPIO: dict[int, str] = {}  # filled from the KiCad symbol by generate.py


def build(pinmap: Pinmap) -> list[Part]:
    """Every part of the board, wired to the GPIOs of ``pinmap``."""
    if len(pinmap.address) != 3:
        raise ValueError("a 74HC138 has three address inputs: decoder_address needs 3 pins")
    parts: list[Part] = []
    gpio = {
        pinmap.sck: "SCK",
        pinmap.mosi: "MOSI",
        pinmap.miso: "MISO",
        pinmap.reset: "RFID_RST",
        pinmap.led_data: "LED_DATA_3V3",
    }
    for i, pin in enumerate(pinmap.address):
        gpio[pin] = f"A{i}"
    for g, pin in enumerate(pinmap.enables):
        gpio[pin] = f"EN{g}"
    if len(gpio) != 5 + len(pinmap.address) + len(pinmap.enables):
        raise ValueError("pinmap.toml [rp2040] uses one GPIO for two functions")

    # --- the Pico: pins by name (GPIOn), numbers looked up in the symbol.
    pico_nets = {f"GPIO{n}": net for n, net in gpio.items()}
    pico_nets |= {"VSYS": "VSYS", "GND": "GND"}
    # AGND (pin 33) stays open: it is the ADC's quiet ground, joined to GND on
    # the module, and the symbol types it as a power output like GND.
    parts.append(
        Part("U1", "MCU_Module:RaspberryPi_Pico", "RaspberryPi_Pico", "Module:RaspberryPi_Pico_Common_THT",
             pico_nets, at=(8.0, 10.0), description="Raspberry Pi Pico (RP2040 module)", mpn="SC0915")
    )

    # --- 5 V input: terminal, polyfuse, TVS, reverse-polarity P-MOSFET.
    parts += [
        Part("J1", "Connector_Generic:Conn_01x02", "5V IN", "TerminalBlock_Phoenix:TerminalBlock_Phoenix_MKDS-1,5-2-5.08_1x02_P5.08mm_Horizontal",
             {"1": "VIN_RAW", "2": "GND"}, at=(13.0, 123.0), description="5 V input (pin 1 +5 V, pin 2 GND)", mpn="Phoenix 1729128"),
        Part("F1", "Device:Polyfuse", "1.1A hold", "Fuse:Fuse_1812_4532Metric", {"1": "VIN_RAW", "2": "VIN_FUSED"},
             at=(27.0, 126.0), description="PTC 1.1 A hold / 2.2 A trip, 6 V", mpn="Bourns MF-MSMF110-2"),
        Part("D1", "Diode:SMAJ5.0A", "SMAJ5.0A", "Diode_SMD:D_SMA", {"1": "VIN_FUSED", "2": "GND"},
             at=(27.0, 118.0), description="TVS 5 V standoff, 9.2 V clamp", mpn="SMAJ5.0A"),
        Part("Q1", "Transistor_FET:AO3401A", "AO3401A", "Package_TO_SOT_SMD:SOT-23",
             {"1": "GND", "3": "VIN_FUSED", "2": "+5V"}, at=(35.0, 126.0),
             description="P-MOSFET reverse-polarity guard, 50 mOhm", mpn="AO3401A"),
        Part("C1", "Device:C_Polarized", "220uF 10V", "Capacitor_THT:CP_Radial_D8.0mm_P3.50mm", {"1": "+5V", "2": "GND"},
             at=(42.0, 121.0), description="5 V bulk", mpn="generic 220 uF 10 V radial"),
        Part("D2", "Diode:MBR0520", "MBR0520", "Diode_SMD:D_SOD-123", {"2": "+5V", "1": "VSYS"},
             at=(30.0, 70.0), rot=180, description="Schottky into the Pico's VSYS (no backfeed into USB)", mpn="MBR0520"),
    ]

    # --- the readers' 3.3 V: AP63203 buck (fixed 3.3 V, 2 A).
    parts += [
        Part("U10", "Regulator_Switching:AP63203WU", "AP63203WU", "Package_TO_SOT_SMD:TSOT-23-6",
             {"3": "+5V", "2": "+5V", "4": "GND", "5": "BUCK_SW", "6": "BUCK_BST", "1": "+3V3"},
             at=(56.0, 122.0), description="buck 3.3 V 2 A for the readers", mpn="AP63203WU-7"),
        Part("C2", "Device:C", "10uF", "Capacitor_SMD:C_1206_3216Metric", {"1": "+5V", "2": "GND"},
             at=(56.0, 125.1), description="buck input, right under VIN/GND", ref_offset=(0.0, 2.3), mpn="10 uF 16 V X7R 1206"),
        Part("C3", "Device:C", "100nF", "Capacitor_SMD:C_0805_2012Metric", {"1": "BUCK_BST", "2": "BUCK_SW"},
             at=(59.9, 120.2), rot=90, description="bootstrap", ref_offset=(0.0, -2.6), mpn="100 nF 50 V X7R 0805"),
        Part("L1", "Device:L", "4.7uH", "Inductor_SMD:L_Bourns-SRN6028", {"1": "BUCK_SW", "2": "+3V3"},
             at=(65.0, 122.0), description="buck inductor, Isat >= 2 A", mpn="Bourns SRN6028-4R7Y"),
        Part("C4", "Device:C", "22uF", "Capacitor_SMD:C_1206_3216Metric", {"1": "+3V3", "2": "GND"},
             at=(73.0, 119.0), rot=90, description="buck output", mpn="22 uF 10 V X7R 1206"),
        Part("C5", "Device:C", "22uF", "Capacitor_SMD:C_1206_3216Metric", {"1": "+3V3", "2": "GND"},
             at=(77.0, 119.0), rot=90, description="buck output", mpn="22 uF 10 V X7R 1206"),
    ]

    # --- WS2812 data: 74AHCT125 at 5 V (TTL input threshold), 330 ohm series.
    parts += [
        Part("U11", "74xx:74AHCT125", "74AHCT125", "Package_DIP:DIP-14_W7.62mm",
             {"1": "GND", "2": "LED_DATA_3V3", "3": "LED_DATA_5V",
              "4": "+5V", "5": "GND", "10": "+5V", "9": "GND", "13": "+5V", "12": "GND",
              "7": "GND", "14": "+5V"},
             at=(6.0, 76.0), description="3.3 V -> 5 V buffer for the LED data", mpn="SN74AHCT125N"),
        Part("C6", "Device:C", "100nF", "Capacitor_SMD:C_0805_2012Metric", {"1": "+5V", "2": "GND"},
             at=(17.0, 72.0), rot=90, description="decoupling U11", mpn="100 nF 50 V X7R 0805"),
        Part("R1", "Device:R", "330", "Resistor_SMD:R_0805_2012Metric", {"1": "LED_DATA_5V", "2": "LED_DIN"},
             at=(18.0, 84.0), rot=90, description="WS2812 data series resistor", mpn="330 ohm 0805"),
        Part("J2", "Connector_Generic:Conn_01x02", "LED OUT", "Connector_JST:JST_XH_B2B-XH-A_1x02_P2.50mm_Vertical",
             {"1": "LED_DIN", "2": "GND"}, at=(4.0, 100.0), rot=270, description="to the strip's DIN (pin 1) and GND (pin 2)",
             mpn="JST B2B-XH-A"),
    ]

    for part in parts:
        if part.ref in ("U1", "U11", "C6", "R1", "J2", "D2"):
            part.section = 1
    channel = 0
    for g, _enable in enumerate(pinmap.enables):
        first_of_group = len(parts)
        y = ROW_Y0 + g * ROW_PITCH
        dec, buf = f"U{2 + g}", f"U{6 + g}"
        dec_nets = {"1": "A0", "2": "A1", "3": "A2", "4": f"EN{g}", "5": "GND", "6": "+3V3",
                    "8": "GND", "16": "+3V3"}
        for k, pin in enumerate(("15", "14", "13", "12", "11", "10", "9", "7")):
            dec_nets[pin] = cs_net(channel + k)
        # the 74HC138 symbol (same pinout) carrying a 74LVC138A: its Ioff inputs let the Pico
        # (alive on USB power) drive them while the readers' rail is off, without back-powering it
        parts.append(Part(dec, "74xx:74HC138", "74LVC138A", "Package_SO:SOIC-16_3.9x9.9mm_P1.27mm", dec_nets,
                          at=(39.8, y + 8.9), description=f"chip selects of channels {channel}-{channel + 7}",
                          mpn="SN74LVC138AD"))
        parts.append(Part(buf, "74xx:74LVC125", "74LVC125", "Package_SO:SOIC-14_3.9x8.7mm_P1.27mm",
                          {"1": "GND", "2": "SCK", "3": group_net("SCK_BUF", g),
                           "4": "GND", "5": "MOSI", "6": group_net("MOSI_BUF", g),
                           "10": f"EN{g}", "9": group_net("MISO", g), "8": "MISO",
                           "13": "GND", "12": "RFID_RST", "11": group_net("RST", g),
                           "7": "GND", "14": "+3V3"},
                          at=(57.0, y + 9.0), description=f"SPI buffer of group {g}", mpn="SN74LVC125AD"))
        parts += [
            Part(f"C{10 + 2 * g}", "Device:C", "100nF", "Capacitor_SMD:C_0805_2012Metric", {"1": "+3V3", "2": "GND"},
                 at=(46.0, y - 2.5), description=f"decoupling {dec}", mpn="100 nF 50 V X7R 0805"),
            Part(f"C{11 + 2 * g}", "Device:C", "100nF", "Capacitor_SMD:C_0805_2012Metric", {"1": "+3V3", "2": "GND"},
                 at=(57.0, y + 1.5), description=f"decoupling {buf}", mpn="100 nF 50 V X7R 0805"),
            Part(f"R{10 + 3 * g}", "Device:R", "33", "Resistor_SMD:R_0805_2012Metric",
                 {"1": group_net("SCK_BUF", g), "2": group_net("SCK", g)}, at=(68.0, y + 3.0),
                 description="SCK series resistor (damps ringing on the ribbon stubs)", mpn="33 ohm 0805"),
            Part(f"R{11 + 3 * g}", "Device:R", "33", "Resistor_SMD:R_0805_2012Metric",
                 {"1": group_net("MOSI_BUF", g), "2": group_net("MOSI", g)}, at=(68.0, y + 7.0),
                 description="MOSI series resistor", mpn="33 ohm 0805"),
            Part(f"R{12 + 3 * g}", "Device:R", "10k", "Resistor_SMD:R_0805_2012Metric",
                 {"1": "+3V3", "2": group_net("MISO", g)}, at=(68.0, y + 11.0),
                 description="MISO pull-up: an absent reader reads 0xFF", mpn="10 kohm 0805"),
        ]
        for k in range(READERS_PER_DECODER):
            x = CONN_X0 + k * CONN_PITCH
            nets = {"1": cs_net(channel), "2": group_net("SCK", g), "3": group_net("MOSI", g),
                    "4": group_net("MISO", g), "6": "GND", "7": group_net("RST", g), "8": "+3V3"}
            parts.append(Part(f"J{10 + channel}", "Connector_Generic:Conn_01x08", "RC522 reader",
                              "Connector_PinHeader_2.54mm:PinHeader_1x08_P2.54mm_Vertical", nets, at=(x, y),
                              description=f"RC522 reader of channel {channel}", mpn="2.54 mm 1x8 pin header",
                              extra={"Channel": str(channel)}))
            parts.append(Part(f"C{20 + channel}", "Device:C", "1uF", "Capacitor_SMD:C_0805_2012Metric",
                              {"1": "+3V3", "2": "GND"}, at=(x + 4.0, y + 6 * PIN_PITCH), rot=90,
                              description=f"decoupling at reader connector {channel}", mpn="1 uF 16 V X7R 0805",
                              beside=True))
            channel += 1
        for part in parts[first_of_group:]:
            part.section = 2 + g
    for i, (hx, hy) in enumerate(((4.0, 4.0), (BOARD_W - 4.0, 4.0), (4.0, BOARD_H - 4.0), (BOARD_W - 4.0, BOARD_H - 4.0))):
        parts.append(Part(f"H{i + 1}", "Mechanical:MountingHole", "M3", "MountingHole:MountingHole_3.2mm_M3", {},
                          at=(hx, hy), description="M3 mounting hole", in_bom=False, section=1))
    return parts
