"""Spectators: a real director process, real brokers, N real spectators.

``--tables`` publishers (one MQTT connection each, as a table has) send their
progress at a table's pace (``--moves-per-s`` each) on their live topics; the
director runs as ``tablesense director serve`` (a child process: bridge and
live board on one broker connection, FastAPI under uvicorn). During the run a
client in a process of its own asks ``/standings`` twice a second.

``--via relays`` (the default): the spectators are N real MQTT-over-WebSocket
clients, as browsers are, spread over ``--relays`` relay brokers written by
``tournament relay-config`` (:mod:`tablesense.tournament.relays`): the first
bridged from the director's broker, each further one from the one before (a
tree: director -> relay 1 -> relay 2 ...). Each spectator follows one table
(``--follow one``: a table's spectator page; tables in turn) or every table
(``--follow all``). A lone spectator on the first relay, following every
table, is the peer: ``delivered_ratio`` is the mean, over the N spectators,
of the updates each received divided by the updates the lone one received
of the same table(s) in the same run.

``--via sse``: the spectators are N real SSE clients holding the director's
``/live/events`` open from many loopback addresses (127.0.0.2…, as phones
behind a venue's NAT come from a few), and a lone SSE spectator of its own
address is the peer.

The lag of an update is from the newest move it carries (the table's
timestamp) to the moment a spectator read it.

Goal on the 2-core development machine: N=2000, lag p95 < 1000 ms,
delivered_ratio >= 0.9, /standings p95 < 300 ms.

Last line: ``spectators=N lag_p95_ms=... delivered_ratio=... standings_p95_ms=... via=... load_1m=...``
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import resource
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


class RelaySpectator:
    """One browser's part at a relay: MQTT 3.1.1 over WebSocket, QoS 0, read only.

    The protocol is written out here (CONNECT, SUBSCRIBE, PUBLISH; a few
    dozen lines) rather than taken from paho: paho costs a thread per
    client, and 2,000 of them would measure this process's scheduler."""

    def __init__(self, port: int, topic: str, name: str) -> None:
        self.port = port
        self.topic = topic
        self.name = name
        self.arrivals: list[tuple[float, int, float]] = []
        """(arrival, table, the newest move's timestamp) of each update."""
        self.subscribed = False


def _mqtt_packet(kind: int, body: bytes) -> bytes:
    n, length = len(body), bytearray()
    while True:
        n, digit = n >> 7, n & 0x7F
        length.append(digit | (0x80 if n else 0))
        if not n:
            return bytes([kind]) + bytes(length) + body


def _mqtt_str(text: str) -> bytes:
    raw = text.encode()
    return len(raw).to_bytes(2, "big") + raw


def _mqtt_packets(buf: bytearray) -> list[tuple[int, bytes]]:
    """Whole packets (first byte, body) taken off the front of ``buf``."""
    out = []
    while len(buf) >= 2:
        length, mult, i = 0, 1, 1
        while True:
            if i >= len(buf):
                return out
            length += (buf[i] & 0x7F) * mult
            mult <<= 7
            i += 1
            if not buf[i - 1] & 0x80:
                break
        if len(buf) < i + length:
            return out
        out.append((buf[0], bytes(buf[i:i + length])))
        del buf[:i + length]
    return out


async def watch_relay(s: RelaySpectator, stop: asyncio.Event) -> None:
    """Connect, subscribe, and note every live update until ``stop``."""
    from websockets.asyncio.client import connect

    try:
        async with connect(f"ws://127.0.0.1:{s.port}/mqtt", subprotocols=["mqtt"],  # type: ignore[list-item]
                           compression=None, ping_interval=None, open_timeout=120, max_size=1 << 20) as ws:
            # CONNECT: protocol MQTT level 4, clean session, no keep-alive (the run is short)
            await ws.send(_mqtt_packet(0x10, _mqtt_str("MQTT") + bytes([4, 0x02, 0, 0]) + _mqtt_str(s.name)))
            await ws.send(_mqtt_packet(0x82, (1).to_bytes(2, "big") + _mqtt_str(s.topic) + b"\x00"))
            buf = bytearray()
            reader = asyncio.ensure_future(_read_relay(ws, s, buf))
            halt = asyncio.ensure_future(stop.wait())
            await asyncio.wait([reader, halt], return_when=asyncio.FIRST_COMPLETED)
            halt.cancel()
            if reader.done():
                reader.result()  # the relay closed or refused: say why
            reader.cancel()
    except Exception as exc:  # noqa: BLE001 - refused, closed, timed out: a spectator lost (its ratio shows it)
        if not stop.is_set():
            print(f"spectator {s.name}: {type(exc).__name__}: {exc}", file=sys.stderr)


