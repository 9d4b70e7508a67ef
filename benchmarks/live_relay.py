"""Spectators: a real director process, a real broker, N real SSE clients on ``/live/events``.

``--tables`` publishers (one MQTT connection each, as a table has) send their
progress at a table's pace (``--moves-per-s`` each) on their live topics; the
director runs as ``tablesense director serve`` (a child process: bridge and
live board on one broker connection, FastAPI under uvicorn), and
``--spectators`` clients hold ``/live/events`` open from many loopback
addresses (127.0.0.2…, as phones behind a venue's NAT come from a few). A
lone spectator of its own (its own address, never slowed by the others'
parsing) is the peer: ``delivered_ratio`` is the mean, over the N
spectators, of the updates each received divided by the updates the lone
one received in the same run. The lag of an update is from the newest move
it carries (the table's timestamp) to the moment a spectator read it. During
the run a client in a process of its own asks ``/standings`` twice a second.

Goal on the 2-core development machine: N=2000, lag p95 < 1000 ms,
delivered_ratio >= 0.9, /standings p95 < 300 ms.

Last line: ``spectators=N lag_p95_ms=... delivered_ratio=... standings_p95_ms=...``
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from tablesense.tournament.bridge import BrokerURL, make_client
from tablesense.tournament.live import live_topic, progress
from tablesense.tournament.mosquitto import Mosquitto, free_port, table_user, write_broker_config

#: Spectators per loopback address (under the director's cap of 64 per address).
PER_ADDRESS = 60


class Spectator:
    """One SSE client: when each ``live`` frame arrived, and which frame it was."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.arrivals: list[tuple[float, bytes]] = []
        self.status = 0


def p95(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=100)[94] if len(xs) >= 2 else float("nan")


