"""Write the sensor board's KiCad 9 project from design.py and hardware/pinmap.toml.

Run with the Python that carries KiCad's ``pcbnew`` module (Debian's
``/usr/bin/python3`` once the ``kicad`` package is installed)::

    python3 hardware/kicad/generate.py

It writes ``sensor-board.kicad_sch`` (symbols copied from KiCad's own
libraries, one net label on every pin), ``sensor-board.kicad_pcb`` (KiCad's
own footprints, placed, routed by the grid router in route.py, a ground pour
on the bottom layer) and ``sensor-board.kicad_pro`` (design rules). The
committed files are what ``kicad-cli sch erc`` / ``pcb drc`` and the tests
check; rerun this after changing design.py or the pin map.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import design  # noqa: E402
import sexpr  # noqa: E402
from sexpr import Node, Quoted  # noqa: E402

KICAD_SHARE = Path("/usr/share/kicad")
NAME = "sensor-board"
NAMESPACE = uuid.UUID("6f1d3a52-93c4-4c55-9d8e-2b1f7c0e5a11")
POWER_NETS = {"+5V", "+3V3", "GND", "VIN_RAW", "VIN_FUSED", "VSYS", "BUCK_SW"}


def uid(*key: object) -> str:
    """A stable UUID per item, so a regenerated file differs only where the design did."""
    return str(uuid.uuid5(NAMESPACE, "/".join(str(k) for k in key)))


# ----------------------------------------------------------------------------- symbols


# a library's symbol as KiCad writes it: one tab in, at the start of its line
_TOP_SYMBOL = re.compile(r'^\t\(symbol "([^"\\]*)"', re.M)


class _Symbols:
    """One ``.kicad_sym`` file's symbols by name, each parsed when first asked
    for: the schematic takes ~10 of the thousands in Device and friends, and
    parsing whole libraries was most of the generator's time."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._parsed: dict[str, list[Node]] = {}
        found = list(_TOP_SYMBOL.finditer(text))
        self._spans: dict[str, tuple[int, int]] = {}
        if not found:  # not laid out as KiCad writes it: the whole file, parsed once
            tree = sexpr.parse(text)
            self._parsed = {str(s[1]): s for s in sexpr.children(tree, "symbol")}
            return
        ends = [m.start() for m in found[1:]] + [text.rindex(")")]
        for m, end in zip(found, ends, strict=True):
            self._spans[m.group(1)] = (m.start(), end)

    def __getitem__(self, name: str) -> list[Node]:
        if name not in self._parsed:
            start, end = self._spans[name]
            node = sexpr.parse(self._text[start:end])
            assert isinstance(node, list) and sexpr.head(node) == "symbol" and str(node[1]) == name, name
            self._parsed[name] = node
        return self._parsed[name]


class Library:
    """Symbols read from KiCad's ``.kicad_sym`` files, flattened like KiCad embeds them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: dict[str, _Symbols] = {}

    def _load(self, lib: str) -> _Symbols:
        if lib not in self._files:
            self._files[lib] = _Symbols((self.root / f"{lib}.kicad_sym").read_text(encoding="utf-8"))
        return self._files[lib]

    def symbol(self, lib_id: str) -> list[Node]:
        """The symbol as a schematic's lib_symbols holds it (``extends`` resolved)."""
        lib, name = lib_id.split(":")
        symbols = self._load(lib)
        sym = symbols[name]
        parent_ref = sexpr.child(sym, "extends")
        if parent_ref is None:
            body = list(sym[2:])
            base = name
        else:
            parent = symbols[str(parent_ref[1])]
            own_props = {str(p[1]): p for p in sexpr.children(sym, "property")}
            body = []
            for c in parent[2:]:
                if sexpr.head(c) == "property" and isinstance(c, list) and str(c[1]) in own_props:
                    body.append(own_props.pop(str(c[1])))
                else:
                    body.append(c)
            # properties the child adds (keep them after the parent's)
            insert_at = max(i for i, c in enumerate(body) if sexpr.head(c) == "property") + 1
            body[insert_at:insert_at] = list(own_props.values())
            base = str(parent[1])
        out: list[Node] = ["symbol", Quoted(lib_id)]
        for c in body:
            if sexpr.head(c) == "symbol" and isinstance(c, list):
                unit_name = str(c[1])
                c = ["symbol", Quoted(name + unit_name[len(base):]), *c[2:]]
            out.append(c)
        return out


