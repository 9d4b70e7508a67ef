"""Sentences a person reads, translatable without knowing the language: the
one leaf module every room may import.

An engine, the table room or the flasher words its messages in English with
:func:`say`; the result is the English string everywhere a string is expected
(logs, tests, JSON) and also remembers its ``template`` and ``params``, so the
language room (``tablesense.i18n``) can look the template up in a catalog and
format the parameters into the translation, translating parameters that are
Sentences too. This module imports nothing of ours, so the rooms that must
stay pure (``games``, ``table``) can use it without depending on anything
else; ``say`` is an extraction keyword of ``scripts/i18n.sh``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class Sentence(str):
    """English text that remembers how it was made, so it can be translated.

    ``say("it is {turn}'s turn", turn="East")`` is the string
    ``"it is East's turn"`` and carries ``template`` and ``params``.
    """

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
    """A translatable sentence (the extraction keyword of the catalogs)."""
    return Sentence(template, params)


def joined(items: Sequence[str], more: bool = False) -> str:
    """``a; b; c`` (``a; b; ...`` with ``more``), each item still translated
    on its own: a plain join of Sentences would be English only."""
    if not items:
        return ""
    out = items[0]
    for item in items[1:]:
        out = say("{first}; {then}", first=out, then=item)
    return say("{first}; ...", first=out) if more else out


def message_of(exc: BaseException) -> str:
    """An error's message as it was raised: a :class:`Sentence` stays one
    (``str(exc)`` would flatten it to English only)."""
    first = exc.args[0] if len(exc.args) == 1 else None
    return first if isinstance(first, str) else str(exc)
