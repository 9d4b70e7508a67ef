"""The catalogs are complete, current and consistent with the code.

A string marked in the code but missing from a catalog, an untranslated or
fuzzy entry, or a translation whose ``{placeholders}`` differ from the
English (it would raise KeyError at the table, or drop a seat name) fails
here, so a new message cannot reach a player untranslated.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from tablesense.i18n import LOCALE_DIR

REPO = Path(__file__).resolve().parents[2]
KEYWORDS = {"_": None, "N_": None, "say": None, "plural": (1, 2), "NC_": ((1, "c"), 2)}
LANGS = ("pt_BR", "ms")
FIELD = re.compile(r"\{([^{}]*)\}")


def _code_msgids() -> set[tuple[str, str | None]]:
    """Every (msgid, context) the code marks."""
    method_map = [("**/templates/**.html", "jinja2"), ("**.py", "python")]
    found: set[tuple[str, str | None]] = set()
    root = REPO / "host" / "tablesense"
    for filename, _lineno, message, _comments, ctx in extract_from_dir(
        str(root), method_map=method_map, keywords=KEYWORDS,
        directory_filter=lambda d: Path(d).name not in ("firmware", "hardware"),
    ):
        if "/firmware/" in filename.replace("\\", "/"):
            continue
        first = message[0] if isinstance(message, tuple) else message
        if first:
            found.add((first, ctx))
    return found


def _catalog(lang: str):
    with (LOCALE_DIR / lang / "LC_MESSAGES" / "tablesense.po").open("rb") as fh:
        return read_po(fh, locale=lang)


def _fields(text: str) -> set[str]:
    return {f.split("!")[0].split(":")[0] for f in FIELD.findall(text)}


@pytest.mark.parametrize("lang", LANGS)
def test_every_marked_string_is_translated(lang: str) -> None:
    catalog = _catalog(lang)
    missing = []
    for msgid, ctx in sorted(_code_msgids(), key=str):
        entry = catalog.get(msgid, context=ctx)
        if entry is None or entry.fuzzy or not entry.string or (
                isinstance(entry.string, tuple) and not all(entry.string)):
            missing.append(msgid)
    assert not missing, f"{lang}: {len(missing)} untranslated (run scripts/i18n.sh): {missing[:10]}"


@pytest.mark.parametrize("lang", LANGS)
def test_translations_keep_the_placeholders(lang: str) -> None:
    wrong = []
    for entry in _catalog(lang):
        if not entry.id:
            continue
        ids = [str(i) for i in (entry.id if isinstance(entry.id, tuple | list) else [entry.id])]
        strings = [str(s) for s in
                   (entry.string if isinstance(entry.string, tuple | list) else [entry.string])]
        want = set().union(*(_fields(i) for i in ids))
        plural = len(ids) > 1
        for s in strings:
            if s and (_fields(s) - want if plural else _fields(s) != want):
                wrong.append((entry.id, s))
    assert not wrong, f"{lang}: placeholders differ: {wrong[:5]}"


def test_catalogs_hold_no_stale_strings() -> None:
    """Every catalog entry is still used by the code (the template is current)."""
    used = _code_msgids()
    for lang in LANGS:
        stale = [e.id for e in _catalog(lang) if e.id and
                 ((e.id[0] if isinstance(e.id, tuple) else e.id), e.context) not in used]
        assert not stale, f"{lang}: strings no longer in the code (run scripts/i18n.sh): {stale[:5]}"
