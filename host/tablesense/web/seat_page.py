"""A seat's own page at a real table: the display, plus that seat's coach.

At a real table the display is shared (a screen everyone sees), so the
coach's suggestion, which names a tile of one seat's rack, may not appear
there. ``tablesense play --coach`` serves each person's seat a keyed page
instead, opened on that player's phone: the same display page (same
renderer, same live stream of public events) with a coach box that only
this address receives: the hint (its sentence, the tile and where it goes:
the end of the line glows teal, as the seat's LEDs light the tile's rack
cell and the line cell it goes to), a "Suggest a move" button, and the last
hand's review with the seat's own tiles named.

Routes (``seat_router``):

- ``GET /seat?seat=N&key=K``: the page; a wrong or missing key gets the
  public display and a sentence saying which address to open (HTTP 403);
- ``WS /seat/ws?seat=N&key=K``: the public events, as ``/ws`` sends them,
  and ``{"kind": "seat_coach", "data": {"on", "hint", "review"}}`` whenever the
  seat's coach state changes (and once on connecting);
- ``GET /seat/api/state?seat=N&key=K``: the latest public view and the
  seat's coach state, as JSON;
- ``POST /seat/api/coach`` ``{"seat", "key"}``: ask the coach (the same
  request as holding the seat button a second).

The keys are :class:`~tablesense.web.tabletop.TableKeys` (unguessable, made
fresh each time ``play`` starts, printed only in that seat's ``seat page:``
line) and the private part is read from
:class:`~tablesense.outputs.coach_hints.CoachHints`, never from a public
channel's filter.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.templating import Jinja2Templates

from tablesense.outputs.coach_hints import CoachHints
from tablesense.outputs.events import EventBus, TableEvent, public_event
from tablesense.web.app import KEEPALIVE_S, TEMPLATES_DIR
from tablesense.web.sockets import stream_events
from tablesense.web.tabletop import TableKeys

__all__ = ["SeatPages", "people_seats", "seat_refused", "seat_router"]


class SeatPages:
    """The seat pages of one table: a key per person's seat, the coach's
    hints followed from ``bus``, and ``ask(seat)`` (the coach request, as a
    long press of that seat's button). ``close()`` stops following."""

    def __init__(
        self,
        bus: EventBus,
        names: Mapping[int, str],
        ask: Callable[[int], None],
        *,
        coach: bool = True,
    ) -> None:
        self.bus = bus
        self.names = dict(names)
        """Seat index -> the seat's name as the table says it (people's seats only)."""
        self.keys = TableKeys(self.names)
        self.ask = ask
        self.coach = coach
        self.hints = CoachHints()
        self._unfollow = bus.add_listener(self.hints.follow)

    def state(self, seat: int, hints: CoachHints | None = None) -> dict[str, Any]:
        """Seat ``seat``'s coach as its page draws it (from ``hints``, a
        live stream's own copy, else the table's)."""
        hints = hints or self.hints
        return {"on": self.coach, "hint": hints.hint(seat), "review": hints.review(seat)}

    def url(self, base: str, seat: int) -> str:
        """Seat ``seat``'s address under the display's ``base`` URL, key included."""
        query = urllib.parse.urlencode({"seat": seat, "key": self.keys.seats[seat]})
        return f"{base.rstrip('/')}/seat?{query}"

    def lines(self, base: str, lang: str = "en") -> list[str]:
        """One ``seat page: URL  (name)`` line per person's seat, in the table's language."""
        from tablesense.i18n import N_, Translator

        tr = Translator(lang)
        return [
            tr(N_("seat page: {url}  ({seat}; the coach's hints, only for this seat)"),
               url=self.url(base, seat), seat=tr(name))
            for seat, name in self.names.items()
        ]

    def router(self) -> APIRouter:
        return seat_router(self)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._unfollow()


def seat_refused(name: str) -> str:
    """The 403 sentence for a seat page opened without its key."""
    return (
        f"wrong or missing key for {name}'s seat page: open the \"seat page:\" address printed for {name} "
        "(it ends in &key=...); without it you see the shared display only"
    )


def _seat_of(pages: SeatPages, seat: Any, key: Any) -> int:
    """The seat a request is for, its key checked; ValueError with the sentence otherwise."""
    try:
        n = int(seat)
    except (TypeError, ValueError):
        raise ValueError("seat must be a seat number (the address printed for your seat has it)") from None
    name = pages.names.get(n)
    if name is None:
        raise ValueError(f"seat {n + 1} has no seat page at this table (a computer seat, or no such seat)")
    if not isinstance(key, str) or not pages.keys.seat_ok(n, key):
        raise PermissionError(seat_refused(name))
    return n


def _refusal(exc: Exception) -> JSONResponse:
    status = 403 if isinstance(exc, PermissionError) else 400
    return JSONResponse({"ok": False, "error": str(exc)}, status_code=status)


def seat_router(pages: SeatPages) -> APIRouter:
    """The routes of ``pages`` (see the module docstring)."""
    router = APIRouter()
    templates = Jinja2Templates(directory=str(TEMPLATES_DIR))

    @router.get("/seat", response_class=HTMLResponse)
    async def page(request: Request, seat: str | None = None, key: str | None = None) -> Any:
        from tablesense.i18n import Translator
        from tablesense.web.labels import SEAT_PAGE, labels, labels_json

        lang = getattr(request.app.state, "lang", "en")
        words = labels(lang, SEAT_PAGE)
        refused, who = "", None
        try:
            who = _seat_of(pages, seat, key)
        except (ValueError, PermissionError) as exc:
            refused = str(exc)
        name = Translator(lang)(pages.names[who]) if who is not None else ""
        return templates.TemplateResponse(
            request,
            "display.html",
            {
                "title": words["seat_page_of"].replace("{name}", name) if name else request.app.state.title,
                "lang": lang,
                "L": words,
                "labels_json": labels_json(words),
                "seat_page": who is not None,
                "seat": "" if who is None else str(who),
                "whoami": words["you_are"].replace("{name}", name) if name else "",
                "refused": refused,
            },
            status_code=403 if refused else 200,
            headers={"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"},
        )

    @router.get("/seat/api/state")
    async def state(seat: str | None = None, key: str | None = None) -> JSONResponse:
        try:
            who = _seat_of(pages, seat, key)
        except (ValueError, PermissionError) as exc:
            return _refusal(exc)
        ev = pages.bus.latest("view")
        public = None if ev is None else public_event(ev)
        return JSONResponse({"view": None if public is None else public.data, "coach": pages.state(who)})

    @router.post("/seat/api/coach")
    async def ask(request: Request) -> JSONResponse:
        try:
            data = await request.json()
        except ValueError:
            data = {}
        data = data if isinstance(data, dict) else {}
        try:
            who = _seat_of(pages, data.get("seat"), data.get("key"))
            if not pages.coach:
                raise ValueError("the coach is off at this table (start play with --coach)")
        except (ValueError, PermissionError) as exc:
            return _refusal(exc)
        await asyncio.to_thread(pages.ask, who)
        return JSONResponse({"ok": True})

    @router.websocket("/seat/ws")
    async def ws(socket: WebSocket) -> None:
        q = socket.query_params
        try:
            who = _seat_of(pages, q.get("seat"), q.get("key"))
        except (ValueError, PermissionError) as exc:
            await socket.close(code=4403, reason=str(exc)[:120])
            return
        await socket.accept()
        hub = socket.app.state.hub  # the display's: a server that stops ends this stream too
        hints = pages.hints.copy()  # fed by this stream's own events from here on
        last = ""

        async def send_coach() -> None:
            nonlocal last
            data = pages.state(who, hints)
            text = json.dumps({"kind": "seat_coach", "data": data}, separators=(",", ":"), sort_keys=True)
            if text != last:
                last = text
                await socket.send_text(text)

        async def send(ev: TableEvent) -> None:
            hints.follow(ev)
            public = public_event(ev)
            if public is not None:
                await socket.send_text(json.dumps(public.to_json(), separators=(",", ":")))
            await send_coach()

        await stream_events(socket, hub, send, keepalive_s=KEEPALIVE_S, first=send_coach)

    return router


def people_seats(names: Sequence[str], kinds: Sequence[str]) -> dict[int, str]:
    """The seats a person sits at (``kinds[i] != "bot"``), by index: the
    seats that get a seat page."""
    return {i: name for i, (name, kind) in enumerate(zip(names, kinds, strict=True)) if kind != "bot"}
