"""Display figures: event bus throughput and publish-to-screen latency.

Usage: ``.venv/bin/python benchmarks/display.py [--events N] [--views N]``

1. Event bus: one thread publishes N small events, another reads them from a
   subscription; events per second, against the same hand-off through a plain
   ``queue.Queue`` (the peer: what a bus costs over the bare minimum, given that
   ours copies data through JSON, keeps history and replays views).
2. Display latency: a dominoes hand played by the engine is published view by
   view to the display app served by uvicorn; headless Chromium (Debian's
   /usr/bin/chromium) shows the page. For each view, the time from
   ``publish`` to the moment the page has drawn it (WebSocket, render, DOM) as
   seen through Playwright, against the peer: Playwright's own round trip for
   a trivial ``evaluate`` (its floor). Median and p99 in milliseconds.

The last line is ``bus_events_per_s=X queue_events_per_s=Y
draw_p50_ms=A draw_p99_ms=B floor_p50_ms=C``.
"""

from __future__ import annotations

import argparse
import queue
import random
import statistics
import threading
import time
from pathlib import Path

from tablesense.outputs.events import EventBus


def bus_rate(n: int) -> float:
    bus = EventBus()
    sub = bus.subscribe(maxsize=n + 10)
    got = 0

    def reader() -> None:
        nonlocal got
        while got < n:
            if sub.get(timeout=5) is None:
                return
            got += 1

    t = threading.Thread(target=reader)
    start = time.perf_counter()
    t.start()
    for i in range(n):
        bus.publish("move_accepted", seat=i % 4, index=i, text="Bruno plays 3-5 on the left end")
    t.join()
    return n / (time.perf_counter() - start)


def queue_rate(n: int) -> float:
    q: queue.Queue[dict] = queue.Queue()
    got = 0

    def reader() -> None:
        nonlocal got
        while got < n:
            q.get(timeout=5)
            got += 1

    t = threading.Thread(target=reader)
    start = time.perf_counter()
    t.start()
    for i in range(n):
        q.put({"seat": i % 4, "index": i, "text": "Bruno plays 3-5 on the left end"})
    t.join()
    return n / (time.perf_counter() - start)


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def draw_latency(views: int) -> tuple[list[float], list[float]]:
    from playwright.sync_api import sync_playwright

    from tablesense.games.dominoes import DominoMatch
    from tablesense.games.registry import find_game
    from tablesense.web.preview import dominoes_view, random_domino_moves
    from tablesense.web.server import serve_display

    facts = find_game("dominoes").page_facts()

    bus = EventBus()
    server = serve_display(bus)
    draw: list[float] = []
    floor: list[float] = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path="/usr/bin/chromium",
                args=[
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--no-first-run",
                ],
            )
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.goto(server.url)
            page.wait_for_function("document.body.dataset.conn === 'live'")
            rng = random.Random(1)
            done = 0
            while done < views:
                match = DominoMatch("pairs-pips")
                hand = match.new_hand(rng=rng)
                while not hand.is_over and done < views:
                    random_domino_moves(hand, rng, 1)
                    t0 = time.perf_counter()
                    seq = bus.publish("view", **dominoes_view(match, hand, facts=facts, hand_no=1)).seq
                    page.wait_for_function(
                        "(n) => Number(document.body.dataset.seq) >= n", arg=seq, polling="raf"
                    )
                    draw.append((time.perf_counter() - t0) * 1000)
                    t0 = time.perf_counter()
                    page.evaluate("() => 1")
                    floor.append((time.perf_counter() - t0) * 1000)
                    done += 1
            browser.close()
    finally:
        server.stop()
    return draw, floor


def main() -> int:
    ap = argparse.ArgumentParser(
        description="Display figures: event bus throughput, publish-to-screen latency."
    )
    ap.add_argument("--events", type=int, default=50_000)
    ap.add_argument("--views", type=int, default=150)
    args = ap.parse_args()
    rates_bus = []
    rates_q = []
    for _ in range(3):  # alternate so a busy machine slows both alike
        rates_bus.append(bus_rate(args.events))
        rates_q.append(queue_rate(args.events))
    bus_best, q_best = max(rates_bus), max(rates_q)
    print(f"event bus: {bus_best:,.0f} events/s (queue.Queue peer: {q_best:,.0f} events/s)")
    if not Path("/usr/bin/chromium").exists():
        print("chromium not installed: display latency skipped")
        print(f"bus_events_per_s={bus_best:.0f} queue_events_per_s={q_best:.0f}")
        return 0
    draw, floor = draw_latency(args.views)
    print(
        f"display: {len(draw)} views, publish->drawn p50 {statistics.median(draw):.1f} ms, "
        f"p99 {pct(draw, 99):.1f} ms; Playwright round-trip floor p50 {statistics.median(floor):.1f} ms"
    )
    print(
        f"bus_events_per_s={bus_best:.0f} queue_events_per_s={q_best:.0f} "
        f"draw_p50_ms={statistics.median(draw):.1f} draw_p99_ms={pct(draw, 99):.1f} "
        f"floor_p50_ms={statistics.median(floor):.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
