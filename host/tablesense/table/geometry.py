"""Table geometry: where every cell of a table is and which reader senses it.

A table is described by a TOML file under ``hardware/tables/``. It names the
sensor boards (their header id, channel count and LED strip length), every
cell (board, reader channel, LED index, position in mm, zone), the seats (rack
cells, GPIO pins) and the game tracks built from cells: the dominoes line of
play (a centre cell and two arms in outward order), the 2-seat boneyard and
the four Kems board slots.

The link uses it to turn ``(board, channel)`` readings into cell readings,
the referee to know what a cell means, the flasher to write each board's
config file (:meth:`TableGeometry.board_config`), and the virtual table to
build boards that match. :meth:`TableGeometry.load` checks the file as a whole
and raises one :class:`GeometryError` listing *every* problem it found, so a
table builder fixes the file in one go.

The file format::

    name = "dominoes-4"
    games = ["dominoes"]
    referee_button_pin = 3           # BCM numbering
    display_rotation = 90            # optional: the table's screen turned (0, 90, 180, 270)
    display_output = "DSI-1"         # optional: which screen (DSI-1, HDMI-A-1, ...)

    [[boards]]
    id = 1                           # 1..254, the board byte of every frame
    name = "line"
    channels = 32                    # readers on the board (16 or 32 here)
    leds = 32                        # WS2812 strip length (0 = no LEDs)
    usb_serial = "e6614103e7..."     # optional: pin this board to a USB serial
    x = 350.0                        # optional: where the board sits (mm), for
    y = 700.0                        #   the cable lengths `hw check` measures

    [build]                          # optional: what a builder tunes (defaults shown)
    spi_baudrate = 2000000           # SPI clock of every board (Hz)
    led_max_level = 85               # cap of every LED channel, 0..255 (85: 1/3 of full)
    rx_gain_db = 33                  # MFRC522 receiver gain; written only when set
    antenna_mm = 40.0                # side of each reader's square antenna loop
    tag_mm = 10.0                    # diameter of the tags' antennas
    tag_height_mm = 4.0              # tag above the antenna plane (table top + tile)
    read_range_mm = 20.0             # on-axis range of that tag, measured at bring-up

    [[seats]]
    index = 0
    name = "South"
    turn_led_pin = 4
    button_pin = 17
    call_button_pin = 27
    rack = ["seat0-1", "seat0-2", ...]

    [line]
    center = "center"
    left = ["left-1", ...]           # outward order
    right = ["right-1", ...]

    boneyard = [...]                 # top level, optional
    kems_slots = [...]               # top level, four cells for Kems tables
    stock = [...]                    # top level, optional: a remote-play table's
                                     #   face-down stock (every piece of the set
                                     #   lies there before the deal; docs/remote.md)

    [cells]
    center = { board = 1, channel = 0, led = 0, x = 600.0, y = 600.0, zone = "line" }
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tablesense.table.antenna import FieldModel
from tablesense.table.words import say

#: A cell's name in the geometry file, e.g. ``"left-3"`` or ``"seat2-5"``.
CellId = str

#: Zones a cell may belong to.
ZONES = ("line", "rack", "boneyard", "kems_slot", "stock", "spare")

#: BCM GPIO numbers usable for buttons and LEDs on a Raspberry Pi header.
BCM_PINS = frozenset(range(2, 28))

#: Where the shipped layouts live: ``hardware/tables`` of the repository, which
#: the package carries as ``tablesense/hardware`` (a link in a checkout, a copy
#: in an installed wheel), so ``--table dominoes-4`` works on a Pi too.
TABLES_DIR = Path(__file__).resolve().parent.parent / "hardware" / "tables"

#: The turns a compositor can give a screen (kanshi's and wayfire's transform).
DISPLAY_ROTATIONS = (0, 90, 180, 270)

#: Receiver gains the MFRC522 offers (RFCfgReg.RxGain), in dB.
RX_GAINS_DB = (18, 23, 33, 38, 43, 48)

#: Version of the board config file format written by :meth:`TableGeometry.board_config`.
BOARD_CONFIG_FORMAT = "tablesense.board/1"


class GeometryError(ValueError):
    """A geometry file that cannot be used; ``.problems`` lists every problem."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        # the problems name the file's own keys and values (TOML, seat indexes
        # as written): only the sentence around them is translated
        super().__init__(
            say("{source}: {n} problem(s) in the table geometry:\n{lines}",
                source=source, n=len(self.problems), lines=lines)
        )


