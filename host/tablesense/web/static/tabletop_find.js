/* The table-top page's "play another table" (web/tabletop_find.py): host a
 * match or join one by its code, then open the person's seat. The server
 * holds the state (PageFinder); this page asks and draws what it says,
 * polling /tabletop/find/api/state. Each drawn piece has its function:
 * drawMessage (the banner), drawChoice (the two cards), drawCode (the
 * match code, large, to read out), drawSeats (the people's seat links).
 *
 * Test contract: body data-state (choose, finding, ready, refused), the
 * code box #code, buttons #join and #host, #match-code, seat links
 * a[data-seat-link].
 */
(function () {
  "use strict";
  const $ = (sel) => document.querySelector(sel);
  const body = document.body;
  const KEY = new URLSearchParams(location.search).get("key") || "";
  const WORDS = (() => {
    const node = document.getElementById("labels");
    try { return node ? JSON.parse(node.textContent) : {}; } catch (_) { return {}; }
  })();
  function t(key, params) {
    const template = WORDS[key] !== undefined ? WORDS[key] : key;
    return String(template).replace(/\{(\w+)\}/g, (m, k) =>
      params && params[k] !== undefined && params[k] !== null ? String(params[k]) : m);
  }
  function make(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = String(text);
    return n;
  }
  let opened = false;
  /* The page's own last refusal (a code that cannot be one: the server never
   * took the ask, so its state does not carry it); cleared by the next ask. */
  let refused = "";

  /* The banner: the last refusal (error), what the table is doing (info). */
  function drawMessage(text, level) {
    const box = $("#message");
    box.hidden = !text;
    box.textContent = text || "";
    box.dataset.level = level || "";
  }

  /* The two cards (join by code, host), usable only while the table has no match. */
  function drawChoice(s) {
    const busy = s.state !== "choose";
    $("#join-card").hidden = s.state === "ready";
    $("#host-card").hidden = s.state === "ready";
    for (const id of ["#code", "#join", "#host"]) $(id).disabled = busy;
  }

  /* The match code, large and spaced, to read out over the phone. */
  function drawCode(s) {
    const box = $("#match-code");
    box.replaceChildren();
    if (s.state !== "ready" || !s.code) return;
    const said = s.role === "host" ? t("ready_host", { code: "\u0000" }) : t("ready_join", { code: "\u0000" });
    const [before, after] = said.split("\u0000");
    box.append(before, make("b", "code", s.code), after || "");
  }

  /* One link per person at this table: their seat, key included. */
  function drawSeats(s) {
    const list = $("#seat-links");
    list.replaceChildren(...(s.seats || []).map((seat) => {
      const a = make("a", "seat-link", t("your_seat", { name: seat.name }));
      a.href = seat.url;
      a.dataset.seatLink = seat.name;
      const li = make("li");
      li.append(a);
      return li;
    }));
    $("#seats-card").hidden = s.state !== "ready";
  }

  function draw(s) {
    body.dataset.state = s.state;
    drawChoice(s);
    drawCode(s);
    drawSeats(s);
    if (s.state === "finding") {
      drawMessage(s.code ? t("finding", { code: s.code }) : t("opening"), "info");
    } else {
      const error = s.error || (s.state === "choose" ? refused : "");
      drawMessage(error, error ? "error" : "");
    }
    /* One person at this table: their seat opens by itself (a host reads the
     * code from the seat's banner there). */
    if (s.state === "ready" && (s.seats || []).length === 1 && !opened) {
      opened = true;
      setTimeout(() => { location.href = s.seats[0].url; }, s.role === "host" ? 1500 : 300);
    }
  }

  function ask(path, data) {
    return fetch("/tabletop/find/api/" + path, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(Object.assign({ key: KEY }, data || {})),
    }).then((r) => r.json()).then((res) => {
      refused = res.ok ? "" : res.error || t("failed");
      if (res.ok) draw(res);
      else drawMessage(refused, "error");
    }).catch(() => { refused = t("failed"); drawMessage(refused, "error"); });
  }

  function poll() {
    fetch("/tabletop/find/api/state?key=" + encodeURIComponent(KEY), { cache: "no-store" })
      .then((r) => r.json())
      .then((s) => { body.dataset.conn = "live"; if (s.ok) draw(s); })
      .catch(() => { body.dataset.conn = "offline"; })
      .finally(() => setTimeout(poll, 400));
  }

  if (body.dataset.state === "refused") return;
  $("#join-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    ask("join", { code: $("#code").value });
  });
  $("#host").addEventListener("click", () => ask("host"));
  poll();
})();
