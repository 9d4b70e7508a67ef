"""The live pages' WebSocket loops, written once.

Every live page (the display's ``/ws``, a seat page's ``/seat/ws``, the table
top's ``/tabletop/ws``) reads nothing meaningful from its client but must
notice a closed tab at once, release what it holds, and close the socket
whatever happened. :func:`watch_client` and :func:`closing` do that part;
:func:`stream_events` is the whole loop of a page that follows the display's
event stream (a :class:`~tablesense.web.app.DisplayHub` subscription, a ping
every ``keepalive_s`` without events, each event handed to ``send``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi import WebSocket, WebSocketDisconnect

from tablesense.outputs.events import TableEvent

__all__ = ["PING", "closing", "stream_events", "watch_client"]

#: What a live page gets when nothing happened for a while (keeps proxies from closing it).
PING = '{"kind":"ping"}'


async def _read_until_closed(socket: WebSocket) -> None:
    # The page sends nothing meaningful; reading detects a closed tab.
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):
        while True:
            await socket.receive_text()


def watch_client(socket: WebSocket) -> asyncio.Task[None]:
    """A task that ends when the client goes away (its tab closed)."""
    return asyncio.create_task(_read_until_closed(socket))


@contextlib.asynccontextmanager
async def closing(socket: WebSocket, release: Callable[[], None] = lambda: None) -> AsyncIterator[asyncio.Task[None]]:
    """Watch the client while the body runs (the body gets the watcher: done
    means the tab is gone); a client gone mid-send ends the body quietly; at
    the end ``release()``, the watcher stopped and the socket closed."""
    watcher = watch_client(socket)
    try:
        yield watcher
    except (WebSocketDisconnect, RuntimeError, OSError):
        pass
    finally:
        release()
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await watcher
        with contextlib.suppress(Exception):
            await socket.close()


async def stream_events(
    socket: WebSocket,
    hub: Any,
    send: Callable[[TableEvent], Awaitable[None]],
    *,
    keepalive_s: float,
    first: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Follow ``hub`` (a DisplayHub) on an accepted ``socket`` until the tab
    goes away or the hub is closed: ``first()`` once, then ``send(event)``
    for each event (the caller filters what is public), a ping after
    ``keepalive_s`` without one. A closed tab releases its subscription at
    once: the loop waits for an event or the tab's end, whichever comes first."""
    sub = hub.open()
    async with closing(socket, lambda: hub.release(sub)) as watcher:
        if first is not None:
            await first()
        while True:
            getter = asyncio.ensure_future(sub.aget(timeout=keepalive_s))
            await asyncio.wait({getter, watcher}, return_when=asyncio.FIRST_COMPLETED)
            if watcher.done():
                getter.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await getter
                break
            ev = getter.result()
            if ev is None:
                if sub.closed:
                    break
                await socket.send_text(PING)
                continue
            await send(ev)
