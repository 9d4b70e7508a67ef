"""The table-top page's "play another table": find a remote match by its code.

A virtual table started with ``play --remote page`` seats people on the
table-top page before it knows its match. :func:`find_router` serves, under
``/tabletop/find``, the page where the person either **hosts** a match (the
table opens one; the page says the code to read out to the other table) or
**joins** one by the code the other table read out. It is served over an
injected finder (``remote/people.py``'s :class:`PageFinder`: ``host()``,
``join(text)``, ``view(translate)``), so this room does not import the
remote room:

- ``GET /tabletop/find?key=K``: the page (``key``: the finder's key, printed
  in the ``find a game:`` line; a wrong one gets 403 and no form);
- ``GET /tabletop/find/api/state?key=K``: what the page draws (choose,
  finding, ready; the code, the last refusal, and once the table plays a
  match each person's seat address, key included);
- ``POST /tabletop/find/api/host`` and ``/join`` (JSON ``key``, and
  ``code`` for a join): the person's choice; a code that cannot be one
  is answered 400 with the sentence why.

The seats' addresses carry their keys, so only the holder of the finder's
key learns them: the finder's key is as private as a seat's.
"""

from __future__ import annotations

import secrets
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.templating import Jinja2Templates

from tablesense.i18n import N_
from tablesense.web.app import TEMPLATES_DIR
from tablesense.web.tabletop import KEY_BYTES, json_body

__all__ = ["FIND_REFUSED", "FindRoutes", "find_router", "find_url"]

FIND_REFUSED = N_("wrong or missing key: open the \"find a game:\" address the table printed (it ends in ?key=...)")


def find_url(base: str, key: str) -> str:
    """The printed ``find a game:`` address under a server's base URL."""
    return base.rstrip("/") + "/tabletop/find?key=" + key


class FindRoutes:
    """The finder page's routes, one method each (see the module docstring)."""

    def __init__(self, finder: Any, key: str | None = None) -> None:
        self.finder = finder
        self.key = key or secrets.token_urlsafe(KEY_BYTES)
        self.templates = Jinja2Templates(directory=str(TEMPLATES_DIR))

    def router(self) -> APIRouter:
        router = APIRouter()
        router.add_api_route("/tabletop/find", self.page, methods=["GET"], response_class=HTMLResponse)
        router.add_api_route("/tabletop/find/api/state", self.state, methods=["GET"])
        for name in ("host", "join"):
            router.add_api_route(f"/tabletop/find/api/{name}", getattr(self, name), methods=["POST"])
        return router

    def _ok(self, key: object) -> bool:
        return isinstance(key, str) and bool(key) and secrets.compare_digest(self.key.encode(), key.encode())

    @staticmethod
    def _translate(request: Request) -> Any:
        from tablesense.i18n import Translator

        return Translator(getattr(request.app.state, "lang", "en"))

    async def page(self, request: Request, key: str | None = None) -> Any:
        from tablesense.web.labels import FIND, labels, labels_json

        lang = getattr(request.app.state, "lang", "en")
        words = labels(lang, FIND)
        refused = "" if self._ok(key) else self._translate(request)(FIND_REFUSED)
        return self.templates.TemplateResponse(
            request, "tabletop_find.html",
            {"lang": lang, "L": words, "labels_json": labels_json(words), "title": words["find_title"],
             "refused": refused},
            status_code=403 if refused else 200,
            headers={"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"},
        )

    async def state(self, request: Request, key: str | None = None) -> JSONResponse:
        if not self._ok(key):
            return JSONResponse({"ok": False, "error": self._translate(request)(FIND_REFUSED)}, status_code=403)
        return JSONResponse({"ok": True, **self.finder.view(self._translate(request))},
                            headers={"Cache-Control": "no-store"})

    async def host(self, request: Request) -> JSONResponse:
        return await self._ask(request, lambda data: self.finder.host())

    async def join(self, request: Request) -> JSONResponse:
        return await self._ask(request, lambda data: self.finder.join(str(data.get("code") or "")))

    async def _ask(self, request: Request, do: Any) -> JSONResponse:
        data = await json_body(request)
        tr = self._translate(request)
        if not self._ok(data.get("key")):
            return JSONResponse({"ok": False, "error": tr(FIND_REFUSED)}, status_code=403)
        try:
            do(data)
        except ValueError as exc:
            return JSONResponse({"ok": False, "error": tr(exc.args[0] if exc.args else str(exc))}, status_code=400)
        return JSONResponse({"ok": True, **self.finder.view(tr)})


def find_router(finder: Any, key: str | None = None) -> tuple[APIRouter, str]:
    """The finder page's routes over ``finder`` and the key that opens them."""
    routes = FindRoutes(finder, key)
    return routes.router(), routes.key