def unit_pins(sym: list[Node]) -> dict[int, list[dict[str, object]]]:
    """Pins per unit (unit 0: common to all units) with position, angle, type."""
    result: dict[int, list[dict[str, object]]] = {}
    for sub in sexpr.children(sym, "symbol"):
        unit = int(str(sub[1]).rsplit("_", 2)[-2])
        for pin in sexpr.children(sub, "pin"):
            at = sexpr.child(pin, "at")
            name = sexpr.child(pin, "name")
            number = sexpr.child(pin, "number")
            assert at is not None and name is not None and number is not None
            hidden = "hide" in [a for a in pin if isinstance(a, str)] or any(
                sexpr.head(c) == "hide" for c in pin if isinstance(c, list)
            )
            result.setdefault(unit, []).append({
                "number": str(number[1]), "name": str(name[1]), "type": str(pin[1]),
                "x": float(str(at[1])), "y": float(str(at[2])), "angle": float(str(at[3])), "hidden": hidden,
            })
    return result


# ----------------------------------------------------------------------------- schematic


def prop(name: str, value: str, x: float, y: float, hide: bool = False, angle: float = 0) -> list[Node]:
    effects: list[Node] = ["effects", ["font", ["size", "1.27", "1.27"]]]
    if hide:
        effects.append(["hide", "yes"])
    return ["property", Quoted(name), Quoted(value), ["at", fmt(x), fmt(y), fmt(angle)], effects]


def lib_field(name: str, value: str, sym: list[Node], sx: float, sy: float) -> list[Node]:
    """A visible field where (and as) the library symbol places it, for a symbol at (sx, sy)."""
    for p in sexpr.children(sym, "property"):
        at = sexpr.child(p, "at")
        effects = sexpr.child(p, "effects")
        if str(p[1]) == name and at is not None and effects is not None:
            x, y = sx + float(str(at[1])), sy - float(str(at[2]))
            return ["property", Quoted(name), Quoted(value), ["at", fmt(x), fmt(y), str(at[3])], effects]
    return prop(name, value, sx, sy)


def fmt(v: float) -> str:
    text = f"{v:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def snap(v: float) -> float:
    return round(v / 1.27) * 1.27


def resolve_pins(part: design.Part, pins_by_unit: dict[int, list[dict[str, object]]]) -> dict[str, str]:
    """Pin number -> net, accepting pin names as keys (the Pico's GPIOn)."""
    out: dict[str, str] = {}
    all_pins = [p for plist in pins_by_unit.values() for p in plist]
    numbers = {str(p["number"]) for p in all_pins}
    for key, net in part.nets.items():
        if key in numbers:
            out[key] = net
            continue
        matched = [str(p["number"]) for p in all_pins if p["name"] == key]
        if not matched:
            raise KeyError(f"{part.ref}: no pin {key!r} in {part.lib_id}")
        for number in matched:
            out[number] = net
    return out


