"""Spectators: a live view computed once per change, the same bytes to every watcher.

A club final may have a thousand phones on ``/live``. Serving each one with
its own loop (a database read per spectator per change) made the director's
pages crawl; here one producer task per app watches the :class:`LiveBoard`,
computes the spectators' view at most every ``min_interval_s`` when it
changed (twice a second at most), encodes it once as a Server-Sent Events frame, and wakes every
watcher, which sends those very bytes. A slow watcher skips to the newest
frame (spectators want the present, not the backlog), so it never holds
anyone else up nor grows the director's memory.

Connections are capped, per address and in total (:class:`Gate`): a browser
opens one or two, a venue's NAT a few hundred; beyond the cap the director
answers 503 (``Retry-After``) or closes the WebSocket with 1013 (try again
later). Every handler notices a departed client: the SSE stream is cancelled
by the server when the client goes, a table's WebSocket reads its client
until it leaves, and a socket for an unknown table, or a table that sends no
view within ``NO_VIEW_WAIT_S``, is closed (the display page reconnects on its
own, backing off).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from .live import LiveBoard

#: Live connections (SSE and WebSockets) one address may hold, and all of them together.
MAX_PER_ADDRESS = 64
MAX_TOTAL = 4096
#: How long a table's live socket waits for the table's first view.
NO_VIEW_WAIT_S = 30.0
#: A comment line sent to an idle stream (proxies and phones drop silent ones).
KEEPALIVE_S = 15.0


class Gate:
    """Counts live connections per address and in total; refuses beyond the caps."""

    def __init__(self, *, per_address: int = MAX_PER_ADDRESS, total: int = MAX_TOTAL) -> None:
        self.per_address = per_address
        self.total = total
        self._by_address: dict[str, int] = {}
        self._count = 0
        self.refused = 0

    def has_room(self, address: str) -> bool:
        return self._count < self.total and self._by_address.get(address, 0) < self.per_address

    @contextlib.contextmanager
    def slot(self, address: str) -> Iterator[bool]:
        """Hold one connection's place for the block; yields False (and holds
        nothing) when the caps are reached."""
        if not self.has_room(address):
            self.refused += 1
            yield False
            return
        self._count += 1
        self._by_address[address] = self._by_address.get(address, 0) + 1
        try:
            yield True
        finally:
            self._count -= 1
            left = self._by_address[address] - 1
            if left:
                self._by_address[address] = left
            else:
                del self._by_address[address]

    @property
    def open(self) -> int:
        return self._count


def sse_frame(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class LiveFeed:
    """One producer for all spectators of one director (see the module docstring).

    ``view`` computes the spectators' rows (blocking: it reads the database;
    run in a worker thread). Asyncio objects are made on first use, inside
    the server's event loop.
    """

    def __init__(self, live: LiveBoard | None, view: Callable[[], list[dict[str, Any]]], *,
                 min_interval_s: float = 0.5, tick_s: float = 0.05, gate: Gate | None = None) -> None:
        self.live = live
        self.view = view
        self.min_interval_s = min_interval_s
        self.tick_s = tick_s
        self.gate = gate or Gate()
        self.frame: bytes | None = None
        self.frame_no = 0
        self.beats = 0  # keep-alive wake-ups so far
        self.computed = 0
        """How many times the view was computed (once per change, whatever the number of watchers)."""
        self._changed: asyncio.Event | None = None
        self._producer: asyncio.Task[None] | None = None
        self._watchers = 0
        self._views: dict[int, tuple[int, str]] = {}  # table -> (seq, its view message as sent)

    # ------------------------------------------------------------ producer

    def _version(self) -> int:
        return self.live.version if self.live is not None else 0

    def _event(self) -> asyncio.Event:
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed

    def _wake(self) -> None:
        old = self._event()
        self._changed = asyncio.Event()
        old.set()

    def _ensure_producer(self) -> None:
        if self._producer is None or self._producer.done():
            self._producer = asyncio.get_running_loop().create_task(self._produce())

    async def _produce(self) -> None:
        from starlette.concurrency import run_in_threadpool

        seen_board, seen_view, computed_at = -1, -1, 0.0
        beat = time.monotonic()
        while self._watchers > 0:
            if time.monotonic() - beat >= KEEPALIVE_S:  # one wake-up for every idle watcher's keep-alive
                beat = time.monotonic()
                self.beats += 1
                self._wake()
            version = self._version()
            if version != seen_board:  # the tables' sockets look at their own view
                seen_board = version
                self._wake()
            if version != seen_view and time.monotonic() - computed_at >= self.min_interval_s:
                seen_view, computed_at = version, time.monotonic()
                try:
                    rows = await run_in_threadpool(self.view)
                except Exception:  # noqa: BLE001 - a database hiccup: try again at the next change
                    seen_view = -1
                else:
                    self.frame = sse_frame("live", rows)
                    self.frame_no += 1
                    self.computed += 1
                    self._wake()
            await asyncio.sleep(self.tick_s)
        self._producer = None

    @contextlib.contextmanager
    def _watching(self) -> Iterator[None]:
        self._watchers += 1
        self._ensure_producer()
        try:
            yield
        finally:
            self._watchers -= 1

    # ------------------------------------------------------------ spectators

    async def stream(self, address: str) -> AsyncIterator[bytes]:
        """The ``/live/events`` stream of one spectator (the server cancels it when the client goes)."""
        with self.gate.slot(address) as ok:
            if not ok:
                return
            with self._watching():
                yield b"retry: 2000\n\n"
                sent = 0
                while True:
                    if self.frame is not None and self.frame_no != sent:
                        sent = self.frame_no
                        yield self.frame
                        continue
                    beats = self.beats
                    await self._event().wait()  # no timer per watcher: the producer's beat wakes it
                    if self.beats != beats and self.frame_no == sent:
                        yield b": still here\n\n"

    def view_message(self, table: int) -> tuple[int, str] | None:
        """Table ``table``'s latest view as the display's socket sends it, encoded once per change."""
        entry = self.live.get(table) if self.live is not None else None
        if entry is None or not isinstance(entry.get("view"), dict):
            return None
        seq = int(entry.get("seq", 0))
        cached = self._views.get(table)
        if cached is None or cached[0] != seq:
            cached = (seq, json.dumps({"kind": "view", "data": spectators_view(entry["view"]), "seq": seq},
                                      separators=(",", ":")))
            self._views[table] = cached
        return cached

    async def table_socket(self, socket: Any, table: int, known: bool) -> None:
        """``/live/table/N/ws``: the table's view whenever it changes, until the client leaves."""
        from starlette.websockets import WebSocketDisconnect

        address = socket.client.host if socket.client else "?"
        if not known:
            await socket.close(code=4404, reason="no such table in this event")
            return
        with self.gate.slot(address) as ok:
            if not ok:
                await socket.close(code=1013, reason="too many live connections")
                return
            await socket.accept()

            async def read_until_gone() -> None:
                with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
                    while (await socket.receive())["type"] != "websocket.disconnect":
                        pass

            reader = asyncio.create_task(read_until_gone())
            give_up = time.monotonic() + NO_VIEW_WAIT_S
            sent = -1
            try:
                with self._watching():
                    while not reader.done():
                        message = self.view_message(table)
                        if message is not None and message[0] != sent:
                            sent = message[0]
                            await socket.send_text(message[1])
                        elif message is None and time.monotonic() > give_up:
                            await socket.close(code=4408, reason="this table sends no view")
                            return
                        waiter = asyncio.create_task(self._event().wait())
                        wait_s = KEEPALIVE_S if sent >= 0 else max(0.05, min(KEEPALIVE_S, give_up - time.monotonic()))
                        await asyncio.wait({waiter, reader}, timeout=wait_s, return_when=asyncio.FIRST_COMPLETED)
                        waiter.cancel()
            except (WebSocketDisconnect, RuntimeError, OSError):
                return  # the client went while we sent
            finally:
                await _cancelled(reader)


async def _cancelled(task: asyncio.Task[None]) -> None:
    """Cancel ``task`` and wait until it has finished, whatever it raised."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task


def spectators_view(view: dict[str, Any]) -> dict[str, Any]:
    """A table's display view as spectators see it: without the banners meant for
    the players at the table (a rejected move, "take back the 5-6", a correction
    to make): only an informative message stays."""
    msg = view.get("message")
    if isinstance(msg, dict) and msg.get("level", "info") != "info":
        return {**view, "message": None}
    return view
