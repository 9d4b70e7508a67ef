"""How the event reads to people: human column names, numbers, lots.

The data (``export.export_event``) keeps machine names (``games_won``,
``points_for``) because exports are read by programs; every page and the
CSV files people open in a spreadsheet go through here instead, so one
table of labels decides what a column is called everywhere.

Rules: a tie-break appears once, under its human name, in the event's
order; whole numbers print without ``.0``, halves as ``½``; the drawing of
lots prints as the entrant's place in the draw (1 = drawn first), never as
the random number behind it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from tablesense.i18n import N_

TIEBREAK_LABELS: dict[str, str] = {
    "games_won": N_("Games won"),
    "point_difference": N_("Point difference"),
    "points_for": N_("Points for"),
    "head_to_head": N_("Head-to-head"),
    "buchholz": N_("Buchholz"),
    "buchholz_cut1": N_("Buchholz cut 1"),
    "buchholz_median": N_("Median Buchholz"),
    "sonneborn_berger": N_("Sonneborn-Berger"),
    "lots": N_("Lots drawn"),
    "placement_points": N_("Placement points"),
}

TIEBREAK_HELP: dict[str, str] = {
    "games_won": N_("matches won (a draw counts ½)"),
    "point_difference": N_("points scored minus points conceded"),
    "points_for": N_("points scored"),
    "head_to_head": N_("games won against the entrants level with them"),
    "buchholz": N_("sum of the opponents' games won"),
    "buchholz_cut1": N_("Buchholz without the weakest opponent"),
    "buchholz_median": N_("Buchholz without the weakest and the strongest opponent"),
    "sonneborn_berger": N_("opponents' games won, weighted by the result against each"),
    "lots": N_("place in the drawing of lots (1 = drawn first)"),
    "placement_points": N_("points for the places at each table (see the guide)"),
}


def entrant_numbers(entrant_ids: Iterable[int]) -> dict[int, int]:
    """Each entrant's number in its event (1 = registered first): the pair or
    team number people read on every page and type at every command, never
    the database id (which counts across all the events of a database)."""
    return {e: n for n, e in enumerate(sorted(entrant_ids), start=1)}


def numbered(number: int | None, name: str) -> str:
    """An entrant as people read it: ``#3 Ana & Bia``."""
    return name if number is None else f"#{number} {name}"


def label(name: str) -> str:
    """The human name of a tie-break or column (the machine name if unknown)."""
    return TIEBREAK_LABELS.get(name, name.replace("_", " ").capitalize())


def fmt_num(x: Any) -> str:
    """1 -> "1", 1.5 -> "1½", -3.0 -> "−3", None -> "–"."""
    if x is None:
        return "–"
    if isinstance(x, bool):
        return str(x)
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    sign = "−" if v < 0 else ""
    v = abs(v)
    whole = int(v)
    frac = v - whole
    if frac == 0:
        return f"{sign}{whole}"
    if abs(frac - 0.5) < 1e-9:
        return f"{sign}{whole if whole else ''}½"
    return f"{sign}{v:.2f}".rstrip("0").rstrip(".")


def fmt_column(values: Sequence[Any]) -> list[str]:
    """One number format for a whole column: halves as ``½`` when every value
    is a whole or a half, otherwise every value with two decimals (``5.75``
    beside ``3.50``, never beside ``3½``)."""
    def number(v: Any) -> bool:
        return isinstance(v, int | float) and not isinstance(v, bool)

    if all(float(v * 2).is_integer() for v in values if number(v)):
        return [fmt_num(v) for v in values]
    return [f"{'−' if v < 0 else ''}{abs(float(v)):.2f}" if number(v) else fmt_num(v) for v in values]


def lots_places(standings: Sequence[dict[str, Any]]) -> dict[int, int]:
    """Each entrant's place in the drawing of lots (1 = highest draw, which ranks first)."""
    draws = [(st["tiebreaks"].get("lots", 0.0), st["entrant"]) for st in standings if "lots" in st["tiebreaks"]]
    return {e: i for i, (_v, e) in enumerate(sorted(draws, key=lambda t: (-t[0], t[1])), start=1)}


def standings_columns(tiebreaks: Sequence[str]) -> list[tuple[str, str]]:
    """(key, human header) of a standings table: unique, tie-breaks in the event's order."""
    # The column that ranks (the first tie-break: Placement points at tables of
    # three or four) comes first after Played, before Won and Games won.
    ranking = [(f"tb:{t}", label(t)) for t in tiebreaks[:1]]
    cols = [("rank", N_("Rank")), ("name", N_("Entrant")), ("players", N_("Players")), ("played", N_("Played")),
            *ranking, ("wins", N_("Won")), ("draws", N_("Drawn")), ("losses", N_("Lost"))]
    shown = {"games_won", "wins"}
    if "games_won" not in tiebreaks:
        cols.append(("games_won", N_("Games won")))
    cols += [(f"tb:{t}", label(t)) for t in tiebreaks[1:]]
    extra = [("points_for", N_("Points for")), ("points_against", N_("Points against")), ("point_difference", N_("Point difference"))]
    cols += [(k, h) for k, h in extra if k not in tiebreaks and k not in shown]
    return cols


def standings_rows(data: dict[str, Any], *, text: bool = True) -> tuple[list[tuple[str, str]], list[dict[str, Any]]]:
    """Columns and rows of the standings as people read them (``text``: values formatted)."""
    tbs = list(data["event"]["options"].get("tiebreaks", []))
    cols = standings_columns(tbs)
    players = {e["id"]: ", ".join(e.get("members", [])) for e in data["entrants"]}
    numbers = {e["id"]: e.get("number") for e in data["entrants"]}
    lots = lots_places(data["standings"])
    rows = []
    for st in data["standings"]:
        values: dict[str, Any] = {
            "rank": st["rank"], "name": st["name"], "players": players.get(st["entrant"], ""),
            "played": st["played"], "wins": st["wins"], "draws": st["draws"], "losses": st["losses"],
            "games_won": st["games_won"], "points_for": st["points_for"], "points_against": st["points_against"],
            "point_difference": _diff(st["points_for"], st["points_against"]),
            "entrant": st["entrant"], "number": numbers.get(st["entrant"]),
        }
        for t in tbs:
            v = lots.get(st["entrant"]) if t == "lots" else st["tiebreaks"].get(t)
            values[f"tb:{t}"] = v
        rows.append(values)
    if text:  # one format per column (fmt_column)
        for k in {k for r in rows for k in r} - {"name", "players", "entrant", "number"}:
            for r, shown in zip(rows, fmt_column([r.get(k) for r in rows]), strict=True):
                r[k] = shown
    return cols, rows


def _diff(a: Any, b: Any) -> float | None:
    if a is None or b is None:
        return None
    return float(a) - float(b)


def standings_csv_text(data: dict[str, Any], cell: Callable[[Any], Any] = lambda v: v,
                       tr: Callable[[str], str] = lambda s: s) -> str:
    """The standings as CSV: one header row of unique human names, plain numbers (lots as a place).

    ``cell`` guards text cells (the exporter passes its formula-injection guard); ``tr``
    translates the headers (people open this file in a spreadsheet: their language)."""
    import csv
    import io

    cols, rows = standings_rows(data, text=False)
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["#", *[tr(h) for _k, h in cols]])  # the entrant's number in the event, never its database id
    for r in rows:
        w.writerow([f"#{r['number']}" if r["number"] is not None else "", *[cell(_plain(r[k])) for k, _h in cols]])
    return out.getvalue()


def _plain(v: Any) -> Any:
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v