def build_schematic(parts: list[design.Part], lib: Library) -> tuple[str, dict[str, str], dict[str, dict[str, str]]]:
    """The schematic text, each part's symbol UUID and each part's pin -> net map."""
    root = uid("root")
    lib_symbols: dict[str, list[Node]] = {}
    items: list[Node] = []
    sym_uuid: dict[str, str] = {}
    pin_nets: dict[str, dict[str, str]] = {}
    power_out_nets: set[str] = set()
    power_in_nets: set[str] = set()

    # columns of symbols on an A1 sheet, one column (or more) per section
    top, sheet_h = 30.48, 560.0
    col_x, col_y, col_w = 25.4, top, 0.0
    section = None
    placements: list[tuple[design.Part, int, float, float]] = []
    last_right = 0.0
    last_y = 0.0
    for part in sorted(parts, key=lambda p: p.section):
        sym = lib.symbol(part.lib_id)
        lib_symbols[part.lib_id] = sym
        pins = unit_pins(sym)
        pin_nets[part.ref] = resolve_pins(part, pins)
        if section is not None and part.section != section:
            col_x += col_w + 12.7
            col_y, col_w = top, 0.0
        section = part.section
        units = sorted(u for u in pins if u > 0) or [1]
        for unit in units:
            plist = pins.get(unit, []) + pins.get(0, [])
            ys = [float(str(p["y"])) for p in plist] or [0.0]
            xs = [float(str(p["x"])) for p in plist] or [0.0]
            height = max(ys) - min(ys) + 17.78
            width = max(xs) - min(xs) + 45.72
            if part.beside and placements:
                sx, sy = snap(last_right - min(xs) + 22.86), last_y
                col_w = max(col_w, sx + max(xs) + 22.86 - col_x)
                placements.append((part, unit, sx, sy))
                continue
            if col_y + height > sheet_h:
                col_x += col_w + 12.7
                col_y, col_w = top, 0.0
            sx, sy = snap(col_x - min(xs) + 22.86), snap(col_y + max(ys) + 7.62)
            placements.append((part, unit, sx, sy))
            last_right, last_y = sx + max(xs), sy
            col_y += height + 2.54
            col_w = max(col_w, width)

    label_at: dict[tuple[float, float], str] = {}
    for part, unit, sx, sy in placements:
        sym = lib_symbols[part.lib_id]
        pins = unit_pins(sym)
        nets = pin_nets[part.ref]
        sid = uid("sym", part.ref, unit)
        sym_uuid.setdefault(part.ref, sid)
        node: list[Node] = [
            "symbol", ["lib_id", Quoted(part.lib_id)], ["at", fmt(sx), fmt(sy), "0"], ["unit", str(unit)],
            ["exclude_from_sim", "no"], ["in_bom", "yes" if part.in_bom else "no"], ["on_board", "yes"],
            ["dnp", "no"], ["uuid", Quoted(sid)],
            lib_field("Reference", part.ref, sym, sx, sy),
            lib_field("Value", part.value, sym, sx, sy),
            prop("Footprint", part.footprint, sx, sy, hide=True),
            prop("Datasheet", "", sx, sy, hide=True),
            prop("Description", part.description, sx, sy, hide=True),
        ]
        if part.mpn:
            node.append(prop("MPN", part.mpn, sx, sy, hide=True))
        for key, value in part.extra.items():
            node.append(prop(key, value, sx, sy, hide=True))
        unit_plist = pins.get(unit, []) + pins.get(0, [])
        for p in unit_plist:
            node.append(["pin", Quoted(str(p["number"])), ["uuid", Quoted(uid("pin", part.ref, p["number"]))]])
        node.append(["instances", ["project", Quoted(NAME), ["path", Quoted(f"/{root}"),
                                                          ["reference", Quoted(part.ref)], ["unit", str(unit)]]]])
        items.append(node)
        for p in unit_plist:
            px = snap(sx + float(str(p["x"])))
            py = snap(sy - float(str(p["y"])))
            net = nets.get(str(p["number"]))
            if net is None:
                if (px, py) not in label_at:
                    items.append(["no_connect", ["at", fmt(px), fmt(py)], ["uuid", Quoted(uid("nc", part.ref, p["number"]))]])
                    label_at[(px, py)] = ""
                continue
            if p["type"] == "power_out":
                power_out_nets.add(net)
            if p["type"] == "power_in":
                power_in_nets.add(net)
            if (px, py) in label_at:
                if label_at[(px, py)] != net:
                    raise ValueError(f"{part.ref}: stacked pins at {px},{py} on two nets")
                continue
            label_at[(px, py)] = net
            angle = float(str(p["angle"]))
            # the wire leaves the pin away from the body
            dx, dy = {0.0: (-1, 0), 90.0: (0, 1), 180.0: (1, 0), 270.0: (0, -1)}[angle % 360]
            ex, ey = px + dx * 2.54, py + dy * 2.54
            items.append(["wire", ["pts", ["xy", fmt(px), fmt(py)], ["xy", fmt(ex), fmt(ey)]],
                          ["stroke", ["width", "0"], ["type", "default"]], ["uuid", Quoted(uid("w", part.ref, p["number"]))]])
            label_angle = {(-1, 0): 180, (1, 0): 0, (0, 1): 270, (0, -1): 90}[(dx, dy)]
            justify = "right" if label_angle in (180, 270) else "left"
            items.append(["label", Quoted(net), ["at", fmt(ex), fmt(ey), str(label_angle)],
                          ["effects", ["font", ["size", "1.27", "1.27"]], ["justify", justify, "bottom"]],
                          ["uuid", Quoted(uid("l", part.ref, p["number"]))]])

    # PWR_FLAG on every net whose power inputs nothing on the board drives as a power output
    flag_sym = lib.symbol("power:PWR_FLAG")
    lib_symbols["power:PWR_FLAG"] = flag_sym
    fx, fy = snap(col_x + col_w + 30.48), 30.48
    for i, net in enumerate(sorted(power_in_nets - power_out_nets)):
        ref = f"#FLG{i + 1:02d}"
        x, y = fx, snap(fy + i * 10.16)
        items.append([
            "symbol", ["lib_id", Quoted("power:PWR_FLAG")], ["at", fmt(x), fmt(y), "0"], ["unit", "1"],
            ["exclude_from_sim", "no"], ["in_bom", "yes"], ["on_board", "yes"], ["dnp", "no"],
            ["uuid", Quoted(uid("flag", net))],
            prop("Reference", ref, x, y - 3.81, hide=True), prop("Value", "PWR_FLAG", x, y - 3.81),
            prop("Footprint", "", x, y, hide=True), prop("Datasheet", "", x, y, hide=True),
            prop("Description", "", x, y, hide=True),
            ["pin", Quoted("1"), ["uuid", Quoted(uid("flagpin", net))]],
            ["instances", ["project", Quoted(NAME), ["path", Quoted(f"/{root}"), ["reference", Quoted(ref)], ["unit", "1"]]]],
        ])
        items.append(["wire", ["pts", ["xy", fmt(x), fmt(y)], ["xy", fmt(x), fmt(y + 2.54)]],
                      ["stroke", ["width", "0"], ["type", "default"]], ["uuid", Quoted(uid("fw", net))]])
        items.append(["label", Quoted(net), ["at", fmt(x), fmt(y + 2.54), "270"],
                      ["effects", ["font", ["size", "1.27", "1.27"]], ["justify", "right", "bottom"]],
                      ["uuid", Quoted(uid("fl", net))]])

    title: list[Node] = ["title_block", ["title", Quoted("tablesense sensor board")], ["rev", Quoted("1")],
                         ["comment", "1", Quoted("Generated by hardware/kicad/generate.py from hardware/pinmap.toml")]]
    tree: list[Node] = [
        "kicad_sch", ["version", "20250114"], ["generator", Quoted("eeschema")], ["generator_version", Quoted("9.0")],
        ["uuid", Quoted(root)], ["paper", Quoted("A1")], title,
        ["lib_symbols", *lib_symbols.values()],
        *items,
        ["sheet_instances", ["path", Quoted("/"), ["page", Quoted("1")]]],
        ["embedded_fonts", "no"],
    ]
    return sexpr.dump(tree) + "\n", sym_uuid, pin_nets


