"""The i18n room: the languages people read (en, pt-BR, ms): gettext catalogs kept with Babel,
`Translator`, `resolve(--lang, LANG)`, and (in `i18n/cli.py`) every command's `--lang` option.

The languages players and directors read: English, Brazilian Portuguese, Malay.

Catalogs are gettext ``.po`` files made and kept with Babel (``scripts/i18n.sh``
extracts, updates and checks them); they are compiled in memory on first use,
so the package ships plain text and no build step can forget the ``.mo``.

Two kinds of message reach this room:

- a fixed string marked in the code with ``_()`` / ``N_()`` (page labels,
  CLI lines): its msgid is the English text;
- a :class:`~tablesense.games.common.Sentence`: English text that remembers
  its template and parameters (``"it is {turn}'s turn"``, ``turn="East"``).
  The template is the msgid; parameters that are Sentences themselves are
  translated too, so a rejection built from a seat name and a piece reads
  right in every language.

Anything else passes through unchanged, so a message nobody marked is at
worst English, never an error. Logs meant for developers stay English.
"""

from __future__ import annotations

import gettext as _gettext
import io
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from babel.numbers import format_decimal

DOMAIN = "tablesense"
LOCALE_DIR = Path(__file__).with_name("locale")

#: Languages with a catalog, by the tag users type (``--lang pt-BR``).
LANGUAGES: dict[str, str] = {"en": "English", "pt-BR": "Português (Brasil)", "ms": "Bahasa Melayu"}

#: A test-only language: every translated string comes out bracketed and
#: accented, so an untranslated string stands out on a page or in a log.
PSEUDO = "qps"

_ALIASES = {
    "en": "en", "en-us": "en", "en-gb": "en", "c": "en", "posix": "en",
    "pt": "pt-BR", "pt-br": "pt-BR", "pt_br": "pt-BR",
    "ms": "ms", "ms-my": "ms", "ms_my": "ms", "ms-bn": "ms",
    PSEUDO: PSEUDO,
}


class UnknownLanguageError(ValueError):
    """A ``--lang`` value with no catalog (the CLI turns it into exit 2)."""


class _Templated(Protocol):
    template: str
    params: Mapping[str, Any]


def normalize(tag: str) -> str:
    """``pt_BR.UTF-8`` / ``pt-br`` / ``pt`` -> ``pt-BR``; raises for a language we lack."""
    base = tag.split(".")[0].split("@")[0].strip().lower().replace("_", "-")
    if base in _ALIASES:
        return _ALIASES[base]
    lang = base.split("-")[0]
    if lang in _ALIASES:
        return _ALIASES[lang]
    known = ", ".join(LANGUAGES)
    raise UnknownLanguageError(f"no translation for {tag!r}: choose one of {known}")


def resolve(option: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The language to use: the ``--lang`` option, else the locale
    (``LC_ALL``, ``LC_MESSAGES``, ``LANG``, as gettext orders them), else English.

    A locale naming a language we have no catalog for falls back to English
    (a Pi set to ``de_DE`` still plays); an explicit option never does.
    """
    if option:
        return normalize(option)
    env = os.environ if environ is None else environ
    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(var)
        if value:
            try:
                return normalize(value.split(":")[0])
            except UnknownLanguageError:
                return "en"
    return "en"


def _catalog_path(lang: str) -> Path:
    return LOCALE_DIR / lang.replace("-", "_") / "LC_MESSAGES" / f"{DOMAIN}.po"


class _Pseudo(_gettext.NullTranslations):
    """Brackets and accents every message: untranslated text stands out."""

    _MAP = str.maketrans("aeiouAEIOUcnCN", "àéîõüÀÉÎÕÜçñÇÑ")

    def gettext(self, message: str) -> str:
        return "⟦" + _protect_fields(message, lambda s: s.translate(self._MAP)) + "⟧"

    def ngettext(self, msgid1: str, msgid2: str, n: int) -> str:
        return self.gettext(msgid1 if n == 1 else msgid2)

    def pgettext(self, context: str, message: str) -> str:
        return self.gettext(message)


def _protect_fields(text: str, fn: Any) -> str:
    """Apply ``fn`` to the text outside ``{placeholders}``."""
    out, depth, chunk = [], 0, []
    for ch in text:
        if ch == "{":
            if depth == 0 and chunk:
                out.append(fn("".join(chunk)))
                chunk = []
            depth += 1
            out.append(ch)
        elif ch == "}" and depth:
            depth -= 1
            out.append(ch)
        elif depth:
            out.append(ch)
        else:
            chunk.append(ch)
    if chunk:
        out.append(fn("".join(chunk)))
    return "".join(out)


@cache
def translation(lang: str) -> _gettext.NullTranslations:
    """The gettext translations of ``lang`` (compiled from its ``.po`` once)."""
    lang = normalize(lang)
    if lang == PSEUDO:
        return _Pseudo()
    if lang == "en":
        return _gettext.NullTranslations()
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with _catalog_path(lang).open("rb") as fh:
        catalog = read_po(fh, locale=lang.replace("-", "_"))
    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    buf.seek(0)
    return _gettext.GNUTranslations(buf)


def translate(message: object, lang: str) -> str:
    """``message`` in ``lang``: a Sentence by its template, a string by itself."""
    tr = translation(lang)
    template = getattr(message, "template", None)
    params = getattr(message, "params", None)
    if isinstance(template, str) and isinstance(params, Mapping):
        done = {k: _param(v, lang) for k, v in params.items()}
        return tr.gettext(template).format(**done)
    return tr.gettext(str(message)) if isinstance(message, str) and message else str(message)


def _param(value: object, lang: str) -> object:
    """A Sentence's parameter in ``lang``: a nested Sentence translated, a
    decimal written as the language writes it (``1,5`` in Portuguese, where
    ``1.5`` reads as a thousands group); anything else as it is."""
    if hasattr(value, "template"):
        return translate(value, lang)
    if isinstance(value, float) and lang not in ("en", PSEUDO):
        return format_decimal(value, locale=lang.replace("-", "_"))
    return value


def ngettext(singular: str, plural: str, n: int, lang: str) -> str:
    """The plural form of ``n`` in ``lang`` (Malay has one form, the others two)."""
    return translation(lang).ngettext(singular, plural, n)


def N_(message: str) -> str:  # the gettext convention, found by extraction
    """Mark a fixed string for the catalogs without translating it here."""
    return message


def NC_(context: str, message: str) -> str:  # as N_, with a gettext context
    """Mark a word whose meaning depends on ``context`` (Kems' "double" call is
    not a domino "double"): translate it with :meth:`Translator.context`."""
    return message


class Translator:
    """``_`` bound to one language: ``_ = Translator("pt-BR"); _("Score")``."""

    def __init__(self, lang: str) -> None:
        self.lang = normalize(lang)

    def __call__(self, message: object, /, **params: Any) -> str:
        text = translate(message, self.lang)
        return text.format(**params) if params else text

    def context(self, context: str, message: str) -> str:
        """``message`` as meant in ``context`` (marked with :func:`NC_`)."""
        return translation(self.lang).pgettext(context, message)

    def plural(self, singular: str, plural: str, n: int, **params: Any) -> str:
        return ngettext(singular, plural, n, self.lang).format(n=n, **params)
