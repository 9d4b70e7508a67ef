/* The table-top page: the virtual table drawn from its geometry file, played
 * by hand. Pieces are moved with pointer events (mouse, pen or finger): the
 * pick-up is sent when the pointer goes down on a piece (the tag leaves its
 * reader), the put-down when it is released over a cell. The server sends
 * this seat's view of the table (never anything else) over a WebSocket;
 * tiles and cards are drawn by the display page's own functions
 * (DominoSVG.tileSVG, TableDisplay.cardNode).
 *
 * Test contract: pieces carry data-piece (record id, or "hidden"), cells
 * data-cell (geometry id), racks data-rack (seat), seat buttons
 * data-button="SEAT:KIND" (pass, call, referee).
 */
(function () {
  "use strict";
  const $ = (sel) => document.querySelector(sel);
  const body = document.body;
  const SEAT = body.dataset.seat === "" ? null : Number(body.dataset.seat);
  const OPEN = body.dataset.open === "true";
  /* The seat's key from the printed address: the server rendered this page
   * for SEAT (or OPEN) only because the key was right; every request of the
   * page carries it. The public view (SEAT null, not OPEN) has none. */
  const KEY = (OPEN || SEAT !== null) ? (new URLSearchParams(location.search).get("key") || "") : "";
  const PUBLIC = !OPEN && SEAT === null;
  /* The page's words in the table's language, handed over by the server
   * (tablesense/web/labels.py); the English here only when a page has none. */
  const WORDS = (() => {
    const node = document.getElementById("labels");
    try { return node ? JSON.parse(node.textContent) : {}; } catch (_) { return {}; }
  })();
  const EN = {
    btn_pass: "Pass", btn_call: "Call", btn_referee: "Referee", btn_kems: "Kems!",
    btn_contre: "Contre", failed: "that did not work", card_down: "a card face down",
    turn_led: "turn LED", you: "you", computer: "computer", other_table: "at the other table", in_air: "Lifted, in a hand",
    hint_no_turns: "Swap: drag a board card onto your free rack cell, then one of your cards onto the slot it left. Four of a kind? Press Kems!",
    hint_turn: "Your turn: drag a tile onto a green end of the line, or Pass",
    is_playing: "{name} is playing", rack_of: "{name}'s rack", table_top_of: "Table top · {name}",
    open_view: "open hands", you_are: "You: {name}", off_count: "{n} in the stock (off the table)",
    drop_green: "Drop it on a green end of the line",
    drop_no_fit: "{tile} does not match this end ({end}): drop it on a green end",
    drop_no_end: "{tile} matches neither end: put it back on your rack, or Pass",
    drop_card: "Drop it on your free rack cell or on the empty slot",
  };
  function t(key, params) {
    const template = WORDS[key] !== undefined ? WORDS[key] : EN[key] !== undefined ? EN[key] : key;
    return String(template).replace(/\{(\w+)\}/g, (m, k) =>
      params && params[k] !== undefined && params[k] !== null ? String(params[k]) : m);
  }
  /* A seat's name as the table says it (North -> Norte), a player's as typed. */
  const seatName = (name) => (WORDS["name:" + name] !== undefined ? WORDS["name:" + name] : name);
  /* What the page draws differently per game comes with the layout (`facts`,
   * from the game's registry entry: Game.page_facts), never from its name. */
  const facts = () => (layout && layout.facts) || {};
  const cards = () => facts().piece_word === "card";
  const lineOfPlay = () => (facts().play_area || "line") === "line";
  let layout = null;
  let cellInfo = {};   // id -> {x, y, zone, seat, pitch, vertical}
  let state = null;
  let drag = null;

  function make(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = String(text);
    return n;
  }

  function who() {
    return OPEN ? { open: true, key: KEY } : { seat: SEAT, key: KEY };
  }

  function post(path, data) {
    return fetch("/tabletop/api/" + path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(Object.assign(who(), data || {})),
    }).then((r) => r.json()).then((res) => {
      if (!res.ok) oops(res.error || t("failed"));
      return res;
    });
  }

  let oopsTimer = null;
  function oops(textValue) {
    const n = $("#oops");
    n.textContent = textValue;
    n.hidden = false;
    clearTimeout(oopsTimer);
    oopsTimer = setTimeout(() => { n.hidden = true; }, 3000);
  }

  /* ---- geometry ---------------------------------------------------------- */

  function mine(cell) {
    return !OPEN && SEAT !== null && cell.zone === "rack" && cell.seat === SEAT;
  }

  /* A seated person sees the table from their chair: turn the geometry by a
   * quarter turn at a time until their rack is at the bottom (south). */
  function turnToSeat() {
    if (OPEN || SEAT === null) return;
    const own = layout.cells.filter((c) => c.zone === "rack" && c.seat === SEAT);
    if (!own.length) return;
    const xs = layout.cells.map((c) => c.x), ys = layout.cells.map((c) => c.y);
    const cx = (Math.min(...xs) + Math.max(...xs)) / 2, cy = (Math.min(...ys) + Math.max(...ys)) / 2;
    const mx = own.reduce((a, c) => a + c.x, 0) / own.length - cx;
    const my = own.reduce((a, c) => a + c.y, 0) / own.length - cy;
    const quarter = Math.round((-Math.PI / 2 - Math.atan2(my, mx)) / (Math.PI / 2));
    const k = ((quarter % 4) + 4) % 4;
    if (!k) return;
    for (const c of layout.cells) {
      let x = c.x - cx, y = c.y - cy;
      for (let i = 0; i < k; i++) [x, y] = [-y, x];  // a quarter turn anticlockwise
      c.x = x + cx; c.y = y + cy;
    }
  }

  function prepare() {
    turnToSeat();
    const byZone = {};
    for (const c of layout.cells) {
      const key = c.zone + ":" + (c.seat === null ? "" : c.seat);
      (byZone[key] = byZone[key] || []).push(c);
    }
    for (const key in byZone) {
      const group = byZone[key];
      for (const c of group) {
        let best = Infinity, dx = 1, dy = 0;
        for (const o of group) {
          if (o === c) continue;
          const d = Math.hypot(o.x - c.x, o.y - c.y);
          if (d < best) { best = d; dx = Math.abs(o.x - c.x); dy = Math.abs(o.y - c.y); }
        }
        if (!isFinite(best)) best = 60;
        // Along a horizontal row tiles stand across it in racks and lie along it on the line.
        const along = dx >= dy ? "x" : "y";
        const vertical = c.zone === "line" || c.zone === "boneyard" ? along === "y" : along === "x";
        cellInfo[c.id] = Object.assign({}, c, { pitch: best, vertical });
      }
    }
  }

  function pieceNode(id, cell, shown) {
    const wrap = make("div", "piece");
    wrap.dataset.piece = id;
    if (shown) wrap.dataset.shown = shown;
    const hidden = id === "hidden";
    if (cards()) {
      if (hidden) {
        const back = make("div", "card back");
        back.setAttribute("aria-label", t("card_down"));
        wrap.appendChild(back);
      } else {
        wrap.appendChild(window.TableDisplay.cardNode(id, cell || ""));
      }
      wrap.classList.add("is-card");
    } else {
      const info = cell ? cellInfo[cell] : null;
      const vertical = info ? (mine(info) || info.vertical) : false;
      wrap.appendChild(window.DominoSVG.tileSVG(hidden ? null : shown || id, { vertical }));
      wrap.classList.add("is-tile", vertical ? "vertical" : "horizontal");
    }
    return wrap;
  }

  function buildTable() {
    const table = $("#table");
    table.replaceChildren();
    const myRack = $("#my-rack");
    myRack.replaceChildren();
    for (const s of layout.seats) {
      const rack = make("div", "rack");
      rack.dataset.rack = String(s.index);
      rack.setAttribute("aria-label", t("rack_of", { name: seatName(s.name) }));
      const mineRack = !OPEN && SEAT === s.index;
      for (const id of s.rack) rack.appendChild(cellNode(cellInfo[id]));
      if (mineRack) {
        rack.classList.add("own");
        myRack.appendChild(rack);
      } else {
        rack.classList.add("on-map");
        table.appendChild(rack);
      }
    }
    for (const c of layout.cells) {
      if (c.zone !== "rack") table.appendChild(cellNode(cellInfo[c.id]));
    }
    $("#my-side").hidden = OPEN || SEAT === null;
    buildSeats();
    place();
    table.dataset.ready = "true";
  }

  function buildSeats() {
    const seats = $("#tt-seats");
    seats.replaceChildren();
    const words = facts().buttons || { pass: "pass", call: "call" };
    const labels = { pass: t("btn_" + words.pass), call: t("btn_" + words.call), referee: t("btn_referee") };
    const myButtons = $("#my-buttons");
    myButtons.replaceChildren();
    for (const s of layout.seats) {
      const box = make("div", "tt-seat");
      box.dataset.seat = String(s.index);
      box.dataset.turn = "false";
      const head = make("div", "tt-seat-head");
      const led = make("span", "turn-led");
      led.dataset.turnLed = String(s.index);
      led.dataset.lit = "false";
      led.title = t("turn_led");
      head.appendChild(led);
      head.appendChild(make("span", "name", seatName(s.name)));
      head.appendChild(make("span", "who", SEAT === s.index && !OPEN ? t("you") : s.person ? "" : s.elsewhere ? t("other_table") : t("computer")));
      box.appendChild(head);
      const btns = make("div", "tt-buttons");
      for (const kind of PUBLIC ? [] : s.buttons) {  // the public view presses nothing
        const b = make("button", "seat-button kind-" + kind, labels[kind] || kind);
        b.type = "button";
        b.dataset.button = s.index + ":" + kind;
        b.disabled = !(layout.buttons && (OPEN || SEAT === s.index));
        // a press held a second or more is a long press (the coach, when on)
        let downAt = 0;
        b.addEventListener("pointerdown", () => { downAt = performance.now(); });
        b.addEventListener("click", () => {
          const held = downAt ? (performance.now() - downAt) / 1000 : 0;
          downAt = 0;
          post("press", { button_seat: s.index, kind, hold: held >= 1 ? held : 0 });
        });
        if (!OPEN && SEAT === s.index) myButtons.appendChild(b); else btns.appendChild(b);
      }
      box.appendChild(btns);
      box.appendChild(make("div", "air"));
      seats.appendChild(box);
    }
    const cbox = make("div", "tt-seat computer");
    cbox.id = "tt-computer";
    cbox.hidden = true;
    cbox.appendChild(make("div", "tt-seat-head", t("in_air")));
    cbox.appendChild(make("div", "air"));
    seats.appendChild(cbox);
  }

  function cellNode(c) {
    const n = make("div", "cell zone-" + c.zone);
    n.dataset.cell = c.id;
    n.dataset.zone = c.zone;
    n.dataset.light = "off";
    n.title = c.id;
    if (c.vertical) n.classList.add("vertical");
    return n;
  }

  /* A cell's drawn size in mm: tiles 2:1 along the line, standing in racks;
   * cards 5:7 (lying across a rack that runs north-south). */
  function cellSize(c) {
    const info = cellInfo[c.id];
    let cw = info.pitch * 0.94, ch = info.pitch * 0.94;
    if (cards()) {
      if (c.zone === "rack" && !info.vertical) { ch = info.pitch * 0.9; cw = ch * 1.4; }
      else { cw = info.pitch * 0.9; ch = cw * 1.4; }
    } else if (c.zone === "rack") {
      if (info.vertical) ch = cw * 2; else cw = ch * 2;
    } else if (c.zone === "boneyard") {
      cw = info.pitch * 0.8; ch = cw / 2;
    } else if (info.vertical) {
      cw = ch / 2;
    } else {
      ch = cw / 2;
    }
    return [cw, ch];
  }

  /* Position the map's cells from their mm coordinates (y grows north). The
   * other seats' racks are drawn just outside the play area (the table's
   * empty felt between them is left out), so the pieces come out larger. */
  function place() {
    const table = $("#table");
    const cells = layout.cells.filter((c) => !mine(c));
    if (!cells.length) return;
    const pos = {};
    const play = cells.filter((c) => c.zone !== "rack");
    let pMinX = Infinity, pMaxX = -Infinity, pMinY = Infinity, pMaxY = -Infinity;
    for (const c of play) {
      const [cw, ch] = cellSize(c);
      pMinX = Math.min(pMinX, c.x - cw / 2); pMaxX = Math.max(pMaxX, c.x + cw / 2);
      pMinY = Math.min(pMinY, c.y - ch / 2); pMaxY = Math.max(pMaxY, c.y + ch / 2);
    }
    const gap = 25;
    for (const s of layout.seats) {
      const rc = cells.filter((c) => c.zone === "rack" && c.seat === s.index);
      if (!rc.length) continue;
      let dx = 0, dy = 0;
      if (play.length) {
        let rMinX = Infinity, rMaxX = -Infinity, rMinY = Infinity, rMaxY = -Infinity;
        for (const c of rc) {
          const [cw, ch] = cellSize(c);
          rMinX = Math.min(rMinX, c.x - cw / 2); rMaxX = Math.max(rMaxX, c.x + cw / 2);
          rMinY = Math.min(rMinY, c.y - ch / 2); rMaxY = Math.max(rMaxY, c.y + ch / 2);
        }
        if (rMaxX < pMinX - gap) dx = pMinX - gap - rMaxX;
        else if (rMinX > pMaxX + gap) dx = pMaxX + gap - rMinX;
        if (rMaxY < pMinY - gap) dy = pMinY - gap - rMaxY;
        else if (rMinY > pMaxY + gap) dy = pMaxY + gap - rMinY;
      }
      for (const c of rc) pos[c.id] = [c.x + dx, c.y + dy];
    }
    for (const c of play) pos[c.id] = [c.x, c.y];
    let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
    for (const c of cells) {
      const [cw, ch] = cellSize(c);
      const [x, y] = pos[c.id];
      minX = Math.min(minX, x - cw / 2); maxX = Math.max(maxX, x + cw / 2);
      minY = Math.min(minY, y - ch / 2); maxY = Math.max(maxY, y + ch / 2);
    }
    const pad = 10;
    minX -= pad; minY -= pad; maxX += pad; maxY += pad;
    const w = table.clientWidth, h = table.clientHeight;
    const scale = Math.min(w / (maxX - minX), h / (maxY - minY));
    const offX = (w - (maxX - minX) * scale) / 2, offY = (h - (maxY - minY) * scale) / 2;
    table.style.setProperty("--mm", scale + "px");
    for (const c of cells) {
      const n = table.querySelector('[data-cell="' + c.id + '"]');
      if (!n) continue;
      const [cw, ch] = cellSize(c);
      const [x, y] = pos[c.id];
      const px = offX + (x - minX) * scale, py = offY + (maxY - y) * scale;
      n.style.left = (px - (cw * scale) / 2) + "px";
      n.style.top = (py - (ch * scale) / 2) + "px";
      n.style.width = cw * scale + "px";
      n.style.height = ch * scale + "px";
    }
  }

  /* ---- drawing the state -------------------------------------------------- */

  function lightName(rgb) {
    if (!rgb) return "none";
    const [r, g, b] = rgb;
    const m = Math.max(r, g, b);
    if (m === 0) return "off";
    if (r === m && g < r / 3 && b < r / 3) return "red";
    if (g === m && r < g / 2 && b < g / 2) return "green";
    if (b === m && r < b / 2 && g < b / 2) return "blue";
    if (r > 0 && b > 0 && g < Math.min(r, b) / 2) return "purple";
    if (r > 0 && g > 0 && b < Math.min(r, g) / 2) return "amber";
    if (g > 0 && b > 0 && r < Math.min(g, b) / 2) return "teal";  // the coach's hint
    return "white";
  }

  function glow(rgb) {
    const m = Math.max(rgb[0], rgb[1], rgb[2]);
    const k = m ? 255 / m : 0;  // WS2812 values are dim: show the hue at full strength
    return "rgb(" + rgb.map((v) => Math.round(v * k)).join(",") + ")";
  }

  function draggable(cellId) {
    if (OPEN) return true;
    const c = cellInfo[cellId];
    if (SEAT === null || c.zone === "stock") return false;  // a remote match's stock lies face down
    return c.zone !== "rack" || c.seat === SEAT;
  }

  /* How each tile of the line of play is turned: the numbers that match
   * touch, as players lay them (cell -> "first-second", first on the left
   * or on top). */
  function lineFaces(cells) {
    const out = {};
    const line = layout.line;
    if (!line || !lineOfPlay()) return out;
    out._line = { center: null, left: [], right: [] };
    const nums = (cell) => {
      const p = cells[cell] && cells[cell].piece;
      return p && p !== "hidden" ? [Number(p[0]), Number(p[2])] : null;
    };
    const center = nums(line.center);
    if (!center) return out;
    const shares = (t, n) => t && (t[0] === n || t[1] === n);
    const l0 = nums(line.left[0]), r0 = nums(line.right[0]);
    let leftNum = center[0], rightNum = center[1];
    if (l0 && shares(l0, center[1]) && !shares(l0, center[0])) { leftNum = center[1]; rightNum = center[0]; }
    else if (r0 && shares(r0, center[0]) && !shares(r0, center[1])) { leftNum = center[1]; rightNum = center[0]; }
    out[line.center] = leftNum + "-" + rightNum;
    out._line.center = { tile: cells[line.center].piece, left: leftNum, right: rightNum };
    for (const [arm, start, side] of [[line.left, leftNum, "left"], [line.right, rightNum, "right"]]) {
      let prevCell = line.center, outer = start;
      for (const cell of arm) {
        const t = nums(cell);
        if (!t) break;
        const inner = shares(t, outer) ? outer : t[0];
        const next = t[0] === inner ? t[1] : t[0];
        const a = cellInfo[cell], b = cellInfo[prevCell];
        // the inner half faces the cell it continues from
        const innerFirst = a.vertical ? b.y > a.y : b.x < a.x;
        out[cell] = innerFirst ? inner + "-" + next : next + "-" + inner;
        out._line[side].push({ tile: cells[cell].piece, inner, outer: next });
        prevCell = cell; outer = next;
      }
    }
    return out;
  }

  function render(st) {
    state = st;
    body.dataset.conn = "live";
    const faces = lineFaces(st.cells);
    lineNow = faces._line || null;
    drawLine();
    for (const id in st.cells) {
      const n = document.querySelector('[data-cell="' + id + '"]');
      if (!n) continue;
      const info = st.cells[id];
      const want = (info.piece || "") + "|" + (faces[id] || "");
      const have = n.firstElementChild ? n.firstElementChild.dataset.piece + "|" + (n.firstElementChild.dataset.shown || "") : "|";
      if (want !== have) {
        n.replaceChildren();
        if (info.piece) {
          const p = pieceNode(info.piece, id, faces[id]);
          if (draggable(id)) p.classList.add("grab");
          n.appendChild(p);
        }
      }
      const light = lightName(info.led);
      n.dataset.light = light;
      n.dataset.led = info.led ? info.led.join(",") : "";
      n.style.setProperty("--led", info.led && light !== "off" ? glow(info.led) : "transparent");
    }
    // Seats: turn LEDs and the pieces each hand holds (the boxes are built once).
    for (const s of layout.seats) {
      const box = document.querySelector('.tt-seat[data-seat="' + s.index + '"]');
      const lit = !!(st.turn && st.turn[s.index]);
      box.dataset.turn = lit ? "true" : "false";
      box.querySelector(".turn-led").dataset.lit = lit ? "true" : "false";
      box.querySelector(".air").replaceChildren(
        ...(st.air || []).filter((a) => a.hand === "seat:" + s.index).map(airNode));
    }
    // The computer's hand and the open screen's hand.
    const others = (st.air || []).filter((a) => !/^seat:/.test(a.hand));
    const cbox = $("#tt-computer");
    cbox.hidden = !others.length;
    cbox.querySelector(".air").replaceChildren(...others.map(airNode));
    const hand = $("#my-hand");
    hand.replaceChildren();
    for (const a of st.air || []) if (a.mine && !OPEN) hand.appendChild(airNode(a));
    const stock = $("#stock");
    stock.dataset.stock = String(st.stock);
    stock.querySelector(".count").textContent = st.stock ? t("off_count", { n: st.stock }) : "";
    stock.hidden = !st.stock && lineOfPlay();
    stock.classList.toggle("grab", st.stock > 0 && (OPEN || (SEAT !== null && layout.dealer !== "computer")));
    // The referee's banner (the display's message).
    // It keeps its place when empty: nothing moves under a finger mid-drag.
    const msg = $("#message");
    msg.hidden = false;
    if (st.banner && st.banner.text) {
      msg.dataset.level = st.banner.level || "info";
      msg.textContent = st.banner.text;
    } else {
      msg.dataset.level = "";
      msg.textContent = hint(st) || "\u00a0";
    }
    window.TableDisplay.renderCoach(st.coach);  // the coach's box, drawn as on a seat page
    body.dataset.version = String(Number(body.dataset.version) + 1);
  }

  /* ---- the readable line: the drop surface ---------------------------------- */

  let lineNow = null;  // the line as the page last drew it ({center, left, right})

  /* The numbers at the line's two ends (null while it is empty). */
  function lineEnds() {
    const l = lineNow;
    if (!l || !l.center) return null;
    const last = (arm, fallback) => (arm.length ? arm[arm.length - 1].outer : fallback);
    return { left: last(l.left, l.center.left), right: last(l.right, l.center.right) };
  }

  /* Where a lifted tile may go: arm -> "legal" or "illegal" (the centre
   * while the line is empty); idle outlines while nothing is lifted and the
   * seat may play, none for a card or a watcher. */
  function lineTargets(tile) {
    if (!lineOfPlay() || !layout.line || PUBLIC) return {};
    const ends = lineEnds();
    const nums = tile ? window.DominoSVG.parseTile(tile) : null;
    // the coach's hint: the end its tile goes to glows teal until a tile is lifted
    const hinted = state && state.coach && state.coach.hint ? state.coach.hint.end : null;
    if (!ends) return { center: nums ? "legal" : hinted === "center" ? "coach" : "idle" };
    if (!nums) {
      const idle = { left: "idle", right: "idle" };
      if (hinted === "left" || hinted === "right") idle[hinted] = "coach";
      return idle;
    }
    const fits = (n) => (nums[0] === n || nums[1] === n ? "legal" : "illegal");
    return { left: fits(ends.left), right: fits(ends.right) };
  }

  /* The arm's next free cell of the physical table (the map): where a tile
   * dropped on that end of the readable line is laid. */
  function nextCell(side) {
    const line = layout.line;
    if (side === "center") return line.center;
    const cells = state ? state.cells : {};
    return (line[side] || []).find((c) => !(cells[c] && cells[c].piece)) || null;
  }

  /* The large line, drawn by the display's own renderer, with its targets;
   * the map's matching cells glow green while a tile that fits is lifted. */
  function drawLine() {
    const strip = $("#line");
    if (!strip || !lineOfPlay()) return;
    const tile = drag && drag.tile ? drag.tile : null;
    const targets = lineTargets(tile);
    const nums = tile ? window.DominoSVG.parseTile(tile) : null;
    const dbl = !!(nums && nums[0] === nums[1]);
    const key = JSON.stringify([lineNow, targets, dbl]);
    if (strip.dataset.key !== key) {
      strip.dataset.key = key;
      strip.replaceChildren(window.DominoSVG.render(lineNow || {}, { targets, targetDouble: dbl }));
    }
    document.querySelectorAll(".cell.legal").forEach((n) => n.classList.remove("legal"));
    for (const side in targets) {
      if (targets[side] !== "legal") continue;
      const cell = nextCell(side);
      const n = cell ? document.querySelector('[data-cell="' + cell + '"]') : null;
      if (n) n.classList.add("legal");
    }
    strip.dataset.lifted = tile ? "true" : "false";
  }

  /* What to do now, in the banner's place while the referee says nothing. */
  function hint(st) {
    if (OPEN || SEAT === null) return "";
    if (!facts().has_turns) {
      return t("hint_no_turns");
    }
    const turn = (st.turn || []).findIndex(Boolean);
    if (turn === SEAT) return t("hint_turn");
    const who = layout.seats.find((s) => s.index === turn);
    return who ? t("is_playing", { name: seatName(who.name) }) : "";
  }

  function airNode(a) {
    const n = pieceNode(a.piece, null);
    n.classList.add("in-air");
    n.dataset.hand = a.hand;
    if (a.mine) n.classList.add("grab");
    return n;
  }

  /* ---- dragging ----------------------------------------------------------- */

  function start(ev) {
    if (ev.button !== undefined && ev.button !== 0) return;
    const stock = ev.target.closest("#stock.grab");
    const piece = ev.target.closest(".piece.grab");
    if (!stock && !piece) return;
    ev.preventDefault();
    const from = piece ? piece.closest("[data-cell]") : null;
    const ghost = (piece || stock).cloneNode(true);
    ghost.removeAttribute("id");
    ghost.classList.add("ghost");
    ghost.querySelectorAll("[data-piece]").forEach((x) => x.removeAttribute("data-piece"));
    ghost.removeAttribute("data-piece");
    const r = (piece || stock).getBoundingClientRect();
    ghost.style.width = r.width + "px";
    ghost.style.height = r.height + "px";
    document.body.appendChild(ghost);
    // the piece rides above the finger (never over the place it is aimed at)
    drag = { ghost, dx: r.width / 2, dy: r.height + 14, piece: null, lifting: null, pointer: ev.pointerId,
      tile: piece && piece.dataset.piece !== "hidden" && lineOfPlay() ? piece.dataset.piece : null };
    drawLine();
    move(ev);
    if (piece && piece.classList.contains("in-air")) {
      drag.piece = piece.dataset.piece;
      drag.lifting = Promise.resolve({ ok: true, piece: drag.piece });
    } else if (from) {
      piece.classList.add("lifted");
      drag.lifting = post("lift", { cell: from.dataset.cell });
    } else {
      drag.lifting = post("lift", { stock: true });
    }
    try { (ev.target).setPointerCapture(ev.pointerId); } catch (_) { /* element re-rendered */ }
  }

  function move(ev) {
    if (!drag) return;
    document.querySelectorAll(".over").forEach((n) => n.classList.remove("over"));
    const hit = target(ev);
    let top = ev.clientY - drag.dy;
    if (hit && (hit.dataset.cell || hit.dataset.target)) {
      hit.classList.add("over");
      // the piece rides above what it is aimed at, never over it
      const aim = hit.getBoundingClientRect();
      top = Math.min(top, aim.top - drag.ghost.offsetHeight - 6);
    }
    drag.ghost.style.left = ev.clientX - drag.dx + "px";
    drag.ghost.style.top = top + "px";
  }

  /* The end of the readable line nearest the pointer, when it is over the
   * line: a drop anywhere on the picture goes to the end it is nearest. */
  function lineTarget(ev) {
    const strip = $("#line");
    if (!strip || !lineOfPlay()) return null;
    const r = strip.getBoundingClientRect();
    if (ev.clientX < r.left || ev.clientX > r.right || ev.clientY < r.top || ev.clientY > r.bottom) return null;
    let best = null, bestD = Infinity;
    for (const g of strip.querySelectorAll("[data-target]")) {
      const b = g.getBoundingClientRect();
      const d = Math.hypot(b.left + b.width / 2 - ev.clientX, b.top + b.height / 2 - ev.clientY);
      if (d < bestD) { bestD = d; best = g; }
    }
    return best || strip;
  }

  /* The cell under the pointer, else the nearest empty cell within a
   * fingertip (cells of a phone-sized map are small). */
  function target(ev) {
    const onLine = lineTarget(ev);
    if (onLine) return onLine;
    const n = document.elementFromPoint(ev.clientX, ev.clientY);
    const hit = n ? n.closest("[data-cell]") || n.closest("#stock") : null;
    if (hit) return hit;
    let best = null, bestD = 24;
    for (const c of document.querySelectorAll("[data-cell]")) {
      if (c.querySelector("[data-piece]")) continue;
      const r = c.getBoundingClientRect();
      const dx = Math.max(r.left - ev.clientX, 0, ev.clientX - r.right);
      const dy = Math.max(r.top - ev.clientY, 0, ev.clientY - r.bottom);
      const d = Math.hypot(dx, dy);
      if (d < bestD) { bestD = d; best = c; }
    }
    return best;
  }

  function end(ev) {
    if (!drag) return;
    const d = drag;
    drag = null;
    const hit = target(ev);
    d.ghost.remove();
    document.querySelectorAll(".over").forEach((n) => n.classList.remove("over"));
    const ends = lineEnds();
    drawLine();
    d.lifting.then((res) => {
      if (!res.ok) return;
      const piece = res.piece;
      if (hit && hit.id === "stock") return post("lay", { piece, cell: null });
      if (hit && hit.dataset.target) {
        // on the readable line: the end it is nearest, on the table's next cell of that arm
        const side = hit.dataset.target;
        const targets = lineTargets(d.tile || piece);
        const cell = nextCell(side);
        if (targets[side] === "legal" && cell) return post("lay", { piece, cell });
        const anywhere = Object.values(targets).includes("legal");
        oops(anywhere ? t("drop_no_fit", { tile: piece, end: ends ? ends[side] : "" }) : t("drop_no_end", { tile: piece }));
        return null;
      }
      if (hit && hit.id === "line") {
        oops(t("drop_green"));
        return null;
      }
      if (hit && hit.dataset.cell && !hit.querySelector("[data-piece]")) return post("lay", { piece, cell: hit.dataset.cell });
      // Released over nothing (or a full cell): the piece stays in the hand,
      // on no reader, and the page says where it goes at once
      if (!OPEN && SEAT !== null) oops(t(cards() ? "drop_card" : "drop_green"));
      return null;
    });
  }

  /* ---- wiring ------------------------------------------------------------- */

  let retry = 300;
  function connect() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const q = PUBLIC ? "" : (OPEN ? "open=1" : "seat=" + SEAT) + "&key=" + encodeURIComponent(KEY);
    const socket = new WebSocket(proto + "//" + location.host + "/tabletop/ws" + (q ? "?" + q : ""));
    socket.onopen = () => { retry = 300; body.dataset.conn = "live"; };
    socket.onmessage = (m) => {
      let st;
      try { st = JSON.parse(m.data); } catch (_) { return; }
      if (st.error) { oops(st.error); return; }
      try { render(st); body.dataset.error = ""; } catch (err) { body.dataset.error = String(err); console.error(err); }
    };
    socket.onclose = () => {
      body.dataset.conn = "offline";
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 4000);
    };
    socket.onerror = () => socket.close();
  }

  function init() {
    if (body.dataset.chooser === "true") return;
    fetch("/tabletop/api/layout").then((r) => r.json()).then((l) => {
      layout = l;
      body.dataset.game = l.game;
      body.dataset.pieces = (l.facts && l.facts.piece_word) || "";
      // the game's name, never the layout file's id (dominoes-4)
      $("#game").textContent = t("table_top_of", { name: t("game:" + l.game) });
      const me = layout.seats.find((s) => s.index === SEAT);
      $("#whoami").textContent = OPEN ? t("open_view") : me ? t("you_are", { name: seatName(me.name) }) : "";
      $("#save").hidden = !(l.open_hands && OPEN);  // the session names every tag
      if (OPEN) $("#save").href = "/tabletop/api/scenario?key=" + encodeURIComponent(KEY);
      $("#deal").hidden = l.dealer === "computer" || PUBLIC;  // the computer deals at a demo table
      prepare();
      buildTable();
      document.addEventListener("pointerdown", start);
      document.addEventListener("pointermove", move);
      document.addEventListener("pointerup", end);
      document.addEventListener("pointercancel", end);
      // The banner, the hand and the window change the table's size: redraw the map.
      if (window.ResizeObserver) new ResizeObserver(() => place()).observe($("#table"));
      else window.addEventListener("resize", place);
      $("#deal").addEventListener("click", () => post("deal"));
      $("#coach-ask").addEventListener("click", () => post("coach"));
      connect();
    });
  }

  window.TableTop = { lightName };
  document.addEventListener("DOMContentLoaded", init);
})();
