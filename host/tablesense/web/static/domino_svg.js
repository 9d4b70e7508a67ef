/* Draws a dominoes line of play as SVG tiles with pips.
 *
 * The line is {center, left: [...outward], right: [...outward]}. Each entry is
 * either a string "a-b" (a = the number toward the centre, b = the outer one; for
 * the centre tile a is drawn on the left) or an object {tile: "a-b", outer?,
 * inner?, left?, right?, seat?}. Doubles are drawn crosswise. Arms that grow past
 * the row width turn (left arm upward, right arm downward) and run back, the
 * way players lay a long line on a real table.
 * window.DominoSVG.render(line, {lastTile, targets, targetDouble}) returns an
 * <svg> element. ``targets`` ({left, right} or {center}: "idle", "legal" or
 * "illegal") draws where the next tile of each arm goes, crosswise when
 * ``targetDouble``: the table-top page's drop surface (data-target = arm).
 */
(function () {
  "use strict";
  const NS = "http://www.w3.org/2000/svg";
  const U = 40;          // one half of a tile, in SVG units
  const ROW = 2.6 * U;   // distance between rows of the line
  const HALF_ROW = 9 * U; // how far an arm runs from the centre before turning
  const GAP = 0.08 * U;  // space between neighbouring tiles
  const MAX_SCALE = 1.5;  // screen pixels per SVG unit, at most
  /* Words in the table's language, handed over by the server in #labels
   * (tablesense/web/labels.py); English when a page has none. */
  const WORDS = (() => {
    const node = document.getElementById("labels");
    try { return node ? JSON.parse(node.textContent) : {}; } catch (_) { return {}; }
  })();
  const EN = {
    line_of_play: "line of play", line_empty: "The line of play is empty", tile_named: "tile {tile}",
    tile_down: "a tile face down", opening: "{tile} (opening)", on_left: "{tile} (left)",
    on_right: "{tile} (right)",
  };
  function word(key, params) {
    const template = WORDS[key] !== undefined ? WORDS[key] : EN[key];
    return String(template).replace(/\{(\w+)\}/g, (m, k) => (params && k in params ? String(params[k]) : m));
  }

  // Pip centres in a unit square, by count.
  const PIPS = {
    0: [],
    1: [[0.5, 0.5]],
    2: [[0.25, 0.25], [0.75, 0.75]],
    3: [[0.25, 0.25], [0.5, 0.5], [0.75, 0.75]],
    4: [[0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]],
    5: [[0.25, 0.25], [0.75, 0.25], [0.5, 0.5], [0.25, 0.75], [0.75, 0.75]],
    6: [[0.25, 0.22], [0.75, 0.22], [0.25, 0.5], [0.75, 0.5], [0.25, 0.78], [0.75, 0.78]],
  };

  function parseTile(text) {
    const m = /^\s*(\d)\s*[-|:]\s*(\d)\s*$/.exec(String(text));
    if (!m) return null;
    return [Number(m[1]), Number(m[2])];
  }

  /* -> {a, b, tile, seat, double}: a toward the centre (or left), b outward. */
  function normalise(entry, isCenter) {
    if (entry === null || entry === undefined) return null;
    const obj = typeof entry === "string" ? { tile: entry } : entry;
    const nums = parseTile(obj.tile);
    if (!nums) return null;
    let [a, b] = nums;
    if (isCenter && obj.left !== undefined && obj.right !== undefined) {
      a = Number(obj.left); b = Number(obj.right);
    } else if (isCenter && obj.outer !== undefined && obj.outer !== null) {
      a = Number(obj.outer); b = nums[0] === a ? nums[1] : nums[0]; // the opening's outer is its left number
    } else if (obj.outer !== undefined && obj.outer !== null) {
      b = Number(obj.outer); a = nums[0] === b ? nums[1] : nums[0];
    } else if (obj.inner !== undefined && obj.inner !== null) {
      a = Number(obj.inner); b = nums[0] === a ? nums[1] : nums[0];
    }
    const lo = Math.min(a, b), hi = Math.max(a, b);
    return { a, b, tile: lo + "-" + hi, seat: obj.seat, double: a === b };
  }

  /* The opening tile shows, on each side, the number its arm continues from:
   * taken from the first tile of an arm (its inner number), else from the
   * line's ends, else as written. */
  function orientCenter(c, line, ends) {
    if (!c || c.double) return c;
    const lo = Math.min(c.a, c.b), hi = Math.max(c.a, c.b);
    const other = (n) => (n === lo ? hi : lo);
    const first = (side) => {
      const arm = line[side] || [];
      return arm.length ? normalise(arm[0], false) : null;
    };
    const l = first("left"), r = first("right");
    const entry = typeof line.center === "object" && line.center ? line.center : {};
    if (entry.left !== undefined && entry.right !== undefined) return c;
    if (entry.outer !== undefined && entry.outer !== null) return c;
    let left = null;
    if (l && (l.a === lo || l.a === hi)) left = l.a;
    else if (r && (r.a === lo || r.a === hi)) left = other(r.a);
    else if (ends && (ends.left === lo || ends.left === hi) && !(line.left || []).length && !(line.right || []).length) left = ends.left;
    if (left === null) return c;
    return Object.assign({}, c, { a: left, b: other(left) });
  }

  function el(name, attrs) {
    const node = document.createElementNS(NS, name);
    for (const k in attrs) node.setAttribute(k, attrs[k]);
    return node;
  }

  function drawHalf(g, x, y, n) {
    for (const [px, py] of PIPS[n] || []) {
      g.appendChild(el("circle", { cx: x + px * U, cy: y + py * U, r: 0.09 * U, class: "pip" }));
    }
  }

  /* One tile at (x, y) top-left; horizontal shows [first | second] left to
   * right, vertical shows first on top. */
  function drawTile(p, meta) {
    const w = p.vertical ? U : 2 * U, h = p.vertical ? 2 * U : U;
    const g = el("g", {
      class: "tile" + (meta.last ? " last" : "") + (p.vertical ? " crosswise" : ""),
      "data-tile": meta.tile,
      "data-arm": meta.arm,
      "data-index": String(meta.index),
      "data-shown": p.first + "-" + p.second,
    });
    if (meta.seat !== undefined && meta.seat !== null) g.setAttribute("data-seat", String(meta.seat));
    if (meta.arm !== "center") {
      g.setAttribute("data-inner", String(meta.inner));
      g.setAttribute("data-outer", String(meta.outer));
    }
    const title = el("title", {});
    title.textContent = word(meta.arm === "center" ? "opening" : meta.arm === "left" ? "on_left" : "on_right", { tile: meta.tile });
    g.appendChild(title);
    g.appendChild(el("rect", { x: p.x, y: p.y, width: w, height: h, rx: 0.14 * U, class: "face" }));
    if (p.vertical) {
      g.appendChild(el("line", { x1: p.x + 0.15 * U, y1: p.y + U, x2: p.x + 0.85 * U, y2: p.y + U, class: "bar" }));
      drawHalf(g, p.x, p.y, p.first);
      drawHalf(g, p.x, p.y + U, p.second);
    } else {
      g.appendChild(el("line", { x1: p.x + U, y1: p.y + 0.15 * U, x2: p.x + U, y2: p.y + 0.85 * U, class: "bar" }));
      drawHalf(g, p.x, p.y, p.first);
      drawHalf(g, p.x + U, p.y, p.second);
    }
    return g;
  }

  /* Positions of an arm's tiles, outward from the centre tile's edge. */
  function layoutArm(tiles, side, startEdge) {
    const out = [];
    let dir = side === "left" ? -1 : 1;
    const rowStep = side === "left" ? -1 : 1;
    let row = 0, cursor = startEdge, inRow = 1;
    for (const t of tiles) {
      const w = t.double ? U : 2 * U;
      const next = dir < 0 ? cursor - GAP - w : cursor + GAP + w;
      if (inRow > 0 && (next < -HALF_ROW - U || next > HALF_ROW + U)) {
        row += rowStep; dir = -dir; inRow = 0;
        cursor += dir > 0 ? -GAP : GAP; // the new row starts flush with the last tile's end
      }
      const x0 = dir < 0 ? cursor - GAP - w : cursor + GAP;
      const cy = row * ROW;
      const pos = t.double
        ? { x: x0, y: cy - U, vertical: true, first: t.a, second: t.b }
        : { x: x0, y: cy - U / 2, vertical: false,
            first: dir < 0 ? t.b : t.a, second: dir < 0 ? t.a : t.b };
      out.push(pos);
      cursor = dir < 0 ? x0 : x0 + w;
      inRow += 1;
    }
    return out;
  }

  /* Where the next tile goes, as a dashed tile outline (crosswise for a
   * double): a drop target of the table-top page. */
  function drawTarget(p, side, state) {
    const w = p.vertical ? U : 2 * U, h = p.vertical ? 2 * U : U;
    const g = el("g", { class: "drop-target state-" + state, "data-target": side });
    g.appendChild(el("rect", { x: p.x, y: p.y, width: w, height: h, rx: 0.14 * U, class: "target-face" }));
    return g;
  }

  function render(line, opts) {
    opts = opts || {};
    const svg = el("svg", { class: "line-svg", role: "img", "aria-label": word("line_of_play") });
    const center = orientCenter(normalise(line && line.center, true), line || {}, opts.ends);
    const targets = opts.targets || {};
    const dbl = !!opts.targetDouble;
    if (!center && targets.center) {
      // the empty line: the opening's place, and the words under it
      const p = dbl ? { x: -U / 2, y: -U, vertical: true } : { x: -U, y: -U / 2, vertical: false };
      svg.appendChild(drawTarget(p, "center", targets.center));
      const t = el("text", { x: 0, y: 1.7 * U, "text-anchor": "middle", class: "empty-line" });
      t.textContent = word("line_empty");
      svg.appendChild(t);
      svg.setAttribute("viewBox", [-5 * U, -1.3 * U, 10 * U, 3.5 * U].join(" "));
      svg.setAttribute("data-count", "0");
      svg.style.maxWidth = Math.round(10 * U * MAX_SCALE) + "px";
      return svg;
    }
    if (!center) {
      svg.setAttribute("viewBox", "0 0 400 80");
      const t = el("text", { x: 200, y: 45, "text-anchor": "middle", class: "empty-line" });
      t.textContent = word("line_empty");
      svg.appendChild(t);
      svg.setAttribute("data-count", "0");
      svg.style.maxWidth = "36rem";
      return svg;
    }
    const placed = [];
    const cPos = center.double
      ? { x: -U / 2, y: -U, vertical: true, first: center.a, second: center.b }
      : { x: -U, y: -U / 2, vertical: false, first: center.a, second: center.b };
    placed.push([cPos, { tile: center.tile, arm: "center", index: 0, seat: center.seat }]);
    const halfW = center.double ? U / 2 : U;
    const next = [];
    for (const side of ["left", "right"]) {
      const tiles = ((line && line[side]) || []).map((e) => normalise(e, false)).filter(Boolean);
      const edge = side === "left" ? -halfW : halfW;
      const wanted = targets[side] ? [{ double: dbl, a: 0, b: 0 }] : [];
      const spots = layoutArm(tiles.concat(wanted), side, edge);
      spots.slice(0, tiles.length).forEach((p, i) => {
        placed.push([p, { tile: tiles[i].tile, arm: side, index: i, seat: tiles[i].seat, inner: tiles[i].a, outer: tiles[i].b }]);
      });
      if (wanted.length) next.push([spots[tiles.length], side, targets[side]]);
    }
    let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    const grow = (p) => {
      // a target reserves room for either way round, so lifting a double moves nothing
      const w = p.vertical || p.target ? Math.max(U, p.vertical ? U : 2 * U) : 2 * U;
      const h = p.vertical ? 2 * U : U;
      minX = Math.min(minX, p.x); minY = Math.min(minY, p.target ? -U : p.y);
      maxX = Math.max(maxX, p.x + (p.target ? 2 * U : w)); maxY = Math.max(maxY, p.target ? Math.max(p.y + h, U) : p.y + h);
    };
    for (const [p, meta] of placed) {
      grow(p);
      meta.last = opts.lastTile !== undefined && opts.lastTile === meta.tile;
      svg.appendChild(drawTile(p, meta));
    }
    for (const [p, side, state] of next) {
      grow(Object.assign({ target: true }, p));
      svg.appendChild(drawTarget(p, side, state));
    }
    const pad = 0.3 * U;
    const vbW = maxX - minX + 2 * pad;
    svg.setAttribute("viewBox", [minX - pad, minY - pad, vbW, maxY - minY + 2 * pad].join(" "));
    // A short line must not blow up to giant tiles: at most MAX_SCALE px per unit.
    svg.style.maxWidth = Math.round(vbW * MAX_SCALE) + "px";
    svg.setAttribute("data-count", String(placed.length));
    return svg;
  }

  /* One tile on its own (the table-top page's racks, cells and hands), drawn
   * by the same drawTile as the line: "a-b" face up, null face down. Vertical
   * tiles show a on top. Returns an <svg>. */
  function tileSVG(text, opts) {
    opts = opts || {};
    const vertical = !!opts.vertical;
    const w = vertical ? U : 2 * U, h = vertical ? 2 * U : U;
    const pad = 0.06 * U;
    const svg = el("svg", {
      class: "tile-svg" + (text ? "" : " back"),
      viewBox: [-pad, -pad, w + 2 * pad, h + 2 * pad].join(" "),
      role: "img",
      "aria-label": text ? word("tile_named", { tile: text }) : word("tile_down"),
    });
    const nums = text ? parseTile(text) : null;
    if (!nums) {
      svg.appendChild(el("rect", { x: 0, y: 0, width: w, height: h, rx: 0.14 * U, class: "face back" }));
      return svg;
    }
    const p = { x: 0, y: 0, vertical, first: nums[0], second: nums[1] };
    const g = drawTile(p, { tile: nums[0] + "-" + nums[1], arm: "center", index: 0 });
    svg.appendChild(g);
    return svg;
  }

  window.DominoSVG = { render, normalise, parseTile, tileSVG };
})();
