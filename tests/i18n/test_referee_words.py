"""The referee's rewritten engine templates (seats named) are all in the catalogs."""

from __future__ import annotations

import re
from string import Formatter

from babel.messages.pofile import read_po

from tablesense.games.common import Sentence
from tablesense.i18n import LOCALE_DIR
from tablesense.referee.words import ENGINE_NAMED, engine_sentence


def test_every_engine_template_with_a_seat_has_its_named_form_marked() -> None:
    with (LOCALE_DIR / "tablesense.pot").open("rb") as fh:
        messages = [(m.id, m.locations) for m in read_po(fh) if isinstance(m.id, str) and m.id]
    ids: set[str] = {i for i, _ in messages if isinstance(i, str)}
    engine_ids = {
        i for i, where in messages
        if isinstance(i, str) and any(f.startswith("host/tablesense/games/") for f, _ in where)
    }
    missing = []
    for msgid in ids:
        fields = ("seat", "to_play", "t", "winner", "team", "partner_of")
        # any field after "seat"/"team" is an index too ("partner seat {partner}")
        if not any("{" + k + "}" in msgid for k in fields) and not (
            msgid in engine_ids and re.search(r"\b(seat|team) \{\w+\}", msgid)
        ):
            continue
        params = {f: 0 for _, f, _, _ in Formatter().parse(msgid) if f}
        msg = str.__new__(Sentence, msgid)
        msg.template, msg.params = msgid, params  # type: ignore[misc]
        named = engine_sentence(msg, lambda i: "X", lambda i: "Y")
        if isinstance(named, Sentence) and named.template != msgid and named.template not in ids and not re.fullmatch(r"\{\w+\}", named.template):
            missing.append(named.template)
    assert not missing, missing
    assert set(ENGINE_NAMED) <= ids