async def watch(s: Spectator, port: int, stop: asyncio.Event) -> None:
    """Read ``/live/events`` until ``stop``; frames are kept whole (their bytes name them)."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(s.source, 0), limit=1 << 20)
    except OSError:
        return
    writer.write(b"GET /live/events HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n")
    await writer.drain()
    try:
        s.status = int((await reader.readline()).split()[1])
        buf = b""
        while not stop.is_set():
            chunk = await reader.read(1 << 16)
            if not chunk:
                break
            now = time.time()
            buf += chunk
            while True:
                start = buf.find(b"event: live\n")
                end = buf.find(b"\n\n", start) if start >= 0 else -1
                if end < 0:
                    break
                s.arrivals.append((now, buf[start:end]))
                buf = buf[end + 2:]
    except (OSError, ValueError, IndexError):
        pass
    finally:
        writer.close()


def run_spectators(port: int, n: int, ready: threading.Event, stop: threading.Event, out: list[Spectator]) -> None:
    """N spectators and the lone one, in one event loop (a thread of this process)."""

    async def main() -> None:
        halt = asyncio.Event()
        lone = Spectator("127.0.0.1")
        crowd = [Spectator(f"127.0.{1 + i // (PER_ADDRESS * 250)}.{2 + (i // PER_ADDRESS) % 250}") for i in range(n)]
        out[:] = [lone, *crowd]
        tasks = [asyncio.create_task(watch(lone, port, halt))]
        for i in range(0, n, 100):  # open them in bursts, as a crowd arrives
            tasks += [asyncio.create_task(watch(s, port, halt)) for s in crowd[i:i + 100]]
            await asyncio.sleep(0.05)
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.1)
        halt.set()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(main())


def probe_standings(url: str, seconds: float, conn: Any) -> None:
    """Ask ``url`` twice a second for ``seconds``; send back each answer's time (ms)."""
    times: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.perf_counter()
        try:
            urllib.request.urlopen(url, timeout=30).read()
        except OSError:
            continue
        times.append((time.perf_counter() - t0) * 1000)
        time.sleep(0.5)
    conn.send(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--spectators", type=int, default=2000)
    ap.add_argument("--tables", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--moves-per-s", type=float, default=2.0, help="moves a second at each table")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ts-live-bench-") as tmp:
        port = free_port()
        files = write_broker_config(Path(tmp) / "broker", tables=args.tables, port=port, run_as=getpass.getuser())
        mosq = Mosquitto(files.conf, port).start()
        try:
            return run(files, port, args, Path(tmp))
        finally:
            mosq.stop()


def run(files: Any, port: int, args: Any, tmp: Path) -> int:
    from tablesense.tournament.db import Database
    from tablesense.tournament.service import Director

    db_url = f"sqlite:///{tmp}/bench.db"
    d = Director.create_event(Database(db_url), "Live bench", variant="pips-two-player",
                              options={"rounds": 1, "lots_seed": "b"})
    for i in range(2 * args.tables):
        d.register(f"Player {i + 1}")
    for t in range(1, args.tables + 1):
        d.add_table(t, "00" * 32)
    d.pair_next_round()
    match_at = {m.table_no: m.id for m in d.matches(1) if m.table_no is not None}
    web_port = free_port()
    log = (tmp / "director.log").open("wb")
    director = subprocess.Popen(
        [str(Path(sys.executable).parent / "tablesense"), "director", "serve", "--db", db_url, "--port", str(web_port),
         "--broker", f"mqtt://director@127.0.0.1:{port}?password_file={files.conf.parent / 'director.password'}"],
        env={**os.environ, "TABLESENSE_DIRECTOR_PASSWORD": "benchmark-password"}, stdout=log, stderr=log)
    try:
        code = measure(director, web_port, port, files, match_at, args)
        if code:
            print("director's log (tail):", (tmp / "director.log").read_text()[-3000:], file=sys.stderr)
        return code
    except BaseException:
        print((tmp / "director.log").read_text()[-3000:], file=sys.stderr)
        raise
    finally:
        log.close()
        director.terminate()
        try:
            director.wait(10)
        except subprocess.TimeoutExpired:
            director.kill()


def measure(director: subprocess.Popen[bytes], web_port: int, port: int, files: Any, match_at: dict[int, int],
            args: Any) -> int:
    base = f"http://127.0.0.1:{web_port}"
    end = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(base + "/standings", timeout=2).read()
            break
        except OSError:
            if time.monotonic() > end or director.poll() is not None:
                raise RuntimeError("the director did not start") from None
            time.sleep(0.2)
    stop_watch, ready = threading.Event(), threading.Event()
    spectators: list[Spectator] = []
    crowd_thread = threading.Thread(target=run_spectators, args=(web_port, args.spectators, ready, stop_watch, spectators),
                                    daemon=True)
    crowd_thread.start()
    ready.wait(120)
    time.sleep(1.0)
    stop = threading.Event()
    sent = [0]

    def table(n: int) -> None:
        c = make_client(f"live-bench-table-{n}", BrokerURL("127.0.0.1", port, table_user(n), files.credentials[table_user(n)]),
                        clean=True)
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

    import multiprocessing

    started = time.time()
    # /standings is asked from a process of its own, as a phone would: a thread
    # here would wait for this process's interpreter, busy with the crowd.
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    prober = ctx.Process(target=probe_standings, args=(base + "/standings", args.seconds, child), daemon=True)
    prober.start()
    threads = [threading.Thread(target=table, args=(n,), daemon=True) for n in range(1, args.tables + 1)]
    for t in threads:
        t.start()
    time.sleep(args.seconds)
    stop.set()
    standings_ms: list[float] = parent.recv() if parent.poll(60) else []
    prober.join(10)
    for t in threads:
        t.join(timeout=30)
    time.sleep(1.0)
    stop_watch.set()
    crowd_thread.join(30)

    newest: dict[bytes, float] = {}  # frame -> its newest move's timestamp (every frame parsed once)

    def newest_move(frame: bytes) -> float:
        if frame not in newest:
            rows = json.loads(frame.split(b"data: ", 1)[1])
            newest[frame] = max((r["ts"] for r in rows if r.get("ts")), default=0.0)
        return newest[frame]

    def updates(s: Spectator) -> list[tuple[float, float]]:
        """(arrival, lag) of the frames that carried a move made during the run."""
        return [(at, at - newest_move(f)) for at, f in s.arrivals if newest_move(f) >= started]

    lone, crowd = spectators[0], spectators[1:]
    lone_n = len(updates(lone))
    per = [updates(s) for s in crowd]
    lags = [lag * 1000 for u in per for _at, lag in u]
    ratios = [len(u) / lone_n if lone_n else 0.0 for u in per]
    connected = sum(1 for s in crowd if s.status == 200)
    refused = sum(1 for s in crowd if s.status not in (0, 200))
    delivered = statistics.fmean(ratios) if ratios else 0.0
    lag95, st95 = p95(lags), p95(standings_ms)
    print(f"{args.tables} tables x {args.moves_per_s:g} moves/s for {args.seconds:g} s ({sent[0]} moves); "
          f"{connected} of {args.spectators} spectators connected ({refused} refused); lone spectator {lone_n} updates, "
          f"lag p95 {p95([lag * 1000 for _a, lag in updates(lone)]):.0f} ms; crowd lag p50 "
          f"{statistics.median(lags) if lags else float('nan'):.0f} ms p95 {lag95:.0f} ms, delivered mean {delivered:.3f} "
          f"(lowest {min(ratios, default=0):.3f}); /standings {len(standings_ms)} requests p95 {st95:.0f} ms; "
          f"{len(newest)} distinct frames")
    print(f"spectators={args.spectators} lag_p95_ms={lag95:.0f} delivered_ratio={delivered:.3f} standings_p95_ms={st95:.0f}")
    return 0 if lag95 < 1000 and delivered >= 0.9 and st95 < 300 else 1


if __name__ == "__main__":
    sys.exit(main())
