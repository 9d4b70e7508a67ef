"""The table-top page: the virtual table's own surface, played by hand.

:func:`tabletop_router` serves a :class:`~tablesense.sim.hand.TableTop` (passed
in: this room does not import the sim room) under ``/tabletop``:

- ``GET /tabletop?seat=N&key=K`` (or ``?open=1&key=K`` in the teaching
  mode): the page; ``/tabletop`` alone tells the visitor to open the address
  printed for their seat;
- ``GET /tabletop/api/layout``: the geometry the page draws (public);
- ``GET /tabletop/api/state?seat=N&key=K``: the table as seat N may see it
  (no seat: the public view, every rack face down);
- ``WS /tabletop/ws?seat=N&key=K``: the same, pushed whenever it changes (a
  piece moved, an LED frame, a turn LED, the referee's banner);
- ``POST /tabletop/api/lift``, ``/lay``, ``/press``, ``/deal`` (JSON with
  ``seat`` and ``key``, or ``open`` and ``key``): hands and buttons;
- ``GET /tabletop/api/scenario?key=K``: the session as a scenario file (only
  in the open-hands mode and with the open-hands key: it names every tag).

Why keys: on a club LAN anyone can type another seat's number into the
address. Each seat (and the open-hands view) gets an unguessable key
(:class:`TableKeys`, made when the page is served and printed only in that
seat's ``table top:`` line); a wrong or missing key is refused with 403
(the page falls back to the public view) and compared in constant time.
Each client gets only what :meth:`TableTop.view` gives its seat, so the page's
DOM and live messages hold nothing that seat may not see.
"""

from __future__ import annotations

import asyncio
import json
import math
import secrets
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.templating import Jinja2Templates

from tablesense.web.app import TEMPLATES_DIR
from tablesense.web.sockets import closing

__all__ = [
    "PUSH_INTERVAL_S",
    "DisplayFollower",
    "KeyRefused",
    "TableKeys",
    "TabletopRoutes",
    "TabletopSite",
    "serve_tabletop",
    "tabletop_router",
    "tabletop_url",
]

#: How often a live client's view is recomputed (sent only when it changed).
PUSH_INTERVAL_S = 0.1

#: The longest press a page may ask for (a finger resting on the button).
MAX_HOLD_S = 3.0


def tabletop_url(
    base: str, seat: int | None = None, open_hands: bool = False, key: str | None = None
) -> str:
    """The page's address under a server's base URL (``http://host:port/``);
    ``key`` is the seat's (or the open-hands view's) key from :class:`TableKeys`."""
    url = base.rstrip("/")
    if not url.endswith("/tabletop"):
        url += "/tabletop"
    query: list[tuple[str, str]] = []
    if open_hands:
        query.append(("open", "1"))
    elif seat is not None:
        query.append(("seat", str(seat)))
    if key is not None and query:
        query.append(("key", key))
    return url + ("?" + urllib.parse.urlencode(query) if query else "")


#: Bytes of randomness in a key (``secrets.token_urlsafe``: 22 characters).
KEY_BYTES = 16


class KeyRefused(ValueError):
    """A seat (or the open-hands view) asked for without its key: HTTP 403."""