@dataclass(frozen=True)
class CellGeometry:
    """One sensed cell: one reader channel on one board, one LED, one place."""

    id: CellId
    board: int
    channel: int
    led: int | None
    x: float
    y: float
    zone: str
    seat: int | None = None


@dataclass(frozen=True)
class BoardGeometry:
    """One sensor board: ``id`` is the board byte in every frame header."""

    id: int
    name: str
    channels: int
    leds: int
    usb_serial: str | None = None
    x: float | None = None
    y: float | None = None

    @property
    def position(self) -> tuple[float, float] | None:
        """Where the board sits under the table (mm), if the file says."""
        return None if self.x is None or self.y is None else (self.x, self.y)


@dataclass(frozen=True)
class BuildSettings:
    """What a builder tunes for the parts chosen (the ``[build]`` table).

    The defaults are the reference build of docs/build-guide.md: 2 MHz SPI
    (the clock the cable estimate of hardware/wiring.md allows), LEDs capped
    at a third of full (20 mA a LED, the power budget's figure), RC522-sized
    antennas and 10 mm NTAG stickers 4 mm above them. ``rx_gain_db`` stays
    None (the chip's reset gain, 33 dB) unless the file sets it.
    """

    spi_baudrate: int = 2_000_000
    led_max_level: int = 85
    rx_gain_db: int | None = None
    antenna_mm: float = 40.0
    tag_mm: float = 10.0
    tag_height_mm: float = 4.0
    read_range_mm: float = 20.0

    def field_model(self) -> FieldModel:
        """The coupling model of these antennas and tags (table/antenna.py)."""
        return FieldModel(self.antenna_mm, self.tag_mm, self.tag_height_mm, self.read_range_mm)


@dataclass(frozen=True)
class SeatGeometry:
    """A seat: its rack (one cell per tile or card, face down) and its GPIO pins (BCM)."""

    index: int
    name: str
    rack: list[CellId]
    turn_led_pin: int | None
    button_pin: int | None
    call_button_pin: int | None
    led_cells: list[CellId] = field(default_factory=list)


@dataclass(frozen=True)
class LineGeometry:
    """The dominoes line of play: tiles go on the next free cell of an arm."""

    center: CellId
    left: list[CellId]
    right: list[CellId]

    def arm(self, end: str) -> list[CellId]:
        """Cells of one arm (``"left"`` or ``"right"``) in outward order."""
        if end == "left":
            return self.left
        if end == "right":
            return self.right
        raise ValueError(f"no arm {end!r}: use 'left' or 'right'")

    def track(self, end: str) -> list[CellId]:
        """The cells a play on ``end`` uses, in order: the arm's own cells, then, when
        a long arm runs out of track, the far end of the other arm inward (the other
        arm grows from the centre outward, so the two meet only when the track has
        no cell left at all)."""
        other = "right" if end == "left" else "left"
        return [*self.arm(end), *reversed(self.arm(other))]

    @property
    def cells(self) -> list[CellId]:
        """Every cell of the line, left arm outermost first, then centre, then right arm."""
        return [*reversed(self.left), self.center, *self.right]


