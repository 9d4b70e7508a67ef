"""Build, route and save the sensor board's PCB with KiCad's ``pcbnew`` module.

Footprints come from KiCad's own libraries; nets follow the schematic (the
same pin -> net maps). Routing is a two-layer grid maze router (A* on a
0.25 mm grid, vias allowed): every copper item marks the grid cells that a
track of another net may not use (its clearance plus that track's half
width), so what it lays down obeys the design rules the DRC checks. A ground
pour on both layers is added last and filled.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from pathlib import Path

import design
import numpy as np
import pcbnew  # type: ignore[import-not-found]

GRID = 0.25
CLEARANCE = 0.2
MARGIN = 0.06
EDGE_CLEARANCE = 0.5
VIA_D = 0.6
VIA_DRILL = 0.3
VIA_COST = 6.0
WIDTH = {"sig": 0.25, "pow": 0.5}
FP_ROOT = Path("/usr/share/kicad/footprints")


def mm(v: float) -> int:
    return int(round(v * 1e6))


@dataclass
class NetPad:
    ref: str
    number: str
    x: float
    y: float
    layers: tuple[int, ...]
    cells: list[tuple[int, int, int]] = field(default_factory=list)


class Router:
    """A grid maze router over two copper layers (0 = F.Cu, 1 = B.Cu)."""

    def __init__(self, width: float, height: float) -> None:
        self.nx = int(width / GRID) + 1
        self.ny = int(height / GRID) + 1
        self.width, self.height = width, height
        # per clearance class: cells another net's copper forbids (0 free, n only net n, -1 nobody)
        self.radius = {"sig": WIDTH["sig"] / 2, "pow": WIDTH["pow"] / 2, "via": VIA_D / 2}
        self.block = {c: [np.zeros((self.nx, self.ny), np.int32) for _ in range(2)] for c in self.radius}
        xs = np.arange(self.nx) * GRID
        ys = np.arange(self.ny) * GRID
        for c, r in self.radius.items():
            limit = EDGE_CLEARANCE + r + MARGIN
            for layer in range(2):
                b = self.block[c][layer]
                b[xs < limit, :] = -1
                b[xs > width - limit, :] = -1
                b[:, ys < limit] = -1
                b[:, ys > height - limit] = -1

    # -- marking copper -----------------------------------------------------------------
    def _window(self, x0: float, y0: float, x1: float, y1: float, pad: float) -> tuple[slice, slice, np.ndarray, np.ndarray]:
        i0 = max(int(math.floor((x0 - pad) / GRID)), 0)
        i1 = min(int(math.ceil((x1 + pad) / GRID)), self.nx - 1)
        j0 = max(int(math.floor((y0 - pad) / GRID)), 0)
        j1 = min(int(math.ceil((y1 + pad) / GRID)), self.ny - 1)
        gx = (np.arange(i0, i1 + 1) * GRID)[:, None]
        gy = (np.arange(j0, j1 + 1) * GRID)[None, :]
        return slice(i0, i1 + 1), slice(j0, j1 + 1), gx, gy

    def _apply(self, net: int, layer: int, si: slice, sj: slice, dist: np.ndarray) -> None:
        for c, r in self.radius.items():
            near = dist < CLEARANCE + r + MARGIN
            b = self.block[c][layer][si, sj]
            if net > 0:
                b[near & (b == 0)] = net
                b[near & (b != net)] = -1
            else:
                b[near] = -1

    def mark_rect(self, net: int, layer: int, cx: float, cy: float, hw: float, hh: float) -> None:
        si, sj, gx, gy = self._window(cx - hw, cy - hh, cx + hw, cy + hh, CLEARANCE + VIA_D)
        dx = np.maximum(np.abs(gx - cx) - hw, 0)
        dy = np.maximum(np.abs(gy - cy) - hh, 0)
        self._apply(net, layer, si, sj, np.hypot(dx, dy))

    def mark_circle(self, net: int, layer: int, cx: float, cy: float, r: float) -> None:
        si, sj, gx, gy = self._window(cx - r, cy - r, cx + r, cy + r, CLEARANCE + VIA_D)
        self._apply(net, layer, si, sj, np.maximum(np.hypot(gx - cx, gy - cy) - r, 0))

    def mark_segment(self, net: int, layer: int, x1: float, y1: float, x2: float, y2: float, hw: float) -> None:
        si, sj, gx, gy = self._window(min(x1, x2) - hw, min(y1, y2) - hw, max(x1, x2) + hw, max(y1, y2) + hw,
                                      CLEARANCE + VIA_D)
        vx, vy = x2 - x1, y2 - y1
        length2 = vx * vx + vy * vy
        if length2 == 0:
            t = np.zeros_like(gx + gy)
        else:
            t = np.clip(((gx - x1) * vx + (gy - y1) * vy) / length2, 0, 1)
        dist = np.hypot(gx - (x1 + t * vx), gy - (y1 + t * vy)) - hw
        self._apply(net, layer, si, sj, np.maximum(dist, 0))

    def inside_rect(self, cx: float, cy: float, hw: float, hh: float) -> list[tuple[int, int]]:
        out = []
        for i in range(int(math.ceil((cx - hw) / GRID)), int(math.floor((cx + hw) / GRID)) + 1):
            for j in range(int(math.ceil((cy - hh) / GRID)), int(math.floor((cy + hh) / GRID)) + 1):
                out.append((i, j))
        return out

    # -- search ---------------------------------------------------------------------------
    def route(self, net: int, cls: str, sources: list[tuple[int, int, int]], targets: set[tuple[int, int, int]],
              goal: tuple[float, float], limit: int = 600_000) -> list[tuple[int, int, int]] | None:
        blk = self.block[cls]
        via = self.block["via"]
        gi, gj = goal[0] / GRID, goal[1] / GRID

        def ok(layer: int, i: int, j: int) -> bool:
            if i < 0 or j < 0 or i >= self.nx or j >= self.ny:
                return False
            v = blk[layer][i, j]
            return v == 0 or v == net

        def h(i: int, j: int) -> float:
            dx, dy = abs(i - gi), abs(j - gj)
            return max(dx, dy) + 0.414 * min(dx, dy)

        heap: list[tuple[float, float, tuple[int, int, int]]] = []
        g: dict[tuple[int, int, int], float] = {}
        came: dict[tuple[int, int, int], tuple[int, int, int] | None] = {}
        for s in sources:
            if ok(*s):
                g[s] = 0.0
                came[s] = None
                heapq.heappush(heap, (h(s[1], s[2]), 0.0, s))
        steps = 0
        while heap:
            _f, cost, state = heapq.heappop(heap)
            if cost > g.get(state, math.inf):
                continue
            if state in targets:
                path = [state]
                prev = came[state]
                while prev is not None:
                    path.append(prev)
                    prev = came[prev]
                return path[::-1]
            steps += 1
            if steps > limit:
                return None
            layer, i, j = state
            moves: list[tuple[tuple[int, int, int], float]] = []
            for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)):
                ni, nj = i + di, j + dj
                if not ok(layer, ni, nj):
                    continue
                if di and dj:
                    if not (ok(layer, i + di, j) and ok(layer, i, j + dj)):
                        continue
                    moves.append(((layer, ni, nj), 1.414))
                else:
                    # each layer prefers one direction, so the two layers cross instead of blocking each other
                    moves.append(((layer, ni, nj), 1.0 if (dj == 0) == (layer == 0) else 1.3))
            other = 1 - layer
            if ok(other, i, j) and via[0][i, j] in (0, net) and via[1][i, j] in (0, net):
                moves.append(((other, i, j), VIA_COST))
            for nxt, step in moves:
                ng = cost + step
                if ng < g.get(nxt, math.inf):
                    g[nxt] = ng
                    came[nxt] = state
                    heapq.heappush(heap, (ng + h(nxt[1], nxt[2]), ng, nxt))
        return None


def _pad_geometry(pad: pcbnew.PAD) -> tuple[float, float, float, float, bool]:
    box = pad.GetBoundingBox()
    cx, cy = pad.GetPosition().x / 1e6, pad.GetPosition().y / 1e6
    hw, hh = box.GetWidth() / 2e6, box.GetHeight() / 2e6
    try:
        shape = pad.GetShape(pcbnew.F_Cu)
    except TypeError:
        shape = pad.GetShape()
    return cx, cy, hw, hh, shape == pcbnew.PAD_SHAPE_CIRCLE


def build_board(parts: list[design.Part], pin_nets: dict[str, dict[str, str]], sym_uuid: dict[str, str],
                path: Path, power_nets: set[str]) -> list[str]:
    """Place, route and save; returns the connections the router could not make."""
    board = pcbnew.BOARD()
    board.SetFileName(str(path))
    settings = board.GetDesignSettings()
    settings.m_TrackMinWidth = mm(0.2)
    settings.SetCopperLayerCount(2)

    netinfo: dict[str, pcbnew.NETINFO_ITEM] = {}
    all_nets = sorted({n for nets in pin_nets.values() for n in nets.values()})
    net_id = {n: i + 1 for i, n in enumerate(all_nets)}
    for n in all_nets:
        item = pcbnew.NETINFO_ITEM(board, n)
        board.Add(item)
        netinfo[n] = item

    router = Router(design.BOARD_W, design.BOARD_H)
    pads_of: dict[str, list[NetPad]] = {n: [] for n in all_nets}
    sheetfile = path.with_suffix(".kicad_sch").name
    for part in parts:
        lib, name = part.footprint.split(":")
        fp = pcbnew.FootprintLoad(str(FP_ROOT / f"{lib}.pretty"), name)
        if fp is None:
            raise FileNotFoundError(part.footprint)
        fp.SetFPID(pcbnew.LIB_ID(lib, name))
        fp.SetReference(part.ref)
        fp.SetValue(part.value)
        fp.SetOrientationDegrees(part.rot)
        fp.SetPosition(pcbnew.VECTOR2I(mm(part.at[0]), mm(part.at[1])))
        if part.ref in sym_uuid:
            fp.SetPath(pcbnew.KIID_PATH(f"/{sym_uuid[part.ref]}"))
            fp.SetSheetname("/")
            fp.SetSheetfile(sheetfile)
        if part.ref_offset is not None:
            dx, dy = part.ref_offset
            fp.Reference().SetPosition(pcbnew.VECTOR2I(mm(part.at[0] + dx), mm(part.at[1] + dy)))
        if part.ref.startswith("H"):
            fp.Reference().SetVisible(False)
        if not part.in_bom:
            fp.SetAttributes(fp.GetAttributes() | pcbnew.FP_EXCLUDE_FROM_BOM | pcbnew.FP_EXCLUDE_FROM_POS_FILES)
        board.Add(fp)
        for zone in fp.Zones():
            if zone.GetIsRuleArea() and zone.GetDoNotAllowTracks():
                box = zone.GetBoundingBox()
                x0, y0 = box.GetX() / 1e6, box.GetY() / 1e6
                w, h = box.GetWidth() / 1e6, box.GetHeight() / 1e6
                for layer, lid in ((0, pcbnew.F_Cu), (1, pcbnew.B_Cu)):
                    if zone.IsOnLayer(lid):
                        router.mark_rect(-1, layer, x0 + w / 2, y0 + h / 2, w / 2, h / 2)
        nets = pin_nets.get(part.ref, {})
        for pad in fp.Pads():
            number = pad.GetNumber()
            cx, cy, hw, hh, circle = _pad_geometry(pad)
            layers = tuple(layer for layer, lid in ((0, pcbnew.F_Cu), (1, pcbnew.B_Cu)) if pad.IsOnLayer(lid))
            net = nets.get(number)
            nid = net_id[net] if net else -1
            if net:
                pad.SetNet(netinfo[net])
            if pad.GetAttribute() == pcbnew.PAD_ATTRIB_NPTH:
                r = max(hw, hh)
                for layer in (0, 1):
                    router.mark_circle(-1, layer, cx, cy, r)
                continue
            for layer in layers:
                if circle:
                    router.mark_circle(nid, layer, cx, cy, hw)
                else:
                    router.mark_rect(nid, layer, cx, cy, hw, hh)
            if net:
                inner = hw * 0.7 if circle else hw
                innerh = hh * 0.7 if circle else hh
                cells = [(layer, i, j) for layer in layers for i, j in router.inside_rect(cx, cy, inner, innerh)]
                pads_of[net].append(NetPad(part.ref, number, cx, cy, layers, cells))

    def net_class(n: str) -> str:
        return "pow" if n.lstrip("/") in power_nets and n != "/BUCK_SW" else "sig"

    # routing order: the group buses along their rows first, then power, then everything else by span
    def order_key(n: str) -> tuple[int, float]:
        pads = pads_of[n]
        xs = [p.x for p in pads]
        ys = [p.y for p in pads]
        span = (max(xs) - min(xs) + max(ys) - min(ys)) if pads else 0.0
        if "_G" in n and not n.startswith(("/SCK_BUF", "/MOSI_BUF")):
            return (0, span)
        if n in ("/+3V3",):
            return (1, span)
        if n == "/GND":
            return (2, span)
        if n.startswith("/CS"):
            return (3, span)
        return (3, span)

    unrouted: list[str] = []
    for n in sorted(all_nets, key=order_key):
        pads = pads_of[n]
        if len(pads) < 2:
            continue
        nid = net_id[n]
        cls = net_class(n)
        tree: set[tuple[int, int, int]] = set(pads[0].cells)
        connected = [pads[0]]
        rest = pads[1:]
        while rest:
            rest.sort(key=lambda p: min(math.hypot(p.x - c.x, p.y - c.y) for c in connected))
            pad = rest.pop(0)
            nearest = min(connected, key=lambda c: math.hypot(pad.x - c.x, pad.y - c.y))
            path_cells = router.route(nid, cls, pad.cells, tree, (nearest.x, nearest.y))
            if path_cells is None and cls == "pow":
                path_cells = router.route(nid, "sig", pad.cells, tree, (nearest.x, nearest.y))
                width = WIDTH["sig"]
            else:
                width = WIDTH[cls]
            if path_cells is None:
                unrouted.append(f"{n}: {pad.ref}.{pad.number}")
                connected.append(pad)
                tree |= set(pad.cells)
                continue
            _lay_path(board, router, netinfo[n], nid, path_cells, width)
            tree |= set(path_cells) | set(pad.cells)
            connected.append(pad)

    _outline(board)
    _silk_labels(board, parts)
    _ground_pour(board, netinfo["/GND"])
    pcbnew.SaveBoard(str(path), board)
    # fill the pour on the board as KiCad loads it (with its project and rules)
    loaded = pcbnew.LoadBoard(str(path))
    loaded.BuildConnectivity()
    pcbnew.ZONE_FILLER(loaded).Fill(loaded.Zones())
    pcbnew.SaveBoard(str(path), loaded)
    return unrouted


def _lay_path(board: pcbnew.BOARD, router: Router, net: pcbnew.NETINFO_ITEM, nid: int,
              cells: list[tuple[int, int, int]], width: float) -> None:
    """Turn a cell path into straight tracks and vias, and mark their copper."""
    hw = width / 2
    # split into runs on one layer
    runs: list[list[tuple[int, int, int]]] = [[cells[0]]]
    for c in cells[1:]:
        if c[0] != runs[-1][-1][0]:
            x, y = c[1] * GRID, c[2] * GRID
            via = pcbnew.PCB_VIA(board)
            via.SetPosition(pcbnew.VECTOR2I(mm(x), mm(y)))
            via.SetWidth(mm(VIA_D))
            via.SetDrill(mm(VIA_DRILL))
            via.SetNet(net)
            board.Add(via)
            for layer in (0, 1):
                router.mark_circle(nid, layer, x, y, VIA_D / 2)
            runs.append([c])
        else:
            runs[-1].append(c)
    for run in runs:
        if len(run) < 2:
            continue
        corners = [run[0]]
        for a, b, c in zip(run, run[1:], run[2:], strict=False):
            if (b[1] - a[1], b[2] - a[2]) != (c[1] - b[1], c[2] - b[2]):
                corners.append(b)
        corners.append(run[-1])
        layer = run[0][0]
        for a, b in zip(corners, corners[1:], strict=False):
            x1, y1, x2, y2 = a[1] * GRID, a[2] * GRID, b[1] * GRID, b[2] * GRID
            track = pcbnew.PCB_TRACK(board)
            track.SetStart(pcbnew.VECTOR2I(mm(x1), mm(y1)))
            track.SetEnd(pcbnew.VECTOR2I(mm(x2), mm(y2)))
            track.SetWidth(mm(width))
            track.SetLayer(pcbnew.F_Cu if layer == 0 else pcbnew.B_Cu)
            track.SetNet(net)
            board.Add(track)
            router.mark_segment(nid, layer, x1, y1, x2, y2, hw)


def _silk_labels(board: pcbnew.BOARD, parts: list[design.Part]) -> None:
    """Channel numbers under the reader connectors and pin names at J1/J2, for the person wiring it."""
    labels: list[tuple[str, float, float]] = []
    for part in parts:
        if "Channel" in part.extra:
            labels.append((f"CH{part.extra['Channel']}", part.at[0], part.at[1] + 7 * design.PIN_PITCH + 2.6))
    j1 = next(p for p in parts if p.ref == "J1")
    labels.append(("+5V  GND", j1.at[0] + 2.54, j1.at[1] + 6.6))
    j2 = next(p for p in parts if p.ref == "J2")
    labels.append(("DIN GND", j2.at[0] + 6.3, j2.at[1] + 1.25))
    for text, x, y in labels:
        item = pcbnew.PCB_TEXT(board)
        item.SetText(text)
        item.SetLayer(pcbnew.F_SilkS)
        item.SetPosition(pcbnew.VECTOR2I(mm(x), mm(y)))
        item.SetTextSize(pcbnew.VECTOR2I(mm(1.0), mm(1.0)))
        item.SetTextThickness(mm(0.15))
        if text.startswith("DIN"):
            item.SetTextAngleDegrees(270)
        board.Add(item)


def _outline(board: pcbnew.BOARD) -> None:
    corners = [(0, 0), (design.BOARD_W, 0), (design.BOARD_W, design.BOARD_H), (0, design.BOARD_H)]
    for (x1, y1), (x2, y2) in zip(corners, corners[1:] + corners[:1], strict=False):
        seg = pcbnew.PCB_SHAPE(board)
        seg.SetShape(pcbnew.SHAPE_T_SEGMENT)
        seg.SetStart(pcbnew.VECTOR2I(mm(x1), mm(y1)))
        seg.SetEnd(pcbnew.VECTOR2I(mm(x2), mm(y2)))
        seg.SetLayer(pcbnew.Edge_Cuts)
        seg.SetWidth(mm(0.1))
        board.Add(seg)


def _ground_pour(board: pcbnew.BOARD, gnd: pcbnew.NETINFO_ITEM) -> None:
    for layer in (pcbnew.B_Cu, pcbnew.F_Cu):
        zone = pcbnew.ZONE(board)
        zone.SetLayer(layer)
        zone.SetNet(gnd)
        outline = zone.Outline()
        outline.NewOutline()
        for x, y in ((0, 0), (design.BOARD_W, 0), (design.BOARD_W, design.BOARD_H), (0, design.BOARD_H)):
            outline.Append(mm(x), mm(y))
        zone.SetLocalClearance(mm(0.3))
        zone.SetMinThickness(mm(0.25))
        zone.SetPadConnection(pcbnew.ZONE_CONNECTION_FULL)
        zone.SetIslandRemovalMode(pcbnew.ISLAND_REMOVAL_MODE_ALWAYS)
        board.Add(zone)