class TableKeys:
    """The keys of one served table top: one per seat a person may take, and
    one for the open-hands view (only when the table allows it). Made fresh
    each time a page is served, so an old printed address stops working."""

    def __init__(self, seats: Iterable[int], open_hands: bool = False) -> None:
        self.seats: dict[int, str] = {int(n): secrets.token_urlsafe(KEY_BYTES) for n in seats}
        self.open: str | None = secrets.token_urlsafe(KEY_BYTES) if open_hands else None

    @classmethod
    def for_table(cls, top: Any) -> TableKeys:
        """Keys for ``top``'s people's seats (and its open-hands view)."""
        return cls(top.seats, bool(top.open_hands))

    @staticmethod
    def _same(want: str | None, got: str | None) -> bool:
        if not want or not got:
            return False
        return secrets.compare_digest(want.encode(), got.encode())

    def seat_ok(self, seat: int, key: str | None) -> bool:
        return self._same(self.seats.get(seat), key)

    def open_ok(self, key: str | None) -> bool:
        return self._same(self.open, key)

    def url(self, base: str, seat: int | None = None, open_hands: bool = False) -> str:
        """The printed address of ``seat`` (or of the open-hands view), key included."""
        if open_hands:
            return tabletop_url(base, open_hands=True, key=self.open)
        key = self.seats.get(seat) if seat is not None else None
        return tabletop_url(base, seat, key=key)

    def lines(self, base: str, names: Sequence[str] = (), lang: str = "en") -> list[str]:
        """One ``table top: URL`` line per seat (followed by the seat's name
        when ``names`` gives the table's), then the open-hands one; in the
        table's language (``lang``), the address always the line's third
        word in English and standing alone between spaces in every language."""
        from tablesense.i18n import N_, Translator

        tr = Translator(lang)
        out = [
            tr(N_("table top: {url}  ({seat})"), url=self.url(base, n), seat=tr(names[n]))
            if n < len(names)
            else tr(N_("table top: {url}"), url=self.url(base, n))
            for n in self.seats
        ]
        if self.open is not None:
            out.append(tr(N_("table top: {url}  (open hands)"), url=self.url(base, open_hands=True)))
        return out


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


def seat_refused(name: str) -> str:
    """The 403 sentence for a seat (by its name) asked for without its key
    (troubleshooting); a name, because people do not count seats from 0."""
    return (
        f"wrong or missing key for {name}'s seat: open the \"table top:\" address printed "
        f"for {name} (it ends in &key=...); without it you see the public view only"
    )


def _seat_name(top: Any, seat: int) -> str:
    seats = top.geometry.seats
    return str(seats[seat].name) if 0 <= seat < len(seats) else f"seat {seat + 1}"


OPEN_REFUSED = (
    "wrong or missing key for the open-hands view: open the \"table top: ... (open hands)\" "
    "address printed at start"
)


def _who(
    top: Any, keys: TableKeys, seat: str | None, open_: str | None, key: str | None
) -> tuple[int | None, bool]:
    """Who is asking: ``(seat, open view)``; ``(None, False)`` is the public
    view (every rack face down). Raises :class:`KeyRefused` for a wrong or
    missing key, ValueError with a sentence for anything else."""
    if open_ in ("1", "true", "yes", True):
        if not top.open_hands:
            raise ValueError("open hands are off on this table (start it with --open-hands)")
        if not keys.open_ok(key):
            raise KeyRefused(OPEN_REFUSED)
        return None, True
    if seat is None or seat == "":
        return None, False
    try:
        n = int(seat)
    except ValueError:
        raise ValueError(f"seat must be a number, not {seat!r}") from None
    if n not in top.seats:
        raise ValueError(f"{_seat_name(top, n)}'s seat is not open to a person at this table")
    if not keys.seat_ok(n, key):
        raise KeyRefused(seat_refused(_seat_name(top, n)))
    return n, False


class BadField(ValueError):
    """A request field of the wrong type: answered 400 with the field's name,
    never a 500 (a list where a cell name goes used to reach the hands)."""


#: The JSON types each field of the table-top API may have (None is always allowed).
FIELD_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "seat": ((int, str), "a seat number"),
    "button_seat": ((int, str), "a seat number"),
    "key": ((str,), "a text key"),
    "open": ((bool, int, str), "true or false"),
    "cell": ((str,), "a cell name"),
    "stock": ((bool,), "true or false"),
    "piece": ((str, int), "a piece name"),
    "kind": ((str,), "a button kind"),
    "hold": ((int, float), "a number of seconds"),
}


