"""SVG drawings of a table layout, generated from its geometry file.

One drawing per layout shows every cell at its position with its id and LED
index, coloured by the board that serves it (with the board's reader
channel), the seats and their GPIO pins, and the zones (line of play, racks,
boneyard, Kems board slots). The maker glues readers and LEDs by it, and the
user guide uses it in place of photos. Output is deterministic, so the
drawings in hardware/drawings/ can be checked for being up to date.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from xml.sax.saxutils import escape

from tablesense.table.geometry import TableGeometry

#: The sensor board's outline (hardware/kicad/design.py BOARD_W, BOARD_H),
#: drawn round each board's position so a maker sees which cells it passes
#: under (it mounts on the bottom panel, 20 mm or more below the antennas).
BOARD_MM = (166.0, 134.0)

#: Board colours (cycled), light enough for black text.
BOARD_COLOURS = ("#9ecae1", "#fdd0a2", "#a1d99b", "#dadaeb", "#fcbba1", "#c7e9c0", "#fee391")
CELL_MM = 34.0
MARGIN_MM = 60.0
SIDE_MARGIN_MM = 190.0  # room for seat labels left and right of the cells


def _fmt(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def table_svg(geometry: TableGeometry) -> str:
    """The drawing of one layout as an SVG document (units: mm)."""
    # Geometry is in mm with y pointing north (away from seat South); SVG's
    # y points down, so every drawn point is (x, -y).
    cells = [replace(c, y=-c.y) for c in geometry.cells.values()]
    if not cells:
        raise ValueError(f"{geometry.name} has no cells to draw")
    by_id = {c.id: c for c in cells}
    xs = [c.x for c in cells]
    ys = [c.y for c in cells]
    for b in geometry.boards:  # the board outlines stay on the sheet
        if b.position is not None:
            xs += [b.position[0] - BOARD_MM[0] / 2, b.position[0] + BOARD_MM[0] / 2]
            ys += [-b.position[1] - BOARD_MM[1] / 2, -b.position[1] + BOARD_MM[1] / 2]
    legend_h = 30.0 + 14.0 * len(geometry.boards)
    min_x, max_x = min(xs) - SIDE_MARGIN_MM, max(xs) + SIDE_MARGIN_MM
    min_y, max_y = min(ys) - MARGIN_MM - 20.0, max(ys) + MARGIN_MM + legend_h
    width, height = max_x - min_x, max_y - min_y
    colour = {b.id: BOARD_COLOURS[i % len(BOARD_COLOURS)] for i, b in enumerate(geometry.boards)}
    half = CELL_MM / 2
    out: list[str] = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_fmt(width)}mm" height="{_fmt(height)}mm" '
        f'viewBox="{_fmt(min_x)} {_fmt(min_y)} {_fmt(width)} {_fmt(height)}" font-family="sans-serif">',
        f"<title>tablesense layout {escape(geometry.name)}</title>",
        f'<rect x="{_fmt(min_x)}" y="{_fmt(min_y)}" width="{_fmt(width)}" height="{_fmt(height)}" fill="#ffffff"/>',
        f'<text x="{_fmt(min_x + 8)}" y="{_fmt(min_y + 16)}" font-size="12" font-weight="bold">'
        f"{escape(geometry.name)}: {len(cells)} cells, {len(geometry.boards)} boards, "
        f"{len(geometry.seats)} seats ({', '.join(geometry.games)}); north is up</text>",
    ]
    # the line of play, drawn as a path through the cells in playing order
    if geometry.line is not None:
        pts = " ".join(f"{_fmt(by_id[c].x)},{_fmt(by_id[c].y)}" for c in geometry.line.cells)
        out.append(f'<polyline points="{pts}" fill="none" stroke="#bbbbbb" stroke-width="3" stroke-dasharray="6 4"/>')
    for c in sorted(cells, key=lambda c: c.id):
        stroke = {"line": "#333333", "rack": "#2b8cbe", "boneyard": "#8c6d31", "kems_slot": "#c51b8a", "stock": "#31a354"}.get(c.zone, "#777777")
        out.append(
            f'<g id="cell-{escape(c.id)}">'
            f'<rect x="{_fmt(c.x - half)}" y="{_fmt(c.y - half)}" width="{_fmt(CELL_MM)}" height="{_fmt(CELL_MM)}" '
            f'rx="3" fill="{colour.get(c.board, "#eeeeee")}" stroke="{stroke}" stroke-width="1.5"/>'
            f'<text x="{_fmt(c.x)}" y="{_fmt(c.y - 4)}" font-size="7" text-anchor="middle">{escape(c.id)}</text>'
            f'<text x="{_fmt(c.x)}" y="{_fmt(c.y + 5)}" font-size="6" text-anchor="middle">'
            f"B{c.board}:{c.channel}</text>"
            f'<text x="{_fmt(c.x)}" y="{_fmt(c.y + 13)}" font-size="6" text-anchor="middle" fill="#555555">'
            f"LED {'-' if c.led is None else c.led}</text></g>"
        )
    for seat in geometry.seats:
        rack = [by_id[cid] for cid in seat.rack if cid in by_id]
        if not rack:
            continue
        sx = sum(c.x for c in rack) / len(rack)
        sy = sum(c.y for c in rack) / len(rack)
        # put the label on the outside of the rack, away from the table centre
        cx = (min(xs) + max(xs)) / 2
        cy = (min(ys) + max(ys)) / 2
        dx, dy = sx - cx, sy - cy
        norm = max((dx * dx + dy * dy) ** 0.5, 1.0)
        if abs(dx) > abs(dy):  # a rack on the east or west side: label beside it
            lx, ly, anchor = sx + (30 if dx > 0 else -30), sy, "start" if dx > 0 else "end"
        else:  # north or south side: label above or below it
            lx, ly, anchor = sx, sy + dy / norm * 36 + (6 if dy > 0 else 0), "middle"
        pins = f"LED GPIO{seat.turn_led_pin} · button GPIO{seat.button_pin} · call GPIO{seat.call_button_pin}"
        out.append(
            f'<text x="{_fmt(lx)}" y="{_fmt(ly)}" font-size="10" font-weight="bold" text-anchor="{anchor}">'
            f"Seat {seat.index}: {escape(seat.name)}</text>"
            f'<text x="{_fmt(lx)}" y="{_fmt(ly + 10)}" font-size="6" text-anchor="{anchor}" fill="#555555">{escape(pins)}</text>'
        )
    # where each board sits (its cables run from there, hw/cabling.py)
    for b in geometry.boards:
        if b.position is None:
            continue
        bx, by = b.position[0], -b.position[1]
        w, h = BOARD_MM
        out.append(
            f'<rect x="{_fmt(bx - w / 2)}" y="{_fmt(by - h / 2)}" width="{_fmt(w)}" height="{_fmt(h)}" '
            f'fill="none" stroke="{colour[b.id]}" stroke-width="2" stroke-dasharray="8 4"/>'
        )
        out.append(
            f'<g id="board-{b.id}"><rect x="{_fmt(bx - 14)}" y="{_fmt(by - 9)}" width="28" height="18" '
            f'fill="{colour[b.id]}" stroke="#000000" stroke-width="1" stroke-dasharray="2 1"/>'
            f'<text x="{_fmt(bx)}" y="{_fmt(by + 3)}" font-size="7" font-weight="bold" text-anchor="middle">'
            f"Pico {b.id}</text></g>"
        )
    # legend: boards and zones
    ly = max(ys) + MARGIN_MM
    for i, b in enumerate(geometry.boards):
        y = ly + 14.0 * i
        served = sum(1 for c in cells if c.board == b.id)
        out.append(
            f'<rect x="{_fmt(min_x + 8)}" y="{_fmt(y)}" width="10" height="10" fill="{colour[b.id]}" stroke="#333333"/>'
            f'<text x="{_fmt(min_x + 22)}" y="{_fmt(y + 8)}" font-size="8">board {b.id} "{escape(b.name)}": '
            f"{served} of {b.channels} channels, {b.leds} LEDs"
            f"{'' if b.position is None else f' (dashed box: the board centred at {_fmt(b.position[0])}, {_fmt(b.position[1])} mm, its outline around it)'}</text>"
        )
    ref = geometry.referee_button_pin
    out.append(
        f'<text x="{_fmt(min_x + 8)}" y="{_fmt(ly + 14.0 * len(geometry.boards) + 10)}" font-size="8">'
        f"cell label: id / board:channel / LED index · referee button GPIO{ref} · "
        f"outline: black line of play, blue rack, brown boneyard, magenta Kems slot"
        f"{', green stock (remote play)' if geometry.stock else ''}</text>"
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def draw_tables(geometries: list[TableGeometry], out_dir: Path) -> list[Path]:
    """Write ``<name>.svg`` for each layout into ``out_dir``; returns the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for g in geometries:
        path = out_dir / f"{g.name}.svg"
        path.write_text(table_svg(g), encoding="utf-8")
        paths.append(path)
    return paths
