"""The table's display page: a FastAPI app fed by the :class:`EventBus`.

The page (``/``) is one static document that draws whatever the latest ``view``
event says (the whole public display state, see docs/display.md), so the server
holds no display logic of its own and every screen (the table's kiosk, a phone,
a spectator screen) shows the same thing. Live updates go over a WebSocket
(``/ws``); ``/events`` offers the same stream as Server-Sent Events for simple
clients (``curl -N``), and ``/api/view`` the latest view as JSON.

Other rooms add pages by handing routers to :func:`create_app` or by providing
a module listed in :data:`OPTIONAL_ROUTERS` that exposes ``router`` (an
``APIRouter``); a route reaches the table's bus as ``request.app.state.bus``.
Nothing is fetched from a CDN: scripts, styles and fonts are served from
``web/static``.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import threading
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request, WebSocket
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from tablesense.outputs.events import EventBus, Subscription, TableEvent, public_event
from tablesense.web.sockets import stream_events

__all__ = ["OPTIONAL_ROUTERS", "DisplayHub", "create_app"]

log = logging.getLogger(__name__)

WEB_DIR = Path(__file__).resolve().parent
TEMPLATES_DIR = WEB_DIR / "templates"
STATIC_DIR = WEB_DIR / "static"

#: Modules of other rooms that add pages to the same app when they exist
#: (each exposes ``router: APIRouter``): the tournament director's live pages
#: and the flash/diag room's diagnostics page. A module that is not there yet
#: is skipped; one that fails to import is an error (a broken page must show).
OPTIONAL_ROUTERS: tuple[str, ...] = (
    "tablesense.web.tournament_pages",
    "tablesense.web.diag_pages",
)

#: Seconds between keep-alive comments on the SSE stream and pings on the socket.
KEEPALIVE_S = 15.0


@dataclass
class DisplayHub:
    """Book-keeping of the live clients, so a server can close them on shutdown."""

    bus: EventBus
    subscriptions: set[Subscription]
    lock: threading.Lock

    def open(self) -> Subscription:
        """A subscription for one live client. The caller sends only what
        :func:`public_event` lets through: every client is public."""
        sub = self.bus.subscribe(maxsize=500)
        with self.lock:
            self.subscriptions.add(sub)
        return sub

    def release(self, sub: Subscription) -> None:
        sub.close()
        with self.lock:
            self.subscriptions.discard(sub)

    def close_clients(self) -> None:
        """End every live stream (their loops see the end and return)."""
        with self.lock:
            subs = list(self.subscriptions)
            self.subscriptions.clear()
        for sub in subs:
            sub.close()

    @property
    def client_count(self) -> int:
        with self.lock:
            return len(self.subscriptions)


def _event_json(ev: TableEvent) -> str:
    return json.dumps(ev.to_json(), separators=(",", ":"))


def create_app(
    bus: EventBus,
    *,
    title: str = "tablesense",
    lang: str = "en",
    routers: Iterable[APIRouter] = (),
    optional_routers: Iterable[str] | None = None,
) -> FastAPI:
    """The display app for one table's ``bus``.

    ``routers`` are included as given (other rooms' pages); ``optional_routers``
    (default :data:`OPTIONAL_ROUTERS`) are module names imported if present.
    ``lang`` is the table's language: the page's fixed words come in it
    (:mod:`tablesense.web.labels`); the referee's texts already do.
    """
    hub = DisplayHub(bus, set(), threading.Lock())

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        hub.close_clients()

    app = FastAPI(title=title, docs_url=None, redoc_url=None, lifespan=lifespan)
    app.state.bus = bus
    app.state.hub = hub
    app.state.title = title
    app.state.lang = lang
    templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
    app.mount("/static", StaticFiles(directory=str(STATIC_DIR)), name="static")

    @app.get("/", response_class=HTMLResponse)
    async def display(request: Request) -> HTMLResponse:
        from tablesense.web.labels import labels, labels_json

        words = labels(lang)
        return templates.TemplateResponse(
            request,
            "display.html",
            {"title": title, "lang": lang, "L": words, "labels_json": labels_json(words)},
        )

    @app.get("/api/view")
    async def api_view() -> JSONResponse:
        ev = bus.latest("view")
        ev = None if ev is None else public_event(ev)
        if ev is None:
            return JSONResponse({"seq": 0, "view": None})
        return JSONResponse({"seq": ev.seq, "view": ev.data})

    @app.get("/api/history")
    async def api_history(limit: int = 100) -> JSONResponse:
        evs = bus.history[-max(1, min(limit, 500)) :]
        public = (public_event(ev) for ev in evs)
        return JSONResponse([ev.to_json() for ev in public if ev is not None])

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return {"ok": True, "seq": bus.seq, "clients": hub.client_count}

    @app.websocket("/ws")
    async def ws(socket: WebSocket) -> None:
        await socket.accept()

        async def send(ev: TableEvent) -> None:
            public = public_event(ev)
            if public is not None:
                await socket.send_text(_event_json(public))

        await stream_events(socket, hub, send, keepalive_s=KEEPALIVE_S)

    @app.get("/events")
    async def sse(request: Request) -> StreamingResponse:
        sub = hub.open()

        async def stream() -> AsyncIterator[str]:
            try:
                yield "retry: 1000\n\n"
                while not await request.is_disconnected():
                    ev = await sub.aget(timeout=KEEPALIVE_S)
                    if ev is None:
                        if sub.closed:
                            return
                        yield ": keep-alive\n\n"
                        continue
                    ev = public_event(ev)
                    if ev is None:
                        continue
                    yield f"id: {ev.seq}\nevent: {ev.kind}\ndata: {_event_json(ev)}\n\n"
            finally:
                hub.release(sub)

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    for router in routers:
        app.include_router(router)
    for name in OPTIONAL_ROUTERS if optional_routers is None else optional_routers:
        router = _optional_router(name)
        if router is not None:
            app.include_router(router)
    return app


def _optional_router(module_name: str) -> APIRouter | None:
    """``module.router`` if the module exists; None when it is not written yet."""
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None
        raise
    router = getattr(module, "router", None)
    if not isinstance(router, APIRouter):
        raise TypeError(f"{module_name}.router must be a fastapi.APIRouter, got {router!r}")
    return router