def check_fields(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` when every known field has its type (see :data:`FIELD_TYPES`), else :class:`BadField`."""
    for name, (kinds, what) in FIELD_TYPES.items():
        value = data.get(name)
        if value is None:
            continue
        if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
            raise BadField(f"{name} must be {what}, not a JSON {_json_type(value)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise BadField(f"{name} must be {what}, not {value}")
    return data


def _json_type(value: object) -> str:
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), type(value).__name__)


def _hand_of(who: int | None, open_view: bool) -> str:
    """The hand a keyed request moves (``seat:N`` or ``open``); the public view has none."""
    if open_view:
        return "open"
    if who is None:
        raise KeyRefused(
            "the public view moves nothing: open the address printed for your seat (it carries its key)"
        )
    return f"seat:{who}"


def refusal(exc: BaseException, status: int = 409) -> JSONResponse:
    """A refused request as the page reads it: ``{"ok": false, "error": ...}``,
    403 for a key, 400 for a field of the wrong type, else ``status``."""
    text = exc.args[0] if exc.args else str(exc)
    if isinstance(exc, KeyRefused):
        status = 403
    elif isinstance(exc, BadField):
        status = 400
    return JSONResponse({"ok": False, "error": str(text)}, status_code=status)


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object ({} for anything else)."""
    try:
        data = await request.json()
    except (ValueError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


#: What a table-top request may be refused with (answered, never a 500).
REFUSALS: tuple[type[BaseException], ...] = (ValueError, KeyError)


@dataclass
class TabletopSite:
    """What the table-top routes read: the table top, the seats' keys, the
    coach and the presence (see :func:`tabletop_router`)."""

    top: Any
    keys: TableKeys
    coach: Any = None
    presence: Any = None

    def who(self, seat: str | None, open_: str | None, key: str | None) -> tuple[int | None, bool]:
        """Who is asking: ``(seat, open view)``, see :func:`_who`."""
        return _who(self.top, self.keys, seat, open_, key)

    def seen_by(self, who: int | None, open_view: bool) -> dict[str, Any]:
        """The table as ``who`` sees it, with its own coach's hint."""
        view: dict[str, Any] = self.top.view(who, open_view)
        if self.coach is not None and who is not None and not open_view:
            view["coach"] = {
                "on": bool(self.coach.coach),
                "hint": self.coach.hint(who),
                "review": self.coach.review(who),
            }
        return view

    def hand_for(self, data: dict[str, Any]) -> str:
        """The hand a request moves: a seat's (with that seat's key) or the
        open-hands screen's (with its key); the public view has none.
        Every POST calls it first: the fields' types are checked here."""
        check_fields(data)
        seat = data.get("seat")
        key = data.get("key")
        who, open_view = self.who(
            None if seat is None else str(seat),
            "1" if data.get("open") else None,
            key if isinstance(key, str) else None,
        )
        return _hand_of(who, open_view)

    def page_context(self, lang: str, seat: str | None, open_: str | None, key: str | None) -> dict[str, Any]:
        """The page's template context for who asks (a wrong key: the public
        view and the sentence why, ``refused``)."""
        from tablesense.i18n import Translator
        from tablesense.web.labels import TABLETOP, labels, labels_json

        top = self.top
        refused = ""
        try:
            who, open_view = self.who(seat, open_, key)
            chooser = who is None and not open_view
        except KeyRefused as exc:
            # the public view: every rack face down, no buttons of any seat
            who, open_view, chooser, refused = None, False, False, str(exc)
        except ValueError:
            who, open_view, chooser = None, False, True
        table = top.layout()
        seats, game = table["seats"], str(table["game"])
        words = labels(lang, TABLETOP)
        seat_name = Translator(lang)
        words.update({f"name:{s['name']}": seat_name(str(s["name"])) for s in seats})
        return {
            "lang": lang,
            "L": words,
            "labels_json": labels_json(words),
            "seat_names": {s["index"]: seat_name(str(s["name"])) for s in seats},
            "title": words["table_top_of"].replace("{name}", words.get(f"game:{game}", game)),
            "seat": "" if who is None else str(who),
            "open_view": open_view,
            "chooser": chooser,
            "refused": refused,
            "seats": [s for s in seats if s["index"] in top.seats],
            "open_hands": bool(top.open_hands),
        }


class TabletopRoutes:
    """The table-top page's routes, one method each, over a :class:`TabletopSite`
    (the module docstring lists them). The hands' calls run off the event
    loop: a lift waits for the board's firmware step."""

    def __init__(self, site: TabletopSite) -> None:
        self.site = site
        self.templates = Jinja2Templates(directory=str(TEMPLATES_DIR))

    def router(self) -> APIRouter:
        router = APIRouter()
        router.add_api_route("/tabletop", self.page, methods=["GET"], response_class=HTMLResponse)
        router.add_api_route("/tabletop/api/layout", self.layout, methods=["GET"])
        router.add_api_route("/tabletop/api/state", self.state, methods=["GET"])
        for name in ("lift", "lay", "press", "coach", "deal"):
            router.add_api_route(f"/tabletop/api/{name}", getattr(self, name), methods=["POST"])
        router.add_api_route("/tabletop/api/scenario", self.scenario, methods=["GET"])
        router.add_api_websocket_route("/tabletop/ws", self.ws)
        return router

    async def page(
        self, request: Request, seat: str | None = None, open: str | None = None, key: str | None = None
    ) -> Any:
        # the table's language, from the display app (web/app.py create_app)
        lang = getattr(request.app.state, "lang", "en")
        context = self.site.page_context(lang, seat, open, key)
        return self.templates.TemplateResponse(
            request,
            "tabletop.html",
            context,
            status_code=403 if context["refused"] else 200,
            headers={"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"},
        )

    async def layout(self) -> JSONResponse:
        return JSONResponse(self.site.top.layout())

    async def state(self, seat: str | None = None, open: str | None = None, key: str | None = None) -> JSONResponse:
        try:
            who, open_view = self.site.who(seat, open, key)
            return JSONResponse(self.site.seen_by(who, open_view))
        except REFUSALS as exc:
            return refusal(exc, 403)

    async def lift(self, request: Request) -> JSONResponse:
        data = await json_body(request)
        try:
            hand = self.site.hand_for(data)
            piece = await asyncio.to_thread(
                self.site.top.lift, hand, data.get("cell"), from_stock=bool(data.get("stock"))
            )
        except REFUSALS as exc:
            return refusal(exc)
        return JSONResponse({"ok": True, "piece": piece})

    async def lay(self, request: Request) -> JSONResponse:
        data = await json_body(request)
        try:
            hand = self.site.hand_for(data)
            await asyncio.to_thread(self.site.top.lay, hand, str(data.get("piece")), data.get("cell"))
        except REFUSALS as exc:
            return refusal(exc)
        return JSONResponse({"ok": True})

    async def press(self, request: Request) -> JSONResponse:
        data = await json_body(request)
        top = self.site.top
        try:
            hand = self.site.hand_for(data)
            seat = int(data.get("button_seat", data.get("seat", -1)))
            if hand != "open" and hand != f"seat:{seat}":
                name = _seat_name(top, seat)
                raise KeyRefused(f"that is {name}'s button: only {name}'s key presses it")
            # how long the finger held it (a second or more: a long press)
            hold = min(max(float(data.get("hold") or 0.0), 0.0), MAX_HOLD_S)
            await asyncio.to_thread(top.press, seat, str(data.get("kind")), hold)
        except (*REFUSALS, TypeError) as exc:
            return refusal(exc)
        return JSONResponse({"ok": True})

    async def coach(self, request: Request) -> JSONResponse:
        """The seat's "Suggest a move": the answer comes on its own view."""
        data = await json_body(request)
        coach = self.site.coach
        try:
            hand = self.site.hand_for(data)
            if not hand.startswith("seat:"):
                raise KeyRefused("the coach answers a seat: open the address printed for your seat")
            if coach is None or not coach.coach:
                raise ValueError("the coach is off at this table (start the demo with --coach)")
            await asyncio.to_thread(coach.ask, int(hand.split(":", 1)[1]))
        except REFUSALS as exc:
            return refusal(exc)
        return JSONResponse({"ok": True})

    async def deal(self, request: Request) -> JSONResponse:
        data = await json_body(request)
        top = self.site.top
        try:
            self.site.hand_for(data)
            if getattr(top, "dealer", None) == "computer":
                raise ValueError("the computer deals at this table")
            await asyncio.to_thread(top.deal)
        except REFUSALS as exc:
            return refusal(exc)
        return JSONResponse({"ok": True})

    async def scenario(self, key: str | None = None) -> JSONResponse:
        top = self.site.top
        if not top.open_hands:
            return refusal(ValueError("the session names every tag: only in the open-hands mode"), 403)
        if not self.site.keys.open_ok(key):
            return refusal(KeyRefused(OPEN_REFUSED))
        return JSONResponse(
            top.scenario(),
            headers={"Content-Disposition": 'attachment; filename="tabletop-session.json"'},
        )

    async def ws(self, socket: WebSocket) -> None:
        """The seat's view, pushed whenever it changes (recomputed every
        :data:`PUSH_INTERVAL_S`); a seat's keyed view tells the presence."""
        q = socket.query_params
        try:
            who, open_view = self.site.who(q.get("seat"), q.get("open"), q.get("key"))
        except ValueError as exc:
            await socket.close(code=4403, reason=str(exc))
            return
        await socket.accept()
        presence = self.site.presence
        present = presence if presence is not None and who is not None and not open_view else None
        if present is not None:
            present.arrive(who)
        last = ""
        async with closing(socket, lambda: present.leave(who) if present is not None else None) as watcher:
            while not watcher.done():
                try:
                    view = await asyncio.to_thread(self.site.seen_by, who, open_view)
                except REFUSALS as exc:
                    await socket.send_text(json.dumps({"error": str(exc)}))
                    break
                view.pop("version", None)
                text = json.dumps(view, separators=(",", ":"), sort_keys=True)
                if text != last:
                    last = text
                    await socket.send_text(text)
                await asyncio.sleep(PUSH_INTERVAL_S)


def tabletop_router(
    top: Any, keys: TableKeys | None = None, coach: Any = None, presence: Any = None
) -> APIRouter:
    """Routes of the table-top page for ``top`` (a TableTop), guarded by
    ``keys`` (fresh ones when not given: then nobody can sit, only watch).

    ``coach`` (a :class:`~tablesense.referee.sit.SitDown`: ``coach`` on or
    off, ``hint(seat)``, ``review(seat)``, ``ask(seat)``) adds the coach: a
    seat's keyed view carries ``coach: {"on", "hint", "review"}`` with that
    seat's hint and its reading of the last review only; the public and
    open-hands views never carry one.

    ``presence`` (``arrive(seat)``, ``leave(seat)``) hears each seat's keyed
    live view open and close: a demo waits for every seated person's page."""
    site = TabletopSite(top, keys if keys is not None else TableKeys.for_table(top), coach, presence)
    return TabletopRoutes(site).router()


def serve_tabletop(top: Any, host: str = "127.0.0.1", port: int = 0, keys: TableKeys | None = None) -> Any:
    """Serve ``top``'s page on its own server (``sim boards``), guarded by
    ``keys``; returns the running :class:`~tablesense.web.server.DisplayServer`
    (``.url``)."""
    from tablesense.outputs.events import EventBus
    from tablesense.web.app import create_app
    from tablesense.web.server import serve_in_thread

    app = create_app(
        EventBus(),
        title=f"virtual table {top.geometry.name}",
        routers=[tabletop_router(top, keys)],
        optional_routers=(),
    )
    return serve_in_thread(app, host=host, port=port)