# ----------------------------------------------------------------------------- project


def write_project(path: Path) -> None:
    """Design rules and net classes (the PCB's DRC reads them from here)."""
    project = {
        "board": {
            "design_settings": {
                "defaults": {"board_outline_line_width": 0.1, "copper_line_width": 0.2},
                "rules": {
                    "min_clearance": 0.2, "min_track_width": 0.2, "min_via_diameter": 0.6,
                    "min_via_annular_width": 0.13, "min_through_hole_diameter": 0.3,
                    "min_hole_to_hole": 0.25, "min_copper_edge_clearance": 0.5,
                    "min_hole_clearance": 0.25, "min_silk_clearance": 0.0,
                },
                "track_widths": [0.0, 0.25, 0.5],
                "via_dimensions": [{"diameter": 0.0, "drill": 0.0}, {"diameter": 0.6, "drill": 0.3}],
            },
        },
        "meta": {"filename": f"{NAME}.kicad_pro", "version": 3},
        "net_settings": {
            "classes": [
                {"name": "Default", "clearance": 0.2, "track_width": 0.25, "via_diameter": 0.6, "via_drill": 0.3,
                 "diff_pair_gap": 0.25, "diff_pair_width": 0.2, "diff_pair_via_gap": 0.25,
                 "microvia_diameter": 0.3, "microvia_drill": 0.1, "wire_width": 6, "bus_width": 12,
                 "line_style": 0, "pcb_color": "rgba(0, 0, 0, 0.000)", "schematic_color": "rgba(0, 0, 0, 0.000)",
                 "priority": 2147483647},
                {"name": "Power", "clearance": 0.2, "track_width": 0.5, "via_diameter": 0.6, "via_drill": 0.3,
                 "diff_pair_gap": 0.25, "diff_pair_width": 0.2, "diff_pair_via_gap": 0.25,
                 "microvia_diameter": 0.3, "microvia_drill": 0.1, "wire_width": 6, "bus_width": 12,
                 "line_style": 0, "pcb_color": "rgba(0, 0, 0, 0.000)", "schematic_color": "rgba(0, 0, 0, 0.000)",
                 "priority": 0},
            ],
            "meta": {"version": 4},
            "netclass_patterns": [{"netclass": "Power", "pattern": "/" + n} for n in sorted(POWER_NETS)],
        },
        "schematic": {"legacy_lib_dir": "", "legacy_lib_list": []},
        "sheets": [[uid("root"), "Root"]],
        "text_variables": {},
    }
    path.write_text(json.dumps(project, indent=2) + "\n", encoding="utf-8")


