"""How far a reader's field reaches a tag: the coupling model shared by
``tablesense hw check`` (minimum antenna spacing) and the spatial emulator
(:mod:`tablesense.sim.space`, which tag answers which reader).

Why a model at all: with fields on, a reader can wake the tag lying on the
*neighbour's* cell and report it as its own. Whether it does depends on the
antenna and tag sizes, the tag's height above the antenna and the spacing,
and a maker chooses all four. One model decides both what the check refuses
and what the emulator shows, so the two cannot disagree.

The model (documented in docs/build-guide.md, "Spacing"):

- Each reader's antenna is a square loop of side ``antenna_mm`` in the plane
  under the table top, centred under its cell, sides along the table's axes.
  Its field is the Biot–Savart field of that loop (the current cancels out,
  see below). Only the vertical component couples into a tag lying flat.
- A tag is a flat disc of diameter ``tag_mm`` at ``tag_height_mm`` above the
  antenna plane. What powers it is the flux through it: the vertical field
  averaged over its disc (its sign does not matter: outside the loop the
  field returns downwards and still powers a tag).
- A tag answers when that average reaches what the same tag gets on the
  antenna's axis at ``read_range_mm``, the greatest height at which it still
  answers there. That range is the one number a builder measures at
  bring-up (docs/build-guide.md, "Read range"); it stands for the reader's
  transmitter current and the tag's sensitivity together (ISO/IEC 14443-2
  asks a tag to work from 1.5 A/m; small tags need more), so no absolute
  field strength is needed.

Typical figures (RC522 module or a 40 mm loop, 4 mm above the antenna): a
10 mm NTAG213 sticker answers up to about 20 mm on axis, a 25 mm sticker up
to about 35 mm. ISO/IEC 14443-1 class 1 is the ID-1 card's own antenna
(about 81 × 49 mm), which reads much further; the small classes of its
amendment approach a 25 mm sticker, and a 10 mm sticker is smaller than any
class.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

#: A tile or card lies up to this far off its cell's centre (mm): a tag
#: pushed towards a neighbour must still not answer it.
PLACEMENT_TOLERANCE_MM = 5.0

#: Edge-to-edge gap between two antennas (mm): an RC522 module's board is
#: wider than its loop, and two loops closer than this couple into each
#: other and detune both.
ANTENNA_GAP_MM = 5.0

#: Rings and spokes of the quadrature over a tag's disc (centre + rings x spokes points).
_RINGS = 3
_SPOKES = 12


@dataclass(frozen=True)
class FieldModel:
    """One antenna size with one tag size and height; see the module docstring."""

    antenna_mm: float = 40.0
    tag_mm: float = 10.0
    tag_height_mm: float = 4.0
    read_range_mm: float = 20.0

    def answers(self, dx: float, dy: float) -> bool:
        """Does a tag centred ``(dx, dy)`` mm from this antenna's centre, at the
        tag height, get enough flux to answer this reader?"""
        return _coupling(self, dx, dy) >= 1.0

    def coupling(self, dx: float, dy: float) -> float:
        """The tag's flux at ``(dx, dy)`` as a fraction of what it needs (>= 1 answers)."""
        return _coupling(self, dx, dy)

    def reach_mm(self, angle: float = 0.0) -> float:
        """The farthest centre-to-centre distance, in the direction ``angle``
        (radians from the x axis), at which a tag still answers this reader."""
        return _reach(self, round(angle, 6))

    def max_reach_mm(self) -> float:
        """The reach in its worst direction (every 5 degrees; the square
        loop repeats itself every 90 and mirrors at 45)."""
        return max(self.reach_mm(math.radians(5 * k)) for k in range(10))

    def min_pitch_mm(self) -> float:
        """The smallest centre-to-centre distance of two cells, in any
        direction (a maker may turn the antennas): the antennas keep
        :data:`ANTENNA_GAP_MM` between them, and a tag up to
        :data:`PLACEMENT_TOLERANCE_MM` off its own cell towards the neighbour
        does not answer the neighbour's reader."""
        return max(self.antenna_mm + ANTENNA_GAP_MM, self.max_reach_mm() + PLACEMENT_TOLERANCE_MM)


