"""The display app without a browser: pages, JSON, the WebSocket and SSE
streams, optional routers of other rooms, and serving in a thread."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
import types

import httpx
import pytest
import websockets
from fastapi import APIRouter, Request
from fastapi.testclient import TestClient

from tablesense.outputs.events import EventBus
from tablesense.web.app import create_app
from tablesense.web.server import WebServerError, serve_display, serve_in_thread


def test_page_and_static_files_are_local() -> None:
    bus = EventBus()
    with TestClient(create_app(bus, title="Club table 3")) as client:
        page = client.get("/")
        assert page.status_code == 200
        assert "<title>Club table 3</title>" in page.text
        # every script and stylesheet is served by us: no CDN, no external URL
        assert (
            "http://" not in page.text.replace("http://www.w3.org", "")
            and "https://" not in page.text
        )
        for path in ("/static/display.js", "/static/domino_svg.js", "/static/display.css"):
            r = client.get(path)
            assert r.status_code == 200 and len(r.content) > 500, path
        assert client.get("/static/nothing.js").status_code == 404


def test_api_view_history_and_health() -> None:
    bus = EventBus()
    with TestClient(create_app(bus)) as client:
        assert client.get("/api/view").json() == {"seq": 0, "view": None}
        bus.publish("message", text="hello", level="info")
        ev = bus.publish("view", game="kems", board=["7S"])
        assert client.get("/api/view").json() == {
            "seq": ev.seq,
            "view": {"game": "kems", "board": ["7S"]},
        }
        hist = client.get("/api/history", params={"limit": 1}).json()
        assert [h["kind"] for h in hist] == ["view"]
        health = client.get("/healthz").json()
        assert health["ok"] is True and health["seq"] == 2


def test_websocket_replays_the_latest_view_then_streams() -> None:
    bus = EventBus()
    bus.publish("view", hand_no=1)
    bus.publish("board_status", board=2, online=False)
    bus.publish("view", hand_no=2)
    app = create_app(bus)
    with TestClient(app) as client, client.websocket_connect("/ws") as ws:
        first = json.loads(ws.receive_text())
        second = json.loads(ws.receive_text())
        assert (first["kind"], first["data"]) == ("board_status", {"board": 2, "online": False})
        assert (second["kind"], second["data"]) == ("view", {"hand_no": 2})
        bus.publish("move_accepted", seat=1, text="Bruno plays 3-5")
        bus.publish("view", hand_no=3)
        got = [json.loads(ws.receive_text()) for _ in range(2)]
        assert [g["kind"] for g in got] == ["move_accepted", "view"]
        assert got[1]["seq"] > got[0]["seq"]
        assert app.state.hub.client_count == 1
    assert app.state.hub.client_count == 0
    assert bus.subscriber_count == 0


def test_optional_routers_and_given_routers_are_included(monkeypatch: pytest.MonkeyPatch) -> None:
    extra = APIRouter()

    @extra.get("/tournament/ping")
    async def ping(request: Request) -> dict[str, int]:
        return {"seq": request.app.state.bus.seq}

    module = types.ModuleType("tablesense_test_pages")
    diag = APIRouter()

    @diag.get("/diag/ok")
    async def ok() -> dict[str, bool]:
        return {"ok": True}

    module.router = diag  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tablesense_test_pages", module)
    bus = EventBus()
    bus.publish("message", text="x")
    app = create_app(
        bus, routers=[extra], optional_routers=["tablesense_test_pages", "tablesense_missing_pages"]
    )
    with TestClient(app) as client:
        assert client.get("/tournament/ping").json() == {"seq": 1}
        assert client.get("/diag/ok").json() == {"ok": True}
    broken = types.ModuleType("tablesense_broken_pages")
    monkeypatch.setitem(sys.modules, "tablesense_broken_pages", broken)
    with pytest.raises(TypeError, match="must be a fastapi.APIRouter"):
        create_app(bus, optional_routers=["tablesense_broken_pages"])


def test_served_in_a_thread_with_sse_and_clean_stop() -> None:
    bus = EventBus()
    bus.publish("view", hand_no=4)
    server = serve_display(bus)
    try:
        assert server.url.startswith("http://127.0.0.1:") and server.running
        lines: list[str] = []
        done = threading.Event()

        def read_sse() -> None:
            with httpx.stream("GET", server.url + "events", timeout=10) as r:
                for line in r.iter_lines():
                    lines.append(line)
                    if line.startswith("data:") and '"later"' in line:
                        break
            done.set()

        reader = threading.Thread(target=read_sse, daemon=True)
        reader.start()
        # the late client first gets the latest view, then the new events
        for _ in range(200):
            if any('"hand_no":4' in ln for ln in lines):
                break
            done.wait(0.02)
        bus.publish("message", text="later")
        assert done.wait(10)
        assert any(ln == "event: view" for ln in lines)
        assert any('"text":"later"' in ln for ln in lines)
        assert httpx.get(server.url + "healthz", timeout=5).json()["ok"] is True
    finally:
        server.stop()
        server.stop()
    assert not server.running


def test_busy_port_is_a_clear_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(WebServerError, match=f"127.0.0.1:{port}"):
            serve_in_thread(create_app(EventBus()), "127.0.0.1", port, start_timeout=5)


def test_a_closed_tab_releases_its_subscription_at_once() -> None:
    bus = EventBus()
    server = serve_display(bus)
    try:

        async def visit() -> None:
            url = server.url.replace("http://", "ws://") + "ws"
            async with websockets.connect(url) as ws:
                bus.publish("view", hand_no=1)
                assert json.loads(await ws.recv())["kind"] == "view"
                assert server.app.state.hub.client_count == 1

        asyncio.run(visit())
        for _ in range(100):  # well under the 15 s keep-alive
            if server.app.state.hub.client_count == 0:
                break
            threading.Event().wait(0.02)
        assert server.app.state.hub.client_count == 0
        assert bus.subscriber_count == 0
    finally:
        server.stop()