@dataclass(frozen=True)
class TableGeometry:
    """A whole table layout, validated. Build it with :meth:`load` or :meth:`from_dict`."""

    name: str
    games: list[str]
    boards: list[BoardGeometry]
    cells: dict[CellId, CellGeometry]
    seats: list[SeatGeometry]
    line: LineGeometry | None = None
    boneyard: list[CellId] = field(default_factory=list)
    kems_slots: list[CellId] = field(default_factory=list)
    #: Remote play (docs/remote.md): the cells where the whole set lies face
    #: down before the deal, and where the remote seats' pieces and the
    #: boneyard stay; empty on a table that plays only its own seats.
    stock: list[CellId] = field(default_factory=list)
    referee_button_pin: int | None = None
    #: How the table's screen is turned, in degrees clockwise, and its name as
    #: the compositor knows it: scripts/install-pi.sh writes them into the
    #: desktop's display settings, so a screen mounted sideways reads upright.
    display_rotation: int = 0
    display_output: str = "DSI-1"
    build: BuildSettings = field(default_factory=BuildSettings)
    source: str = "<dict>"

    # --- construction ------------------------------------------------------

    @classmethod
    def load(cls, path: str | Path) -> TableGeometry:
        """Read and validate a geometry TOML file.

        ``path`` may also be the bare name of a shipped layout (``"dominoes-4"``).
        Raises :class:`GeometryError` (listing every problem) or ``FileNotFoundError``.
        """
        p = Path(path)
        if not p.exists() and not p.suffix and (TABLES_DIR / f"{p.name}.toml").exists():
            p = TABLES_DIR / f"{p.name}.toml"
        try:
            raw = p.read_bytes()
        except FileNotFoundError:
            raise FileNotFoundError(say("no table geometry file at {path!r}", path=str(path))) from None
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise GeometryError(str(p), [f"not valid TOML: {exc}"]) from None
        except ValueError as exc:  # a number of thousands of digits
            raise GeometryError(str(p), [f"not a usable number: {str(exc)[:90]}"]) from None
        except RecursionError:
            raise GeometryError(str(p), ["arrays or tables nested too deeply to be a table geometry"]) from None
        try:
            return cls.from_dict(data, source=str(p))
        except RecursionError:
            raise GeometryError(str(p), ["values nested too deeply to be a table geometry"]) from None

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "<dict>") -> TableGeometry:
        """Validate a parsed geometry (the TOML document as a dict)."""
        return _Parser(data, source).parse()

    # --- queries ------------------------------------------------------------

    def board(self, board_id: int) -> BoardGeometry:
        """The board with this header id; ``KeyError`` if the table has none."""
        for b in self.boards:
            if b.id == board_id:
                return b
        raise KeyError(f"table {self.name!r} has no board {board_id}")

    def cell_at(self, board: int, channel: int) -> CellGeometry | None:
        """The cell sensed by ``channel`` of ``board``, or None for an unused channel."""
        return self._by_channel().get((board, channel))

    def cells_of_board(self, board_id: int) -> list[CellGeometry]:
        """The cells a board senses, by channel."""
        return sorted(
            (c for c in self.cells.values() if c.board == board_id), key=lambda c: c.channel
        )

    def seat_of(self, cell_id: CellId) -> int | None:
        """The seat whose rack holds this cell, or None."""
        return self.cells[cell_id].seat

    def zone_cells(self, zone: str) -> list[CellId]:
        return [c.id for c in self.cells.values() if c.zone == zone]

    def board_config(self, board_id: int) -> dict[str, Any]:
        """The config file the flasher writes to a board (``config.json`` on the board).

        ``channel_leds[ch]`` is the LED index of channel ``ch`` (-1 = none);
        ``cells`` is the number of reader channels the board scans. The SPI
        clock and the LED cap come from the file's ``[build]`` table (its
        defaults when absent); the receiver gain only when the file sets it,
        so a board keeps its chip's reset gain otherwise. Debounce and
        chip-select wiring keep the firmware's defaults unless a later format adds them.
        """
        b = self.board(board_id)
        channel_leds = [-1] * b.channels
        for c in self.cells_of_board(board_id):
            if c.led is not None:
                channel_leds[c.channel] = c.led
        config: dict[str, Any] = {
            "format": BOARD_CONFIG_FORMAT,
            "board": b.id,
            "name": b.name,
            "table": self.name,
            "cells": b.channels,
            "leds": b.leds,
            "channel_leds": channel_leds,
            "spi": {"baudrate": self.build.spi_baudrate},
            "led_max_level": self.build.led_max_level,
        }
        if self.build.rx_gain_db is not None:
            config["rfid"] = {"rx_gain_db": self.build.rx_gain_db}
        return config

    def board_config_bytes(self, board_id: int) -> bytes:
        """The exact bytes of the board config file (canonical JSON), so the
        host and the board compute the same config hash."""
        return config_bytes(self.board_config(board_id))

    def config_hash(self, board_id: int) -> bytes:
        """First 4 bytes of sha256 of the config file: what IDENTITY reports."""
        return hashlib.sha256(self.board_config_bytes(board_id)).digest()[:4]

    def _by_channel(self) -> dict[tuple[int, int], CellGeometry]:
        cache = self.__dict__.get("_channel_index")
        if cache is None:
            cache = {(c.board, c.channel): c for c in self.cells.values()}
            object.__setattr__(self, "_channel_index", cache)
        return cache


