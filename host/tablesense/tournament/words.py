"""The words of the director's pages that stand for a machine name.

The data keeps machine names (``status: "reported"``, ``format: "swiss"``)
because exports and the console's live feed are read by programs; a page
shows them through :func:`word`, which finds the human word in the page's
language. One table here, so a status reads the same on the console, the
live tables, the projector and a player's page.

Statuses are marked with a context (``NC_("status", …)``): "playing" or
"free" as a table's state is not the same word in Portuguese as elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable

from tablesense.games.registry import GAMES as ALL_GAMES
from tablesense.i18n import N_, NC_, Translator

#: What a director's form action answers: a Sentence (or a marked string), or a
#: function of the page's Translator when the words depend on a number (a plural).
Message = str | Callable[[Translator], str]

#: A match's status, a table's state, an entrant's status, a player's result.
STATUS: dict[str, str] = {
    "pending": NC_("status", "pending"),
    "reported": NC_("status", "reported"),
    "disputed": NC_("status", "disputed"),
    "confirmed": NC_("status", "confirmed"),
    "playing": NC_("status", "playing"),
    "waiting": NC_("status", "waiting to start"),
    "stalled": NC_("status", "stalled"),
    "correction": NC_("status", "correction pending"),
    "paused": NC_("status", "paused"),
    "offline": NC_("status", "offline"),
    "free": NC_("status", "free"),
    "registered": NC_("status", "registered"),
    "checked_in": NC_("status", "checked in"),
    "withdrawn": NC_("status", "withdrawn"),
    "won": NC_("status", "won"),
    "lost": NC_("status", "lost"),
    "draw": NC_("status", "draw"),
}

GAMES: dict[str, str] = {g.name: g.title for g in ALL_GAMES.values()}

#: The variants as people name them (the record format's names stay in exports).
VARIANTS: dict[str, str] = {v: g.variant_title(v) for g in ALL_GAMES.values() for v in g.variants}

FORMATS: dict[str, str] = {
    "swiss": N_("Swiss"),
    "round-robin": N_("round robin"),
    "knockout": N_("knockout"),
    "groups": N_("groups"),
}

#: How results are confirmed (event option ``confirm``), as the console says it.
CONFIRM: dict[str, str] = {
    "badges": N_("Results are confirmed by a badge tap of each side at the table."),
    "buttons": N_("Results are confirmed by each side's seat button at the table."),
    "director": N_("Results are confirmed here, by the director."),
}

#: The ratings' game families (``ratings.FAMILY_LABELS`` keeps the English for the CLI).
FAMILIES: dict[str, str] = {f: title for g in ALL_GAMES.values() for f, title in g.rating_families.items()}

#: What an audit entry records (its ``action``), as the audit page says it.
ACTIONS: dict[str, str] = {
    "event-created": N_("event created"),
    "event-language": N_("event language changed"),
    "registered": N_("entrant registered"),
    "checked-in": N_("checked in"),
    "withdrawn": N_("withdrawn"),
    "bye-requested": N_("bye requested"),
    "table-key": N_("table key registered"),
    "online": N_("table online"),
    "offline": N_("table offline"),
    "table-quiet": N_("table quiet"),
    "round-paired": N_("round paired"),
    "round-announced": N_("round announced again"),
    "result-accepted": N_("result accepted"),
    "result-disputed": N_("result disputed"),
    "result-confirmed": N_("result confirmed"),
    "correction": N_("correction"),
    "correction-refused": N_("correction refused"),
    "refused": N_("message refused"),
    "refusals-suppressed": N_("refusals not written (too many)"),
    "form-refused": N_("form refused"),
    "login-failed": N_("wrong password"),
    "login-locked": N_("login locked"),
}

_TABLES = {"status": STATUS, "action": ACTIONS, "game": GAMES, "variant": VARIANTS, "format": FORMATS, "confirm": CONFIRM,
           "family": FAMILIES}


def word(tr: Translator, kind: str, key: object) -> str:
    """The human word for machine name ``key`` of ``kind`` in ``tr``'s language
    (an unknown name shows as itself, never an error: a page still draws)."""
    if kind == "actor":
        return _actor(tr, str(key))
    table = _TABLES[kind]
    text = table.get(str(key))
    if text is None:
        return str(key).replace("_", " ").replace("-", " ")
    return tr.context("status", text) if kind == "status" else tr(text)


def _actor(tr: Translator, actor: str) -> str:
    """Who wrote an audit entry: ``director``, ``director-web``, ``table-3``, ``web:ADDRESS``."""
    if actor == "director":
        return tr(N_("director"))
    if actor == "director-web":
        return tr(N_("director (web page)"))
    if actor == "director-cli":
        return tr(N_("director (command line)"))
    if actor.startswith("table-") and actor[6:].isdigit():
        return tr(N_("Table {n}"), n=int(actor[6:]))
    if actor.startswith("web:"):
        return tr(N_("web page from {address}"), address=actor[4:])
    return actor
