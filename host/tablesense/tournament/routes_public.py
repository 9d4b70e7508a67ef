"""The director's public pages: standings and pairings (the same bytes for
everyone, rendered once per change), the crosstable, the event as JSON and
the exports. Routes over the injected :class:`~tablesense.tournament.site.DirectorSite`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from .export import export_event, records_archive, results_csv, standings_csv
from .site import DirectorSite, Site, page_language

router = APIRouter()


@router.get("/", include_in_schema=False)
def root() -> RedirectResponse:
    return RedirectResponse("/standings", status_code=303)


async def public_page(site: DirectorSite, request: Request, template: str) -> Response:
    """A public page as the same bytes for everyone with its language and login
    state, rendered once per change of the event (page_cache.py); a request
    served from the cache never leaves the event loop."""
    pages = site.pages
    logged_in = site.logged_in(request)
    key = (template, page_language(request, site.event_lang) if pages.cached("event-lang") is not None else None,
           logged_in)
    body = pages.cached(key) if key[1] is not None else None
    if body is None:
        def render() -> bytes:
            lang = page_language(request, site.event_lang)
            return pages.get((template, lang, logged_in), lambda: site.templates.get_template(template).render(
                site.ctx(request)).encode())

        body = await run_in_threadpool(render)
    return Response(body, media_type="text/html; charset=utf-8")


@router.get("/standings", response_class=HTMLResponse)
async def standings(request: Request, site: Site) -> Response:
    return await public_page(site, request, "standings.html")


@router.get("/pairings", response_class=HTMLResponse)
async def pairings(request: Request, site: Site) -> Response:
    return await public_page(site, request, "pairings.html")


def crosstable_grid(rounds: list[dict[str, Any]]) -> dict[int, dict[int, list[str]]]:
    """Entrant -> opponent -> the scores between them (``"150-97"``, the
    entrant's first), over every two entrants who shared a table (two, three
    or four) in a played match."""
    grid: dict[int, dict[int, list[str]]] = {}
    for rnd in rounds:
        for m in rnd["matches"]:
            ids, sc = m["entrants"], m["score"]
            if None in ids or sc is None:
                continue
            for i, a in enumerate(ids):
                for j, b in enumerate(ids):
                    if i != j:
                        grid.setdefault(a, {}).setdefault(b, []).append(f"{sc[i]}-{sc[j]}")
    return grid


@router.get("/crosstable", response_class=HTMLResponse)
def crosstable(request: Request, site: Site) -> Response:
    c = site.ctx(request, refresh=0)
    c["grid"] = crosstable_grid(c["data"]["rounds"])
    return site.templates.TemplateResponse(request, "crosstable.html", c)


@router.get("/api/event")
def api_event(site: Site) -> JSONResponse:
    return JSONResponse(export_event(site.director, audit=100))


@router.get("/export.json")
def export_json(site: Site) -> Response:
    return JSONResponse(export_event(site.director), headers={"Content-Disposition": "attachment; filename=event.json"})


@router.get("/standings.csv")
def export_standings(request: Request, site: Site) -> Response:
    # people open this one in a spreadsheet: headers in the page's language (results.csv is for programs)
    return Response(standings_csv(site.director, site.tr_of(request)), media_type="text/csv",
                    headers={"Content-Disposition": "attachment; filename=standings.csv"})


@router.get("/results.csv")
def export_results(site: Site) -> Response:
    return Response(results_csv(site.director), media_type="text/csv",
                    headers={"Content-Disposition": "attachment; filename=results.csv"})


@router.get("/records.zip")
def export_records(site: Site) -> Response:
    return Response(records_archive(site.director), media_type="application/zip",
                    headers={"Content-Disposition": "attachment; filename=records.zip"})
