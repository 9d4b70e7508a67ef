"""Issue 31: the display page shows a hand's result once, with one verb.

A real demo (its referee, virtual boards and display server, in a
subprocess) plays two hands; Chromium watches its page. When the first hand
ends the referee's banner announces the result: the result panel stays
hidden, and the page's visible text says "win" once. Once the banner moves
on (the next hand), the panel keeps the result in view, alone."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from testsupport import REPO, free_port, wait_until

pytestmark = pytest.mark.timeout(240)


def test_the_result_is_shown_once_in_the_banner_then_in_the_panel(browser: Any, artifacts: Any) -> None:
    port = free_port()
    demo = subprocess.Popen(
        [sys.executable, "-m", "tablesense.cli", "demo", "--port", str(port), "--host", "127.0.0.1",
         "--hands", "2", "--seed", "3", "--speed", "3"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    try:
        err = demo.stderr
        assert err is not None
        wait_until(lambda: "display" in (err.readline() or ""), 90, what="the demo's display address")
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"http://127.0.0.1:{port}/")
        # the first hand's end: the banner announces the result
        page.wait_for_function(
            "() => /win|nobody scores/.test(document.querySelector('#message').textContent)"
            " && !document.querySelector('#message').hidden", timeout=180_000)
        state = page.evaluate(
            """() => ({banner: document.querySelector('#message').textContent,
                       panel: document.querySelector('#result').hidden,
                       text: document.body.innerText})""")
        page.screenshot(path=str(artifacts / "result-once-banner.png"))
        assert state["banner"].startswith("hand 1: "), state
        assert state["panel"] is True, "the result panel repeats the banner"
        verb = "win" if " win " in state["banner"] else "nobody scores"
        assert state["text"].count(verb) == 1, state["text"]
        # the next hand under way, its banner no result: the panel keeps hand 1's, once
        page.wait_for_function(
            "() => !/^hand \\d+: /.test(document.querySelector('#message').textContent)"
            " && document.querySelector('#hand-no').textContent.includes('2')", timeout=120_000)
        state = page.evaluate(
            """() => ({hidden: document.querySelector('#result').hidden,
                       result: document.querySelector('#result').textContent,
                       text: document.body.innerText})""")
        page.screenshot(path=str(artifacts / "result-once-panel.png"))
        assert state["hidden"] is False and state["result"].startswith("Hand 1: "), state
        assert state["text"].count(verb) == 1, state["text"]
        page.close()
    finally:
        demo.terminate()
        try:
            demo.wait(15)
        except subprocess.TimeoutExpired:
            demo.kill()