def write_lib_tables(parts: list[design.Part]) -> None:
    """Project library tables naming KiCad's own libraries, so ERC/DRC can compare with them."""
    sym_libs = sorted({p.lib_id.split(":")[0] for p in parts} | {"power"})
    fp_libs = sorted({p.footprint.split(":")[0] for p in parts})
    sym = ["(sym_lib_table", "  (version 7)"]
    sym += [f'  (lib (name "{n}")(type "KiCad")(uri "${{KICAD9_SYMBOL_DIR}}/{n}.kicad_sym")(options "")(descr ""))'
            for n in sym_libs]
    fp = ["(fp_lib_table", "  (version 7)"]
    fp += [f'  (lib (name "{n}")(type "KiCad")(uri "${{KICAD9_FOOTPRINT_DIR}}/{n}.pretty")(options "")(descr ""))'
           for n in fp_libs]
    (HERE / "sym-lib-table").write_text("\n".join(sym) + "\n)\n", encoding="utf-8")
    (HERE / "fp-lib-table").write_text("\n".join(fp) + "\n)\n", encoding="utf-8")


def netlist_nets(schematic: Path) -> dict[str, dict[str, str]]:
    """Each part's pin -> net as KiCad names them (the PCB must use the same names)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "board.net"
        subprocess.run(["kicad-cli", "sch", "export", "netlist", "-o", str(out), str(schematic)],
                       check=True, capture_output=True)
        tree = sexpr.parse(out.read_text(encoding="utf-8"))
    nets_node = sexpr.child(tree, "nets")
    assert nets_node is not None
    result: dict[str, dict[str, str]] = {}
    for net in sexpr.children(nets_node, "net"):
        name_node = sexpr.child(net, "name")
        assert name_node is not None
        for node in sexpr.children(net, "node"):
            ref, pin = sexpr.child(node, "ref"), sexpr.child(node, "pin")
            assert ref is not None and pin is not None
            result.setdefault(str(ref[1]), {})[str(pin[1])] = str(name_node[1])
    return result


def main() -> None:
    pinmap = design.Pinmap.load()
    parts = design.build(pinmap)
    lib = Library(KICAD_SHARE / "symbols")
    text, sym_uuid, pin_nets = build_schematic(parts, lib)
    (HERE / f"{NAME}.kicad_sch").write_text(text, encoding="utf-8")
    write_project(HERE / f"{NAME}.kicad_pro")
    write_lib_tables(parts)
    if "--no-pcb" in sys.argv:
        return
    pin_nets = netlist_nets(HERE / f"{NAME}.kicad_sch")
    try:
        import board  # needs KiCad's pcbnew
    except ImportError as exc:
        sys.exit(f"generate.py: the PCB needs KiCad's pcbnew module ({exc}); run it with the Python "
                 "KiCad 9 installs it for (Debian: /usr/bin/python3), or pass --no-pcb for the schematic only")

    unrouted = board.build_board(parts, pin_nets, sym_uuid, HERE / f"{NAME}.kicad_pcb", POWER_NETS)
    # saving the board rewrites the project with pcbnew's defaults: put our rules back
    write_project(HERE / f"{NAME}.kicad_pro")
    (HERE / f"{NAME}.kicad_prl").unlink(missing_ok=True)
    for line in unrouted:
        print(f"unrouted: {line}")
    print(f"{len(unrouted)} connection(s) left unrouted")


if __name__ == "__main__":
    main()
