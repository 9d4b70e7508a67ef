"""Issue 14: the demo's page stays up after the match, showing the result,
until Ctrl-C (the ``stop`` event), not for a few seconds only."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx

from tablesense.outputs.events import EventBus
from tablesense.referee.demo import DemoConfig, DemoResult, run_demo


def test_the_page_stays_up_after_the_match_until_stopped() -> None:
    cfg = DemoConfig(
        game="kems", seed=3, web=True, port=0, link="direct", speed=40,
        options={"target": 1}, stay=True, timeout=90,
    )
    stop = threading.Event()
    url: dict[str, str] = {}
    ended = threading.Event()
    result: dict[str, DemoResult] = {}

    def watch(bus: EventBus) -> None:
        bus.add_listener(lambda ev: ended.set() if ev.kind == "match_ended" else None)

    def ready(u: str | None) -> None:
        url["u"] = u or ""

    def play() -> None:
        result["r"] = run_demo(cfg, on_ready=ready, stop=stop, on_bus=watch)

    t = threading.Thread(target=play, daemon=True)
    t.start()
    try:
        assert ended.wait(90), "the match did not end"
        # well past the old few seconds (5 s / speed 40 = 0.125 s)
        time.sleep(2.0)
        assert t.is_alive()
        view: Any = httpx.get(url["u"].rstrip("/") + "/api/view", timeout=5).json()["view"]
        assert view["match_over"] is True and view["winner"] is not None
        assert view["message"]["text"].startswith("match over:")
    finally:
        stop.set()
        t.join(20)
    assert not t.is_alive()
    assert result["r"].match_over