async def _read_relay(ws: Any, s: RelaySpectator, buf: bytearray) -> None:
    async for frame in ws:
        now = time.time()
        buf += frame if isinstance(frame, bytes) else frame.encode()
        for first, body in _mqtt_packets(buf):
            kind = first >> 4
            if kind == 3:  # PUBLISH, QoS 0: topic, then the payload
                n = int.from_bytes(body[:2], "big")
                topic = body[2:2 + n].decode()
                table = int(topic.rsplit("/", 2)[-2].rsplit("-", 1)[-1])
                try:
                    ts = float(json.loads(body[2 + n:]).get("ts") or 0.0)
                except ValueError:
                    ts = 0.0
                s.arrivals.append((now, table, ts))
            elif kind == 9:  # SUBACK
                s.subscribed = body[2:3] != b"\x80"
            elif kind == 2 and body[1:2] != b"\x00":  # CONNACK refused
                raise ValueError(f"the relay refused the connection (code {body[1]})")


def run_relay_spectators(ports: list[int], tables: int, n: int, follow: str, ready: threading.Event,
                         stop: threading.Event, out: list[RelaySpectator]) -> None:
    """N relay spectators and the lone one, in one event loop (a thread of this process)."""
    from tablesense.tournament.live import LIVE_TOPIC_FILTER, live_topic

    async def main() -> None:
        halt = asyncio.Event()
        lone = RelaySpectator(ports[0], LIVE_TOPIC_FILTER, "lone")
        crowd = [RelaySpectator(ports[i % len(ports)], LIVE_TOPIC_FILTER if follow == "all" else live_topic(1 + i % tables),
                                f"s{i}") for i in range(n)]
        out[:] = [lone, *crowd]
        tasks = [asyncio.create_task(watch_relay(lone, halt))]
        for i in range(0, n, 100):  # open them in bursts, as a crowd arrives
            tasks += [asyncio.create_task(watch_relay(s, halt)) for s in crowd[i:i + 100]]
            await asyncio.sleep(0.05)
        end = time.monotonic() + 120
        while time.monotonic() < end and sum(s.subscribed for s in out) < len(out):
            await asyncio.sleep(0.2)
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.1)
        halt.set()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(main())


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
    ap.add_argument("--via", choices=("relays", "sse"), default="relays",
                    help="relays: MQTT-over-WebSocket spectators at relay brokers; sse: the director's /live/events")
    ap.add_argument("--relays", type=int, default=2, help="relay brokers, in a chain from the director's broker")
    ap.add_argument("--follow", choices=("one", "all"), default="one",
                    help="what a relay spectator follows: one table's progress (tables in turn), or every table's")
    args = ap.parse_args()
    if args.spectators < 1 or args.tables < 1 or args.relays < 1:
        ap.error("--spectators, --tables and --relays are at least 1")
    if args.via == "relays":
        need = args.spectators + 2 * args.tables + 200
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < need:  # one socket per spectator here, and at its relay (which inherits the limit)
            if hard != resource.RLIM_INFINITY and hard < need:
                ap.error(f"{args.spectators} spectators need {need} open files; the limit is {hard} (ulimit -n)")
            resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    with tempfile.TemporaryDirectory(prefix="ts-live-bench-") as tmp:
        port = free_port()
        me = getpass.getuser()
        files = write_broker_config(Path(tmp) / "broker", tables=args.tables, port=port, run_as=me)
        relays: list[tuple[Path, int, int]] = []  # (conf, MQTT port, WebSocket port)
        if args.via == "relays":
            from tablesense.tournament.relays import write_relay_config

            for i in range(args.relays):
                mqtt_port, ws_port = free_port(), free_port()
                up = port if i == 0 else relays[-1][1]
                r = write_relay_config(Path(tmp) / f"relay{i + 1}", name=f"bench-{i + 1}", upstream_host="127.0.0.1",
                                       upstream_port=up, director_dir=files.conf.parent if i == 0 else None,
                                       port=mqtt_port, ws_port=ws_port, bind="127.0.0.1", run_as=me,
                                       max_spectators=args.spectators + 10)
                relays.append((r.conf, mqtt_port, ws_port))
        brokers = [Mosquitto(files.conf, port)] + [Mosquitto(conf, mp) for conf, mp, _ws in relays]
        try:
            for b in brokers:
                b.start()
            return run(files, port, [ws for _c, _m, ws in relays], args, Path(tmp))
        finally:
            for b in reversed(brokers):
                b.stop()


