"""The display page in the table's language (issue 18): the demo played in
pt-BR and in Malay, looked at in headless Chromium. The page's own words come
from the server (web/labels.py), the referee's texts already translated; the
screenshots are under test-artifacts/web/display-<game>-<lang>-*.png."""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any

import pytest

from tablesense.referee.demo import DemoConfig, run_demo

WORDS = {
    # the page's words, seat names, and the referee's move sentence
    ("dominoes", "pt-BR"): ("Rodada 1", "Sul e Norte", "Norte", "Leste", "Sul", "Oeste", "computador", "pedras"),
    ("dominoes", "ms"): ("Pusingan 1", "Utara", "Timur", "Selatan", "Barat", "komputer", "batu"),
    ("kems", "ms"): ("Kems", "Pusingan ", "Tempat 1", "Tempat 2", "komputer", "kad", "Geladak", "memberi"),
}
ENGLISH = ("Hand ", "Round ", "Seat ", "North", "South", "computer", " tiles", " cards", "Boneyard", "Stock", "Waiting for", "misdeal")


@pytest.mark.parametrize(("game", "lang"), list(WORDS))
def test_display_shows_the_demo_in_the_table_language(
    browser: Any, artifacts: Path, game: str, lang: str
) -> None:
    urls: queue.Queue[str | None] = queue.Queue()
    stop = threading.Event()
    # Kems rounds are quick: play on (the match) until the page has been seen
    cfg = DemoConfig(game=game, hands=None if game == "kems" else 1, seed=3, web=True, port=0, link="direct",
                     speed=1.0 if game == "kems" else 3.0,
                     timeout=90, lang=lang)
    runner = threading.Thread(
        target=run_demo, args=(cfg,), kwargs={"on_ready": urls.put, "stop": stop}, daemon=True
    )
    runner.start()
    try:
        url = urls.get(timeout=60)
        assert url
        ctx = browser.new_context(viewport={"width": 1280, "height": 800})
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url)
        assert page.get_attribute("html", "lang") == lang
        page.wait_for_function(
            "document.querySelectorAll('#seats .seat').length > 0 && "
            "document.querySelector('#last-move').textContent !== ''",
            timeout=30000,
        )
        shown = page.inner_text("body")
        for width, height in ((1280, 800), (390, 844)):
            page.set_viewport_size({"width": width, "height": height})
            page.screenshot(path=str(artifacts / f"display-{game}-{lang}-{width}.png"))
        ctx.close()
        assert errors == []
        for word in WORDS[game, lang]:
            assert word in shown, (word, shown[:400])
        for word in ENGLISH:
            assert word not in shown, (word, shown[:400])
    finally:
        stop.set()
        runner.join(timeout=30)
