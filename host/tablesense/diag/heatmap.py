"""Heatmaps of per-cell read reliability, as SVG (text) or PNG (no imaging library).

Cells are drawn where the table geometry puts them (x, y in mm) or, without
a geometry, on a grid by channel. Colour: green 100 %, yellow 80 %, red
below 50 %, grey when the cell was not measured.
"""

from __future__ import annotations

import struct
import zlib
from xml.sax.saxutils import escape

from tablesense.diag.core import CellResult

CELL_MM = 40.0


def color(reliability: float | None) -> tuple[int, int, int]:
    if reliability is None:
        return (160, 160, 160)
    r = max(0.0, min(1.0, reliability))
    if r >= 0.8:  # yellow -> green
        t = (r - 0.8) / 0.2
        return (int(230 * (1 - t) + 40 * t), int(200 * (1 - t) + 170 * t), 40)
    t = max(0.0, (r - 0.5) / 0.3)  # red -> yellow
    return (int(200 * (1 - t) + 230 * t), int(30 * (1 - t) + 200 * t), 40)


def _positions(results: list[CellResult], geometry=None) -> list[tuple[CellResult, float, float]]:
    out = []
    for i, res in enumerate(results):
        cell = geometry.cells.get(res.cell) if geometry is not None else None
        if cell is not None:
            out.append((res, float(cell.x), float(cell.y)))
        else:
            out.append((res, (i % 8) * (CELL_MM + 6), (i // 8) * (CELL_MM + 6)))
    return out


def svg(results: list[CellResult], geometry=None, title: str = "read reliability") -> str:
    pos = _positions(results, geometry)
    if not pos:
        return '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'
    minx = min(x for _r, x, _y in pos) - CELL_MM
    miny = min(y for _r, _x, y in pos) - CELL_MM
    maxx = max(x for _r, x, _y in pos) + CELL_MM
    maxy = max(y for _r, _x, y in pos) + CELL_MM
    w, h = maxx - minx, maxy - miny + 20
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{minx:.0f} {miny - 20:.0f} {w:.0f} {h:.0f}" '
             f'width="{w:.0f}" height="{h:.0f}" font-family="sans-serif">',
             f'<text x="{minx + 4:.0f}" y="{miny - 4:.0f}" font-size="14">{escape(title)}</text>']
    half = CELL_MM / 2
    for res, x, y in pos:
        r, g, b = color(res.reliability)
        pct = "n/a" if res.reliability is None else f"{res.reliability * 100:.0f}%"
        label = escape(res.cell)
        parts.append(f'<g><title>{label}: {pct} ({res.good}/{res.reads}, {res.errors} errors)</title>'
                     f'<rect x="{x - half:.1f}" y="{y - half:.1f}" width="{CELL_MM - 2:.0f}" height="{CELL_MM - 2:.0f}" '
                     f'rx="4" fill="rgb({r},{g},{b})" stroke="#333"/>'
                     f'<text x="{x:.1f}" y="{y + 4:.1f}" font-size="10" text-anchor="middle">{pct}</text></g>')
    parts.append("</svg>")
    return "\n".join(parts)


def png(results: list[CellResult], geometry=None, scale: float = 0.5) -> bytes:
    """An RGB PNG: one filled square per cell (``scale`` pixels per mm)."""
    pos = _positions(results, geometry)
    if not pos:
        pos = []
    minx = min((x for _r, x, _y in pos), default=0) - CELL_MM
    miny = min((y for _r, _x, y in pos), default=0) - CELL_MM
    maxx = max((x for _r, x, _y in pos), default=0) + CELL_MM
    maxy = max((y for _r, _x, y in pos), default=0) + CELL_MM
    width = max(1, int((maxx - minx) * scale))
    height = max(1, int((maxy - miny) * scale))
    pixels = bytearray(b"\xff" * (width * height * 3))
    half = (CELL_MM - 4) / 2 * scale
    for res, x, y in pos:
        cx, cy = (x - minx) * scale, (y - miny) * scale
        rgb = bytes(color(res.reliability))
        for py in range(max(0, int(cy - half)), min(height, int(cy + half))):
            row = py * width * 3
            for px in range(max(0, int(cx - half)), min(width, int(cx + half))):
                pixels[row + px * 3 : row + px * 3 + 3] = rgb
    raw = b"".join(b"\x00" + bytes(pixels[y * width * 3 : (y + 1) * width * 3]) for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))
