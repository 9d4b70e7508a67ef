"""Live tables: lag from a table's move to a spectator's page, 50 tables on loopback.

Each of ``--tables`` publishers (one MQTT connection each, as a table has)
sends its progress after every "move" at a table's pace (``--moves-per-s``
each) for the match the director paired at that table. The director runs as
``director serve`` does (relay, FastAPI app under uvicorn), and a spectator
reads ``/live/events`` (the Server-Sent Events behind the ``/live`` page).
The lag of a move is from the table's timestamp in its message to the
moment the spectator's stream carries it. Peers in the same run: the relay's
own store time and a bare paho subscriber (the broker's delivery), so the
page's share is the difference. Target: page p95 under 1 s.

Last line: ``page_p95_s=... page_p50_s=... relay_p95_s=... peer_p95_s=... moves=... tables=...``
"""

from __future__ import annotations

import argparse
import getpass
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from tablesense.tournament.bridge import BrokerURL, make_client
from tablesense.tournament.live import LIVE_TOPIC_FILTER, LiveBoard, LiveRelay, live_topic, progress
from tablesense.tournament.mosquitto import (
    DIRECTOR_USER,
    Mosquitto,
    free_port,
    table_user,
    write_broker_config,
)


class TimedBoard(LiveBoard):
    """A live board that notes each message's lag as it is stored."""

    def __init__(self) -> None:
        super().__init__()
        self.lags: list[float] = []

    def update(self, table: int, payload: bytes, now: float | None = None) -> bool:
        ok = super().update(table, payload, now)
        if ok:
            e = self.get(table)
            assert e is not None
            self.lags.append(e["received"] - float(e["ts"]))
        return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--tables", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--moves-per-s", type=float, default=2.0, help="moves a second at each table")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ts-live-bench-") as tmp:
        port = free_port()
        files = write_broker_config(Path(tmp), tables=args.tables, port=port, run_as=getpass.getuser())
        mosq = Mosquitto(files.conf, port).start()
        try:
            return run(files.credentials, port, args, tmp)
        finally:
            mosq.stop()


def run(creds: dict[str, str], port: int, args: Any, tmp: str) -> int:
    import httpx
    import uvicorn

    from tablesense.tournament.db import Database
    from tablesense.tournament.service import Director
    from tablesense.tournament.web import create_app, hash_password

    d = Director.create_event(Database(f"sqlite:///{tmp}/bench.db"), "Live bench", variant="pips-two-player",
                              options={"rounds": 1, "lots_seed": "b"})
    for i in range(2 * args.tables):
        d.register(f"Player {i + 1}")
    for t in range(1, args.tables + 1):
        d.add_table(t, "00" * 32)
    d.pair_next_round()
    match_at = {m.table_no: m.id for m in d.matches(1) if m.table_no is not None}
    director = BrokerURL("127.0.0.1", port, DIRECTOR_USER, creds[DIRECTOR_USER])
    board = TimedBoard()
    relay = LiveRelay(director, board).start()
    web_port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(d, password_hash=hash_password("benchmark-password"), live=board),
                                           host="127.0.0.1", port=web_port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    peer_lags: list[float] = []
    page_lags: list[float] = []
    stop = threading.Event()

    def on_peer(_c: Any, _u: Any, msg: Any) -> None:
        peer_lags.append(time.time() - float(json.loads(msg.payload)["ts"]))

    def on_peer_connect(c: Any, *_a: Any) -> None:
        c.subscribe(LIVE_TOPIC_FILTER, 0)

    peer = make_client("live-bench-peer", director, clean=True)
    peer.on_message = on_peer
    peer.on_connect = on_peer_connect
    peer.connect("127.0.0.1", port)
    peer.loop_start()

    def spectator() -> None:
        last: dict[int, float] = {}
        with httpx.Client(timeout=None) as c, c.stream("GET", f"http://127.0.0.1:{web_port}/live/events") as r:
            for line in r.iter_lines():
                if stop.is_set():
                    return
                if not line.startswith("data: "):
                    continue
                now = time.time()
                for t in json.loads(line[6:]):
                    ts = t.get("ts")
                    if ts is not None and ts > last.get(t["table"], 0.0):
                        last[t["table"]] = ts
                        page_lags.append(now - ts)

    while not server.started:
        time.sleep(0.05)
    relay.connected.wait(10)
    threading.Thread(target=spectator, daemon=True).start()
    time.sleep(1.0)
    sent = [0]

    def table(n: int) -> None:
        c = make_client(f"live-bench-table-{n}", BrokerURL("127.0.0.1", port, table_user(n), creds[table_user(n)]), clean=True)
        c.connect("127.0.0.1", port)
        c.loop_start()
        hand, move = 1, 0
        period = 1.0 / args.moves_per_s
        next_at = time.monotonic() + (n % 10) * period / 10
        while not stop.is_set():
            time.sleep(max(0.0, next_at - time.monotonic()))
            next_at += period
            move += 1
            if move % 20 == 0:
                hand += 1
            c.publish(live_topic(n), json.dumps(progress(1, match_at[n], hand, [move, hand], [7, 7])), qos=0)
            sent[0] += 1
        c.disconnect()
        c.loop_stop()

    threads = [threading.Thread(target=table, args=(n,), daemon=True) for n in range(1, args.tables + 1)]
    for t in threads:
        t.start()
    time.sleep(args.seconds)
    stop.set()
    for t in threads:
        t.join(timeout=10)
    time.sleep(0.5)
    relay.stop()
    peer.disconnect()
    peer.loop_stop()
    server.should_exit = True

    def p(xs: list[float], q: int) -> float:
        return statistics.quantiles(xs, n=100)[q - 1] if len(xs) >= 2 else float("nan")

    page95, page50, relay95, peer95 = p(page_lags, 95), p(page_lags, 50), p(board.lags, 95), p(peer_lags, 95)
    print(f"{args.tables} tables x {args.moves_per_s:g} moves/s for {args.seconds:g} s: {sent[0]} moves sent; "
          f"spectator page saw {len(page_lags)} (the latest of each table per push): lag p50 {page50 * 1000:.0f} ms "
          f"p95 {page95 * 1000:.0f} ms | relay stored {len(board.lags)} (dropped {board.dropped}) p95 {relay95 * 1000:.1f} ms "
          f"| bare subscriber p95 {peer95 * 1000:.1f} ms")
    print(f"page_p95_s={page95:.4f} page_p50_s={page50:.4f} relay_p95_s={relay95:.4f} peer_p95_s={peer95:.4f} "
          f"moves={sent[0]} tables={args.tables}")
    return 0 if page95 < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
