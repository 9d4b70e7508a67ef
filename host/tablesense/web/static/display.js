/* The table display: draws the latest `view` event (the whole public display
 * state) and keeps a live WebSocket to the host, reconnecting on its own.
 * No framework, no network beyond this host: it must work on a kiosk without
 * internet. The schema of `view` is in docs/display.md.
 */
(function () {
  "use strict";
  const $ = (sel) => document.querySelector(sel);
  const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const RANKS = { T: "10", J: "J", Q: "Q", K: "K", A: "A" };
  /* The page's words in the table's language, handed over by the server
   * (tablesense/web/labels.py); English when a page has none. */
  const L = (() => {
    const node = document.getElementById("labels");
    try { return node ? JSON.parse(node.textContent) : {}; } catch (_) { return {}; }
  })();
  const EN = {
    team_n: "Team {n}", seat_n: "Seat {n}", the_table: "The table", hand_n: "Hand {n}",
    round_n: "Round {n}", to_target: "to {n}", match_over: "match over", paused: "paused",
    board_online: "board {n} online", board_offline: "board {n} OFFLINE",
    final_line: "Hand {n}: the final line", ends: "Ends {left} · {right}", stock: "Stock {n}",
    boneyard: "Boneyard {n}", computer: "computer", tiles: "{n} tiles", tile: "{n} tile",
    cards: "{n} cards", card: "{n} card", no_winner: "no winner", won: "{team} win",
    played: "{who} played {tile}", passed: "{who} passed", drew: "{who} drew a tile",
    announced: "{who} announced {tile}", swapped: "{who} gave {give}, took {take}",
    new_cards: "New board cards", called: "{who} called {call}", spades: "spades",
    hearts: "hearts", diamonds: "diamonds", clubs: "clubs", of_suit: "{rank} of {suit}",
    together: "{first} & {rest}",
    coach_help: "Coach: press Suggest a move, or hold your button for a second",
    coach_points: "{move}: {points} points", coach_only_you: "only you see this",
    review_head: "Coach · hand {n}: the moves that cost the most", review_none: "Coach · hand {n}: no move cost much",
  };
  /* t("won", {team: "Sul"}): a label with its {fields} filled. */
  function t(key, params) {
    const template = L[key] !== undefined ? L[key] : EN[key] !== undefined ? EN[key] : key;
    return String(template).replace(/\{(\w+)\}/g, (m, k) =>
      params && params[k] !== undefined && params[k] !== null ? String(params[k]) : m);
  }
  /* What the page draws differently per game comes with the view (`facts`,
   * from the game's registry entry: Game.page_facts), never from its name. */
  const facts = (view) => (view && view.facts) || {};
  let lastSeq = 0;
  let lastView = null;
  /* A seat's own page (the seat page of `play --coach`): its seat and key,
   * and the coach's state only this address receives (web/seat_page.py). */
  const SEAT = document.body && document.body.dataset.seat ? Number(document.body.dataset.seat) : null;
  let seatCoach = null;

  function text(node, value) {
    node.textContent = value === undefined || value === null ? "" : String(value);
  }

  function make(tag, cls, content) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (content !== undefined) text(n, content);
    return n;
  }

  /* A score as the page's language writes it: 3,5 in Portuguese, 3.5 in
     English and Malay (the page's lang attribute is the table's language). */
  function num(x) {
    if (typeof x !== "number") return String(x);
    const lang = document.documentElement.lang || "en";
    return x.toLocaleString(lang, { maximumFractionDigits: 2, useGrouping: false });
  }

  /* Labels per score entry: team members' names when scores are per team. */
  function scoreLabels(view) {
    const seats = view.seats || [];
    const scores = view.scores || [];
    if (Array.isArray(view.teams) && view.teams.length === scores.length) {
      return view.teams.map((tm, i) => (tm && tm.name) || t("team_n", { n: i + 1 }));
    }
    const byTeam = new Map();
    for (const s of seats) {
      const team = s.team === undefined || s.team === null ? s.index : s.team;
      if (!byTeam.has(team)) byTeam.set(team, []);
      byTeam.get(team).push(s.name || t("seat_n", { n: s.index + 1 }));
    }
    if (byTeam.size === scores.length && byTeam.size !== seats.length) {
      const together = (names) =>
        names.length > 1 ? t("together", { first: names[0], rest: together(names.slice(1)) }) : names[0];
      return scores.map((_, i) => together(byTeam.get(i) || [t("team_n", { n: i + 1 })]));
    }
    return scores.map((_, i) => {
      const s = seats[i];
      return s ? s.name || t("seat_n", { n: i + 1 }) : t("team_n", { n: i + 1 });
    });
  }

  function cardNode(card, slot) {
    const div = make("div", "card");
    div.dataset.slot = String(slot);
    if (!card) {
      div.classList.add("empty");
      div.dataset.card = "";
      text(div, "");
      return div;
    }
    const code = String(card);
    const rank = code.slice(0, -1), suit = code.slice(-1).toUpperCase();
    div.dataset.card = code;
    if (suit === "H" || suit === "D") div.classList.add("red");
    const r = RANKS[rank] || rank;
    div.appendChild(make("span", "rank", r));
    div.appendChild(make("span", "suit", SUITS[suit] || suit));
    div.appendChild(make("span", "rank bottom", r));
    const suitName = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" }[suit];
    div.setAttribute("aria-label", t("of_suit", { rank: r, suit: suitName ? t(suitName) : suit }));
    return div;
  }

  /* A card as people write it: "TH" -> "10♥", "QS" -> "Q♠". */
  function cardText(code) {
    const c = String(code || "");
    const rank = c.slice(0, -1), suit = c.slice(-1).toUpperCase();
    return (RANKS[rank] || rank) + (SUITS[suit] || suit);
  }

  function tileKey(t) {
    const m = /^(\d)\D(\d)$/.exec(String(t));
    return m ? Math.min(+m[1], +m[2]) + "-" + Math.max(+m[1], +m[2]) : String(t);
  }

  function seatName(view, seat) {
    const s = (view.seats || []).find((x) => x.index === seat);
    return s && s.name ? s.name : seat === undefined || seat === null ? t("the_table") : t("seat_n", { n: seat + 1 });
  }

  /* The last move as a sentence: a text given by the referee, else built from
   * the game record's move form (a drawn tile stays secret). */
  function moveText(view, m) {
    if (!m) return "";
    if (typeof m === "string") return m;
    if (m.text) return m.text;
    const who = seatName(view, m.seat);
    if (m.tile) return t("played", { who, tile: m.tile });
    if (m.pass) return t("passed", { who });
    if (m.draw) return t("drew", { who });
    if (m.announce) return t("announced", { who, tile: m.announce });
    if (m.swap) return t("swapped", { who, give: cardText(m.swap.give), take: cardText(m.swap.take) });
    if (m.refresh) return t("new_cards");
    if (m.call) return t("called", { who, call: m.call });
    return "";
  }

  function resultText(view, labels) {
    const r = view.result;
    if (!r) return "";
    if (typeof r === "string") return r;
    if (r.text) return r.text;
    const parts = [];
    if (r.hand_no !== undefined) parts.push(t((facts(view).deal_word || "hand") + "_n", { n: r.hand_no }) + ":");
    if (r.winner === null || r.winner === undefined) parts.push(t("no_winner"));
    else parts.push(t("won", { team: labels[r.winner] || t("team_n", { n: r.winner + 1 }) }));
    const how = r.how || r.label || r.outcome;
    if (how) parts.push("(" + how + ")");
    if (Array.isArray(r.points)) {
      const pts = r.points.map((p, i) => (labels[i] || "#" + (i + 1)) + " " + (p >= 0 ? "+" : "") + num(p));
      parts.push("— " + pts.join(", "));
    }
    return parts.join(" ");
  }

  function render(view, seq) {
    const F = facts(view);
    document.body.dataset.game = view.game || "";
    document.body.dataset.pieces = F.piece_word || "";
    // a seat page says which of its cells the LEDs light for the coach's hint
    const coachBox = SEAT !== null ? $("#coach") : null;
    if (coachBox) coachBox.dataset.lit = "coach_lit_" + (F.play_area || "line");
    text($("#game"), F.title || view.game || "");
    const variantKey = "variant:" + view.variant;  /* readable: "pairs, scored in pips", not "pairs-pips" */
    text($("#variant"), view.variant ? (L[variantKey] !== undefined ? L[variantKey] : view.variant) : "");
    const handWord = (F.deal_word || "hand") + "_n";
    text($("#hand-no"), view.hand_no ? t(handWord, { n: view.hand_no }) : "");
    let target = view.target ? t("to_target", { n: num(view.target) }) : "";
    if (view.match_over) target += (target ? " · " : "") + t("match_over");
    else if (view.paused) target += (target ? " · " : "") + t("paused");
    document.body.dataset.phase = view.phase || "";
    text($("#target"), target);

    // Sensor boards: one dot per board.
    const boards = $("#boards");
    boards.replaceChildren();
    for (const b of view.boards || []) {
      const s = make("span", "board", b.name || "B" + b.id);
      s.dataset.board = String(b.id);
      s.dataset.online = b.online ? "true" : "false";
      s.title = t(b.online ? "board_online" : "board_offline", { n: b.id }) + (b.message ? ": " + b.message : "");
      boards.appendChild(s);
    }
    const offline = (view.boards || []).filter((b) => !b.online).length;
    document.body.dataset.offline = String(offline);

    // Message / instruction.
    const msg = $("#message");
    if (view.message && view.message.text) {
      msg.hidden = false;
      msg.dataset.level = view.message.level || "info";
      text(msg, view.message.text);
    } else {
      msg.hidden = true;
      msg.dataset.level = "";
      text(msg, "");
    }

    // Table: line of play or Kems board.
    const line = $("#line"), board = $("#board");
    const last = view.last_move || null;
    if (F.play_area === "board" || Array.isArray(view.board)) {
      line.hidden = true;
      board.hidden = false;
      board.replaceChildren(...(view.board || []).map((c, i) => cardNode(c, i)));
      const take = seatCoach && seatCoach.hint && seatCoach.hint.take;
      for (const c of board.children) c.classList.toggle("coach", !!take && c.dataset.card === take);
    } else {
      board.hidden = true;
      line.hidden = false;
      const lastTile = last && typeof last === "object" && last.tile ? tileKey(last.tile) : undefined;
      const current = view.line || {};
      const prev = view.last_line;
      if (!current.center && prev && prev.center) {
        // A new hand has not started its line: show how the last one ended.
        const svg = window.DominoSVG.render(prev, { ends: prev.ends });
        svg.classList.add("previous");
        const caption = make("div", "line-caption", t("final_line", { n: prev.hand_no || (view.hand_no || 1) - 1 }));
        line.replaceChildren(caption, svg);
        line.dataset.previous = "true";
      } else {
        // a seat page: the end the coach's tile goes to glows teal
        const hint = seatCoach && seatCoach.hint;
        const coached = hint && hint.end ? { [hint.end]: "coach" } : undefined;
        const dbl = !!(hint && hint.piece && /^(\d)\D\1$/.test(hint.piece));
        line.replaceChildren(window.DominoSVG.render(current, { lastTile, ends: view.ends, targets: coached, targetDouble: dbl }));
        line.dataset.previous = "false";
      }
    }
    const ends = view.ends || {};
    text($("#ends"), ends.left !== undefined && ends.left !== null ? t("ends", { left: ends.left, right: ends.right }) : "");
    const stockName = F.stock_word || "boneyard";
    text($("#stock"), typeof view.stock === "number" ? t(stockName, { n: view.stock }) : "");
    text($("#last-move"), moveText(view, last));
    let first = true;
    for (const span of document.querySelectorAll("#table-info span")) {
      span.hidden = !span.textContent;
      span.classList.toggle("sep", !span.hidden && !first);
      if (!span.hidden) first = false;
    }

    // Scores.
    const labels = scoreLabels(view);
    const scores = $("#scores");
    scores.replaceChildren();
    (view.scores || []).forEach((value, i) => {
      const row = make("div", "score");
      row.dataset.index = String(i);
      if (view.winner === i) row.classList.add("winner");
      row.appendChild(make("span", "label", labels[i]));
      row.appendChild(make("span", "value", num(value)));
      scores.appendChild(row);
    });

    // Seats.
    const seats = $("#seats");
    seats.replaceChildren();
    document.body.dataset.many = (view.seats || []).length > 4 ? "true" : "false";
    const unit = F.piece_word || "tile";
    const units = unit + "s";
    const teams = new Set((view.seats || []).map((s) => s.team).filter((t) => t !== undefined && t !== null));
    const teamed = teams.size > 0 && teams.size < (view.seats || []).length;
    for (const s of view.seats || []) {
      const card = make("div", "seat");
      card.dataset.seat = String(s.index);
      card.dataset.turn = s.is_turn ? "true" : "false";
      card.dataset.kind = s.kind || "human";
      if (s.team !== undefined && s.team !== null) card.dataset.team = String(s.team);
      const head = make("div", "seat-head");
      head.appendChild(make("span", "turn", s.is_turn ? "▶" : ""));
      head.appendChild(make("span", "name", s.name || t("seat_n", { n: s.index + 1 })));
      if (s.kind === "bot" || s.kind === "computer") head.appendChild(make("span", "bot", t("computer")));
      card.appendChild(head);
      const info = make("div", "seat-info");
      if (teamed) info.appendChild(make("span", "team", t("team_n", { n: s.team + 1 })));
      const count = make("span", "count", s.count === undefined || s.count === null ? "" : t(s.count === 1 ? unit : units, { n: s.count }));
      count.dataset.count = s.count === undefined || s.count === null ? "" : String(s.count);
      info.appendChild(count);
      card.appendChild(info);
      seats.appendChild(card);
    }

    // Last hand's result: once. While the banner announces it (the
    // referee marks that message about: "result") the panel stays hidden;
    // it keeps the result in view once the banner has moved on.
    const res = $("#result");
    const rt = resultText(view, labels);
    const announced = !!(view.message && view.message.about === "result");
    res.hidden = !rt || announced;
    text(res, rt);

    // The coach's review of the last hand (issue 19): the costliest moves.
    const rev = $("#review");
    const review = view.review;
    if (rev) {
      rev.hidden = !review;
      if (review) {
        const key = JSON.stringify(review);
        if (rev.dataset.key !== key) {
          rev.dataset.key = key;
          const lines = review.lines || [];
          const head = make("h2", "", t(lines.length ? "review_head" : "review_none", { n: review.hand_no }));
          const list = make("ul");
          for (const line of lines) list.appendChild(make("li", "", line));
          rev.replaceChildren(head, list);
        }
      }
    }

    document.title = (F.title || "tablesense") + (view.hand_no ? " · " + t(handWord, { n: view.hand_no }) : "");
    lastSeq = seq;
    document.body.dataset.seq = String(seq);
  }

  /* The coach's box on a seat's own page (the table-top page's and the seat
   * page's): the hint with the piece it names, or how to ask; the last
   * hand's review with this seat's own tiles named. The server sends it on
   * that seat's keyed address only. */
  function renderCoach(coach) {
    const box = $("#coach");
    if (!box) return;
    box.hidden = !(coach && coach.on);
    if (box.hidden) return;
    renderReview(coach.review);
    const out = $("#coach-hint");
    const hint = coach.hint;
    box.dataset.hint = hint ? "true" : "false";
    const key = JSON.stringify(hint || null);
    if (out.dataset.key === key) return;
    out.dataset.key = key;
    if (!hint) {
      out.replaceChildren(make("span", "help", t("coach_help")));
      return;
    }
    const nodes = [];
    if (hint.piece) {
      // the piece drawn as the table draws it: a tile, or the card to give (and the one to take)
      const piece = make("span", "coach-piece");
      if (window.DominoSVG && window.DominoSVG.parseTile(hint.piece)) piece.appendChild(window.DominoSVG.tileSVG(hint.piece));
      else piece.append(...[hint.take, hint.piece].filter(Boolean).map((c, i) => cardNode(c, "coach-" + i)));
      nodes.push(piece);
    }
    nodes.push(make("strong", "advice", hint.text), make("span", "private", t("coach_only_you")));
    const lit = box.dataset.lit;
    if (lit && hint.piece) nodes.push(make("span", "lit", t(lit)));
    const options = hint.options || [];
    if (options.length > 1) {
      const list = make("ol", "options");
      for (const o of options) {
        const pts = (o.points >= 0 ? "+" : "") + o.points;
        list.appendChild(make("li", "", t("coach_points", { move: o.text, points: pts })));
      }
      nodes.push(list);
    }
    out.replaceChildren(...nodes);
  }

  /* The last hand's review as this seat may read it (its own tiles named). */
  function renderReview(review) {
    const node = $("#coach-review");
    if (!node) return;
    const key = JSON.stringify(review || null);
    if (node.dataset.key === key) return;
    node.dataset.key = key;
    node.hidden = !review;
    if (!review) { node.replaceChildren(); return; }
    const lines = review.lines || [];
    const head = make("div", "head", t(lines.length ? "review_head" : "review_none", { n: review.hand_no }));
    const list = make("ul");
    for (const line of lines) list.appendChild(make("li", "", line));
    node.replaceChildren(head, list);
  }

  function handle(ev) {
    if (!ev || typeof ev !== "object") return;
    if (ev.kind === "seat_coach" && SEAT !== null && ev.data) {
      seatCoach = ev.data;
      renderCoach(seatCoach);
      if (lastView) render(lastView, lastSeq);
      return;
    }
    if (ev.kind === "view" && ev.data) {
      if (ev.seq < lastSeq) return; // an older view after a reconnect
      try {
        lastView = ev.data;
        render(ev.data, ev.seq);
        document.body.dataset.error = "";
      } catch (err) {
        document.body.dataset.error = String(err);
        console.error("display: cannot draw view", err);
      }
    }
  }

  let retry = 500;
  function connect() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    // a seat page's own stream: the public events and this seat's coach
    const path = SEAT !== null ? "/seat/ws" + location.search : "/ws";
    const socket = new WebSocket(proto + "//" + location.host + path);
    socket.onopen = () => {
      retry = 500;
      document.body.dataset.conn = "live";
    };
    socket.onmessage = (msg) => {
      let ev;
      try { ev = JSON.parse(msg.data); } catch (_) { return; }
      handle(ev);
    };
    socket.onclose = () => {
      document.body.dataset.conn = "offline";
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 5000);
    };
    socket.onerror = () => socket.close();
  }

  /* A seat page's "Suggest a move": the same request as holding the seat button. */
  function askCoach() {
    const q = new URLSearchParams(location.search);
    fetch("/seat/api/coach", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ seat: SEAT, key: q.get("key") || "" }),
    }).catch(() => {});
  }

  window.TableDisplay = { render, handle, cardNode, renderCoach, t };
  // Other pages reuse cardNode and renderCoach (the table-top page): they say data-display="off".
  document.addEventListener("DOMContentLoaded", () => {
    if (document.body.dataset.display === "off") return;
    const ask = $("#coach-ask");
    if (ask && SEAT !== null) ask.addEventListener("click", askCoach);
    connect();
  });
})();
