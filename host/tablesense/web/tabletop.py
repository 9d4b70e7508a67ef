"""The table-top page: the virtual table's own surface, played by hand.

:func:`tabletop_router` serves a :class:`~tablesense.sim.hand.TableTop` (passed
in: this room does not import the sim room) under ``/tabletop``:

- ``GET /tabletop?seat=N`` (or ``?open=1`` in the teaching mode): the page;
  ``/tabletop`` alone lets the visitor choose a seat;
- ``GET /tabletop/api/layout``: the geometry the page draws;
- ``GET /tabletop/api/state?seat=N``: the table as seat N may see it;
- ``WS /tabletop/ws?seat=N``: the same, pushed whenever it changes (a piece
  moved, an LED frame, a turn LED, the referee's banner);
- ``POST /tabletop/api/lift``, ``/lay``, ``/press``, ``/deal``: hands and buttons;
- ``GET /tabletop/api/scenario``: the session as a scenario file (only when
  the table is in the open-hands mode or nobody is seated against the
  computer: it names every tag).

Each client gets only what :meth:`TableTop.view` gives its seat, so the page's
DOM and live messages hold nothing that seat may not see.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import urllib.request
from typing import Any

from fastapi import APIRouter, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.templating import Jinja2Templates

from tablesense.web.app import TEMPLATES_DIR

__all__ = ["PUSH_INTERVAL_S", "DisplayFollower", "serve_tabletop", "tabletop_router", "tabletop_url"]

#: How often a live client's view is recomputed (sent only when it changed).
PUSH_INTERVAL_S = 0.1


def tabletop_url(base: str, seat: int | None = None, open_hands: bool = False) -> str:
    """The page's address under a server's base URL (``http://host:port/``)."""
    url = base.rstrip("/") + "/tabletop"
    if open_hands:
        return url + "?open=1"
    if seat is not None:
        return url + f"?seat={seat}"
    return url


class DisplayFollower:
    """Reads a referee's display (``tablesense play`` in another terminal) for
    what the table top shows of it: the banner and whose turn it is. The
    display's ``/api/view`` is public, so nothing private can come this way.
    Polls on its own thread; ``close()`` stops it."""

    def __init__(self, url: str, interval: float = 0.3) -> None:
        self.url = url.rstrip("/") + "/api/view"
        self.interval = interval
        self._view: dict[str, Any] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="display-follower", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with urllib.request.urlopen(self.url, timeout=2) as r:
                    got = json.loads(r.read()).get("view") or {}
                self._view = got if isinstance(got, dict) else {}
            except (OSError, ValueError):
                self._view = {}  # no referee yet (or it stopped): no banner, no turn
            self._stop.wait(self.interval)

    def banner(self) -> dict[str, str] | None:
        msg = self._view.get("message")
        if not isinstance(msg, dict) or not msg.get("text"):
            return None
        return {"text": str(msg["text"]), "level": str(msg.get("level") or "info")}

    def turns(self) -> list[bool]:
        seats = self._view.get("seats") or []
        flags: dict[int, bool] = {
            s["index"]: bool(s.get("is_turn")) for s in seats if isinstance(s, dict) and "index" in s
        }
        return [flags.get(i, False) for i in range(max(flags, default=-1) + 1)]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(3)


def _who(top: Any, seat: str | None, open_: str | None) -> tuple[int | None, bool]:
    """Parse ``seat``/``open`` query values; raises ValueError with a sentence."""
    open_view = open_ in ("1", "true", "yes")
    if seat is None or seat == "":
        if not open_view and not top.open_hands and top.seats:
            raise ValueError("choose a seat: ?seat=N")
        return None, open_view or bool(top.open_hands)
    try:
        n = int(seat)
    except ValueError:
        raise ValueError(f"seat must be a number, not {seat!r}") from None
    if n not in top.seats:
        raise ValueError(f"seat {n} is not open to a person at this table")
    return n, open_view


def tabletop_router(top: Any, *, scenario_allowed: bool | None = None) -> APIRouter:
    """Routes of the table-top page for ``top`` (a TableTop). The hands' calls
    run off the event loop: a lift waits for the board's firmware step."""
    router = APIRouter()
    templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
    errors: tuple[type[BaseException], ...] = (ValueError, KeyError)
    allow_scenario = (
        scenario_allowed if scenario_allowed is not None else bool(top.open_hands)
    )

    def fail(exc: BaseException, status: int = 409) -> JSONResponse:
        text = exc.args[0] if exc.args else str(exc)
        return JSONResponse({"ok": False, "error": str(text)}, status_code=status)

    @router.get("/tabletop", response_class=HTMLResponse)
    async def page(request: Request, seat: str | None = None, open: str | None = None) -> Any:  # noqa: A002
        try:
            who, open_view = _who(top, seat, open)
            if open_view and not top.open_hands:
                raise ValueError("open hands are off on this table (start it with --open-hands)")
            chooser = False
        except ValueError:
            who, open_view, chooser = None, False, True
        seats = top.layout()["seats"]
        return templates.TemplateResponse(
            request,
            "tabletop.html",
            {
                "title": f"table top · {top.geometry.name}",
                "seat": "" if who is None else str(who),
                "open_view": open_view,
                "chooser": chooser,
                "seats": [s for s in seats if s["index"] in top.seats],
                "open_hands": bool(top.open_hands),
            },
        )

    @router.get("/tabletop/api/layout")
    async def layout() -> JSONResponse:
        return JSONResponse(top.layout())

    @router.get("/tabletop/api/state")
    async def state(seat: str | None = None, open: str | None = None) -> JSONResponse:  # noqa: A002
        try:
            who, open_view = _who(top, seat, open)
            return JSONResponse(top.view(who, open_view))
        except errors as exc:
            return fail(exc, 403)

    async def body(request: Request) -> dict[str, Any]:
        try:
            data = await request.json()
        except (ValueError, json.JSONDecodeError):
            return {}
        return data if isinstance(data, dict) else {}

    def hand_for(data: dict[str, Any]) -> str:
        seat = data.get("seat")
        who, open_view = _who(top, None if seat is None else str(seat), "1" if data.get("open") else None)
        if open_view and not top.open_hands:
            raise ValueError("open hands are off on this table")
        return "open" if open_view or who is None else f"seat:{who}"

    @router.post("/tabletop/api/lift")
    async def lift(request: Request) -> JSONResponse:
        data = await body(request)
        try:
            hand = hand_for(data)
            piece = await asyncio.to_thread(
                top.lift, hand, data.get("cell"), from_stock=bool(data.get("stock"))
            )
        except errors as exc:
            return fail(exc)
        return JSONResponse({"ok": True, "piece": piece})

    @router.post("/tabletop/api/lay")
    async def lay(request: Request) -> JSONResponse:
        data = await body(request)
        try:
            hand = hand_for(data)
            await asyncio.to_thread(top.lay, hand, str(data.get("piece")), data.get("cell"))
        except errors as exc:
            return fail(exc)
        return JSONResponse({"ok": True})

    @router.post("/tabletop/api/press")
    async def press(request: Request) -> JSONResponse:
        data = await body(request)
        try:
            hand = hand_for(data)
            seat = int(data.get("button_seat", data.get("seat", -1)))
            if hand != "open" and hand != f"seat:{seat}":
                raise ValueError("that is another seat's button")
            await asyncio.to_thread(top.press, seat, str(data.get("kind")))
        except (*errors, TypeError) as exc:
            return fail(exc)
        return JSONResponse({"ok": True})

    @router.post("/tabletop/api/deal")
    async def deal(request: Request) -> JSONResponse:
        data = await body(request)
        try:
            hand_for(data)
            if getattr(top, "dealer", None) == "computer":
                raise ValueError("the computer deals at this table")
            await asyncio.to_thread(top.deal)
        except errors as exc:
            return fail(exc)
        return JSONResponse({"ok": True})

    @router.get("/tabletop/api/scenario")
    async def scenario() -> JSONResponse:
        if not allow_scenario:
            return fail(ValueError("the session names every tag: only in the open-hands mode"), 403)
        return JSONResponse(
            top.scenario(),
            headers={"Content-Disposition": 'attachment; filename="tabletop-session.json"'},
        )

    @router.websocket("/tabletop/ws")
    async def ws(socket: WebSocket) -> None:
        q = socket.query_params
        try:
            who, open_view = _who(top, q.get("seat"), q.get("open"))
        except ValueError as exc:
            await socket.close(code=4403, reason=str(exc))
            return
        await socket.accept()
        last = ""

        async def watch_client() -> None:
            with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                while True:
                    await socket.receive_text()

        watcher = asyncio.create_task(watch_client())
        try:
            while not watcher.done():
                try:
                    view = await asyncio.to_thread(top.view, who, open_view)
                except errors as exc:
                    await socket.send_text(json.dumps({"error": str(exc)}))
                    break
                view.pop("version", None)
                text = json.dumps(view, separators=(",", ":"), sort_keys=True)
                if text != last:
                    last = text
                    await socket.send_text(text)
                await asyncio.sleep(PUSH_INTERVAL_S)
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await watcher
            with contextlib.suppress(Exception):
                await socket.close()

    return router


def serve_tabletop(top: Any, host: str = "127.0.0.1", port: int = 0) -> Any:
    """Serve ``top``'s page on its own server (``sim boards``); returns the
    running :class:`~tablesense.web.server.DisplayServer` (``.url``)."""
    from tablesense.outputs.events import EventBus
    from tablesense.web.app import create_app
    from tablesense.web.server import serve_in_thread

    app = create_app(
        EventBus(),
        title=f"virtual table {top.geometry.name}",
        routers=[tabletop_router(top)],
        optional_routers=(),
    )
    return serve_in_thread(app, host=host, port=port)
