"""Spectators on a real director web server: one live view computed per change
and the same bytes to every watcher; connection caps per address and in total;
every live socket notices a departed client and ends for an unknown table."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
import websockets

from tablesense.tournament.bridge import wait_until
from tablesense.tournament.db import Database
from tablesense.tournament.fanout import Gate, LiveFeed
from tablesense.tournament.live import LiveBoard, progress
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Director
from tablesense.tournament.web import create_app, hash_password
from testsupport import free_port


class Server:
    def __init__(self, tmp_path: Path, gate: Gate) -> None:
        self.director = Director.create_event(Database(f"sqlite:///{tmp_path / 'club.db'}"), "Final",
                                              variant="pips-two-player", options={"lots_seed": "s"})
        for t in (1, 2):
            self.director.add_table(t, TableKey.from_seed(f"t{t}".encode()).public)
        for name in ("Ana", "Bia", "Caio", "Duda"):
            self.director.register(name)
        self.director.pair_next_round()
        self.board = LiveBoard()
        self.app = create_app(self.director, password_hash=hash_password("club-night-password"), live=self.board,
                              live_gate=gate)
        self.feed: LiveFeed = self.app.state.live_feed
        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def url(self, path: str, scheme: str = "http") -> str:
        return f"{scheme}://127.0.0.1:{self.port}{path}"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path, Gate(per_address=40, total=60))
    s.thread.start()
    assert wait_until(lambda: s.server.started, 10)
    try:
        yield s
    finally:
        s.server.should_exit = True
        s.thread.join(10)


async def _sse(port: int, frames: list[bytes], ready: asyncio.Event, want: int, source: str = "127.0.0.1") -> int:
    """A raw SSE client: the HTTP status, and each ``event: live`` frame's bytes until ``want`` of them."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    writer.write(b"GET /live/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
    await writer.drain()
    status = int((await reader.readline()).split()[1])
    ready.set()
    if status != 200:
        writer.close()
        return status
    buf = b""
    try:
        while len(frames) < want:
            chunk = await reader.read(65536)
            if not chunk:
                break
            buf += chunk
            while b"event: live\ndata: " in buf and b"\n\n" in buf[buf.index(b"event: live"):]:
                start = buf.index(b"event: live")
                end = buf.index(b"\n\n", start) + 2
                frames.append(buf[start:end])
                buf = buf[end:]
    finally:
        writer.close()
    return status


def test_every_spectator_gets_the_same_bytes_computed_once_per_change(served: Server) -> None:
    async def run() -> list[list[bytes]]:
        frames: list[list[bytes]] = [[] for _ in range(30)]
        readies = [asyncio.Event() for _ in frames]
        tasks = [asyncio.create_task(_sse(served.port, f, r, want=4)) for f, r in zip(frames, readies, strict=True)]
        for r in readies:
            await asyncio.wait_for(r.wait(), 10)
        for hand in (1, 2, 3):
            # a change only once every spectator has the view before it: changes
            # that arrive while a view is computed are coalesced (on purpose)
            for _ in range(200):
                if all(len(f) >= hand for f in frames):
                    break
                await asyncio.sleep(0.05)
            served.board.update(1, json.dumps(progress(1, 1, hand, [hand * 10, 0])).encode())
        await asyncio.wait_for(asyncio.gather(*tasks), 20)
        return frames

    frames = asyncio.run(run())
    assert all(len(f) == 4 for f in frames), [len(f) for f in frames]
    assert all(f == frames[0] for f in frames), "spectators were sent different bytes"
    hands = [{row["table"]: row["hand"] for row in json.loads(f.split(b"data: ", 1)[1])}[1] for f in frames[0]]
    assert hands == [None, 1, 2, 3]
    # once per change (and the first view), not once per spectator per change
    assert served.feed.computed <= 4, served.feed.computed
    assert wait_until(lambda: served.feed.gate.open == 0, 5), "departed spectators still counted"


async def _until(pred: Any, timeout: float = 10.0) -> None:
    """Wait for ``pred`` without blocking the event loop the clients run in."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not pred():
        assert loop.time() < end, "timed out"
        await asyncio.sleep(0.05)


def test_caps_per_address_and_in_total(served: Server) -> None:
    async def run() -> tuple[list[int], list[int]]:
        ready = asyncio.Event()
        holders = [asyncio.create_task(_sse(served.port, [], asyncio.Event(), want=10**6)) for _ in range(40)]
        await _until(lambda: served.feed.gate.open == 40)
        over = [await _sse(served.port, [], ready, want=1) for _ in range(2)]
        # another address still gets in, up to the total
        others = [asyncio.create_task(_sse(served.port, [], asyncio.Event(), want=10**6, source="127.0.0.2"))
                  for _ in range(20)]
        await _until(lambda: served.feed.gate.open == 60)
        total_over = [await _sse(served.port, [], ready, want=1, source="127.0.0.3")]
        try:
            await websockets.connect(served.url("/live/table/1/ws", "ws"), open_timeout=5)
            ws_refused = 0
        except websockets.InvalidStatus as exc:
            ws_refused = exc.response.status_code
        for t in holders + others:
            t.cancel()
        await asyncio.gather(*holders, *others, return_exceptions=True)
        return over + total_over, [ws_refused]

    statuses, ws = asyncio.run(run())
    assert statuses == [503, 503, 503]
    assert ws == [403]  # a WebSocket closed before it is accepted is an HTTP 403
    assert wait_until(lambda: served.feed.gate.open == 0, 5)


def test_a_tables_socket_ends_for_an_unknown_table_and_notices_a_departed_client(served: Server) -> None:
    async def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        try:
            await websockets.connect(served.url("/live/table/99/ws", "ws"), open_timeout=5)
        except websockets.InvalidStatus as exc:
            out["unknown"] = exc.response.status_code
        # 50 sockets to a headless table (no view) opened and dropped
        for _ in range(50):
            ws = await websockets.connect(served.url("/live/table/2/ws", "ws"), open_timeout=5)
            await ws.close()
        out["after_close"] = served.feed.gate.open
        # a view reaches an open socket, and the socket ends when its client goes
        ws = await websockets.connect(served.url("/live/table/1/ws", "ws"), open_timeout=5)
        served.board.update(1, json.dumps(progress(1, 1, 1, [0, 0], view={"kind": "dominoes", "line": []})).encode())
        out["view"] = json.loads(await asyncio.wait_for(ws.recv(), 5))
        ws.transport.abort()  # no closing handshake: the client simply vanishes
        return out

    out = asyncio.run(run())
    assert out["unknown"] == 403
    assert out["view"]["kind"] == "view" and out["view"]["data"] == {"kind": "dominoes", "line": []}
    assert wait_until(lambda: served.feed.gate.open == 0, 5), "a departed client's socket still runs"
    assert wait_until(lambda: served.feed._watchers == 0 and served.feed._producer is None, 5)


def test_a_tables_socket_without_a_view_ends(served: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    from tablesense.tournament import fanout

    monkeypatch.setattr(fanout, "NO_VIEW_WAIT_S", 0.5)

    async def run() -> int | None:
        ws = await websockets.connect(served.url("/live/table/2/ws", "ws"), open_timeout=5)
        with pytest.raises(websockets.ConnectionClosed):
            await asyncio.wait_for(ws.recv(), 10)
        return ws.close_code

    assert asyncio.run(run()) == 4408
