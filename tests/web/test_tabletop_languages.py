"""The table-top page in the pseudo-locale (issue 18): every word a player
reads on it went through the catalogs (``qps`` brackets each translated
string: ⟦…⟧), the referee's banners included; a bare English word fails."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from test_tabletop import sit_demo, wait

#: Text of every element a player reads: visible text nodes, tooltips, labels.
COLLECT = """() => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const n = walker.currentNode, el = n.parentElement;
    if (!el || el.closest('script,style,noscript,#variant,[data-piece]')) continue;
    const text = n.textContent.trim();
    if (text) out.push(text);
  }
  for (const el of document.querySelectorAll('[title],[aria-label]')) {
    if (el.closest('[data-piece]') || el.matches('[data-cell]')) continue;  // ids, not words
    for (const a of ['title', 'aria-label']) if (el.getAttribute(a)) out.push(el.getAttribute(a));
  }
  // words drawn by the style sheet (::before content)
  for (const el of document.querySelectorAll('#my-hand')) {
    const c = getComputedStyle(el, '::before').content;
    if (c && c !== 'none') out.push(c.replace(/^"|"$/g, ''));
  }
  return out;
}"""


def _bare(texts: list[str]) -> list[str]:
    """Texts with a word (3+ letters) outside the ⟦…⟧ of a translation."""
    bare = []
    for text in texts:
        outside = re.sub(r"⟦[^⟧]*⟧", "", text)
        if re.search(r"[A-Za-z]{3,}", outside):
            bare.append(text)
    return bare


def test_tabletop_page_in_the_pseudo_locale_has_no_untranslated_word(
    browser: Any, artifacts: Path
) -> None:
    with sit_demo(game="dominoes", speed=2.0, timeout=120, lang="qps") as demo:
        ctx = browser.new_context(viewport={"width": 1280, "height": 800})
        page = ctx.new_page()
        page.goto(demo["page"])
        page.wait_for_selector('[data-rack="0"] [data-piece]', timeout=30000)
        wait(
            lambda: page.evaluate("document.querySelector('#message').textContent.trim()"),
            30,
            "a banner or a hint",
        )
        texts = page.evaluate(COLLECT)
        page.screenshot(path=str(artifacts / "tabletop-qps.png"))
        ctx.close()
    assert texts
    assert not _bare(texts), sorted(set(_bare(texts)))
