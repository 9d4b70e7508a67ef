"""The diagnostics page for the web display: a FastAPI APIRouter the web app includes.

    from tablesense.diag.web import make_router
    app.include_router(make_router(ports=lambda: ["/dev/ttyACM0"], geometry=g), prefix="/diag")

``GET /`` renders the last report (and a button to run again), ``POST /run``
runs the diagnostics now, ``GET /report.json`` returns the last report as
``tablesense diag --json`` prints it. Diagnostics open the boards' ports, so
run them when no game holds the ports (the page says so when a port is busy).
"""

from __future__ import annotations

import html
import threading
from collections.abc import Callable

from tablesense.diag.core import BoardReport, diagnose_board


def make_router(ports: Callable[[], list[str]], geometry=None,
                run: Callable[[str], BoardReport] | None = None):  # fastapi.APIRouter
    """``ports`` lists the boards' ports when called; ``run`` diagnoses one
    (default :func:`diagnose_board` with the geometry)."""
    from fastapi import APIRouter
    from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse

    router = APIRouter()
    lock = threading.Lock()
    state: dict[str, object] = {"reports": []}
    diagnose = run or (lambda p: diagnose_board(p, geometry=geometry, pings=10, led_test=False))

    def run_all() -> list[BoardReport]:
        with lock:
            reports = [diagnose(p) for p in ports()]
            state["reports"] = reports
            return reports

    def payload() -> dict:
        reports: list[BoardReport] = state["reports"]  # type: ignore[assignment]
        return {"ok": all(r.ok for r in reports), "boards": [r.to_json() for r in reports]}

    @router.get("/report.json")
    def report_json() -> JSONResponse:
        return JSONResponse(payload())

    @router.post("/run")
    def run_now() -> RedirectResponse:
        run_all()
        return RedirectResponse(url="./", status_code=303)

    @router.get("/", response_class=HTMLResponse)
    def page() -> HTMLResponse:
        reports: list[BoardReport] = state["reports"]  # type: ignore[assignment]
        rows = []
        for r in reports:
            title = html.escape(r.port) + (f" — board {r.identity.board}, firmware {html.escape(r.identity.fw_version)}"
                                           if r.identity else "")
            rows.append(f"<h2>{title}</h2><table><tr><th>check</th><th>result</th><th>detail</th><th>fix</th></tr>")
            for c in r.checks:
                mark = "ok" if c.ok else "FAIL" if c.ok is False else "-"
                cls = "ok" if c.ok else "fail" if c.ok is False else "skip"
                rows.append(f'<tr class="{cls}"><td>{html.escape(c.name)}</td><td>{mark}</td>'
                            f"<td>{html.escape(c.detail)}</td><td>{html.escape(c.fix or '')}</td></tr>")
            rows.append("</table>")
        body = "".join(rows) or "<p>No diagnostics run yet. Stop the game first: diagnostics open the boards' ports.</p>"
        return HTMLResponse(
            "<!doctype html><html><head><meta charset='utf-8'><title>Board diagnostics</title>"
            "<style>body{font-family:sans-serif;margin:1em}td,th{padding:4px 8px;border-bottom:1px solid #ccc}"
            ".fail{background:#fdd}.ok{background:#efe}</style></head><body><h1>Board diagnostics</h1>"
            "<form method='post' action='run'><button>Run diagnostics</button></form>"
            f"{body}</body></html>"
        )

    return router
