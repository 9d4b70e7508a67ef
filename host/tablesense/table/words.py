"""Messages of the table room a person reads, translatable without an import.

The table room imports nothing else of ours, so its errors cannot be the
games room's :class:`~tablesense.games.common.Sentence`; they are the same
kind of thing, made here: an English string (``str(exc)``, logs, tests read
it as before) that remembers its ``template`` and ``params``. The language
room (``tablesense.i18n``) reads those two attributes by duck typing, as it
does a games Sentence, so ``_(message_of(exc))`` in a command prints
``no table geometry file at 'x'`` as ``nenhum arquivo de geometria de mesa
em 'x'``. ``say`` is an extraction keyword of ``scripts/i18n.sh``, so the
templates below land in the catalogs. The link and journal rooms, which may
import the table room, word their errors the same way.
"""

from __future__ import annotations

from typing import Any


class Sentence(str):
    """English text that remembers its ``template`` and ``params``."""

    template: str
    params: dict[str, Any]

    def __new__(cls, template: str, params: dict[str, Any]) -> Sentence:
        self = super().__new__(cls, template.format(**params))
        self.template = template
        self.params = params
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Sentence, (self.template, self.params))


def say(template: str, **params: Any) -> Sentence:
    """A translatable sentence of the table room (an extraction keyword)."""
    return Sentence(template, params)


def joined(items: list[str]) -> str:
    """``a; b; c``, each item still translated on its own (a plain join of
    Sentences would be English only)."""
    if not items:
        return ""
    out = items[0]
    for item in items[1:]:
        out = say("{first}; {then}", first=out, then=item)
    return out


def message_of(exc: BaseException) -> str:
    """An error's message as it was raised: a Sentence stays one (``str(exc)``
    would flatten it to English only)."""
    first = exc.args[0] if len(exc.args) == 1 else None
    return first if isinstance(first, str) else str(exc)