def _hz(a: float, x: float, y: float, z: float) -> float:
    """Vertical field (per unit current, arbitrary units) of a square loop of
    side ``a`` centred at the origin in the z = 0 plane, at ``(x, y, z)``."""
    total = 0.0
    for x1, y1, ux, uy, length in _edges(a):
        # foot of the perpendicular from the point to the wire's line
        t = (x - x1) * ux + (y - y1) * uy
        px, py = x - (x1 + t * ux), y - (y1 + t * uy)
        rho2 = px * px + py * py + z * z
        if rho2 < 1e-9:
            continue
        rho = math.sqrt(rho2)
        s1 = (0.0 - t) / math.hypot(t, rho)
        s2 = (length - t) / math.hypot(length - t, rho)
        magnitude = (s2 - s1) / (4.0 * math.pi * rho)
        # direction u x rho_hat; its z component
        total += magnitude * (ux * py - uy * px) / rho
    return total


@lru_cache(maxsize=16)
def _edges(a: float) -> tuple[tuple[float, float, float, float, float], ...]:
    """The loop's four wires: start corner, unit direction and length."""
    h = a / 2.0
    corners = ((-h, -h), (h, -h), (h, h), (-h, h))
    edges = []
    for i in range(4):
        x1, y1 = corners[i]
        x2, y2 = corners[(i + 1) % 4]
        dxs, dys = x2 - x1, y2 - y1
        length = math.hypot(dxs, dys)
        edges.append((x1, y1, dxs / length, dys / length, length))
    return tuple(edges)


@lru_cache(maxsize=16)
def _disc_points(diameter: float) -> tuple[tuple[float, float, float], ...]:
    """The quadrature's points on a disc (offset x, offset y, weight), its
    centre first: the same points for every position of the tag."""
    r = diameter / 2.0
    points = []
    for i in range(1, _RINGS + 1):
        rr = r * i / _RINGS
        w = 2.0 * i  # ring area grows with its radius
        for k in range(_SPOKES):
            phi = 2.0 * math.pi * (k + 0.5 * (i % 2)) / _SPOKES
            points.append((rr * math.cos(phi), rr * math.sin(phi), w))
    return tuple(points)


def _disc_flux(a: float, diameter: float, x: float, y: float, z: float) -> float:
    """Average vertical field over a disc (area-weighted quadrature)."""
    weight_total = 1.0
    total = _hz(a, x, y, z)
    for ox, oy, w in _disc_points(diameter):
        total += w * _hz(a, x + ox, y + oy, z) / _SPOKES
        weight_total += w / _SPOKES
    return total / weight_total


@lru_cache(maxsize=64)
def _threshold(model: FieldModel) -> float:
    return abs(_disc_flux(model.antenna_mm, model.tag_mm, 0.0, 0.0, model.read_range_mm))


def _coupling(model: FieldModel, dx: float, dy: float) -> float:
    flux = _disc_flux(model.antenna_mm, model.tag_mm, dx, dy, model.tag_height_mm)
    return abs(flux) / _threshold(model)


@lru_cache(maxsize=256)
def _reach(model: FieldModel, angle: float) -> float:
    """The last distance that answers on a 0.5 mm grid out to 3 antenna sides
    away (the fringe outside the loop answers again after the null under the
    wire, so no bisection). Scanned from the far end inwards: the first
    distance that answers is the last one, so the scan stops there; and it
    starts at :func:`_silent_beyond_mm`, since no grid point past that can
    answer."""
    c, s = math.cos(angle), math.sin(angle)
    step = 0.5
    limit = 3.0 * model.antenna_mm + model.tag_mm + model.read_range_mm
    start = min(int(limit / step), int(_silent_beyond_mm(model) / step) + 1)
    for k in range(start, -1, -1):
        d = k * step
        if model.answers(d * c, d * s):
            return d
    return 0.0


@lru_cache(maxsize=64)
def _silent_beyond_mm(model: FieldModel) -> float:
    """A distance from the antenna's centre beyond which no tag can answer,
    from a bound rather than the field itself. By Biot-Savart each wire of
    length L adds at most L / (4 pi r^2) at a point r from its nearest
    point, so the loop's field is at most a / (pi r^2) where r is the
    point's distance from the loop. Every point of a tag centred d away lies
    at least d - tag/2 - a/sqrt(2) sideways from every point of the loop (all
    within a/sqrt(2) of its centre) and the tag's height above it; once that
    bound is under the flux the tag needs, no point, and so no average, gets
    there. A tenth of a millimetre more keeps rounding on the safe side."""
    a, z = model.antenna_mm, model.tag_height_mm
    r = math.sqrt(a / (math.pi * _threshold(model)))  # the field bound equals the threshold here
    sideways = math.sqrt(max(0.0, r * r - z * z))
    return sideways + model.tag_mm / 2.0 + a / math.sqrt(2.0) + 0.1