def config_bytes(config: dict[str, Any]) -> bytes:
    """Canonical JSON of a board config (sorted keys, no spaces, UTF-8)."""
    return json.dumps(config, sort_keys=True, separators=(",", ":")).encode("utf-8")


def shipped_tables() -> list[Path]:
    """The layouts in hardware/tables/, sorted by name."""
    return sorted(TABLES_DIR.glob("*.toml"))


# --- validation ---------------------------------------------------------------


class _Parser:
    """Reads a geometry dict, collecting every problem instead of stopping at the first."""

    def __init__(self, data: dict[str, Any], source: str) -> None:
        self.data = data
        self.source = source
        self.problems: list[str] = []

    def bad(self, msg: str) -> None:
        self.problems.append(msg)

    def _int(self, where: str, value: Any, lo: int, hi: int, optional: bool = False) -> int | None:
        if value is None:
            if not optional:
                self.bad(f"{where} is missing")
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.bad(f"{where} must be an integer, not {_short(value)}")
            return None
        if not lo <= value <= hi:
            self.bad(f"{where} = {_short(value)} is outside {lo}..{hi}")
            return None
        return value

    def _str(self, where: str, value: Any, optional: bool = False) -> str | None:
        if value is None:
            if not optional:
                self.bad(f"{where} is missing")
            return None
        if not isinstance(value, str) or not value:
            self.bad(f"{where} must be a non-empty string, not {value!r}")
            return None
        return value

    def _cell_list(self, where: str, value: Any, cells: dict[str, CellGeometry]) -> list[CellId]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.bad(f"{where} must be a list of cell names")
            return []
        out: list[CellId] = []
        for item in value:
            if not isinstance(item, str):
                self.bad(f"{where}: {item!r} is not a cell name")
            elif item not in cells:
                self.bad(f"{where}: unknown cell {item!r}")
            else:
                out.append(item)
        return out

    def _unknown_keys(self, where: str, table: dict[str, Any], allowed: Iterable[str]) -> None:
        extra = sorted(set(table) - set(allowed))
        if extra:
            self.bad(f"{where}: unknown key(s) {', '.join(extra)}")

    def parse(self) -> TableGeometry:
        d = self.data
        self._unknown_keys(
            "top level",
            d,
            (
                "name",
                "games",
                "boards",
                "cells",
                "seats",
                "line",
                "boneyard",
                "kems_slots",
                "stock",
                "referee_button_pin",
                "display_rotation",
                "display_output",
                "notes",
                "build",
            ),
        )
        name = self._str("name", d.get("name")) or "?"
        games_raw = d.get("games")
        games: list[str] = []
        if not isinstance(games_raw, list) or not games_raw:
            self.bad('games must be a non-empty list, e.g. ["dominoes"]')
        else:
            # which games exist, and what each needs of a table (a line, four
            # board slots), is the games room's and the referee's to say: the
            # table room knows no game (the referee refuses a layout that does
            # not fit the game it is asked to play)
            for g in games_raw:
                if not isinstance(g, str) or not g:
                    self.bad(f"games: a game is named by a string, not {g!r}")
                else:
                    games.append(g)

        boards = self._boards(d.get("boards"))
        board_by_id = {b.id: b for b in boards}
        cells = self._cells(d.get("cells"), board_by_id)
        seats = self._seats(d.get("seats"), cells)
        line = self._line(d.get("line"), cells)
        boneyard = self._cell_list("boneyard", d.get("boneyard"), cells)
        kems_slots = self._cell_list("kems_slots", d.get("kems_slots"), cells)
        stock = self._cell_list("stock", d.get("stock"), cells)
        referee_pin = self._int(
            "referee_button_pin", d.get("referee_button_pin"), 0, 27, optional=True
        )
        rotation = d.get("display_rotation", 0)
        if rotation not in DISPLAY_ROTATIONS or isinstance(rotation, bool):
            self.bad(f"display_rotation must be one of 0, 90, 180, 270, not {rotation!r}")
            rotation = 0
        output = self._str("display_output", d.get("display_output"), optional=True) or "DSI-1"
        build = self._build(d.get("build"))

        if not seats:
            self.bad("the table has no seats")

        # Every track cell belongs to exactly one track, and zones agree.
        owner: dict[str, str] = {}

        def claim(cell: str, what: str, zone: str) -> None:
            if cell in owner:
                self.bad(f"cell {cell!r} is in both {owner[cell]} and {what}")
                return
            owner[cell] = what
            c = cells.get(cell)
            if c is not None and c.zone != zone:
                self.bad(
                    f"cell {cell!r} is in {what} but its zone is {c.zone!r}, expected {zone!r}"
                )

        if line is not None:
            claim(line.center, "the line centre", "line")
            for end, arm in (("left", line.left), ("right", line.right)):
                for c in arm:
                    claim(c, f"the {end} arm", "line")
        for c in boneyard:
            claim(c, "the boneyard", "boneyard")
        for c in kems_slots:
            claim(c, "the kems slots", "kems_slot")
        for c in stock:
            claim(c, "the stock", "stock")
        for s in seats:
            for c in s.rack:
                claim(c, f"seat {s.index}'s rack", "rack")
        for c in cells.values():
            if c.zone != "spare" and c.id not in owner:
                self.bad(f"cell {c.id!r} (zone {c.zone!r}) is in no rack or track")

        # GPIO pins: each used once.
        pins: dict[int, str] = {}
        for s in seats:
            for label, pin in (
                ("turn LED", s.turn_led_pin),
                ("button", s.button_pin),
                ("call button", s.call_button_pin),
            ):
                if pin is None:
                    continue
                if pin in pins:
                    self.bad(f"GPIO {pin} is used by both {pins[pin]} and seat {s.index}'s {label}")
                else:
                    pins[pin] = f"seat {s.index}'s {label}"
        if referee_pin is not None and referee_pin in pins:
            self.bad(
                f"GPIO {referee_pin} is used by both {pins[referee_pin]} and the referee button"
            )

        # Seat cells carry their seat index.
        seat_of = {c: s.index for s in seats for c in s.rack}
        cells = {cid: _with_seat(c, seat_of.get(cid)) for cid, c in cells.items()}

        if self.problems:
            raise GeometryError(self.source, self.problems)
        return TableGeometry(
            name=name,
            games=games,
            boards=boards,
            cells=cells,
            seats=seats,
            line=line,
            boneyard=boneyard,
            kems_slots=kems_slots,
            stock=stock,
            referee_button_pin=referee_pin,
            display_rotation=rotation,
            display_output=output,
            build=build,
            source=self.source,
        )

    def _boards(self, raw: Any) -> list[BoardGeometry]:
        if not isinstance(raw, list) or not raw:
            self.bad("boards must be a non-empty array of [[boards]] tables")
            return []
        out: list[BoardGeometry] = []
        seen_serials: dict[str, int] = {}
        for i, b in enumerate(raw):
            where = f"boards[{i}]"
            if not isinstance(b, dict):
                self.bad(f"{where} must be a table")
                continue
            self._unknown_keys(where, b, ("id", "name", "channels", "leds", "usb_serial", "x", "y"))
            bid = self._int(f"{where}.id", b.get("id"), 1, 254)
            name = self._str(f"{where}.name", b.get("name"), optional=True)
            channels = self._int(f"{where}.channels", b.get("channels"), 1, 64)
            leds = self._int(f"{where}.leds", b.get("leds", 0), 0, 1024)
            serial = self._str(f"{where}.usb_serial", b.get("usb_serial"), optional=True)
            x = self._mm(f"{where}.x", b.get("x"), -10_000.0, 10_000.0)
            y = self._mm(f"{where}.y", b.get("y"), -10_000.0, 10_000.0)
            if (x is None) != (y is None):
                self.bad(f"{where}: a board's position needs both x and y")
                x = y = None
            if bid is None or channels is None or leds is None:
                continue
            if any(o.id == bid for o in out):
                self.bad(f"{where}: duplicate board id {bid}")
                continue
            if serial is not None:
                if serial in seen_serials:
                    self.bad(
                        f"{where}: USB serial {serial!r} is also board {seen_serials[serial]}'s"
                    )
                seen_serials[serial] = bid
            out.append(BoardGeometry(bid, name or f"board-{bid}", channels, leds, serial, x, y))
        return out

    def _mm(self, where: str, value: Any, lo: float, hi: float) -> float | None:
        """An optional length or coordinate in mm (int or float)."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.bad(f"{where} must be a number (mm), not {_short(value)}")
            return None
        if not lo <= value <= hi:
            self.bad(f"{where} = {_short(value)} is outside {lo:g}..{hi:g}")
            return None
        return float(value)

    def _build(self, raw: Any) -> BuildSettings:
        """The optional ``[build]`` table; absent keys keep their defaults."""
        defaults = BuildSettings()
        if raw is None:
            return defaults
        if not isinstance(raw, dict):
            self.bad("build must be a table of settings ([build])")
            return defaults
        self._unknown_keys("build", raw, BuildSettings.__dataclass_fields__)
        baud = self._int("build.spi_baudrate", raw.get("spi_baudrate", defaults.spi_baudrate), 100_000, 10_000_000)
        level = self._int("build.led_max_level", raw.get("led_max_level", defaults.led_max_level), 0, 255)
        gain = self._int("build.rx_gain_db", raw.get("rx_gain_db"), 0, 48, optional=True)
        if gain is not None and gain not in RX_GAINS_DB:
            self.bad(f"build.rx_gain_db = {gain} is not a gain the MFRC522 offers ({', '.join(map(str, RX_GAINS_DB))})")
            gain = None
        sizes = {
            key: self._mm(f"build.{key}", raw.get(key), lo, hi)
            for key, lo, hi in (
                ("antenna_mm", 10.0, 150.0),
                ("tag_mm", 3.0, 100.0),
                ("tag_height_mm", 0.0, 50.0),
                ("read_range_mm", 1.0, 200.0),
            )
        }
        chosen = {k: v if v is not None else float(getattr(defaults, k)) for k, v in sizes.items()}
        if chosen["read_range_mm"] <= chosen["tag_height_mm"]:
            self.bad(
                f"build.read_range_mm = {chosen['read_range_mm']:g} must exceed build.tag_height_mm = "
                f"{chosen['tag_height_mm']:g}: a tag that does not answer at its own height is never read"
            )
        return BuildSettings(
            spi_baudrate=baud if baud is not None else defaults.spi_baudrate,
            led_max_level=level if level is not None else defaults.led_max_level,
            rx_gain_db=gain,
            antenna_mm=chosen["antenna_mm"],
            tag_mm=chosen["tag_mm"],
            tag_height_mm=chosen["tag_height_mm"],
            read_range_mm=chosen["read_range_mm"],
        )

    def _cells(self, raw: Any, boards: dict[int, BoardGeometry]) -> dict[str, CellGeometry]:
        if not isinstance(raw, dict) or not raw:
            self.bad("cells must be a non-empty [cells] table")
            return {}
        out: dict[str, CellGeometry] = {}
        channels_used: dict[tuple[int, int], str] = {}
        leds_used: dict[tuple[int, int], str] = {}
        for cid, c in raw.items():
            where = f"cell {cid!r}"
            if not isinstance(c, dict):
                self.bad(f"{where} must be an inline table")
                continue
            self._unknown_keys(where, c, ("board", "channel", "led", "x", "y", "zone"))
            board = self._int(f"{where}.board", c.get("board"), 1, 254)
            channel = self._int(f"{where}.channel", c.get("channel"), 0, 255)
            led = self._int(f"{where}.led", c.get("led"), 0, 1023, optional=True)
            xy: list[float] = []
            for axis in ("x", "y"):
                v = c.get(axis)
                if isinstance(v, bool) or not isinstance(v, int | float):
                    self.bad(f"{where}.{axis} must be a number (mm), not {v!r}")
                else:
                    xy.append(float(v))
            zone = c.get("zone")
            if zone not in ZONES:
                self.bad(f"{where}.zone {zone!r} is not one of {', '.join(ZONES)}")
            if board is None or channel is None or len(xy) != 2 or zone not in ZONES:
                continue
            b = boards.get(board)
            if b is None:
                self.bad(f"{where}: unknown board {board}")
                continue
            if channel >= b.channels:
                self.bad(
                    f"{where}: channel {channel} but board {board} has {b.channels} channels (0..{b.channels - 1})"
                )
                continue
            if (board, channel) in channels_used:
                self.bad(
                    f"{where}: board {board} channel {channel} is also {channels_used[(board, channel)]!r}"
                )
                continue
            channels_used[(board, channel)] = cid
            if led is not None:
                if led >= b.leds:
                    self.bad(f"{where}: LED {led} but board {board}'s strip has {b.leds} LEDs")
                    continue
                if (board, led) in leds_used:
                    self.bad(
                        f"{where}: duplicate LED index {led} on board {board} (also {leds_used[(board, led)]!r})"
                    )
                    continue
                leds_used[(board, led)] = cid
            out[cid] = CellGeometry(cid, board, channel, led, xy[0], xy[1], str(zone))
        return out

    def _seats(self, raw: Any, cells: dict[str, CellGeometry]) -> list[SeatGeometry]:
        if not isinstance(raw, list):
            self.bad("seats must be an array of [[seats]] tables")
            return []
        out: list[SeatGeometry] = []
        for i, s in enumerate(raw):
            where = f"seats[{i}]"
            if not isinstance(s, dict):
                self.bad(f"{where} must be a table")
                continue
            self._unknown_keys(
                where,
                s,
                (
                    "index",
                    "name",
                    "rack",
                    "turn_led_pin",
                    "button_pin",
                    "call_button_pin",
                    "led_cells",
                ),
            )
            index = self._int(f"{where}.index", s.get("index"), 0, 15)
            if index is not None and index != i:
                self.bad(f"{where}.index is {index}: seats must be listed in order 0, 1, 2, ...")
            name = self._str(f"{where}.name", s.get("name"), optional=True)
            rack = self._cell_list(f"{where}.rack", s.get("rack"), cells)
            if not rack:
                self.bad(f"seat {i} has no rack cells")
            pins = [
                self._int(f"{where}.{k}", s.get(k), 2, 27, optional=True)
                for k in ("turn_led_pin", "button_pin", "call_button_pin")
            ]
            led_cells = (
                self._cell_list(f"{where}.led_cells", s.get("led_cells"), cells)
                if "led_cells" in s
                else list(rack)
            )
            out.append(
                SeatGeometry(i, name or f"Seat {i + 1}", rack, pins[0], pins[1], pins[2], led_cells)
            )
        return out

    def _line(self, raw: Any, cells: dict[str, CellGeometry]) -> LineGeometry | None:
        if raw is None:
            return None
        if not isinstance(raw, dict):
            self.bad("line must be a table with center, left and right")
            return None
        self._unknown_keys("line", raw, ("center", "left", "right"))
        center = raw.get("center")
        if not isinstance(center, str) or center not in cells:
            self.bad(f"line.center: unknown cell {center!r}")
            center = None
        left = self._cell_list("line.left", raw.get("left"), cells)
        right = self._cell_list("line.right", raw.get("right"), cells)
        if not left or not right:
            self.bad("line: both arms need at least one cell")
        if center is None:
            return None
        return LineGeometry(center, left, right)


def _short(value: Any) -> str:
    """A value for a message: huge numbers by their size, deep or long values cut
    (a 5,000-digit number cannot even be turned into text)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**12:
        return f"a number of about {int(abs(value).bit_length() * 0.30103) + 1} digits"
    try:
        text = repr(value)
    except (RecursionError, ValueError):
        return "a value nested too deeply"
    return text if len(text) <= 60 else text[:57] + "..."


def _with_seat(c: CellGeometry, seat: int | None) -> CellGeometry:
    if c.seat == seat:
        return c
    return CellGeometry(c.id, c.board, c.channel, c.led, c.x, c.y, c.zone, seat)