def run(files: Any, port: int, relay_ports: list[int], args: Any, tmp: Path) -> int:
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
        code = measure(director, web_port, port, relay_ports, files, match_at, args)
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


def measure(director: subprocess.Popen[bytes], web_port: int, port: int, relay_ports: list[int], files: Any,
            match_at: dict[int, int], args: Any) -> int:
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
    watchers: list[RelaySpectator] = []
    if args.via == "relays":
        crowd_thread = threading.Thread(target=run_relay_spectators, daemon=True, args=(
            relay_ports, args.tables, args.spectators, args.follow, ready, stop_watch, watchers))
    else:
        crowd_thread = threading.Thread(target=run_spectators, daemon=True,
                                        args=(web_port, args.spectators, ready, stop_watch, spectators))
    crowd_thread.start()
    ready.wait(180)
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

    if args.via == "relays":
        return relay_figures(watchers, started, standings_ms, sent[0], args)

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
    print(f"spectators={args.spectators} lag_p95_ms={lag95:.0f} delivered_ratio={delivered:.3f} standings_p95_ms={st95:.0f} "
          f"via=sse load_1m={os.getloadavg()[0]:.2f}")
    return 0 if lag95 < 1000 and delivered >= 0.9 and st95 < 300 else 1


def relay_figures(watchers: list[RelaySpectator], started: float, standings_ms: list[float], sent: int, args: Any) -> int:
    """The figures of a run through relays (see the module docstring)."""
    lone, crowd = watchers[0], watchers[1:]
    lone_by_table: dict[int, int] = {}
    for _at, table, ts in lone.arrivals:
        if ts >= started:
            lone_by_table[table] = lone_by_table.get(table, 0) + 1
    lags: list[float] = []
    ratios: list[float] = []
    for s in crowd:
        got = [(at, table, ts) for at, table, ts in s.arrivals if ts >= started]
        lags += [(at - ts) * 1000 for at, _t, ts in got]
        tables = set(lone_by_table) if args.follow == "all" else {int(s.topic.rsplit("/", 2)[-2].rsplit("-", 1)[-1])}
        expected = sum(lone_by_table.get(t, 0) for t in tables)
        ratios.append(min(1.0, len(got) / expected) if expected else 0.0)
    subscribed = sum(1 for s in crowd if s.subscribed)
    delivered = statistics.fmean(ratios) if ratios else 0.0
    lone_lags = [(at - ts) * 1000 for at, _t, ts in lone.arrivals if ts >= started]
    lag95, st95 = p95(lags), p95(standings_ms)
    print(f"{args.tables} tables x {args.moves_per_s:g} moves/s for {args.seconds:g} s ({sent} moves); "
          f"{args.relays} relay(s) in a chain; {subscribed} of {args.spectators} spectators subscribed (following "
          f"{args.follow}); lone spectator {sum(lone_by_table.values())} updates, lag p95 {p95(lone_lags):.0f} ms; crowd "
          f"{len(lags)} updates, lag p50 {statistics.median(lags) if lags else float('nan'):.0f} ms p95 {lag95:.0f} ms, "
          f"delivered mean {delivered:.3f} (lowest {min(ratios, default=0):.3f}); /standings {len(standings_ms)} "
          f"requests p95 {st95:.0f} ms")
    print(f"spectators={args.spectators} lag_p95_ms={lag95:.0f} delivered_ratio={delivered:.3f} standings_p95_ms={st95:.0f} "
          f"via=relays relays={args.relays} follow={args.follow} load_1m={os.getloadavg()[0]:.2f}")
    return 0 if lag95 < 1000 and delivered >= 0.9 and st95 < 300 else 1


if __name__ == "__main__":
    sys.exit(main())
