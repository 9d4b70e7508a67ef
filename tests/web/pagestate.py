"""Reading what the display page shows, in one round trip per check."""

from __future__ import annotations

from typing import Any

PAGE_STATE_JS = """() => {
  const q = (s) => document.querySelector(s);
  const all = (s) => [...document.querySelectorAll(s)];
  const msg = q('#message');
  return {
    seq: Number(document.body.dataset.seq),
    error: document.body.dataset.error || '',
    game: q('#game').textContent,
    hand: q('#hand-no').textContent,
    target: q('#target').textContent,
    previousLine: all('#line svg.previous g.tile').map((g) => g.dataset.tile),
    line: all('#line svg:not(.previous) g.tile').map((g) => ({
      arm: g.dataset.arm, index: Number(g.dataset.index), tile: g.dataset.tile,
      shown: g.dataset.shown, inner: g.dataset.inner, outer: g.dataset.outer,
      crosswise: g.classList.contains('crosswise'),
    })),
    lineHidden: q('#line').hidden,
    board: all('#board .card').map((c) => c.dataset.card),
    boardHidden: q('#board').hidden,
    seats: all('#seats .seat').map((s) => ({
      seat: Number(s.dataset.seat), turn: s.dataset.turn === 'true',
      count: s.querySelector('.count').dataset.count, name: s.querySelector('.name').textContent,
    })),
    scores: all('#scores .score .value').map((v) => v.textContent),
    scoreLabels: all('#scores .score .label').map((v) => v.textContent),
    message: { hidden: msg.hidden, text: msg.textContent, level: msg.dataset.level },
    lastMove: q('#last-move').textContent,
    result: q('#result').hidden ? '' : q('#result').textContent,
    boards: all('#boards .board').map((b) => [Number(b.dataset.board), b.dataset.online === 'true']),
    conn: document.body.dataset.conn,
  };
}"""


def page_state(page: Any) -> dict[str, Any]:
    return page.evaluate(PAGE_STATE_JS)


def wait_seq(page: Any, seq: int, timeout_ms: int = 5000) -> dict[str, Any]:
    """Wait until the page has drawn the view with ``seq`` (or a later one)."""
    page.wait_for_function(
        "(n) => Number(document.body.dataset.seq) >= n", arg=seq, timeout=timeout_ms
    )
    return page_state(page)


def arms(state: dict[str, Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"center": [], "left": [], "right": []}
    for t in sorted(state["line"], key=lambda t: (t["arm"], t["index"])):
        out[t["arm"]].append(t["tile"])
    return out
